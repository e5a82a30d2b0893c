"""Declarative checks: small graders of one output, registered by type name, validated at load.

A task's ``checks`` are a list of mappings with a ``type``, that type's parameters and an optional
``weight`` (a number > 0, default 1).  :func:`build_check` turns one mapping into a :class:`Check`, raising
:class:`~verifiers.taskfile.errors.TaskFileError` for an unknown type or a missing, unknown or wrongly typed
parameter, a regex that does not compile or an invalid JSON Schema.  ``CHECK_TYPES`` is the registry
(type name -> class), filled by the :func:`register_check` decorator.

Every check returns a :class:`Result` for an :class:`~verifiers.taskfile.extract.Output`.  The checks that
look for an answer share one rule: **the right answer alone scores 1, the right answer among other distinct
answers is hedging and scores half, only wrong answers score 0, and no answer of the check's shape at all
is "not found"** (``found=False``; :mod:`verifiers.taskfile.grading` turns that into well_formed 0).

Roles (how :mod:`verifiers.taskfile.grading` combines them):

* ``answer`` checks (exact, any_of, contains, regex, number, choice, json, tool_call) make correctness;
* ``constraint`` checks (forbidden) multiply correctness by ``1 - min(weight, 1)`` when they fail;
* the ``length`` check (max_chars) sets conciseness.
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

from jsonschema import SchemaError
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for

from verifiers.taskfile.errors import TaskFileError
from verifiers.taskfile.extract import Output, normalise
from verifiers.taskfile.params import Params, type_name

#: Feedback of one check is cut to this many characters (a whole sentence fits).
CHECK_FEEDBACK_MAX = 300
#: Share of the credit that stays when the right answer is given among others.
HEDGED_CREDIT = 0.5
#: tool_call credit: the right tool, then the matching share of the expected arguments.
TOOL_CREDIT, ARGUMENTS_CREDIT = 0.7, 0.3
#: Labels a choice / tool_call answer gets when it names several labels or none.
HEDGED_LABEL, NO_LABEL = "(hedged)", "(none)"


class Result(NamedTuple):
    """One check's verdict on one output (a named tuple: made once per check per grade, so cheap to build).

    Attributes:
        score: 0..1 credit of this check.
        found: an answer of this check's shape is present (a number for ``number``, a JSON object for
            ``json``, ...; for text checks, answer-like text).
        hedged: the right answer was given among other distinct answers.
        feedback: one sentence naming what was expected and what was found.
        label: the answered label (choice and tool_call only): the label, ``HEDGED_LABEL`` or ``NO_LABEL``.
    """

    score: float
    found: bool
    feedback: str
    hedged: bool = False
    label: str | None = None


def clip(text: str, limit: int = CHECK_FEEDBACK_MAX) -> str:
    """``text`` cut to ``limit`` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def listing(values: list[str], limit: int = 3) -> str:
    """``'a', 'b', 'c' (+2 more)``."""
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown if len(values) <= limit else f"{shown} (+{len(values) - limit} more)"


def committed(rights: int, wrongs: int) -> tuple[float, bool]:
    """The shared rule: ``(score, hedged)`` for counts of distinct right and wrong answers found."""
    if rights and not wrongs:
        return 1.0, False
    if rights:
        return HEDGED_CREDIT, True
    return 0.0, False


class Check(ABC):
    """One declarative check.  Subclasses set ``type`` (by :func:`register_check`) and ``role``."""

    type: ClassVar[str] = ""
    role: ClassVar[str] = "answer"

    def __init__(self, weight: float = 1.0) -> None:
        self.weight = weight

    @classmethod
    @abstractmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        """Build the check from its parameters (raises TaskFileError through ``p``)."""

    @abstractmethod
    def evaluate(self, out: Output) -> Result:
        """The check's verdict on ``out``; never raises."""

    @abstractmethod
    def expected(self) -> str:
        """A short text of what the check expects (used for ``Task.answer`` and feedback)."""

    @property
    def expected_label(self) -> str | None:
        """The expected label of a labelled check (choice, tool_call), else ``None``."""
        return None


CHECK_TYPES: dict[str, type[Check]] = {}


