"""LLM-judge fitness: a language model grades an output against the task's rubric and the skill text.

The judge scores three sub-scores, each a number in [0, 1], and writes feedback:

* ``correctness``: does the output do what the rubric (``Task.expected_behavior``) asks;
* ``procedure``: does the output follow the skill's instructions (procedure following);
* ``conciseness``: is the output short and free of padding.

The composite uses the verifier's weights, ``composite_score(correctness, procedure, conciseness)``
(0.5 / 0.3 / 0.2, :data:`verifiers.COMPOSITE_WEIGHTS`): **procedure following takes the ``well_formed``
slot**, so a judge :class:`~verifiers.Grade` carries the procedure score in ``Grade.well_formed``.

A reply that cannot be parsed (:func:`parse_judgement`) is *unscored*: :meth:`JudgeGrader.grade` returns
``None``, the grader counts it (``unscored``) and keeps an excerpt (``unscored_examples``); no number is
ever made up or clamped.  One judge call is made per distinct ``(task.question, output)`` pair and cached,
so the score and the feedback GEPA sees come from the same judgement.

The call goes through DSPy: a ``dspy.Predict`` whose signature instructions are the judge rubric
(:data:`JUDGE_INSTRUCTIONS`), run with the project's plain :data:`harness.engine.program.SKILL_ADAPTER`
(system message = instructions, user message = :func:`judge_request`, the whole reply is parsed here).
The asked-for reply is one terse line, ``<correctness> <procedure> <conciseness> <feedback words>``: a short
prompt and a reply of about a dozen tokens keep the embedded 135M-parameter judge fast (its replies to the
earlier four-line format averaged 69 tokens and mostly did not parse; issue 18).  The embedded judge decodes
under a llama.cpp grammar of that line (:data:`harness.config.JUDGE_REPLY_GRAMMAR`), so its replies always parse;
whether its numbers mean anything is for the agreement with the verifier to say (harness.analysis.agreement).
Four ``key: value`` lines and a JSON object with the same keys are accepted too (other judge models, and replies
that name the keys).
"""

from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass

import dspy

from harness.config import JUDGE_OUTPUT_TAGS, JUDGE_TASK_TAGS
from harness.engine.program import SKILL_ADAPTER
from verifiers import Grade, Task, Unscored, composite_score

#: the offline default judge model (the embedded SmolLM2-135M, run in-process)
DEFAULT_JUDGE_MODEL = "embedded"

#: sub-score keys of a judgement, in composite order (procedure takes the ``well_formed`` slot)
SCORE_KEYS: tuple[str, str, str] = ("correctness", "procedure", "conciseness")
#: the written-feedback key of a judgement
FEEDBACK_KEY = "feedback"

#: input / output field names of the judge signature (one input: SKILL_ADAPTER's user message)
JUDGE_INPUT_FIELD = "request"
JUDGE_OUTPUT_FIELD = "judgement"

#: characters of a raw reply kept in ``JudgeGrader.unscored_examples``
EXCERPT_CHARS = 200

#: section tags of the judge's user message (see :func:`judge_request`); the output section is last
SKILL_OPEN, SKILL_CLOSE = "<skill>", "</skill>"
TASK_OPEN, TASK_CLOSE = JUDGE_TASK_TAGS
RUBRIC_OPEN, RUBRIC_CLOSE = "<rubric>", "</rubric>"
OUTPUT_OPEN, OUTPUT_CLOSE = JUDGE_OUTPUT_TAGS

#: the judge rubric: the signature instructions, i.e. the judge's system message
JUDGE_INSTRUCTIONS = """\
You grade an assistant's output. You get the skill it had to follow, the task, a rubric and the output.

Reply with one line and nothing else: three numbers from 0 to 1, then a few words of feedback.
correctness: 1 if the output does what the rubric says, 0 if it is wrong or missing.
procedure: 1 if the output follows the skill's instructions, 0 if it ignores them.
conciseness: 1 if the output is short and to the point, 0 if it is long or padded.
feedback: a few words on what is right or wrong.

Example replies:
0 1 1 wrong year; the rubric expects 2017
1 1 0 right title, but padded with a long preamble"""

_NUMBER_RE = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)")
_VALUE_RE = re.compile(rf"({_NUMBER_RE.pattern})(?:\s*/\s*({_NUMBER_RE.pattern}))?\s*[.,;]?")
_KEYS = (*SCORE_KEYS, FEEDBACK_KEY)
_LINE_RE = re.compile(
    r"^[ \t>*_#`-]*(" + "|".join(_KEYS) + r")[ \t*_`]*[:=][ \t*_`]*(.*?)[ \t*_`]*$",
    re.IGNORECASE | re.MULTILINE,
)
_JSON_ALIASES = {"procedure_following": "procedure"}
#: the terse reply: three numbers (space, comma or semicolon apart) at the start of a line, then the feedback
_TERSE_RE = re.compile(rf"^[ \t>*_#`-]*({_NUMBER_RE.pattern})[ \t]*[,;]?[ \t]+({_NUMBER_RE.pattern})[ \t]*[,;]?[ \t]+"
                       rf"({_NUMBER_RE.pattern})(?![\d./])[ \t*_`.,;:-]*(.*?)[ \t*_`]*$", re.MULTILINE)


