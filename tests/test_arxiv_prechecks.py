"""The arXiv grader's cheap pre-checks are implied by the patterns they guard.

Each key table (``_REFUSAL_KEYS``, ``_NEGATION_KEYS``, ``_METADATA_KEYS``, ``_ROLE_AFTER_KEYS``) skips a regular
expression where none of its keys occurs; that is sound only if every match of the pattern holds a key.  The
properties below check it on text made of the patterns' own vocabulary, with words separated as prose separates
them (spaces, punctuation, apostrophes).  The grader reads text with every whitespace run squeezed to one space or
one line break (``prepare``), so the tables hold each spaced key with its line-break twin; the properties check
text with any whitespace between the words, squeezed the same way.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import grading, matching
from verifiers.arxiv.matching import contains_any, lower_case_twin
from verifiers.arxiv.normalise import squeeze_spaces

VOCAB = (
    "i do not don't dont do nt cannot can't cant can could couldn't couldnt am able to unable have no won't wont "
    "will know recall find say help browse sure certain idea i'm im sorry afraid but mean as an ai a large "
    "language model beyond outside my knowledge training does doesn't access n't never longer rather than instead "
    "of opposed other unlike except for the title paper called it that cut-off cutoff cut off trained on data up "
    "until through last updated in request id reference number no. ticket error code session trace incident case "
    "is was goes ends 2023 7f3a june early second third last senior co co- author writer contributor first who "
    "listed named only also actually isn't wasn't X Kingma"
).split()
SEPARATORS = (" ", " ", " ", ", ", ". ", "-", "'", "’", ": ", "#", "(", " (")
WHITESPACE = ("\t", "  ", "\n", "\r\n", " \n\n ", "\u00a0", "\u2003", "\x0b")

texts = st.lists(st.tuples(st.sampled_from(VOCAB), st.sampled_from(SEPARATORS)), max_size=10).map(
    lambda pairs: "".join(word + sep for word, sep in pairs))

#: (pattern, its key table): every match of the pattern's lower-case twin on lower-cased text holds a key.
GUARDED = [
    pytest.param(matching.REFUSAL_RE, matching._REFUSAL_KEYS, id="refusal"),
    pytest.param(matching.NEGATION_BEFORE_RE, matching._NEGATION_KEYS, id="negation"),
    pytest.param(matching.METADATA_BEFORE_RE, matching._METADATA_KEYS, id="metadata"),
    pytest.param(grading._ROLE_AFTER, grading._ROLE_AFTER_KEYS, id="role-after"),
]


def _unguarded_matches(pattern: re.Pattern[str], keys: tuple[str, ...], text: str) -> list[str]:
    """The matches of ``pattern``'s twin in ``text.lower()`` that hold none of ``keys``."""
    has_key = contains_any(keys)
    return [m.group() for m in lower_case_twin(pattern).finditer(text.lower()) if m.group() and not has_key(m.group())]


@pytest.mark.parametrize(("pattern", "keys"), GUARDED)
@settings(max_examples=400, deadline=None)
@given(text=texts)
def test_every_match_holds_a_key(pattern: re.Pattern[str], keys: tuple[str, ...], text: str) -> None:
    assert _unguarded_matches(pattern, keys, text) == []


@pytest.mark.parametrize(("pattern", "keys", "text"), [
    (matching.REFUSAL_RE, matching._REFUSAL_KEYS, "I'm sorry, I can't browse arXiv"),
    (matching.REFUSAL_RE, matching._REFUSAL_KEYS, "as a large language model"),
    (matching.NEGATION_BEFORE_RE, matching._NEGATION_KEYS, "it is not the paper called "),
    (matching.METADATA_BEFORE_RE, matching._METADATA_KEYS, "my knowledge cut-off is 2023"),
    (grading._ROLE_AFTER, grading._ROLE_AFTER_KEYS, " is the second author"),
])
def test_examples_match_and_hold_a_key(pattern: re.Pattern[str], keys: tuple[str, ...], text: str) -> None:
    """The properties above are not vacuous: these texts match, and their matches hold a key."""
    assert lower_case_twin(pattern).search(text.lower()) is not None
    assert _unguarded_matches(pattern, keys, text) == []