def register_check(name: str) -> Callable[[type[Check]], type[Check]]:
    """Class decorator: register a :class:`Check` subclass under type ``name``.

    Raises:
        ValueError: when ``name`` is taken by another class.
    """

    def decorate(cls: type[Check]) -> type[Check]:
        if CHECK_TYPES.get(name, cls) is not cls:
            raise ValueError(f"check type {name!r} is already registered by {CHECK_TYPES[name].__qualname__}")
        cls.type = name
        CHECK_TYPES[name] = cls
        return cls

    return decorate


def build_check(spec: object, where: str) -> Check:
    """A :class:`Check` from one ``checks`` entry; ``where`` names the file, line or eval id and the index.

    Raises:
        TaskFileError: not a mapping; missing or unknown ``type``; a bad ``weight``; a parameter that is
            missing, unknown, of the wrong type, a regex that does not compile or an invalid JSON Schema.
    """
    known = ", ".join(sorted(CHECK_TYPES))
    if not isinstance(spec, Mapping):
        raise TaskFileError(f"{where}: a check must be an object with a 'type', got {type_name(spec)}; "
                            f'write it as {{"type": "contains", "phrases": ["..."]}}')
    kind = spec.get("type")
    if not isinstance(kind, str) or kind not in CHECK_TYPES:
        problem = "missing" if kind is None else f"unknown check type {kind!r}"
        raise TaskFileError(f"{where}, field 'type': {problem}; use one of: {known}")
    p = Params(spec, where, kind)
    weight = p.number("weight", 1.0, positive=True)
    check = CHECK_TYPES[kind].from_params(p, weight)
    p.finish()
    return check


# ------------------------------------------------------------------------------------------ value matching


def values_match(expected: Any, found: Any) -> bool:
    """JSON value equality for json ``path`` values and tool arguments, stated once:

    strings are equal after :func:`~verifiers.taskfile.extract.normalise` (case, punctuation and spacing
    ignored); numbers are equal numerically (relative tolerance 1e-9) and a numeric string matches its
    number; booleans and null only equal themselves; lists match item by item; objects match key by key
    (the same keys).
    """
    if type(expected) is type(found) and expected == found:  # the common case, and exact: no normalising
        return True
    if isinstance(expected, bool) or isinstance(found, bool) or expected is None or found is None:
        return expected is found or (type(expected) is type(found) and expected == found)
    if isinstance(expected, int | float) or isinstance(found, int | float):
        try:
            return math.isclose(float(expected), float(found), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    if isinstance(expected, str) and isinstance(found, str):
        return normalise(expected) == normalise(found)
    if isinstance(expected, list) and isinstance(found, list):
        return len(expected) == len(found) and all(map(values_match, expected, found))
    if isinstance(expected, dict) and isinstance(found, dict):
        return expected.keys() == found.keys() and all(values_match(v, found[k]) for k, v in expected.items())
    return False


def short_json(value: Any, limit: int = 80) -> str:
    """Compact JSON of ``value``, cut to ``limit`` characters."""
    return clip(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str), limit)


# ------------------------------------------------------------------------------------------ text checks


class TextCheck(Check, ABC):
    """Checks of the text itself: their answer shape is answer-like text (or a pass)."""

    def verdict(self, out: Output, score: float, feedback: str) -> Result:
        """A Result whose ``found`` is: the check passed in part, or the output is answer-like."""
        return Result(score, score > 0 or out.answer_like, clip(feedback))


#: A lead-in that ``exact`` ignores, on normalised text: "The answer is: no." and "**Answer:** no" read as "no".
_ANSWER_LEAD_RE = re.compile(r"^(?:the )?(?:final )?answer(?: is)? ")


@register_check("exact")
class Exact(TextCheck):
    """The whole output equals ``value`` after normalisation (NFKC, case, punctuation, whitespace), a leading
    "the answer is" / "answer:" ignored."""

    def __init__(self, value: str, weight: float = 1.0) -> None:
        super().__init__(weight)
        self.value, self._norm = value, normalise(value)

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        value = p.text("value")
        if not normalise(value):
            raise p.error("value", "has no letters or digits, so nothing can equal it", "give the answer text")
        return cls(value, weight)

    def evaluate(self, out: Output) -> Result:
        said = out.normalised.strip()
        if said == self._norm or _ANSWER_LEAD_RE.sub("", said, count=1) == self._norm:
            return self.verdict(out, 1.0, f"exact: the answer is {self.value!r} as expected.")
        return self.verdict(out, 0.0, f"exact: expected exactly {self.value!r} and nothing else, found "
                                      f"{out.quoted()}.")

    def expected(self) -> str:
        return self.value


