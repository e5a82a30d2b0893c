"""What a check reads in an output: normalised text, numbers, JSON objects, stock non-answers.

One :class:`Output` is built per grade and shared by all of a task's checks, so the output is normalised,
scanned for numbers and parsed for JSON at most once (each lazily, on first use).

Rules (stated here, used by :mod:`verifiers.taskfile.checks`):

* **normalised text** (:func:`normalise`): Unicode NFKC, case-folded, every character that is neither a
  letter, a digit, ``_`` nor whitespace replaced by a space, whitespace collapsed.  A *phrase* is found
  when its normalised form occurs as whole words in the normalised output (:meth:`Output.has_phrase`);
* **numbers** (:data:`NUMBER_RE`): decimal numbers with an optional sign (only when the sign does not
  follow a letter or digit, so ``2024-03-15`` holds 2024, 3 and 15), optional ``,`` thousands
  separators (``1,234.5``), a ``.`` decimal part and an ``e`` exponent; decimal commas are not read, nor
  numbers too large for a float;
* **JSON objects** (:meth:`Output.json_objects`): the contents of fenced code blocks first, then bare
  ``{...}`` objects anywhere in the text (at most :data:`MAX_JSON_STARTS` starting braces are tried),
  distinct objects in order of appearance;
* **evasive** (:meth:`Output.answer_like`): an output with no letter or digit, or one that contains a
  stock non-answer phrase (the arXiv verifier's ``EVASION_RE``: "I don't know", "I cannot determine", ...).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from functools import cached_property

from verifiers.arxiv import EVASION_RE, quote

__all__ = ["MAX_GRADED_CHARS", "NUMBER_RE", "Output", "normalise", "quote"]

#: Only this many leading characters of an output are read (bounds the work on runaway outputs).
MAX_GRADED_CHARS = 200_000
#: At most this many ``{`` positions are tried as the start of a bare JSON object.
MAX_JSON_STARTS = 64

NUMBER_RE = re.compile(
    r"(?<![\w.,])([-−+]?)((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
)
_NON_WORD_RE = re.compile(r"[^\w\s]+")
_ALNUM_RE = re.compile(r"[^\W_]")
_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)


def normalise(text: str) -> str:
    """NFKC, case-folded, punctuation and symbols turned into spaces, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD_RE.sub(" ", folded).split())


def parse_number(sign: str, digits: str) -> float:
    """The value of one :data:`NUMBER_RE` match (``sign`` group 1, ``digits`` group 2)."""
    value = float(digits.replace(",", ""))
    return -value if sign in ("-", "−") else value


def numbers_in(text: str) -> list[tuple[float, int]]:
    """``(value, end offset)`` of every number in ``text``, in order (see :data:`NUMBER_RE`)."""
    found = []
    for match in NUMBER_RE.finditer(text):
        value = parse_number(match.group(1), match.group(2))
        if math.isfinite(value):  # an exponent too large for a float reads as inf: not a usable number
            found.append((value, match.end()))
    return found


def _objects_from(text: str, decoder: json.JSONDecoder, limit: int) -> list[object]:
    """Bare JSON objects in ``text``, trying at most ``limit`` ``{`` positions, skipping parsed spans."""
    found: list[object] = []
    start, tries = text.find("{"), 0
    while start != -1 and tries < limit:
        tries += 1
        try:
            obj, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        found.append(obj)
        start = text.find("{", end)
    return found


class Output:
    """One output under grading, read lazily; ``text`` is the first :data:`MAX_GRADED_CHARS` characters.

    Attributes:
        text: the (clipped) output.
        question: the task's input, so a check can ignore what the output merely repeats from it.
    """

    def __init__(self, text: str, question: str = "") -> None:
        self.text = text[:MAX_GRADED_CHARS]
        self.question = question

    @cached_property
    def normalised(self) -> str:
        """:func:`normalise` of the text, padded with one space each side (for whole-word search)."""
        return f" {normalise(self.text)} "

    def has_phrase(self, normalised_phrase: str) -> bool:
        """Whether an already-normalised phrase occurs as whole words in the output."""
        return bool(normalised_phrase) and f" {normalised_phrase} " in self.normalised

    @cached_property
    def answer_like(self) -> bool:
        """Some letter or digit, and no stock non-answer phrase (see the module rules)."""
        return _ALNUM_RE.search(self.text) is not None and EVASION_RE.search(self.text) is None

    @cached_property
    def numbers(self) -> list[tuple[float, int]]:
        """``(value, end offset)`` of every number in the text (see :func:`numbers_in`)."""
        return numbers_in(self.text)

    @cached_property
    def question_numbers(self) -> list[float]:
        """The values of the numbers in the question."""
        return [value for value, _ in numbers_in(self.question)]

    @cached_property
    def json_objects(self) -> list[dict[str, object]]:
        """Distinct JSON objects (dicts) in the output: fenced blocks first, then bare objects."""
        decoder = json.JSONDecoder()
        candidates: list[object] = []
        for match in _FENCE_RE.finditer(self.text):
            body = match.group(2).strip()
            try:
                candidates.append(json.loads(body))
            except (ValueError, RecursionError):
                candidates.extend(_objects_from(body, decoder, MAX_JSON_STARTS))
        if not candidates:
            candidates = _objects_from(self.text, decoder, MAX_JSON_STARTS)
        distinct: dict[str, dict[str, object]] = {}
        for obj in candidates:
            if isinstance(obj, dict):
                distinct.setdefault(json.dumps(obj, sort_keys=True, default=str), obj)
        return list(distinct.values())

    def quoted(self) -> str:
        """A short quote of the output for feedback (see ``verifiers.arxiv.quote``)."""
        return quote(self.text)
