"""The python-bugfix task pool: every task is solvable and not trivially solved; splits keep families whole."""

from __future__ import annotations

import ast
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from verifiers.base import DatasetError
from verifiers.pybugfix import PythonBugfixVerifier
from verifiers.pybugfix.grading import values_equal
from verifiers.pybugfix.tasks import FAMILIES, SPECS
from verifiers.registry import available_verifiers, get_verifier

V = PythonBugfixVerifier()
ALL_TASK_IDS = [spec.task_id for spec in SPECS]


def fenced(code: str) -> str:
    return f"Here is the fix:\n\n```python\n{code}```\n"


def test_pool_shape() -> None:
    assert len(SPECS) >= 48
    assert len(FAMILIES) >= 12
    assert len(set(ALL_TASK_IDS)) == len(SPECS)
    assert len({task.question for task in V.tasks()}) == len(SPECS)
    for spec in SPECS:
        assert len(spec.hidden) >= 4, spec.task_id
        assert spec.buggy != spec.fixed
        for call, expected in (*spec.hidden, spec.shown[:2]):
            ast.parse(call, mode="eval")
            ast.literal_eval(expected)
        # some hidden test is not the example the prompt shows
        assert any(call != spec.shown[0] for call, _ in spec.hidden), spec.task_id


def test_registered() -> None:
    assert "python-bugfix" in available_verifiers()
    assert isinstance(get_verifier("python-bugfix"), PythonBugfixVerifier)


def test_every_reference_fix_passes_and_every_buggy_version_fails() -> None:
    """Graded through the sandbox like any answer: the fix scores 1.00, the unchanged buggy code fails a test."""
    tasks = V.tasks()
    fixes = V.score_many([(task.question, fenced(spec.fixed)) for task, spec in zip(tasks, SPECS, strict=True)])
    buggies = V.score_many([(task.question, fenced(spec.buggy)) for task, spec in zip(tasks, SPECS, strict=True)])
    for spec, fix, buggy in zip(SPECS, fixes, buggies, strict=True):
        assert fix.composite == 1.0, (spec.task_id, fix)
        assert fix.feedback == f"all {len(spec.hidden)} hidden tests passed"
        assert buggy.well_formed == 1.0 and buggy.correctness < 1.0, (spec.task_id, buggy)
        assert "first failure:" in buggy.feedback


def test_the_shown_example_is_what_the_buggy_code_does() -> None:
    """The prompt's failing example: the fix returns the expected value, the buggy code what the prompt says."""
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        fixed_runs = list(pool.map(lambda spec: V.sandbox.run(spec.fixed, [spec.shown[0]]), SPECS))
        buggy_runs = list(pool.map(lambda spec: V.sandbox.run(spec.buggy, [spec.shown[0]]), SPECS))
    for spec, fixed_run, buggy_run in zip(SPECS, fixed_runs, buggy_runs, strict=True):
        call, expected, outcome = spec.shown
        fixed, buggy = fixed_run.outcomes, buggy_run.outcomes
        assert fixed is not None and buggy is not None, spec.task_id
        assert fixed[0].ok and values_equal(ast.literal_eval(expected), fixed[0].value), spec.task_id
        if outcome.startswith("raises "):
            assert not buggy[0].ok and buggy[0].error.startswith(outcome.removeprefix("raises ")), spec.task_id
        else:
            assert buggy[0].ok and values_equal(ast.literal_eval(outcome), buggy[0].value), spec.task_id
            assert not values_equal(ast.literal_eval(expected), buggy[0].value), spec.task_id


def test_question_shows_the_buggy_function_and_the_example() -> None:
    task, spec = V.tasks()[0], SPECS[0]
    assert spec.buggy in task.question
    assert spec.shown[0] in task.question and spec.shown[1] in task.question
    assert task.group == task.kind == spec.family
    for call, _ in spec.hidden:
        if call != spec.shown[0]:
            assert call not in task.question  # hidden tests stay hidden


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_splits_keep_a_family_together_and_are_deterministic(seed: int) -> None:
    splits = V.build_dataset(None, seed)
    assert splits.sizes == {"trainset": 32, "valset": 16, "holdout": 16}
    families = [{task.group for task in tasks} for _, tasks in splits.items()]
    assert not (families[0] & families[1] or families[0] & families[2] or families[1] & families[2])
    assert splits.digest() == V.build_dataset(None, seed).digest()
    assert splits.digest() == PythonBugfixVerifier(sandbox="limits").build_dataset(None, seed).digest()


def test_seeds_give_different_splits_and_sizes_are_checked() -> None:
    assert V.build_dataset(None, 0).digest() != V.build_dataset(None, 1).digest()
    small = V.build_dataset(12, 3)
    assert sum(small.sizes.values()) == 12
    with pytest.raises(DatasetError):
        V.build_dataset(len(SPECS) + 1)