class PhraseCheck(TextCheck, ABC):
    """Checks over a list of phrases, matched as whole words after normalisation."""

    def __init__(self, phrases: tuple[str, ...], weight: float = 1.0) -> None:
        super().__init__(weight)
        self.phrases = phrases
        self._norms = tuple(normalise(p) for p in phrases)
        self._padded = tuple(f" {norm} " for norm in self._norms)

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        key = "values" if cls is AnyOf else "phrases"
        phrases = p.texts(key)
        empty = [ph for ph in phrases if not normalise(ph)]
        if empty:
            raise p.error(key, f"{empty[0]!r} has no letters or digits and can never be matched",
                          "use phrases with words in them")
        return cls(phrases, weight)

    def present(self, out: Output) -> list[str]:
        """The phrases that occur in the output (whole words, normalised)."""
        text = out.normalised
        return [ph for ph, padded in zip(self.phrases, self._padded, strict=True) if padded in text]

    def expected(self) -> str:
        return " / ".join(self.phrases)


@register_check("any_of")
class AnyOf(PhraseCheck):
    """At least one of ``values`` occurs (whole words, normalised): accepted spellings of one answer."""

    def evaluate(self, out: Output) -> Result:
        hits = self.present(out)
        if hits:
            return self.verdict(out, 1.0, f"any_of: found {hits[0]!r} as expected.")
        return self.verdict(out, 0.0, f"any_of: expected one of {listing(list(self.phrases))}, found none "
                                      f"in {out.quoted()}.")


@register_check("contains")
class Contains(PhraseCheck):
    """Every phrase of ``phrases`` occurs (whole words, normalised); the score is the share present."""

    def evaluate(self, out: Output) -> Result:
        hits = self.present(out)
        missing = [ph for ph in self.phrases if ph not in hits]
        if not missing:
            return self.verdict(out, 1.0, f"contains: all {len(self.phrases)} phrase(s) present.")
        return self.verdict(out, len(hits) / len(self.phrases),
                            f"contains: expected {listing(list(self.phrases))}, missing {listing(missing)}.")


@register_check("forbidden")
class Forbidden(PhraseCheck):
    """None of ``phrases`` occurs (whole words, normalised).  A constraint: failing it multiplies
    correctness by ``1 - min(weight, 1)`` (the default weight 1 makes it 0)."""

    role: ClassVar[str] = "constraint"

    def evaluate(self, out: Output) -> Result:
        hits = self.present(out)
        if not hits:
            return Result(1.0, True, "forbidden: none of the forbidden phrases used.")
        return Result(0.0, True, clip(f"forbidden: the answer must not say {listing(hits)}, but it does."))

    def expected(self) -> str:
        return "not " + " / ".join(self.phrases)


@register_check("regex")
class Regex(TextCheck):
    """``pattern`` (Python ``re`` syntax, compiled at load) matches somewhere in the output
    (``ignore_case``: match case-insensitively)."""

    def __init__(self, pattern: re.Pattern[str], weight: float = 1.0) -> None:
        super().__init__(weight)
        self.pattern = pattern

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        source = p.text("pattern")
        flags = re.IGNORECASE if p.flag("ignore_case") else 0
        try:
            return cls(re.compile(source, flags), weight)
        except re.error as exc:
            raise p.error("pattern", f"the regex {source!r} does not compile ({exc})",
                          "fix the pattern (Python re syntax; in JSON a backslash is written \\\\)") from None

    def evaluate(self, out: Output) -> Result:
        match = self.pattern.search(out.text)
        if match:
            return self.verdict(out, 1.0, f"regex: found {match.group(0)[:80]!r} as expected.")
        return self.verdict(out, 0.0, f"regex: expected text matching /{self.pattern.pattern[:100]}/, found "
                                      f"{out.quoted()}.")

    def expected(self) -> str:
        return f"/{self.pattern.pattern}/"