@pytest.mark.parametrize(("pattern", "keys", "text"), [
    (matching.REFUSAL_RE, matching._REFUSAL_KEYS, "i dont\tknow"),
    (matching.REFUSAL_RE, matching._REFUSAL_KEYS, "i cant\nsay"),
    (matching.NEGATION_BEFORE_RE, matching._NEGATION_KEYS, "other\tthan "),
    (matching.METADATA_BEFORE_RE, matching._METADATA_KEYS, "as\tof 2023"),
    (matching.REFUSAL_RE, matching._REFUSAL_KEYS, "i  don't \n\n know"),
    (matching.METADATA_BEFORE_RE, matching._METADATA_KEYS, "my \u00a0knowledge\r\nends in 2023"),
])
def test_whitespace_gaps(pattern: re.Pattern[str], keys: tuple[str, ...], text: str) -> None:
    """The grader reads text with each whitespace run squeezed to one space or one line break (``prepare``):
    tabs, runs of spaces and line breaks inside a phrase keep its key, and the phrase still matches."""
    squeezed = squeeze_spaces(text)
    assert lower_case_twin(pattern).search(squeezed.lower()) is not None
    assert _unguarded_matches(pattern, keys, squeezed) == []


odd_texts = st.lists(st.tuples(st.sampled_from(VOCAB), st.sampled_from(SEPARATORS + WHITESPACE)), max_size=10).map(
    lambda pairs: "".join(word + sep for word, sep in pairs))


@pytest.mark.parametrize(("pattern", "keys"), GUARDED)
@settings(max_examples=300, deadline=None)
@given(text=odd_texts)
def test_every_match_in_squeezed_text_holds_a_key(pattern: re.Pattern[str], keys: tuple[str, ...], text: str) -> None:
    """The same property with any whitespace between the words, as the grader reads it (squeezed)."""
    assert _unguarded_matches(pattern, keys, squeeze_spaces(text)) == []


def test_prepare_squeezes_whitespace() -> None:
    assert matching.prepare("I don't\t  know.\r\n\n  Really").text == "I don't know.\nReally"


@settings(max_examples=300, deadline=None)
@given(keys=st.lists(st.text(min_size=1, max_size=3), max_size=5), text=st.text(max_size=30))
def test_contains_any_is_any_key_in_text(keys: list[str], text: str) -> None:
    assert contains_any(keys)(text) == any(key in text for key in keys)


@given(text=texts)
@settings(max_examples=200, deadline=None)
def test_short_line_length_bound_agrees_with_the_pattern(text: str) -> None:
    """A line under 31 characters is short without the regex: the regex agrees."""
    for end in range(min(len(text), 31)):
        assert matching._LONG_LINE_RE.match(text, 0, end) is None


#: Words of the refusal phrases in other languages (``REFUSAL_RE``'s foreign alternatives), for the start tables.
FOREIGN = ("no se sé lo je ne le sais pas aucune idée ich weiß weiss es das nicht keine ahnung non so não nao sei "
           "faço ideia ik weet het niet nie wiem vet inte ved ikke bilmiyorum").split()
key_texts = st.lists(st.tuples(st.sampled_from(VOCAB + FOREIGN), st.sampled_from(SEPARATORS + WHITESPACE)),
                     max_size=12).map(lambda pairs: "".join(word + sep for word, sep in pairs))


@settings(max_examples=300, deadline=None)
@given(keys=st.lists(st.sampled_from(["no", "not", "nt ", "o", "é", "do", "x"]) | st.text("abnot é", min_size=1,
                                                                                       max_size=3), max_size=6),
       text=st.text("abnot é\n", max_size=40), bounds=st.tuples(st.integers(0, 40), st.integers(0, 40)))
def test_key_table_finds_what_find_finds(keys: list[str], text: str, bounds: tuple[int, int]) -> None:
    """A :class:`KeyTable` group tells what ``in`` and ``str.find`` tell, key by key (ASCII text by the automaton,
    other text key by key)."""
    (hits,) = matching.KeyTable(keys).scan(text)
    lo, hi = bounds
    assert hits.within(lo, hi) == any(key in text[lo:hi] for key in keys)
    assert bool(hits) == any(key in text for key in keys)
    expected = []
    for key in dict.fromkeys(keys):
        i = text.find(key)
        while i >= 0:
            expected.append((i, i + len(key)))
            i = text.find(key, i + len(key))
    assert hits.occurrences(dict.fromkeys(keys)) == expected
    # a tuple of keys (read by each key's place in it), a repeated key visited again, as a loop over the keys does
    expected = []
    for key in keys:
        i = text.find(key)
        while i >= 0:
            expected.append((i, i + len(key)))
            i = text.find(key, i + len(key))
    assert hits.occurrences(tuple(keys)) == expected
    assert hits.word_starts(text) == sorted({s for s, _ in hits.spans if s == 0 or not (
        text[s - 1].isalnum() or text[s - 1] == "_")})


