"""End to end through MLflow Projects: ``mlflow run . -P ... --env-manager local``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest

REPO = Path(__file__).resolve().parents[1]


def _mlflow_run(store: str, cwd: Path, *params: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, MLFLOW_TRACKING_URI=store,
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for var in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME"):
        env.pop(var, None)
    args = [sys.executable, "-m", "mlflow", "run", str(REPO), "--env-manager", "local",
            "--experiment-name", "skills/arxiv"]
    for p in params:
        args += ["-P", p]
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _only_run() -> mlflow.entities.Run:
    runs = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")
    assert len(runs) == 1
    return runs[0]


def test_mlflow_run_with_test_lm_logs_into_the_project_run(mlflow_store: str, tmp_path: Path) -> None:
    proc = _mlflow_run(mlflow_store, tmp_path, "skill=arxiv", "fitness=verifier", "task_model=test/lessons",
                       "num_cases=12", "budget=20")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = _only_run()
    assert run.info.status == "FINISHED"
    assert run.data.tags["mlflow.project.entryPoint"] == "main"  # the run MLflow Projects created
    assert run.data.params["skill"] == "arxiv" and run.data.params["fitness"] == "verifier"
    assert run.data.metrics["holdout.verifier.evolved"] > run.data.metrics["holdout.verifier.baseline"]
    assert f"run id: {run.info.run_id}" in proc.stdout


def test_mlflow_run_bad_parameter_fails_the_run_with_one_line(mlflow_store: str, tmp_path: Path) -> None:
    proc = _mlflow_run(mlflow_store, tmp_path, "budget=0", "task_model=test/oracle")
    assert proc.returncode != 0
    assert "Error: invalid budget=0" in proc.stderr
    assert "Traceback (most recent call last)" not in proc.stderr.split("Error: invalid budget=0")[0][-2000:]
    assert _only_run().info.status == "FAILED"  # MLflow Projects ends its run; nothing left RUNNING


@pytest.mark.e2e
def test_mlflow_run_with_the_embedded_model(mlflow_store: str, tmp_path: Path) -> None:
    proc = _mlflow_run(mlflow_store, tmp_path, "skill=arxiv", "fitness=verifier", "num_cases=8", "budget=8",
                       "max_tokens=48")
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = _only_run()
    assert run.data.params["task_model"] == "embedded"
    for key in ("holdout.verifier.baseline", "holdout.verifier.evolved", "holdout.verifier.delta",
                "holdout.keyword.baseline", "lm_calls.task"):
        assert key in run.data.metrics
    assert run.data.metrics["lm_calls.task"] > 0
    assert 0.0 <= run.data.metrics["holdout.verifier.baseline"] <= 1.0
