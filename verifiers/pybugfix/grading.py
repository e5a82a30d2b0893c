"""Grade one python-bugfix answer from its extraction and its sandboxed test run.

Rules (composite = 0.5 correctness + 0.3 well_formed + 0.2 conciseness, :func:`verifiers.base.composite_score`):

* **well_formed** is 1 when a single function of the right name was found and compiles
  (:attr:`Extraction.found`), else 0 and the whole grade is 0.
* **correctness** is the share of hidden tests passed; 0 without running any when the signature changed
  or the code has top-level statements (``tampering``: counts as editing the tests).  A test passes when
  the call returns a value equal to the expected one by :func:`values_equal`; raising fails it.
* **conciseness** (only when found): ``changed_lines(buggy, answer)`` against an allowance of
  ``2 * changed_lines(buggy, reference fix) + CONCISE_SLACK`` lines; 1.0 within it, then minus
  1/``n`` per extra line (``n`` = lines of the buggy function), down to 0.  Lines are those of
  ``ast.unparse`` (formatting, comments and the docstring do not count; renaming does).

So: all tests passing with a small change 1.00; a full rewrite that passes 0.80 to 1.00 by size; a changed
signature 0.30 to 0.50; no function (or a syntax error, or two definitions) 0.00.
"""

from __future__ import annotations

import ast
import difflib
import math
from typing import Any

from verifiers.base import Grade, composite_score
from verifiers.pybugfix.extract import Extraction, function_text
from verifiers.pybugfix.sandbox import RunResult
from verifiers.pybugfix.tasks import BugSpec

#: Lines of change allowed on top of twice what the reference fix changes.
CONCISE_SLACK = 2
#: Tolerances of float comparison (``math.isclose``).
REL_TOL = 1e-9
ABS_TOL = 1e-12
#: Values in feedback are quoted up to this many characters; feedback stays below FEEDBACK_MAX.
QUOTE_CHARS = 80
FEEDBACK_MAX = 399


def values_equal(expected: Any, actual: Any) -> bool:
    """Equality of plain data: ``bool`` only equals ``bool``; other numbers (``int``/``float``) compare with
    ``math.isclose`` (NaN equals NaN); ``list``, ``tuple``, ``dict`` and ``set`` must match in type and
    compare element-wise (sets and dict keys by ``==``); anything else by ``==`` within the same type."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, float) and isinstance(actual, float) and math.isnan(expected) and math.isnan(actual):
            return True
        return math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if type(expected) is not type(actual):
        return False
    if isinstance(expected, (list, tuple)):
        return len(expected) == len(actual) and all(map(values_equal, expected, actual))
    if isinstance(expected, dict):
        return expected.keys() == actual.keys() and all(values_equal(expected[k], actual[k]) for k in expected)
    return bool(expected == actual)


def changed_lines(before: str, after: str) -> int:
    """Lines changed from ``before`` to ``after`` (per differing ``difflib`` block, the larger side)."""
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal")


def conciseness(buggy_fn: str, fixed_fn: str, answer_fn: str) -> tuple[float, int, int]:
    """``(credit, lines changed by the answer, allowance)`` by the rule of the module docstring."""
    allowance = 2 * changed_lines(buggy_fn, fixed_fn) + CONCISE_SLACK
    used = changed_lines(buggy_fn, answer_fn)
    if used <= allowance:
        return 1.0, used, allowance
    return max(0.0, 1.0 - (used - allowance) / max(1, len(buggy_fn.splitlines()))), used, allowance


def quote(value: str) -> str:
    """``value`` on one line, at most ``QUOTE_CHARS`` characters."""
    text = " ".join(value.split())
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…"


def _clip(feedback: str) -> str:
    return feedback if len(feedback) <= FEEDBACK_MAX else feedback[: FEEDBACK_MAX - 1] + "…"


def normalised_function(source: str, name: str) -> str:
    """``extract.function_text`` of the top-level function ``name`` in ``source`` (a task's own code)."""
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == name)
    return function_text(node)


def first_failure(spec: BugSpec, run: RunResult) -> tuple[int, str]:
    """``(tests passed, feedback about the first failing test or "")`` of a run that reported outcomes."""
    assert run.outcomes is not None
    passed, note = 0, ""
    for (call, expected_text), outcome in zip(spec.hidden, run.outcomes, strict=True):
        expected = ast.literal_eval(expected_text)
        if outcome.ok and values_equal(expected, outcome.value):
            passed += 1
        elif not note:
            got = f"got {quote(repr(outcome.value))}" if outcome.ok else f"raised {quote(outcome.error)}"
            note = f"first failure: {quote(call)} expected {quote(expected_text)}, {got}"
    return passed, note


def grade_answer(spec: BugSpec, extraction: Extraction, run: RunResult | None, buggy_fn: str,
                 fixed_fn: str) -> Grade:
    """The :class:`Grade` of one answer (rules in the module docstring).

    Args:
        spec: the task.
        extraction: :func:`verifiers.pybugfix.extract.extract` of the answer.
        run: the sandboxed run of ``spec.hidden`` when the extraction is ``ok``, else ``None``.
        buggy_fn, fixed_fn: the task's buggy and fixed functions as ``normalised_function`` gives them.
    """
    if not extraction.found:
        return Grade(0.0, 0.0, 0.0, 0.0, _clip(extraction.detail))
    concise, used, allowance = conciseness(buggy_fn, fixed_fn, extraction.function)
    size_note = "" if concise >= 1.0 else (f"; the answer changed {used} lines of the buggy function where "
                                           f"{allowance} would do: change only what the bug needs")
    n = len(spec.hidden)
    if extraction.status != "ok" or run is None:
        correctness, note = 0.0, f"{extraction.detail}; scored as wrong, no hidden test was run"
    elif run.outcomes is None:
        output = f"; output: {quote(run.output)}" if run.output.strip() else ""
        correctness, note = 0.0, f"none of the {n} hidden tests could run: {run.failure}{output}"
    else:
        passed, failure = first_failure(spec, run)
        correctness = passed / n
        note = f"all {n} hidden tests passed" if passed == n else f"passed {passed}/{n} hidden tests; {failure}"
    composite = round(composite_score(correctness, 1.0, concise), 6)
    return Grade(correctness, 1.0, concise, composite, _clip(note + size_note))
