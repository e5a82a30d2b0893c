"""The deterministic feedback proposer and proposer resolution."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.engine.proposers import (
    LESSONS_HEADING,
    MAX_LESSON_CHARS,
    FeedbackProposer,
    resolve_proposer,
    shorten,
    split_lessons,
)

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


def test_long_feedback_keeps_whole_clauses() -> None:
    feedback = ("expected ID 1706.03762; the YYMM prefix 1706 of 1706.03762 was right but the number was not; "
                "answer with the full identifier only, no version suffix and no surrounding prose at all")
    assert shorten(feedback) == ("expected ID 1706.03762; the YYMM prefix 1706 of 1706.03762 was right but "
                                 "the number was not")
    one_clause = "expected title " + "word " * 40
    cut = shorten(one_clause)
    assert cut.endswith("…") and len(cut) <= MAX_LESSON_CHARS and one_clause.startswith(cut[:-1])


@given(st.text(alphabet=st.sampled_from(list("ab ;.\n")), max_size=400), st.integers(10, 200))
def test_shorten_is_a_bounded_prefix(text: str, limit: int) -> None:
    flat = " ".join(text.split())
    out = shorten(text, limit)
    assert len(out) <= limit
    if out == flat:
        return
    if out.endswith("…"):
        assert flat.startswith(out[:-1])
    else:  # whole leading clauses
        assert flat.startswith(out + "; ") and len(out) >= limit // 2