def judge_signature() -> type[dspy.Signature]:
    """The judge's ``request -> judgement`` signature, with :data:`JUDGE_INSTRUCTIONS` as instructions."""
    return dspy.Signature(f"{JUDGE_INPUT_FIELD} -> {JUDGE_OUTPUT_FIELD}", JUDGE_INSTRUCTIONS)


def judge_request(skill_text: str, task: Task, output: str) -> str:
    """The judge's user message: the skill text, the task question, the rubric and the output to grade,
    each in its own tagged section (``<skill>``, ``<task>``, ``<rubric>``, ``<output>``; output last)."""
    return (
        f"{SKILL_OPEN}\n{skill_text.strip()}\n{SKILL_CLOSE}\n\n"
        f"{TASK_OPEN}\n{task.question.strip()}\n{TASK_CLOSE}\n\n"
        f"{RUBRIC_OPEN}\n{task.expected_behavior.strip()}\n{RUBRIC_CLOSE}\n\n"
        f"{OUTPUT_OPEN}\n{output}\n{OUTPUT_CLOSE}"
    )


def _parse_number(key: str, value: object) -> tuple[float | None, str]:
    """A sub-score in [0, 1] from a reply value, or ``(None, reason)``.

    Accepted: a bare decimal (``0.8``, ``1``, ``.5``), optionally followed by one ``.``/``,``/``;``;
    a fraction ``a/b`` with ``b > 0`` (``8/10`` -> 0.8); JSON numbers (not booleans).  Anything else
    (words, trailing text such as ``1 out of 10``, ``80%``, NaN) is rejected, and so is a value
    outside [0, 1]: nothing is clamped or guessed.
    """
    if isinstance(value, bool) or value is None:
        return None, f"{key} value {value!r} is not a number"
    if isinstance(value, int | float):
        number = float(value)
    else:
        text = str(value).strip()
        match = _VALUE_RE.fullmatch(text)
        if match is None:
            return None, f"{key} value {text[:40]!r} is not a number"
        number = float(match.group(1))
        if match.group(2) is not None:
            denominator = float(match.group(2))
            if denominator <= 0:
                return None, f"{key} value {text[:40]!r} divides by zero"
            number /= denominator
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        return None, f"{key} value {value!r} is outside [0, 1]"
    return number, ""


def _json_fields(reply: str) -> dict[str, object] | None:
    """The key/value pairs of the first JSON object in ``reply`` that has any judgement key, else None."""
    decoder = json.JSONDecoder()
    start = reply.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(reply, start)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            fields = {_JSON_ALIASES.get(str(k).strip().lower(), str(k).strip().lower()): v for k, v in obj.items()}
            if any(k in fields for k in _KEYS):
                return fields
        start = reply.find("{", start + 1)
    return None


def _line_fields(reply: str) -> tuple[dict[str, str] | None, str]:
    """The ``key: value`` lines of ``reply`` (case-insensitive keys, markdown emphasis ignored), or
    ``(None, reason)`` when one key is given two different values."""
    fields: dict[str, str] = {}
    for match in _LINE_RE.finditer(reply):
        key, value = match.group(1).lower(), match.group(2).strip()
        if key in fields and fields[key] != value:
            return None, f"conflicting values for {key}: {fields[key][:40]!r} and {value[:40]!r}"
        fields[key] = value
    return fields, ""


def _terse_fields(reply: str) -> dict[str, object]:
    """The fields of the first terse line ``<correctness> <procedure> <conciseness> <feedback>`` of ``reply``
    (empty when there is none); the feedback words may be missing."""
    match = _TERSE_RE.search(reply)
    if match is None:
        return {}
    return dict(zip(_KEYS, match.groups(), strict=True))


def judge_feedback(correctness: float, procedure: float, conciseness: float, feedback: str) -> str:
    """The feedback GEPA sees: ``"judge: correctness 0.80, procedure 1.00, conciseness 0.60. <feedback>"``."""
    head = f"judge: correctness {correctness:.2f}, procedure {procedure:.2f}, conciseness {conciseness:.2f}."
    return f"{head} {feedback.strip()}" if feedback.strip() else head


