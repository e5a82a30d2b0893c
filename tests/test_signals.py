"""Signals with real child processes (issue 20, point 7): clean-up is re-entrant, SIGHUP is SIGTERM, the message
names the run, and a run whose process is killed outright is reaped as KILLED."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import mlflow
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.tracking.reaper import HEARTBEAT_TAG, HOST_TAG, PID_TAG, orphan_reason, reap_orphans

ROOT = Path(__file__).resolve().parents[1]


def _env(store: str) -> dict[str, str]:
    return dict(os.environ, MLFLOW_TRACKING_URI=store, PYTHONPATH=str(ROOT), HARNESS_HEARTBEAT_S="1")


def _start(tmp_path: Path, store: str) -> subprocess.Popen[str]:
    # a slow test LM (200 ms per call) and a large budget: the run is surely in progress when the signals land
    return subprocess.Popen([sys.executable, "-m", "harness.cli", "evolve", "--task-model", "test/sleepy-200",
                             "--num-cases", "20", "--budget", "500", "--quiet"], cwd=tmp_path, env=_env(store),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _running_run(proc: subprocess.Popen[str], timeout: float = 120) -> mlflow.entities.Run:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")
        if runs and "gepa.best_val_score" in runs[0].data.metrics:  # optimising
            return runs[0]
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        time.sleep(0.2)
    raise AssertionError("the run did not start optimising in time")


def _signal_run(tmp_path: Path, store: str, signals: list[tuple[signal.Signals, float]]) -> tuple[int, str, str]:
    """Start a run, send ``signals`` (signal, seconds to wait before it); return (exit code, stderr, run id)."""
    proc = _start(tmp_path, store)
    try:
        run = _running_run(proc)
        for sig, wait in signals:
            time.sleep(wait)
            proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, stderr, run.info.run_id


def _assert_killed(run_id: str) -> None:
    run = mlflow.MlflowClient().get_run(run_id)
    assert run.info.status == "KILLED"
    assert run.data.tags["run.outcome"] == "killed"
    assert "error.txt" in {a.path for a in mlflow.MlflowClient().list_artifacts(run_id)}


@pytest.mark.parametrize("gap", [0.0, 0.5])
def test_two_ctrl_c_exit_130_and_end_the_run_killed(gap: float, mlflow_store: str, tmp_path: Path) -> None:
    code, stderr, run_id = _signal_run(tmp_path, mlflow_store, [(signal.SIGINT, 0.0), (signal.SIGINT, gap)])
    assert code == 130, stderr[-2000:]
    assert f"the MLflow run {run_id} ended as KILLED" in stderr
    assert "before an MLflow run was started" not in stderr
    _assert_killed(run_id)


def test_sigint_then_sigterm_keeps_the_first_signal(mlflow_store: str, tmp_path: Path) -> None:
    code, stderr, run_id = _signal_run(tmp_path, mlflow_store, [(signal.SIGINT, 0.0), (signal.SIGTERM, 0.05)])
    assert code == 130, stderr[-2000:]
    assert f"the MLflow run {run_id} ended as KILLED" in stderr
    assert "before an MLflow run was started" not in stderr
    _assert_killed(run_id)


def test_sighup_is_handled_like_sigterm(mlflow_store: str, tmp_path: Path) -> None:
    code, stderr, run_id = _signal_run(tmp_path, mlflow_store, [(signal.SIGHUP, 0.0)])
    assert code == 128 + signal.SIGHUP, stderr[-2000:]
    assert f"interrupted by SIGHUP: the MLflow run {run_id} ended as KILLED" in stderr
    assert "its files are kept in " in stderr  # the temporary run folder it kept is named
    kept = stderr.split("its files are kept in ", 1)[1].split()[0]
    assert (Path(kept) / "dataset").is_dir()
    _assert_killed(run_id)


def test_sigkill_leaves_a_run_that_reap_marks_killed(mlflow_store: str, tmp_path: Path) -> None:
    proc = _start(tmp_path, mlflow_store)
    try:
        run = _running_run(proc)
        assert run.data.tags[PID_TAG] == str(proc.pid) and run.data.tags[HOST_TAG] == socket.gethostname()
        first_beat = float(run.data.tags[HEARTBEAT_TAG])
        time.sleep(2.5)  # HARNESS_HEARTBEAT_S=1: the daemon thread has beaten since
        assert float(mlflow.MlflowClient().get_run(run.info.run_id).data.tags[HEARTBEAT_TAG]) > first_beat
        assert reap_orphans() == []  # a live process's run is never reaped
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert mlflow.MlflowClient().get_run(run.info.run_id).info.status == "RUNNING"  # no handler ran
    result = CliRunner().invoke(main, ["runs", "reap"])
    assert result.exit_code == 0, result.output
    assert f"run {run.info.run_id}" in result.output and "1 orphaned run(s)" in result.output
    reaped = mlflow.MlflowClient().get_run(run.info.run_id)
    assert reaped.info.status == "KILLED"
    assert f"process {proc.pid}" in reaped.data.tags["run.error"] and "is gone" in reaped.data.tags["run.error"]


def test_orphan_rule_never_reaps_live_or_fresh_runs() -> None:
    now = time.time()
    here = socket.gethostname()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = {PID_TAG: str(os.getpid()), HOST_TAG: here, HEARTBEAT_TAG: str(now - 10_000)}
    assert orphan_reason(live, here, now) is None  # alive here, however old its heartbeat
    assert orphan_reason({**live, PID_TAG: str(dead.pid)}, here, now) is not None
    fresh_elsewhere = {PID_TAG: "1", HOST_TAG: "other-host", HEARTBEAT_TAG: str(now - 5)}
    assert orphan_reason(fresh_elsewhere, here, now) is None
    stale_elsewhere = {**fresh_elsewhere, HEARTBEAT_TAG: str(now - 10_000)}
    assert "no heartbeat" in (orphan_reason(stale_elsewhere, here, now) or "")
    assert orphan_reason({}, here, now) is None  # not a harness run (e.g. a Projects run not yet begun)


def test_next_command_opening_the_store_reaps(mlflow_store: str) -> None:
    from harness.tracking.store import check_tracking_store

    client = mlflow.MlflowClient()
    experiment = client.create_experiment("reap-me")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    run = client.create_run(experiment, tags={PID_TAG: str(dead.pid), HOST_TAG: socket.gethostname(),
                                              HEARTBEAT_TAG: f"{time.time():.0f}"})
    other = client.create_run(experiment, tags={PID_TAG: "1", HOST_TAG: "elsewhere",
                                                HEARTBEAT_TAG: f"{time.time():.0f}"})
    check_tracking_store()
    assert client.get_run(run.info.run_id).info.status == "KILLED"
    assert client.get_run(other.info.run_id).info.status == "RUNNING"