@register_check("max_chars")
class MaxChars(Check):
    """The stripped output has at most ``limit`` characters.  Sets conciseness: 1 within the limit, falling
    linearly to 0 at twice the limit.  Takes no ``weight`` (it does not count towards correctness)."""

    role: ClassVar[str] = "length"

    def __init__(self, limit: int) -> None:
        super().__init__(1.0)
        self.limit = limit

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        if p.has("weight"):
            raise p.error("weight", "max_chars sets conciseness, not correctness, so it takes no weight",
                          "remove 'weight' from this check")
        return cls(p.integer("limit"))

    def conciseness(self, n_chars: int) -> float:
        """Length credit of ``n_chars`` characters (see the class docstring)."""
        return 1.0 if n_chars <= self.limit else max(0.0, 1.0 - (n_chars - self.limit) / self.limit)

    def evaluate(self, out: Output) -> Result:
        n = len(out.text.strip())
        if n <= self.limit:
            return Result(1.0, True, f"max_chars: {n} chars, within {self.limit}.")
        return Result(self.conciseness(n), True, f"max_chars: {n} chars, keep it under {self.limit}.")

    def expected(self) -> str:
        return f"at most {self.limit} chars"


# ------------------------------------------------------------------------------------------ typed checks


#: Numbers joined to the one before a unit ("29 or 30 days", "8-9 km", "1, 2 and 3 m"), for Number's unit rule.
#: Possessive: a joiner and a number's separator can both be a comma, and backtracking over that choice
#: would take exponential time on "1,1,1,..."; at most 8 joined numbers, so checking the unit after each
#: of n numbers stays linear in n.
_JOINED_NUMBERS = (r"(?:[ \t]*+(?:or|to|and|,|/|-|–)[ \t]*+[-−+]?[0-9]++(?:[.,][0-9]++)*+(?:[eE][-+]?[0-9]++)?)"
                   r"{0,8}+")


def _fmt(value: float) -> str:
    """A number for feedback and ``Task.answer``: 12 significant digits, so it reads back as the same value."""
    return f"{value:.12g}"


@register_check("number")
class Number(Check):
    """A number equal to ``value`` within ``abs_tol`` and/or ``rel_tol`` (``math.isclose``; neither given:
    relative 1e-9), optionally followed by ``unit`` (a spelling or a list of accepted spellings, matched
    case-insensitively, spaces optional).

    Candidates: the distinct numbers of the output (``verifiers.taskfile.extract`` rules), minus wrong ones
    that only repeat a number of the task's input.  Shared rule on the candidates (right alone 1, right among
    other numbers 0.5, only wrong 0, none: not found), so a restatement in another unit or an intermediate
    value counts as hedging; with a unit, a right value of which no occurrence is followed by the unit
    (directly or through joined numbers, as in "29 or 30 days") earns half of that.
    """

    def __init__(self, value: float, abs_tol: float = 0.0, rel_tol: float = 1e-9,
                 units: tuple[str, ...] = (), weight: float = 1.0) -> None:
        super().__init__(weight)
        self.value, self.abs_tol, self.rel_tol, self.units = value, abs_tol, rel_tol, units
        spellings = sorted(units, key=len, reverse=True)
        alternatives = "|".join(r"\s*".join(map(re.escape, u.split())) for u in spellings)
        # "29 or 30 days": a number followed by joined numbers and then the unit carries the unit too
        self._unit_re = (re.compile(_JOINED_NUMBERS + r"[ \t]*(?:" + alternatives + r")(?![^\W\d_])", re.IGNORECASE)
                         if units else None)
        self._expected = _fmt(value) + (f" {units[0]}" if units else "")

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        value = p.number("value")
        abs_tol = p.number("abs_tol", 0.0)
        rel_tol = p.number("rel_tol", 0.0 if p.has("abs_tol") else 1e-9)
        if abs_tol < 0 or rel_tol < 0:
            raise p.error("abs_tol" if abs_tol < 0 else "rel_tol", "a tolerance cannot be negative",
                          "use 0 or a positive number")
        units = p.texts("unit") if p.has("unit") else ()
        p.raw("unit", None)
        return cls(value, abs_tol, rel_tol, units, weight)

    def expected(self) -> str:
        return self._expected

    def evaluate(self, out: Output) -> Result:
        numbers = out.numbers
        if not numbers:
            return Result(0.0, False, clip(f"number: expected {self.expected()}; no number was found in "
                                           f"{out.quoted()}."))
        asked = out.question_numbers
        rights: set[float] = set()
        wrongs: set[float] = set()
        with_unit = self._unit_re is None
        first_right = 0.0
        value, rel_tol, abs_tol = self.value, self.rel_tol, self.abs_tol
        for v, end in numbers:
            # math.isclose's rule, inlined (this loop runs for every number of every graded answer)
            if abs(v - value) <= max(rel_tol * max(abs(v), abs(value)), abs_tol):
                if not rights:
                    first_right = v
                rights.add(v)
                with_unit = with_unit or self._unit_re.match(out.text, end) is not None  # type: ignore[union-attr]
            elif v not in asked:
                wrongs.add(v)
        score, hedged = committed(len(rights), len(wrongs))
        unit_note = ""
        if rights and not with_unit:
            score, unit_note = score * HEDGED_CREDIT, f" but without the unit {self.units[0]!r}"
        if not rights and not wrongs:
            return Result(0.0, True, clip(f"number: expected {self.expected()}; the answer only repeats "
                                          f"numbers of the question: {out.quoted()}."))
        if rights and not hedged:
            fb = (f"number: found {_fmt(first_right)}, the expected value ({self._expected}){unit_note}." if unit_note
                  else f"number: found {_fmt(first_right)} as expected ({self._expected}).")
        else:
            shown = ", ".join(_fmt(v) for v in sorted(rights | wrongs)[:4])
            fb = (f"number: expected {self._expected} alone; found it among other numbers ({shown}): commit to one."
                  if hedged else f"number: expected {self._expected}, found {shown}.")
        return Result(score, True, fb if len(fb) <= CHECK_FEEDBACK_MAX else clip(fb), hedged)


