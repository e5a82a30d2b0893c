"""Combining a task's weighted checks into one :class:`verifiers.base.Grade` (the arXiv verifier's shape).

The rules, in order (``checks`` are the task's, ``out`` the output clipped to ``MAX_GRADED_CHARS``):

1. **well_formed**: 1 when an answer of the expected shape is present: some ``answer`` check reports
   ``found`` (a number for ``number``, a named label for ``choice``, a JSON object for ``json``, a JSON tool
   call for ``tool_call``, answer-like text for the text checks); a task with no answer checks needs
   answer-like text.  Otherwise the output is evasive or empty and the grade is 0 throughout.
2. **correctness** = ``A * P``: ``A`` is the weight-averaged score of the answer checks (1 when there are
   none), ``P`` the product over failed ``forbidden`` checks of ``1 - min(weight, 1)``.
3. **conciseness** (only when well formed): the ``max_chars`` check's credit when the task has one (the
   smallest limit when several), else
   the arXiv verifier's rule on the stripped length (1 up to 800 characters, linear to 0 at 4,000).
4. **composite** = ``0.5 correctness + 0.3 well_formed + 0.2 conciseness`` (rounded to 6 places): a right,
   committed, concise answer 1.00; right but hedged 0.75 (each hedged check scores half); confidently wrong
   0.50; evasive or empty 0.00.  So an evasive answer never outscores a wrong one, and a hedged answer
   never equals a committed right one of the same length.
5. **feedback**: "correct: ..." when every check passed, else one sentence per check that failed (what it
   expected, what it found; a check that raises, a bug, counts as failed), each at most 300 characters,
   plus a length note when conciseness < 1.

:func:`grade_output` never raises for any string and every number it returns is in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verifiers.arxiv import CONCISE_CHARS, conciseness
from verifiers.base import Grade, composite_score
from verifiers.taskfile.checks import Check, MaxChars, Result
from verifiers.taskfile.extract import MAX_GRADED_CHARS, Output

#: The whole feedback string is cut to this many characters.
FEEDBACK_MAX = 1200


def _cut(text: str) -> str:
    return text if len(text) <= FEEDBACK_MAX else text[: FEEDBACK_MAX - 1] + "…"


@dataclass(frozen=True)
class Plan:
    """A task's checks arranged for grading (built once per task by :func:`plan_for`).

    Attributes:
        answers: the ``answer`` checks; constraints: the ``forbidden`` checks; length: the ``max_chars`` check
        with the smallest limit, or ``None``; total_weight: the answer checks' summed weight; n_checks: all checks.
    """

    answers: tuple[Check, ...]
    constraints: tuple[Check, ...]
    length: MaxChars | None
    total_weight: float
    n_checks: int


def plan_for(checks: Sequence[Check]) -> Plan:
    """The :class:`Plan` of a task's checks."""
    answers = tuple(c for c in checks if c.role == "answer")
    lengths = [c for c in checks if isinstance(c, MaxChars)]
    return Plan(answers, tuple(c for c in checks if c.role == "constraint"),
                min(lengths, key=lambda c: c.limit) if lengths else None, sum(c.weight for c in answers), len(checks))


def _evaluate(check: Check, out: Output) -> Result:
    try:
        return check.evaluate(out)
    except Exception as exc:  # noqa: BLE001 - a grader must never raise; the feedback says what broke
        return Result(0.0, False, f"{check.type}: could not be evaluated ({type(exc).__name__}).")


def grade_output(checks: Sequence[Check], question: str, output: object) -> Grade:
    """Grade ``output`` (``None`` reads as ``""``, other non-strings as ``str(output)``) with ``checks``
    for the task asked by ``question``.  Never raises; the rules are in the module docstring."""
    return grade_planned(plan_for(checks), question, output)


def grade_planned(plan: Plan, question: str, output: object) -> Grade:
    """:func:`grade_output` with the task's :class:`Plan` made beforehand (a verifier makes one per task, and
    this runs for every answer an optimizer grades)."""
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    out = Output(text, question)
    weighted = 0.0
    penalty = 1.0
    found = False
    failed: list[str] = []
    passed: list[str] = []
    for check in plan.answers:
        result = _evaluate(check, out)
        found = found or result.found
        weighted += check.weight * result.score
        (passed if result.score >= 1.0 else failed).append(result.feedback)
    for check in plan.constraints:
        result = _evaluate(check, out)
        if result.score < 1.0:
            penalty *= 1.0 - min(check.weight, 1.0)
            failed.append(result.feedback)
        else:
            passed.append(result.feedback)
    if not (found if plan.answers else out.answer_like):
        detail = " ".join(failed) if failed else "no answer of the expected shape."
        return Grade(0.0, 0.0, 0.0, 0.0, _cut(f"no answer (evasive or empty): {detail}"))
    correctness = (weighted / plan.total_weight if plan.answers else 1.0) * penalty
    correctness = 1.0 if correctness > 1.0 else (0.0 if correctness < 0.0 else correctness)
    n_chars = len(text.strip()) if len(text) <= MAX_GRADED_CHARS else len(out.text.strip())
    length = plan.length
    limit = length.limit if length is not None else CONCISE_CHARS
    if n_chars <= limit:
        concise = 1.0
    else:
        concise = length.conciseness(n_chars) if length is not None else conciseness(n_chars)
    if failed:
        feedback = f"{len(failed)} of {plan.n_checks} checks failed: " + " ".join(failed)
    else:
        feedback = "correct: " + " ".join(passed)
    if concise < 1.0:
        feedback += f" Too long: {n_chars} chars, keep it under {limit}."
    if len(feedback) > FEEDBACK_MAX:
        feedback = _cut(feedback)
    return Grade(correctness, 1.0, concise, round(composite_score(correctness, 1.0, concise), 6), feedback)
