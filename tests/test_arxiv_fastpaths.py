"""The arXiv grader's fast paths find what the whole-text pattern searches they replace find (issue 17, speed).

Each fast path tries a pattern only where a match can start (a key word's word start, the line or clause start
before a key word); these properties compare it with the pattern's own ``finditer``/``search`` on text built from
the cue phrases of the patterns' docstrings, joined by the characters the fast paths look at.  A rule that adds an
alternative starting with a word the fast path does not look for fails here when its phrase is added below.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import grading, matching, offers

_JOINS = [" ", "  ", "\n", "\t", ", ", ". ", "; ", "! ", "? ", "{", "_", "-", "*", "#", "'", '"', "x", "9", "é"]
_LISTING = ["Top candidates: A, B", "options", "alternatively", "possibility", "possibilities", "choices",
            "Best guess: A", "guesses", "backup", "second guess", "second\tchoice", "runner-up", "torn between",
            "not sure which between", "undecided  between", "possible answers", "less likely", "most likely:",
            "one of:", "it may well be", "that\ncould also be", "in which case, the answer would be",
            "in which case it might be", "one of those", "one of the two", "is also plausible",
            "seems equally possible", "Dean", "likely", "may", "which case", "someone", "itinerary", "isolated",
            "between"]
_LABELS = ["Best guess: B", "Second Guess - B", "Option 2: ", "option b = x", '{"alternatives": ["B"]}',
           '"alternative": "C"', "One of: A, B", "one \t of -", "Either of:", "runner-up: ", "Runner up —",
           "Possibility 3:", "backup title:", "Candidates :", "choice a:", "my top three guess:", "none of:",
           "A Title", "word " * 50]
_SECTIONS = ["## Answer", "### Notes", "**Sources**", "Final\nAnswer", "final  answer", "short answer", "tl;dr",
             "TLDR", "Answer: x", "denote", "the answer", "Summary", "references", "###### Update", "Confidence_",
             "__reasoning__", "Context **", "citation\t"]


def _texts(phrases: list[str]) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(phrases + _JOINS), max_size=16).map("".join)


@settings(max_examples=300, deadline=None)
@given(_texts(_LISTING))
def test_listing_cues_match_the_whole_text_search(text: str) -> None:
    r = matching.prepare(text)
    expected = [(m.span(), m.group()) for m in grading._NAME_LISTING_CUE_RE.finditer(r.lower)]
    assert [(m.span(), m.group()) for m in grading._listing_cues(r)] == expected


@settings(max_examples=300, deadline=None)
@given(_texts(_LABELS))
def test_candidate_labels_match_the_whole_text_search(text: str) -> None:
    r = matching.prepare(text)
    expected = [(m.span(), m.groups()) for m in grading._CANDIDATE_LABEL_RE.finditer(r.text)]
    assert [(m.span(), m.groups()) for m in grading._candidate_labels(r)] == expected


@settings(max_examples=300, deadline=None)
@given(_texts(_SECTIONS))
def test_section_labels_match_the_whole_text_search(text: str) -> None:
    lower = text.lower()
    hits = matching._PREPARE_KEYS.scan(lower) if lower.isascii() else None
    assert matching._section_labels(lower, hits) == [m.span() for m in matching._SECTION_LABEL_RE.finditer(lower)]


@settings(max_examples=300, deadline=None)
@given(_texts([*offers._SURNAME_FORMS, *(f.lower() for f in offers._SURNAME_FORMS), "Mr", "1"]))
def test_known_surname_matches_the_pattern(text: str) -> None:
    assert offers._names_known_surname(text) == (offers._KNOWN_SURNAME_RE.search(text) is not None)


def test_fast_paths_find_their_cues() -> None:
    """The properties above compare like with like; these show each fast path finds something at all."""
    assert [m.group() for m in grading._listing_cues(matching.prepare("Vaswani. It may well be Shazeer."))] == [
        "it may well be"]
    assert len(grading._candidate_labels(matching.prepare("A.\nSecond guess: B"))) == 1
    lower = "intro\n## answer\ntext"
    assert matching._section_labels(lower, matching._PREPARE_KEYS.scan(lower)) == [(6, 15)]
    assert offers._names_known_surname("by Vaswani.") and not offers._names_known_surname("Vaswaniesque")
