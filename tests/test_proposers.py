"""The deterministic feedback proposer and proposer resolution."""

from __future__ import annotations

from typing import Any

import pytest

from harness.proposers import LESSONS_HEADING, FeedbackProposer, resolve_proposer, split_lessons

BODY = "# Skill\n\nDo the thing.\n"


def _score(inputs: Any, outputs: Any) -> tuple[float, str]:
    table = {"a": (0.0, "expected A"), "b": (0.5, "expected B"), "c": (1.0, "fine"), "d": (0.0, "expected A")}
    return table[inputs["question"]]


def _records(*qs: str) -> list[dict[str, Any]]:
    return [{"Inputs": {"question": q}, "Generated Outputs": {"answer": "x"}, "Feedback": "ignored"} for q in qs]


def test_folds_distinct_feedback_of_worst_examples_first() -> None:
    text = FeedbackProposer(_score, max_chars=1000).propose(BODY, _records("c", "b", "a", "d"))
    head, lessons = split_lessons(text)
    assert head.rstrip() == BODY.rstrip()
    assert lessons == ["expected A", "expected B"]  # worst first, duplicates once, perfect ones left out
    assert LESSONS_HEADING in text


def test_is_deterministic_and_idempotent_on_known_lessons() -> None:
    proposer = FeedbackProposer(_score, max_chars=1000)
    once = proposer.propose(BODY, _records("a", "b"))
    assert once == proposer.propose(BODY, _records("a", "b"))
    assert proposer.propose(once, _records("a", "b")) == once  # nothing new to add


def test_size_cap_drops_lessons_that_do_not_fit() -> None:
    cap = len(BODY) + 10
    text = FeedbackProposer(_score, max_chars=cap).propose(BODY, _records("a", "b"))
    assert len(text) <= cap
    assert text == BODY  # no room for the section at all


def test_gepa_protocol_updates_named_components_only() -> None:
    proposer = FeedbackProposer(_score, max_chars=1000)
    out = proposer({"respond": BODY, "other": "x"}, {"respond": _records("a")}, ["respond"])
    assert list(out) == ["respond"] and "expected A" in out["respond"]


@pytest.mark.parametrize(("proposer", "reflection", "expected"),
                         [("auto", None, "feedback"), ("auto", "embedded", "llm"), ("feedback", "x", "feedback")])
def test_resolve_proposer(proposer: str, reflection: str | None, expected: str) -> None:
    assert resolve_proposer(proposer, reflection) == expected


def test_llm_proposer_needs_reflection_model() -> None:
    with pytest.raises(ValueError, match="reflection"):
        resolve_proposer("llm", None)