class LabelledCheck(Check, ABC):
    """A check whose answer is one label of a set (choice, tool_call): it also reports the answered label."""

    @property
    @abstractmethod
    def expected_label(self) -> str:
        """The expected label."""


@register_check("choice")
class Choice(LabelledCheck):
    """One of ``options`` (at least 2 distinct labels) is named, and it is ``answer``.

    A label is named when it occurs as whole words (normalised); a label inside a longer named label does not
    count ("search" in "web search").  Shared rule: the right label alone 1, with other labels 0.5 (hedged),
    only other labels 0, no label: not found.
    """

    def __init__(self, options: tuple[str, ...], answer: str, weight: float = 1.0) -> None:
        super().__init__(weight)
        self.options, self.answer = options, answer
        self._padded = sorted(((f" {normalise(o)} ", o) for o in options), key=lambda pair: -len(pair[0]))

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        options = p.texts("options", min_items=2)
        norms = [normalise(o) for o in options]
        if len(set(norms)) != len(norms) or not all(norms):
            raise p.error("options", "two options are the same after normalisation, or one has no letters",
                          "give distinct labels")
        answer = p.text("answer")
        if normalise(answer) not in norms:
            raise p.error("answer", f"{answer!r} is not one of the options {listing(list(options), 6)}",
                          "make 'answer' one of 'options'")
        return cls(options, options[norms.index(normalise(answer))], weight)

    @property
    def expected_label(self) -> str:
        return self.answer

    def named(self, out: Output) -> list[str]:
        """The options named in the output (longest first; a shorter one inside a named longer one is dropped)."""
        text, named = out.normalised, []
        for padded, option in self._padded:
            if padded in text:
                named.append(option)
                text = text.replace(padded, "  ")
        return named

    def evaluate(self, out: Output) -> Result:
        named = self.named(out)
        if not named:
            return Result(0.0, False, clip(f"choice: expected {self.answer!r}; none of the options "
                                           f"{listing(list(self.options), 5)} was named in {out.quoted()}."),
                          label=NO_LABEL)
        rights = int(self.answer in named)
        score, hedged = committed(rights, len(named) - rights)
        label = named[0] if len(named) == 1 else HEDGED_LABEL
        if hedged:
            fb = f"choice: expected {self.answer!r} alone; the answer also names {listing(named)}: commit to one."
        elif rights:
            fb = f"choice: {self.answer!r} as expected."
        else:
            fb = f"choice: expected {self.answer!r}, found {listing(named)}."
        return Result(score, True, clip(fb), hedged, label)

    def expected(self) -> str:
        return self.answer


_MISSING = object()


def resolve_path(obj: Any, path: str) -> Any:
    """The value at a dotted ``path`` (``a.b.0.c``; integer parts index lists), or a private sentinel."""
    current = obj
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.lstrip("-").isdigit() and -len(current) <= int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