def parse_judgement(reply: str) -> tuple[Grade | None, str]:
    """Parse a judge reply into a grade: ``(Grade, "")``, or ``(None, reason)`` when it is unscored.

    Accepted formats (text around them is ignored):

    * one terse line ``<correctness> <procedure> <conciseness> <feedback words>`` (the numbers space, comma
      or semicolon apart; the feedback may be empty), read only when the reply names no key;
    * four lines ``correctness: <v>``, ``procedure: <v>``, ``conciseness: <v>``, ``feedback: <text>``
      (keys case-insensitive, ``=`` also accepted as separator, markdown bullets/bold tolerated; the
      feedback is that line's text);
    * a JSON object with the same keys (``procedure_following`` is an alias of ``procedure``); a JSON
      object holding any judgement key takes precedence over lines.

    Each value must be a number in [0, 1] as described in :func:`_parse_number` (``8/10`` is read as
    0.8).  A missing key (the ``feedback`` key included, though its text may be empty), a non-numeric or
    out-of-range value, conflicting duplicate lines, or an empty reply makes the reply unscored.

    The grade is ``Grade(correctness, well_formed=procedure, conciseness, composite, feedback)`` with
    ``composite = composite_score(correctness, procedure, conciseness)`` and ``feedback`` from
    :func:`judge_feedback`.  Never raises.
    """
    if not reply or not reply.strip():
        return None, "empty reply"
    fields: dict[str, object] | None = _json_fields(reply)
    if fields is None:
        line_fields, reason = _line_fields(reply)
        if line_fields is None:
            return None, reason
        fields = dict(line_fields) or _terse_fields(reply)
    missing = [k for k in _KEYS if k not in fields]
    if missing:
        return None, f"missing key{'s' if len(missing) > 1 else ''}: {', '.join(missing)}"
    scores: list[float] = []
    for key in SCORE_KEYS:
        number, reason = _parse_number(key, fields[key])
        if number is None:
            return None, reason
        scores.append(number)
    correctness, procedure, conciseness = scores
    feedback_value = fields[FEEDBACK_KEY]
    feedback = "" if feedback_value is None else str(feedback_value)
    return Grade(correctness, procedure, conciseness, composite_score(correctness, procedure, conciseness),
                 judge_feedback(correctness, procedure, conciseness, feedback)), ""


@dataclass(frozen=True)
class Judgement:
    """One judge call's outcome.

    Attributes:
        grade: the parsed grade (procedure in ``well_formed``), or None when the reply is unscored.
        raw_reply: the judge's whole reply text.
        error: why the reply is unscored (``""`` when ``grade`` is set).
    """

    grade: Grade | None
    raw_reply: str
    error: str


class JudgeGrader:
    """An LLM judge as a :class:`harness.engine.graders.Grader` (``name = "judge"``).

    Args:
        lm: the judge LM (e.g. ``build_lm(ModelSpec("embedded"))``).
        skill_text: the skill text the output should follow (procedure is judged against it; it is
            fixed for the grader's lifetime, so it is not part of the cache key).

    Attributes:
        unscored: number of distinct ``(task, output)`` pairs whose judge reply could not be parsed.
        unscored_examples: ``(task_id, reason, raw reply excerpt)`` per unscored pair, in order, the
            excerpt cut to :data:`EXCERPT_CHARS` characters.

    Thread-safe: judgements are cached by ``(task.question, output)`` in a dict under a lock, and a
    per-key lock makes concurrent calls for one key share a single LM call.  An LM failure is not a
    parse failure: it propagates (see :meth:`judgement`) and is neither cached nor counted as unscored.
    """

    name = "judge"

    def __init__(self, lm: dspy.LM, skill_text: str) -> None:
        self.lm = lm
        self.skill_text = skill_text
        self.unscored = 0
        self.unscored_examples: list[tuple[str, str, str]] = []
        self._predict = dspy.Predict(judge_signature())
        self._cache: dict[tuple[str, str], Judgement] = {}
        self._key_locks: dict[tuple[str, str], threading.Lock] = {}
        self._lock = threading.Lock()

    def _call(self, task: Task, output: str) -> str:
        """One judge LM call; returns the reply text (exceptions of the LM propagate)."""
        with dspy.context(lm=self.lm, adapter=SKILL_ADAPTER):
            pred = self._predict(**{JUDGE_INPUT_FIELD: judge_request(self.skill_text, task, output)})
        value = pred.get(JUDGE_OUTPUT_FIELD)
        return "" if value is None else str(value)

    def judgement(self, task: Task, output: str) -> Judgement:
        """The cached judgement of ``output`` for ``task``, calling the judge LM on the first request.

        Raises:
            dspy.utils.exceptions.LMError: an LM failure (network, timeout, context overflow, ...; DSPy wraps
                the engine's exception, kept as ``__cause__``) is not a parse failure: it propagates for the
                caller to handle, is not counted as unscored, and nothing is cached, so a later call retries.
        """
        key = (task.question, output)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                cached = self._cache.get(key)
            if cached is not None:
                return cached
            reply = self._call(task, output)
            grade, error = parse_judgement(reply)
            result = Judgement(grade=grade, raw_reply=reply, error=error)
            with self._lock:
                self._cache[key] = result
                self._key_locks.pop(key, None)
                if grade is None:
                    self.unscored += 1
                    self.unscored_examples.append((task.task_id, error, reply[:EXCERPT_CHARS]))
            return result

    def grade(self, task: Task, output: str) -> Grade | Unscored:
        """The judge's grade of ``output`` for ``task`` (composite in [0, 1]; procedure in ``well_formed``),
        or :class:`~verifiers.Unscored` with the parse error when the reply is unscored.  Raises what
        :meth:`judgement` raises (LM failures)."""
        judgement = self.judgement(task, output)
        return judgement.grade if judgement.grade is not None else Unscored(judgement.error)
