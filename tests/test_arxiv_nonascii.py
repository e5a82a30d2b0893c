"""Text outside ASCII (curly quotes, dashes, accented letters, other scripts) is read by the same C scans as
ASCII text, with the same result as the per-character readings they replaced (issue 17, speed): the key table's
occurrences keep their character offsets, whitespace is squeezed as ``\\s`` runs are, and ``unconfuse`` drops and
reads the same characters.  The references below are the readings the grader used before (a ``str.find`` loop per
key, a regular expression over every whitespace run, ``str.translate``)."""

from __future__ import annotations

import re
import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import matching, normalise
from verifiers.arxiv.normalise import OTHER_SPACE_CHARS, squeeze_spaces, unconfuse

#: Characters typical of LLM prose outside ASCII, a character outside the Basic Multilingual Plane, a lone
#: surrogate, and "?" (what the key table writes for each of them in the bytes it scans).
ODD = ("’", "“", "”", "—", "–", "é", "…", "中", "😀", "\ud800", "?", "\u00a0")


def _find_loop(keys: tuple[str, ...], text: str) -> list[tuple[int, int, int]]:
    """``(key index, start, end)`` of every occurrence, overlapping ones too, key by key (the old reading)."""
    found = []
    for k, key in enumerate(keys):
        i = text.find(key)
        while i >= 0:
            found.append((k, i, i + len(key)))
            i = text.find(key, i + 1)
    return found


@settings(max_examples=400, deadline=None)
@given(keys=st.lists(st.text(alphabet=st.sampled_from(("a", "b", " ", *ODD)), min_size=1, max_size=3), min_size=1,
                     max_size=6, unique=True),
       text=st.text(alphabet=st.sampled_from(("a", "b", " ", "\n", *ODD)), max_size=40))
def test_key_table_reads_non_ascii_text_as_a_find_loop(keys: list[str], text: str) -> None:
    """Every occurrence at its character offsets, in the find loop's order, keys holding "?" or other characters
    included."""
    text = "’" + text  # outside ASCII (ASCII text is read by the automaton as it is)
    table = matching.KeyTable(keys)
    (hits,) = table.scan(text)
    assert hits._all == _find_loop(table._keys, text)


def test_key_table_offsets_after_non_ascii_characters() -> None:
    """Offsets are character offsets after characters of one to four UTF-8 bytes; "?" in the text or in a key is
    matched only where the text holds it."""
    text = "é’😀 don’t know?? a?b — x?y café"
    (hits,) = matching.KeyTable(("know", "n’t", "a?b", "?", "caf", "x?y")).scan(text)
    assert [text[s:e] for _, s, e in hits._all] == ["know", "n’t", "a?b", "?", "?", "?", "?", "caf", "x?y"]
    assert hits._all[0] == (0, text.index("know"), text.index("know") + 4)


#: The reading ``squeeze_spaces`` gave text outside ASCII before: each whitespace run one line break when it holds
#: one, else one space.
_RUN_RE = re.compile(r"[^\S\n]*\n\s*|[^\S\n]{2,}|[^\S \n]")
SPACES = (" ", "\n", *OTHER_SPACE_CHARS)


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(("a", "é", "’", *SPACES, *SPACES)), max_size=30))
def test_squeeze_spaces_reads_every_whitespace_run(text: str) -> None:
    text += "é"  # outside ASCII (ASCII text keeps the rare \x1c-\x1f, as it did)
    assert squeeze_spaces(text) == _RUN_RE.sub(lambda m: "\n" if "\n" in m.group() else " ", text)


def test_squeeze_spaces_examples() -> None:
    assert squeeze_spaces("é \u00a0\u2003x\u2028\n\u3000 y\x1c z  ’") == "é x\ny z ’"


def test_other_space_chars_are_every_other_whitespace_character() -> None:
    """No whitespace character lies above U+3000, where ``OTHER_SPACE_CHARS`` stops looking."""
    everywhere = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace() and c not in " \n")
    assert OTHER_SPACE_CHARS == everywhere
    assert len(OTHER_SPACE_CHARS) == 27


def _old_unconfuse(text: str) -> str:
    """``unconfuse`` as it read characters before: ``str.translate`` to drop them and to find look-alikes."""
    if text.isascii():
        return text
    if "\u200b" in text or "\u2060" in text or "\ufeff" in text:
        text = normalise._ZERO_WIDTH_GAP_RE.sub(" ", text)
    text = unicodedata.normalize("NFKC", text.translate(str.maketrans(dict.fromkeys(normalise.INVISIBLE_CHARS))))
    if text.isascii() or text.translate(normalise._HOMOGLYPHS) == text:
        return text
    return normalise._latin_words(text)


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(("a", "B", " ", "é", "’", "ﬁ", "Ａ", "\u00a0", *normalise.INVISIBLE_CHARS,
                                              *normalise.HOMOGLYPHS)), max_size=20))
def test_unconfuse_reads_what_translate_read(text: str) -> None:
    assert unconfuse(text) == _old_unconfuse(text)


def test_unconfuse_examples() -> None:
    assert unconfuse("Atten\u00adtion Is All You Need — Аshish Vаswani’s paper") == (
        "Attention Is All You Need — Ashish Vaswani’s paper")
    assert unconfuse("не знаю, café") == "не знаю, café"


#: Characters that NFKC reorders, composes, decomposes or folds, and the line break between them.
NFKC_ALPHABET = ("a", "e", "\n", " ", "\u0301", "\u0327", "…", "\u00a0", "ﬁ", "Ａ", "é", "\u1100", "\u1161", "\u11a8",
                 "²", "\u0338", "=", "\u3099", "か", "\u0345", "ǅ", "\u212b", "\r", "\u2028")


@settings(max_examples=1000, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(NFKC_ALPHABET), max_size=16))
def test_nfkc_line_by_line_is_nfkc(text: str) -> None:
    """The text's NFKC form is its lines' forms joined (combining marks after a line break included)."""
    assert normalise._nfkc(text) == unicodedata.normalize("NFKC", text)


def test_nfkc_examples() -> None:
    assert normalise._nfkc("ok\nwait…\n\u0301e\u0301 ﬁ") == "ok\nwait...\n\u0301é fi"