@register_check("json")
class Json(Check):
    """A JSON object in the output (fenced or bare, see ``verifiers.taskfile.extract``) whose value at
    ``path`` equals ``value`` (see :func:`values_match`) and/or that validates against ``schema`` (a JSON
    Schema, checked with ``jsonschema``'s ``check_schema`` at load).

    Shared rule over the distinct objects: all pass 1, some pass 0.5 (hedged), none pass 0, no object: not found.

    The verdict on an object is memoised by the object's source text (at most ``MEMO_SIZE`` entries, then the
    memo starts over): schema validation costs tens of microseconds and optimizers see the same answers often.
    """

    MEMO_SIZE: ClassVar[int] = 4096

    def __init__(self, path: str | None, value: Any, schema: dict[str, Any] | None, weight: float = 1.0) -> None:
        super().__init__(weight)
        self.path, self.value, self.schema = path, value, schema
        self._validator = validator_for(schema)(schema) if schema is not None else None
        self._memo: dict[str, str | None] = {}

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        path = p.text("path") if p.has("path") else None
        p.raw("path", None)
        if path is not None and not p.has("value"):
            raise p.error("value", "missing: 'path' needs the value expected there", "add 'value'")
        if path is None and p.has("value"):
            raise p.error("path", "missing: 'value' needs the path where it is expected", "add 'path'")
        value = p.raw("value", None)
        schema = p.mapping("schema") if p.has("schema") else None
        p.raw("schema", None)
        if path is None and schema is None:
            raise p.error("path", "a json check needs 'path' and 'value', or 'schema', or both", "add one")
        if schema is not None:
            try:
                validator_for(schema).check_schema(schema)
            except SchemaError as exc:
                raise p.error("schema", f"not a valid JSON Schema: {exc.message}"[:200],
                              "fix the schema (see https://json-schema.org)") from None
        return cls(path, value, schema, weight)

    def failure(self, obj: dict[str, Any]) -> str | None:
        """Why ``obj`` fails this check (one clause), or ``None`` when it passes."""
        if self.path is not None:
            found = resolve_path(obj, self.path)
            if found is _MISSING:
                return f"the object has no {self.path!r}"
            if not values_match(self.value, found):
                return f"{self.path} is {short_json(found)}, expected {short_json(self.value)}"
        if self._validator is not None:
            error = best_match(self._validator.iter_errors(obj))
            if error is not None:
                location = "/".join(map(str, error.absolute_path)) or "the object"
                return f"schema: at {location}: {error.message}"
        return None

    def memo_failure(self, obj: dict[str, Any], source: str) -> str | None:
        """:meth:`failure`, memoised by ``source`` (see the class docstring)."""
        try:
            return self._memo[source]
        except KeyError:
            pass
        if len(self._memo) >= self.MEMO_SIZE:
            self._memo.clear()
        verdict = self._memo[source] = self.failure(obj)
        return verdict

    def evaluate(self, out: Output) -> Result:
        objects = out.json_with_sources
        if not objects:
            return Result(0.0, False, clip(f"json: expected a JSON object ({self.expected()}); none was found "
                                           f"in {out.quoted()}."))
        failures = [self.memo_failure(obj, source) for obj, source in objects]
        failed = [f for f in failures if f is not None]
        score, hedged = committed(len(objects) - len(failed), len(failed))
        if not failed:
            return Result(1.0, True, "json: the object is as expected.")
        prefix = f"json: {len(objects)} different objects, only some pass: " if hedged else "json: "
        return Result(score, True, clip(prefix + failed[0] + "."), hedged)

    def expected(self) -> str:
        """With a ``path``, an object holding ``value`` there (a right answer when it meets the schema too);
        else ``"a JSON object valid against the schema"``."""
        if self.path is None:
            return "a JSON object valid against the schema"
        obj: Any = self.value
        for part in reversed(self.path.split(".")):
            obj = {part: obj}
        return json.dumps(obj, ensure_ascii=False)


#: Keys a tool call may use for the tool's name and for its arguments (OpenAI-style ``function`` nesting too).
TOOL_KEYS, ARGUMENT_KEYS = ("tool", "name", "tool_name"), ("arguments", "args", "parameters", "input")


