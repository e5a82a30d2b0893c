"""Degenerate long outputs (issue 17, blind pass 9): a phrase repeated up to the scan limit made the windowed
searches read the text once per occurrence of their key word ("not not not ...": 1.7 s a grade, "He he He."
on an English-word surname's author task: 3 s).  Where the windows would read a text more than twice over, one
pass over the whole text replaces them; these tests check that the whole-text pass grades as the windows do."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import ArxivVerifier, matching
from verifiers.base import Grade

V = ArxivVerifier()
TASKS = list(V.tasks())
#: Fragments that start windowed searches (negations, retractions, corrections, refusals, a pronoun that is also
#: a surname) mixed with answers of every kind, right and wrong.
FRAGMENTS = ("not ", "No, ", "Actually, ", "I retract that. ", "forget ", "I can't browse arXiv. ", "He ", "he ",
             "He said no. ", "1301.3781 ", "1706.03762 ", "2013 ", "2017. ", "Tomas Mikolov ", "Kaiming He. ",
             "Attention Is All You Need. ", "Deep Residual Learning for Image Recognition ", "or ", "maybe ", "\n",
             "Ruled out: 1706.03762. ", "Final answer: ", "Wait, ", "I rejected 2013. ")


def _grade(question: str, output: str, limit: float, monkeypatch: pytest.MonkeyPatch) -> Grade:
    monkeypatch.setattr(matching, "_WINDOW_COVER_LIMIT", limit)
    return V.score(question, output)


def test_windows_cover_only_long_dense_texts() -> None:
    assert matching._windows_cover(100, 120, 4_000)  # 12,000 window characters over 4,000: read 3 times over
    assert not matching._windows_cover(66, 120, 4_000)  # 7,920: under twice over
    assert not matching._windows_cover(1_000, 120, 3_999)  # short texts keep their windows


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8), st.sampled_from(TASKS),
       st.integers(min_value=4_000, max_value=9_000))
def test_whole_text_pass_grades_as_the_windows(parts: list[str], task: object, size: int) -> None:
    """A phrase repeated to ``size`` characters: graded with the windows always (limit infinite) and with the
    whole-text pass always (limit 0), the grade is the same."""
    output = ("".join(parts) * (size // len("".join(parts)) + 1))[:size]
    with pytest.MonkeyPatch.context() as monkeypatch:
        windowed = _grade(task.question, output, float("inf"), monkeypatch)  # type: ignore[attr-defined]
        whole = _grade(task.question, output, 0, monkeypatch)  # type: ignore[attr-defined]
    assert whole == windowed


@pytest.mark.parametrize("phrase", ["not ", "He he He. ", "Actually, 1706.03762 "])
def test_degenerate_output_at_the_scan_limit_grades_as_the_windows(phrase: str) -> None:
    """At the scan limit too (the author task of an English-word surname, and an ID task)."""
    long = (phrase * (matching.MAX_GRADED_CHARS // len(phrase) + 1))[:matching.MAX_GRADED_CHARS]
    for task in [t for t in TASKS if t.task_id in ("1512.03385/author", "1301.3781/id")]:
        with pytest.MonkeyPatch.context() as monkeypatch:
            assert _grade(task.question, long, 0, monkeypatch) == _grade(task.question, long, float("inf"),
                                                                          monkeypatch), task.task_id


def _window_searches(output: str) -> list[object]:
    """What each windowed search finds in ``output``: retractions, rejections, a refusal, a title's spans."""
    r = matching.prepare(output)
    keys = r.hits(matching._KEYS)
    title = matching.Phrase.of("Deep Residual Learning", matching.Phrase.title("Deep Residual Learning").pattern,
                               anchored=False)
    return [[m.span() for m in matching.keyed_matches(r, matching._RETRACT_ALL, matching._RETRACT_KEYS,
                                                      matching.RETRACT_ALL_RE, hits=keys[2])],
            [m.span() for m in matching.keyed_matches(r, matching._REJECTION, matching._REJECTION_KEYS,
                                                      matching.REJECTION_RE, 40, 40, hits=keys[5])],
            matching.keyed_any(r, matching._REFUSAL, matching._REFUSAL_KEYS, matching.REFUSAL_RE, hits=keys[0]),
            title.spans(r.text, r.lower)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS + ("Deep Residual Learning ", "Not Deep Residual Learning. ")),
                min_size=1, max_size=8), st.integers(min_value=4_000, max_value=9_000))
def test_whole_text_pass_finds_what_the_windows_find(parts: list[str], size: int) -> None:
    output = ("".join(parts) * (size // len("".join(parts)) + 1))[:size]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(matching, "_WINDOW_COVER_LIMIT", float("inf"))
        windowed = _window_searches(output)
        monkeypatch.setattr(matching, "_WINDOW_COVER_LIMIT", 0)
        whole = _window_searches(output)
    assert whole == windowed
