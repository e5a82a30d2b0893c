"""What a check reads in an output: normalised text, numbers, JSON objects, stock non-answers.

One :class:`Output` is built per grade and shared by all of a task's checks, so the output is normalised,
scanned for numbers and parsed for JSON at most once (each lazily, on first use).

Rules (stated here, used by :mod:`verifiers.taskfile.checks`):

* **normalised text** (:func:`normalise`): Unicode NFKC, case-folded, every character that is neither a
  letter, a digit, ``_`` nor whitespace replaced by a space, whitespace collapsed.  A *phrase* is found
  when its normalised form, padded with a space each side, occurs in :attr:`Output.normalised` (padded too);
* **numbers** (:data:`NUMBER_RE`): decimal numbers with an optional sign (only when the sign does not
  follow a letter or digit, so ``2024-03-15`` holds 2024, 3 and 15), optional ``,`` thousands
  separators (``1,234.5``), a ``.`` decimal part and an ``e`` exponent; decimal commas are not read, nor
  numbers too large for a float;
* **JSON objects** (:meth:`Output.json_objects`): the contents of fenced code blocks first, then bare
  ``{...}`` objects anywhere in the text (at most :data:`MAX_JSON_STARTS` starting braces are tried),
  distinct objects in order of appearance;
* **evasive** (:meth:`Output.answer_like`): an output with no letter or digit, or one that contains a
  stock non-answer phrase (:data:`EVASION_RE`: "I don't know", "I cannot determine", ...).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from functools import lru_cache

from verifiers.arxiv.normalise import quote

#: stock non-answer phrases ("I don't know", "I cannot determine ...", "not sure", "I'm sorry"), the arXiv
#: verifier's former evasion rule, kept here as the task-file checks' definition of an evasive answer
EVASION_RE = re.compile(
    r"\b(?:i\s+(?:do\s*n[o']?t|don[’']?t|cannot|can[’']?t)\s+(?:know|recall|remember)|not\s+sure|no\s+idea"
    r"|i[’']?m\s+sorry|i\s+am\s+sorry|(?:cannot|can[’']?t|can\s+not|unable\s+to|could\s*n[o’']?t)\s+"
    r"(?:determine|find|recall|verify|answer|provide|say|confirm|access|browse|look))\b",
    re.IGNORECASE,
)

__all__ = ["MAX_GRADED_CHARS", "NUMBER_RE", "Output", "normalise", "quote"]

#: Only this many leading characters of an output are read (bounds the work on runaway outputs).
MAX_GRADED_CHARS = 200_000
#: At most this many ``{`` positions are tried as the start of a bare JSON object.
MAX_JSON_STARTS = 64

#: The digits of a number (a sign and the character before are checked in Python, see :func:`numbers_in`:
#: a pattern starting with a character class lets the regex engine skip to the next digit quickly).
NUMBER_RE = re.compile(r"[0-9](?:[0-9]{0,2}(?:,[0-9]{3})+|[0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_SIGNS = frozenset("-−+")
_GLUE = frozenset(".,")
_NON_WORD_RE = re.compile(r"[^\w\s]+")
#: ASCII fast path of :func:`normalise`: the characters ``_NON_WORD_RE`` replaces, as a translate table.
_ASCII_NON_WORD = str.maketrans({chr(i): " " for i in range(128)
                                 if not (chr(i).isalnum() or chr(i) == "_" or chr(i).isspace())})
_ALNUM_RE = re.compile(r"[^\W_]")
#: Every stock non-answer ``EVASION_RE`` matches contains one of these (lower case): a cheap pre-filter.
_EVASION_WORDS: tuple[str, ...] = ("know", "recall", "remember", "sure", "idea", "sorry", "can", "unable", "could")
_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)


def normalise(text: str) -> str:
    """NFKC, case-folded, punctuation and symbols turned into spaces, whitespace collapsed."""
    if text.isascii():  # same result, without the regex: NFKC leaves ASCII alone
        return " ".join(text.casefold().translate(_ASCII_NON_WORD).split())
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD_RE.sub(" ", folded).split())


def numbers_in(text: str) -> list[tuple[float, int]]:
    """``(value, end offset)`` of every number in ``text``, in order (rules in the module docstring).

    A number glued to a preceding letter, digit, ``_``, ``.`` or ``,`` is skipped ("W01", "v2", the "3" of
    "1.2.3"); a ``-``/``−``/``+`` right before it is its sign unless the sign itself follows such a character
    ("2024-03" holds 2024 and 3).  Values too large for a float are skipped.
    """
    found = []
    for match in NUMBER_RE.finditer(text):
        start = match.start()
        before = text[start - 1] if start else " "
        negative = False
        if before in _SIGNS:
            ahead = text[start - 2] if start > 1 else " "
            negative = before != "+" and not (ahead.isalnum() or ahead == "_" or ahead in _GLUE)
        elif before.isalnum() or before == "_" or before in _GLUE:
            continue
        value = float(match.group().replace(",", ""))
        if math.isfinite(value):
            found.append((-value if negative else value, match.end()))
    return found


def _objects_from(text: str, decoder: json.JSONDecoder, limit: int) -> list[tuple[object, str]]:
    """Bare JSON values starting with ``{`` in ``text`` with their source text, trying at most ``limit``
    ``{`` positions and skipping parsed spans."""
    found: list[tuple[object, str]] = []
    start, tries = text.find("{"), 0
    while start != -1 and tries < limit:
        tries += 1
        try:
            obj, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        found.append((obj, text[start:end]))
        start = text.find("{", end)
    return found


@lru_cache(maxsize=16_384)
def question_numbers(question: str) -> frozenset[float]:
    """The values of the numbers in a task's question (cached: a pool asks the same questions again and again)."""
    return frozenset(value for value, _ in numbers_in(question))


_UNSET: object = object()
_DECODER = json.JSONDecoder()


class Output:
    """One output under grading, read lazily; ``text`` is the first :data:`MAX_GRADED_CHARS` characters.

    Attributes:
        text: the (clipped) output.
        question: the task's input, so a check can ignore what the output merely repeats from it.

    The derived views are computed on first use and kept (plain attributes rather than
    ``functools.cached_property``, whose per-instance lock costs more than the work on short outputs).
    """

    __slots__ = ("text", "question", "_normalised", "_answer_like", "_numbers", "_json")

    def __init__(self, text: str, question: str = "") -> None:
        self.text = text[:MAX_GRADED_CHARS]
        self.question = question
        self._normalised: str | None = None
        self._answer_like: bool | None = None
        self._numbers: list[tuple[float, int]] | None = None
        self._json: list[tuple[dict[str, object], str]] | None = None

    @property
    def normalised(self) -> str:
        """:func:`normalise` of the text, padded with one space each side (for whole-word search)."""
        if self._normalised is None:
            self._normalised = f" {normalise(self.text)} "
        return self._normalised

    @property
    def answer_like(self) -> bool:
        """Some letter or digit, and no stock non-answer phrase (see the module rules)."""
        if self._answer_like is None:
            text = self.text
            if _ALNUM_RE.search(text) is None:
                self._answer_like = False
            else:
                lower = text.lower()
                self._answer_like = not any(w in lower for w in _EVASION_WORDS) or EVASION_RE.search(text) is None
        return self._answer_like

    @property
    def numbers(self) -> list[tuple[float, int]]:
        """``(value, end offset)`` of every number in the text (see :func:`numbers_in`)."""
        if self._numbers is None:
            self._numbers = numbers_in(self.text)
        return self._numbers

    @property
    def question_numbers(self) -> frozenset[float]:
        """The values of the numbers in the question."""
        return question_numbers(self.question)

    @property
    def json_objects(self) -> list[dict[str, object]]:
        """Distinct JSON objects (dicts) in the output: fenced blocks first, then bare objects."""
        return [obj for obj, _ in self.json_with_sources]

    @property
    def json_with_sources(self) -> list[tuple[dict[str, object], str]]:
        """``(object, its source text)`` for each of :attr:`json_objects` (the source keys memos)."""
        if self._json is None:
            self._json = self._find_json()
        return self._json

    def _find_json(self) -> list[tuple[dict[str, object], str]]:
        if "{" not in self.text:
            return []
        candidates: list[tuple[object, str]] = []
        if "```" in self.text:
            for match in _FENCE_RE.finditer(self.text):
                body = match.group(2).strip()
                try:
                    candidates.append((json.loads(body), body))
                except (ValueError, RecursionError):
                    candidates.extend(_objects_from(body, _DECODER, MAX_JSON_STARTS))
        if not candidates:
            candidates = _objects_from(self.text, _DECODER, MAX_JSON_STARTS)
        objects = [(obj, src) for obj, src in candidates if isinstance(obj, dict)]
        if len(objects) < 2:
            return objects
        distinct: list[tuple[dict[str, object], str]] = []
        seen: list[dict[str, object]] = []
        for obj, src in objects:
            if obj not in seen:  # equal objects (==) are one answer, however they are spaced
                seen.append(obj)
                distinct.append((obj, src))
        return distinct

    def quoted(self) -> str:
        """A short quote of the output for feedback (see ``verifiers.arxiv.quote``)."""
        return quote(self.text)
