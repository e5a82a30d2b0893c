"""``--dry-run``: every check of a real run, the plan printed, exit 0, and no MLflow run created."""

from __future__ import annotations

import mlflow
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.cli.console import Reporter
from harness.config import EvolveConfig
from harness.dryrun import expected_calls


def _runs() -> int:
    """The harness's own runs (a run's holdout evaluation runs, one per variant, are not counted)."""
    runs = mlflow.search_runs(search_all_experiments=True)
    return int((runs.get("tags.holdout.evaluation_of", pd.Series(dtype=object)).isna()).sum()) if len(runs) else 0


def test_dry_run_prints_the_plan_and_creates_no_run(mlflow_store: str) -> None:
    before = _runs()
    result = CliRunner().invoke(main, ["evolve", "--dry-run", "--task-model", "test/oracle", "--budget", "40"])
    assert result.exit_code == 0, result.output
    for needle in ("dry run: what this run would do", "trainset 36, valset 16, holdout 16", "40 metric calls",
                   "test/oracle", "task ≤ 110", "no MLflow run was created"):
        assert needle in result.output, needle
    assert _runs() == before


def test_dry_run_value_spelling_from_mlproject(mlflow_store: str) -> None:
    result = CliRunner().invoke(main, ["evolve", "--dry-run", "true", "--task-model", "test/oracle"])
    assert result.exit_code == 0 and "dry run" in result.output
    result = CliRunner().invoke(main, ["evolve", "--dry-run", "false", "--task-model", "test/oracle",
                                       "--num-cases", "8", "--budget", "8", "--quiet"])
    assert result.exit_code == 0 and _runs() == 1  # false means a real run


def test_dry_run_of_a_side_by_side_experiment_counts_every_arm(mlflow_store: str) -> None:
    result = CliRunner().invoke(main, ["compare", "--dry-run", "--fitness", "keyword,verifier", "--optimizers",
                                       "gepa,miprov2", "--seeds", "2", "--task-model", "test/oracle",
                                       "--judge-model", "test/judge"])
    assert result.exit_code == 0, result.output
    assert "8 (2 seed(s))" in result.output and "judge model" in result.output
    assert _runs() == 0


def test_dry_run_fails_like_the_real_run(mlflow_store: str) -> None:
    result = CliRunner().invoke(main, ["evolve", "--dry-run", "--task-model", "test/nosuch"])
    assert result.exit_code == 2
    assert "test/nosuch" in result.output and _runs() == 0


def test_expected_calls_arithmetic() -> None:
    config = EvolveConfig(budget=60, reflection_model="embedded")
    calls = expected_calls(config, holdout=16, valset=16, arms=1, judge=True)
    # budget, GEPA's overshoot, the evolved holdout, the shared baseline and no-skill control holdouts
    assert calls == {"task": 60 + 6 + 16 + 16 + 16 + 16, "reflection": 10, "judge": 3 * 16}


@pytest.mark.parametrize(("budget", "num_cases"), [(10, 12), (30, 20), (7, 40)])
def test_expected_calls_bound_a_real_run(budget: int, num_cases: int) -> None:
    """The plan's task-LM figure is an upper bound of what a run makes (cache hits included), GEPA's
    overshoot of its budget counted."""
    from harness.run import evolve
    from harness.tracking.tracker import NullTracker

    config = EvolveConfig(task_model="test/lessons", budget=budget, num_cases=num_cases)
    result = evolve(config, NullTracker(), Reporter(quiet=True))
    made = result.metrics["lm_calls.task"]
    bound = expected_calls(config, len(result.splits.holdout), len(result.splits.valset), 1, judge=False)["task"]
    assert result.optimization.metric_calls > budget  # GEPA overshot its budget: the case the bound must cover
    assert made <= bound, (made, bound)
