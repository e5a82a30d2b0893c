"""Combining a task's weighted checks into one :class:`verifiers.base.Grade` (the arXiv verifier's shape).

The rules, in order (``checks`` are the task's, ``out`` the output clipped to ``MAX_GRADED_CHARS``):

1. **well_formed**: 1 when an answer of the expected shape is present: some ``answer`` check reports
   ``found`` (a number for ``number``, a named label for ``choice``, a JSON object for ``json``, a JSON tool
   call for ``tool_call``, answer-like text for the text checks); a task with no answer checks needs
   answer-like text.  Otherwise the output is evasive or empty and the grade is 0 throughout.
2. **correctness** = ``A * P``: ``A`` is the weight-averaged score of the answer checks (1 when there are
   none), ``P`` the product over failed ``forbidden`` checks of ``1 - min(weight, 1)``.
3. **conciseness** (only when well formed): the ``max_chars`` check's credit when the task has one, else
   the arXiv verifier's rule on the stripped length (1 up to 800 characters, linear to 0 at 4,000).
4. **composite** = ``0.5 correctness + 0.3 well_formed + 0.2 conciseness`` (rounded to 6 places): a right,
   committed, concise answer 1.00; right but hedged 0.75 (each hedged check scores half); confidently wrong
   0.50; evasive or empty 0.00.  So an evasive answer never outscores a wrong one, and a hedged answer
   never equals a committed right one of the same length.
5. **feedback**: "correct: ..." when every check passed, else one sentence per check that failed (what it
   expected, what it found), each at most 300 characters, plus a length note when conciseness < 1.

:func:`grade_output` never raises for any string and every number it returns is in [0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence

from verifiers.arxiv import CONCISE_CHARS, conciseness
from verifiers.base import Grade, composite_score
from verifiers.taskfile.checks import Check, MaxChars, Result
from verifiers.taskfile.extract import Output

#: The whole feedback string is cut to this many characters.
FEEDBACK_MAX = 1200


def _cut(text: str) -> str:
    return text if len(text) <= FEEDBACK_MAX else text[: FEEDBACK_MAX - 1] + "…"


def evaluate_all(checks: Sequence[Check], out: Output) -> list[tuple[Check, Result]]:
    """Each check with its result on ``out``; a check that raises (a bug) counts as failed, not found."""
    results = []
    for check in checks:
        try:
            result = check.evaluate(out)
        except Exception as exc:  # noqa: BLE001 - a grader must never raise; the feedback says what broke
            result = Result(0.0, False, f"{check.type}: could not be evaluated ({type(exc).__name__}).")
        results.append((check, result))
    return results


def combine(results: Sequence[tuple[Check, Result]], out: Output) -> Grade:
    """The :class:`Grade` of already evaluated checks (rules 1-5 of the module docstring)."""
    answers = [(c, r) for c, r in results if c.role == "answer"]
    well_formed = any(r.found for _, r in answers) if answers else out.answer_like
    failed = [r.feedback for c, r in results if r.score < 1.0 and c.role != "length"]
    if not well_formed:
        detail = " ".join(failed) if failed else "no answer of the expected shape."
        return Grade(0.0, 0.0, 0.0, 0.0, _cut(f"no answer (evasive or empty): {detail}"))
    total = sum(c.weight for c, _ in answers)
    correctness = sum(c.weight * r.score for c, r in answers) / total if answers else 1.0
    for check, result in results:
        if check.role == "constraint" and result.score < 1.0:
            correctness *= 1.0 - min(check.weight, 1.0)
    n_chars = len(out.text.strip())
    lengths = [c for c, _ in results if isinstance(c, MaxChars)]
    concise = min(c.conciseness(n_chars) for c in lengths) if lengths else conciseness(n_chars)
    if failed:
        feedback = f"{len(failed)} of {len(results)} checks failed: " + " ".join(failed)
    else:
        feedback = "correct: " + " ".join(r.feedback for _, r in results if r.feedback)
    if concise < 1.0:
        limit = min(c.limit for c in lengths) if lengths else CONCISE_CHARS
        feedback = f"{feedback} Too long: {n_chars} chars, keep it under {limit}."
    correctness = min(1.0, max(0.0, correctness))
    composite = round(composite_score(correctness, 1.0, concise), 6)
    return Grade(round(correctness, 6), 1.0, round(concise, 6), composite, _cut(feedback))


def grade_output(checks: Sequence[Check], question: str, output: object) -> Grade:
    """Grade ``output`` (``None`` reads as ``""``, other non-strings as ``str(output)``) with ``checks``
    for the task asked by ``question``.  Never raises; see the module docstring for the rules."""
    text = output if isinstance(output, str) else ("" if output is None else str(output))
    out = Output(text, question)
    return combine(evaluate_all(checks, out), out)