def as_tool_call(obj: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """``(tool, arguments)`` of a JSON object shaped like a tool call, else ``None``.

    Accepted: ``{"tool": name, "arguments": {...}}`` (``name``/``tool_name``, ``args``/``parameters``/``input``
    too), the same nested under ``"function"`` or ``"tool_call"``, and arguments given as a JSON string.
    """
    for key in ("function", "tool_call"):
        nested = obj.get(key)
        if isinstance(nested, dict):
            obj = {**obj, **nested}
    tool = None
    for key in TOOL_KEYS:
        value = obj.get(key)
        if isinstance(value, str):
            tool = value
            break
    if tool is None:
        return None
    args: Any = {}
    for key in ARGUMENT_KEYS:
        if key in obj:
            args = obj[key]
            break
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return tool, {}
    return tool, args if isinstance(args, dict) else {}


@register_check("tool_call")
class ToolCall(LabelledCheck):
    """A JSON tool call (see :func:`as_tool_call`) of ``tool`` whose arguments hold the expected
    ``arguments`` subset (extra arguments are allowed; values compared by :func:`values_match`).

    Score of one call: 0 for another tool; ``0.7 + 0.3 * (share of the expected arguments matched)`` for the
    right tool (1.0 when no arguments are expected).  Several distinct calls are hedging: half the best
    call's score.  No tool-call object: not found.  ``tools`` (optional): the catalogue, for documentation.
    """

    def __init__(self, tool: str, arguments: dict[str, Any], tools: tuple[str, ...] = (),
                 weight: float = 1.0) -> None:
        super().__init__(weight)
        self.tool, self.arguments, self.tools = tool, arguments, tools
        self._tool_norm = normalise(tool)
        # a right answer as text: the call itself (so "The answer is <Task.answer>." grades as right)
        self._expected = json.dumps({"tool": tool, "arguments": arguments}, ensure_ascii=False)

    @classmethod
    def from_params(cls, p: Params, weight: float) -> Check:
        tool = p.text("tool")
        arguments = p.mapping("arguments", {})
        tools = p.texts("tools") if p.has("tools") else ()
        p.raw("tools", None)
        if tools and tool not in tools:
            raise p.error("tool", f"{tool!r} is not in 'tools' {listing(list(tools), 6)}", "add it to 'tools'")
        return cls(tool, arguments, tools, weight)

    @property
    def expected_label(self) -> str:
        return self.tool

    def call_score(self, tool: str, args: dict[str, Any]) -> tuple[float, list[str]]:
        """Score of one call and the expected argument names it got wrong or left out."""
        if tool != self.tool and normalise(tool) != self._tool_norm:
            return 0.0, list(self.arguments)
        wrong = [k for k, v in self.arguments.items() if k not in args or not values_match(v, args[k])]
        share = 1.0 - len(wrong) / len(self.arguments) if self.arguments else 1.0
        return TOOL_CREDIT + ARGUMENTS_CREDIT * share, wrong

    def evaluate(self, out: Output) -> Result:
        calls = [call for call in map(as_tool_call, out.json_objects) if call is not None]
        if not calls:
            return Result(0.0, False, clip(f'tool_call: expected a JSON call {{"tool": "{self.tool}", '
                                           f'"arguments": {{...}}}}; none was found in {out.quoted()}.'),
                          label=NO_LABEL)
        if len(calls) > 1:
            best = max(self.call_score(tool, args)[0] for tool, args in calls)
            tools = list(dict.fromkeys(tool for tool, _ in calls))
            return Result(best * HEDGED_CREDIT, True, clip(
                f"tool_call: expected one call of {self.tool!r}; found {len(calls)} different calls "
                f"({listing(tools)}): commit to one."), best > 0, tools[0] if len(tools) == 1 else HEDGED_LABEL)
        tool, args = calls[0]
        best, wrong = self.call_score(tool, args)
        label = tool
        if best == 0.0:
            fb = f"tool_call: expected tool {self.tool!r}, found {tool!r}."
        elif wrong:
            fb = "; ".join(f"{k} expected {short_json(self.arguments[k], 60)}, found "
                           f"{short_json(args[k], 60) if k in args else 'nothing'}" for k in wrong[:3])
            fb = f"tool_call: right tool {self.tool!r}, wrong arguments: {fb}."
        else:
            fb = f"tool_call: {self.tool!r} with the expected arguments."
        return Result(best, True, clip(fb), False, label)

    def expected(self) -> str:
        return self._expected
