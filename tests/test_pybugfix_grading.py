"""python-bugfix: extracting the function from an answer, and every grading rule."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifiers.base import composite_score
from verifiers.pybugfix import PythonBugfixVerifier
from verifiers.pybugfix.extract import extract
from verifiers.pybugfix.grading import changed_lines, conciseness, normalised_function, values_equal
from verifiers.pybugfix.sandbox import decode, resolve_mode
from verifiers.pybugfix.tasks import SPECS

V = PythonBugfixVerifier()
SPEC = {spec.task_id: spec for spec in SPECS}
SUM_FIRST = SPEC["off_by_one/sum_first"]
ADD_ITEM = SPEC["mutable_default/add_item"]
QUESTION = {task.task_id: task.question for task in V.tasks()}


def grade(task_id: str, output: str):
    return V.score(QUESTION[task_id], output)


def ext(answer: str, spec=SUM_FIRST):
    return extract(answer, spec.name, spec.buggy)


FIX = SUM_FIRST.fixed

# ------------------------------------------------------------------------------------------ extraction


@pytest.mark.parametrize("answer", [
    f"```python\n{FIX}```",
    f"```py\n{FIX}```",
    f"```\n{FIX}```",
    f"~~~python\n{FIX}~~~",
    f"The loop stops one early.\n\n```python\n{FIX}```\nThat fixes it.",
    f"```text\nnot code\n```\n```python\n{FIX}```",
    FIX,  # no fence: a bare top-level def
    f"Sure! Here it is:\n{FIX}\nThe bound was wrong.",
    f"```python\nimport math\n\nLIMIT = 3\n\n\ndef helper(x):\n    return x\n\n\n{FIX}```",
    f'```python\n{FIX}\nif __name__ == "__main__":\n    print(sum_first([1, 2], 2))\n```',
    "1. The fix:\n\n   ```python\n" + "".join("   " + line + "\n" for line in FIX.splitlines()) + "   ```\n",
])
def test_extract_ok(answer: str) -> None:
    found = ext(answer)
    assert found.status == "ok", found
    assert found.function == normalised_function(FIX, "sum_first")


def test_first_fenced_block_defining_the_function_wins_over_prose() -> None:
    answer = f"def sum_first(xs, n):\n    return 0\n\n```python\n{FIX}```"
    assert ext(answer).function == normalised_function(FIX, "sum_first")
    two_blocks = f"```python\n{FIX}```\n```python\ndef sum_first(xs, n):\n    return 0\n```"
    assert ext(two_blocks).function == normalised_function(FIX, "sum_first")


@pytest.mark.parametrize(("answer", "status", "in_detail"), [
    ("", "not_found", "no function named sum_first"),
    ("I am not sure how to fix it.", "not_found", "no function named sum_first"),
    ("```python\ndef other(xs, n):\n    return 0\n```", "not_found", "no function named sum_first"),
    ("```python\ndef sum_first(xs, n)\n    return 0\n```", "syntax_error", "SyntaxError at line 1"),
    ("```python\ndef sum_first(xs, n):\nreturn 0\n```", "syntax_error", "SyntaxError"),
    (f"```python\n{FIX}\n{FIX}```", "defined_twice", "defined 2 times"),
    (f"```python\n{FIX}\nsum_first = lambda xs, n: 0\n```", "defined_twice", "defined 2 times"),
    ("```python\ndef sum_first(xs):\n    return sum(xs)\n```", "signature_changed", "expected def sum_first(xs, n)"),
    ("```python\ndef sum_first(xs, n, extra=0):\n    return 0\n```", "signature_changed",
     "found def sum_first(xs, n, extra=...)"),
    ("```python\ndef sum_first(items, n):\n    return 0\n```", "signature_changed", "signature changed"),
    ("```python\nasync def sum_first(xs, n):\n    return 0\n```", "signature_changed", "async def"),
    (f"```python\n{FIX}\nprint(sum_first([1], 1))\n```", "tampering", "top-level code at line"),
    (f"```python\nimport builtins\nbuiltins.len = lambda x: 0\n{FIX}```", "tampering", "builtins.len"),
    (f"```python\nimport sys\nsys.exit(0)\n{FIX}```", "tampering", "sys.exit(0)"),
    (f"```python\nimport os\nX = os.system('true')\n{FIX}```", "tampering", "os.system"),
])
def test_extract_problems(answer: str, status: str, in_detail: str) -> None:
    found = ext(answer)
    assert found.status == status, found
    assert in_detail in found.detail


def test_mutable_default_fix_keeps_the_signature() -> None:
    """Default values may change ([] -> None), having a default may not."""
    assert ext(f"```python\n{ADD_ITEM.fixed}```", ADD_ITEM).status == "ok"
    no_default = "```python\ndef add_item(item, items):\n    return [item]\n```"
    assert ext(no_default, ADD_ITEM).status == "signature_changed"


def test_comments_docstrings_and_formatting_do_not_count_as_changes() -> None:
    noisy = ('```python\ndef sum_first(xs, n):\n    """Sum of the first n items."""\n    total = 0  # start\n\n'
             '    for i in range(n):   # was range(n - 1)\n        total += xs[i]\n    return total\n```')
    found = ext(noisy)
    assert found.status == "ok"
    assert found.function == normalised_function(FIX, "sum_first")


# ----------------------------------------------------------------------------------------- grade rules


def test_correct_and_concise_scores_one() -> None:
    g = grade(SUM_FIRST.task_id, f"```python\n{FIX}```")
    assert (g.correctness, g.well_formed, g.conciseness, g.composite) == (1.0, 1.0, 1.0, 1.0)
    assert g.feedback == "all 4 hidden tests passed"


def test_partly_right_scores_the_share_of_hidden_tests_and_names_the_first_failure() -> None:
    # handles n == len(xs) but breaks on n == 0 by returning None
    answer = ("```python\ndef sum_first(xs, n):\n    total = 0\n    for i in range(n):\n        total += xs[i]\n"
              "    return total if n else None\n```")
    g = grade(SUM_FIRST.task_id, answer)
    assert g.correctness == 0.75
    assert g.composite == pytest.approx(composite_score(0.75, 1.0, 1.0))
    assert g.feedback == "passed 3/4 hidden tests; first failure: sum_first([], 0) expected 0, got None"


def test_an_exception_is_named_in_the_feedback() -> None:
    answer = "```python\ndef sum_first(xs, n):\n    return xs[n]\n```"
    g = grade(SUM_FIRST.task_id, answer)
    assert g.correctness == 0.0 and g.well_formed == 1.0
    assert "first failure: sum_first([5], 1) expected 5, raised IndexError: list index out of range" in g.feedback


def test_no_function_scores_zero() -> None:
    for answer in ("", "The bug is the loop bound.", "```python\ndef sum_first(xs, n)\n    pass\n```",
                   f"```python\n{FIX}\n{FIX}```"):
        g = grade(SUM_FIRST.task_id, answer)
        assert (g.correctness, g.well_formed, g.conciseness, g.composite) == (0.0, 0.0, 0.0, 0.0), answer


def test_changed_signature_and_tampering_score_as_wrong_without_running() -> None:
    g = grade(SUM_FIRST.task_id, "```python\ndef sum_first(xs, n=None):\n    return sum(xs[:n])\n```")
    assert g.correctness == 0.0 and g.well_formed == 1.0 and g.composite <= 0.5
    assert "signature changed" in g.feedback and "scored as wrong" in g.feedback
    g = grade(SUM_FIRST.task_id, f"```python\n{FIX}\nassert sum_first([1, 2], 2) == 3\n```")
    assert g.correctness == 0.0 and "top-level code" in g.feedback


def test_a_rewrite_far_beyond_the_bug_loses_conciseness() -> None:
    rewrite = ("```python\ndef sum_first(xs, n):\n    acc = []\n    idx = 0\n    while idx < n:\n"
               "        acc.append(xs[idx])\n        idx = idx + 1\n    result = 0\n    for value in acc:\n"
               "        result = result + value\n    return result\n```")
    g = grade(SUM_FIRST.task_id, rewrite)
    assert g.correctness == 1.0
    assert g.conciseness < 1.0 and g.composite < 1.0
    assert "change only what the bug needs" in g.feedback
    # the one-line idiomatic fix is concise
    assert grade(SUM_FIRST.task_id, "```python\ndef sum_first(xs, n):\n    return sum(xs[:n])\n```").composite == 1.0


def test_conciseness_rule() -> None:
    buggy = "def f(x):\n    a = 1\n    b = 2\n    c = 3\n    return a"
    fixed = "def f(x):\n    a = 1\n    b = 2\n    c = 3\n    return b"
    assert changed_lines(buggy, fixed) == 1
    assert conciseness(buggy, fixed, fixed) == (1.0, 1, 4)
    rewrite = "def f(x):\n    p = 1\n    q = 2\n    r = 3\n    s = 4\n    t = 5\n    return q"
    credit, used, allowance = conciseness(buggy, fixed, rewrite)
    assert (used, allowance) == (6, 4)
    assert credit == pytest.approx(1 - 2 / 5)
    assert conciseness(buggy, fixed, "\n".join(f"v{i} = {i}" for i in range(40)))[0] == 0.0


def test_unknown_task_scores_zero() -> None:
    g = V.score("What is 2 + 2?", f"```python\n{FIX}```")
    assert g.composite == 0.0 and "no ground truth" in g.feedback


def test_question_lookup_ignores_whitespace() -> None:
    squashed = " ".join(QUESTION[SUM_FIRST.task_id].split())
    assert V.score(squashed, f"```python\n{FIX}```").composite == 1.0


def test_values_equal_rules() -> None:
    assert values_equal(1.5, 1.5000000000001) and values_equal(2, 2.0)
    assert not values_equal(True, 1) and not values_equal(1, True)
    assert not values_equal([1, 2], (1, 2)) and values_equal((1, [2.0]), (1, [2]))
    assert values_equal({"a": [1]}, {"a": [1.0]}) and not values_equal({"a": 1}, {"b": 1})
    assert values_equal(float("nan"), float("nan")) and not values_equal("1", 1)
    assert values_equal({1, 2}, {2, 1}) and not values_equal({1}, [1])


def test_decode_rejects_forged_shapes() -> None:
    assert decode({"tuple": [1, {"list": ["a"]}]}) == (1, ["a"])
    assert decode({"dict": [[{"tuple": [1]}, {"set": [2]}]]}) == {(1,): {2}}
    for bad in ({"list": 1}, {"evil": []}, {"dict": [[1]]}, {"a": 1, "b": 2}, {"float": "1e999x"}):
        with pytest.raises(ValueError):
            decode(bad)


def test_sandbox_mode_from_argument_or_environment() -> None:
    assert resolve_mode(None, {}) == "auto"
    assert resolve_mode(None, {"HARNESS_SANDBOX": "required"}) == "required"
    assert resolve_mode("limits", {"HARNESS_SANDBOX": "required"}) == "limits"
    with pytest.raises(ValueError, match="HARNESS_SANDBOX='strict' is not one of auto, required, limits"):
        resolve_mode(None, {"HARNESS_SANDBOX": "strict"})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_score_never_raises_and_stays_in_range(text: str) -> None:
    for output in (text, f"```python\n{text}\n```", f"def sum_first(xs, n):\n{text}"):
        g = grade(SUM_FIRST.task_id, output)
        assert all(0.0 <= x <= 1.0 for x in (g.correctness, g.well_formed, g.conciseness, g.composite))
        assert len(g.feedback) < 400


def test_demo_table() -> None:
    from click.testing import CliRunner

    from verifiers.pybugfix.__main__ import DEMO_CASES, demo_rows, main
    from verifiers.pybugfix.sandbox import Limits

    rows = demo_rows(PythonBugfixVerifier(limits=Limits(cpu_s=1, wall_s=2.0)))
    assert len(rows) == len(DEMO_CASES)
    composite = {(task_id, case): g.composite for task_id, case, g in rows}
    assert composite[("off_by_one/sum_first", "reference fix")] == 1.0
    assert composite[("off_by_one/sum_first", "full rewrite")] == 0.8
    assert composite[("off_by_one/sum_first", "no function")] == 0.0
    assert composite[("off_by_one/sum_first", "infinite loop")] == 0.5
    assert CliRunner().invoke(main, []).exit_code == 2  # --demo is required


def test_required_sandbox_without_bubblewrap_is_an_error_and_auto_falls_back_once() -> None:
    import warnings

    from verifiers.pybugfix import Sandbox, SandboxUnavailableError, SandboxWarning

    with pytest.raises(SandboxUnavailableError, match="sandbox required but bubblewrap cannot start: the 'bwrap' "
                                                      "executable is not on PATH"):
        Sandbox("required", bwrap="/nonexistent/bwrap")
    with pytest.raises(SandboxUnavailableError):
        PythonBugfixVerifier(sandbox=Sandbox("required", bwrap="no-such-bwrap"))
    auto = PythonBugfixVerifier(sandbox=Sandbox("auto", bwrap="no-such-bwrap"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert auto.sandbox_kind == "limits"
        assert auto.score(QUESTION[SUM_FIRST.task_id], f"```python\n{FIX}```").composite == 1.0
        assert auto.sandbox_kind == "limits"
    assert [w.category for w in caught] == [SandboxWarning]
    assert "not on PATH" in auto.sandbox.fallback_reason
    assert PythonBugfixVerifier(sandbox="limits").sandbox_kind == "limits"
    assert V.sandbox_kind in ("bubblewrap", "limits")


def test_report_parsing_rejects_wrong_nonce_count_and_shape() -> None:
    from verifiers.pybugfix.sandbox import Outcome, _parse_report

    good = json.dumps({"nonce": "n1", "results": [["ok", {"list": [1]}], ["error", "ValueError: x"]]}).encode()
    assert _parse_report(good, "n1", 2) == ((Outcome(True, [1]), Outcome(False, error="ValueError: x")), "")
    assert _parse_report(good, "other", 2)[0] is None
    assert _parse_report(good, "n1", 3)[0] is None
    assert _parse_report(b"", "n1", 2) == (None, "before reporting any result")
    for bad in (b"all tests passed", b'{"nonce": "n1", "results": [["ok"]]}',
                b'{"nonce": "n1", "results": [["passed", 1]]}', b"\xff\xfe"):
        assert _parse_report(bad, "n1", 1)[0] is None


def test_output_is_captured_up_to_the_cap() -> None:
    from verifiers.pybugfix.sandbox import Limits, Sandbox

    sandbox = Sandbox(V.sandbox.mode, Limits(output_bytes=100))
    run = sandbox.run("def f():\n    print('hello from the answer')\n    print('x' * 5000)\n    return 1\n", ["f()"])
    assert run.outcomes is not None and run.outcomes[0].value == 1
    assert run.output.startswith("hello from the answer") and len(run.output) == 100