@settings(max_examples=300, deadline=None)
@given(text=st.text("xXnNyYmM doe.name", max_size=30) | st.lists(st.sampled_from(
    ["xx", "nnnn", "yymm", "yyyy", "yy", "john doe", "doex", "firstname", "lastname", "anon", " ", "é"]), max_size=6)
    .map("".join))
def test_placeholder_keys_tell_what_substrings_tell(text: str) -> None:
    """One automaton pass tells whether a placeholder name may occur and whether a mask key occurs, as the substring
    tests it replaces do."""
    lower = text.lower()
    if not lower.isascii():
        return
    assert matching._placeholder_keys(lower) == (matching._may_hold_placeholder_name(lower), "xx" in lower or (
        "nnnn" in lower or "yy" in lower and ("yymm" in lower or "yyyy" in lower)))


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(["(1) ", "(b) ", "(iv) ", "(ii) ", "(i)", "2) ", "c)", "3. ", " ", "\n", "Option",
                                      "candidate", "A", "B: ", "x", "(", ")", "CHOICE", "é", "K"]), max_size=10).map(
    "".join))
def test_inline_marks_are_the_enumerators_after_whitespace(text: str) -> None:
    """The enumerators found only where one can end or start are the pattern's match at every position that starts
    the text or follows whitespace (overlapping ones too: "Option 2)" and its "2)")."""
    expected = [m.span() for p in range(len(text)) if (p == 0 or text[p - 1].isspace()) and (
        m := matching._INLINE_ENUMERATOR_RE.match(text, p)) is not None]
    assert [m.span() for m in matching._inline_marks(text)] == expected


def test_key_table_examples() -> None:
    """The property above is not vacuous: keys found, overlapping ones too, and word starts only at a word's start."""
    hits, starts = matching.KeyTable(("nono", "no"), ("as",)).scan("nonono has as")
    assert hits.spans == [(0, 2), (0, 4), (2, 4), (2, 6), (4, 6)]
    assert hits.occurrences(("nono",)) == [(0, 4)]
    assert starts.word_starts("nonono has as") == [11]
    assert not hits.within(1, 3) and hits.within(1, 4)


@settings(max_examples=400, deadline=None)
@given(text=key_texts)
def test_refusal_phrases_start_at_a_start_word(text: str) -> None:
    """Every match of ``REFUSAL_RE``'s twin in ASCII text starts where a word of ``_REFUSAL_STARTS`` opens a word,
    so trying it only there finds every match (``matches_at``), and a refusal is found as before."""
    lower = squeeze_spaces(text).lower()
    if not lower.isascii():
        return
    twin = matching._REFUSAL.twin
    starts = matching._KEYS.scan(lower)[1].word_starts(lower)
    assert [p for p in range(len(lower)) if twin.match(lower, p)] == [
        p for p in starts if twin.match(lower, p)]
    assert [m.span() for m in matching.matches_at(twin, lower, starts, 0, len(lower))] == [
        m.span() for m in twin.finditer(lower)]
    r = matching.Response(lower)
    assert r.refused() == (r.may_refuse() and matching.keyed_any(r, matching._REFUSAL, matching._REFUSAL_KEYS,
                                                                   matching.REFUSAL_RE))


def test_refusal_start_examples() -> None:
    """The property above is not vacuous: these refusals start at a start word and are found."""
    for text in ("well, i don't know", "i'm sorry", "im unable to say", "ich weiss nicht", "sorry, i can't",
                 "as an ai", "x. beyond my knowledge", "nao sei"):
        starts = matching._KEYS.scan(text)[1].word_starts(text)
        assert any(matching._REFUSAL.twin.match(text, p) for p in starts), text
        assert matching.Response(text).refused(), text
