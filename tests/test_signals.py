"""Signals with real child processes (issue 20, point 7): clean-up is re-entrant, SIGHUP is SIGTERM, the message
names the run, and a run whose process is killed outright is reaped as KILLED."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import mlflow
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.tracking.reaper import HEARTBEAT_TAG, HOST_TAG, PID_TAG, orphan_reason, reap_orphans

T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]
#: generous bounds (seconds) for a loaded 2-core machine: the child's start (imports, preflight, baseline holdout)
#: up to its first optimisation metric, and its clean-up after the signals up to its exit
START_TIMEOUT_S = 600.0
EXIT_TIMEOUT_S = 300.0


class Child:
    """One ``harness evolve`` child process whose stdout and stderr go to files (a pipe nobody reads could fill
    and block the child under load)."""

    def __init__(self, tmp_path: Path, store: str, heartbeat_s: float | None = None) -> None:
        self.stderr_path = tmp_path / "child.stderr"
        env = dict(os.environ, MLFLOW_TRACKING_URI=store, PYTHONPATH=str(ROOT),
                   DSPY_CACHEDIR=str(tmp_path / "child-cache"))  # its own cache: no replies from earlier tests
        if heartbeat_s is not None:
            env["HARNESS_HEARTBEAT_S"] = str(heartbeat_s)
        # a slow test LM (200 ms per call) and a large budget: the run is surely in progress when the signals land
        with open(tmp_path / "child.stdout", "w") as out, open(self.stderr_path, "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "evolve", "--task-model",
                                          "test/sleepy-200", "--num-cases", "20", "--budget", "500", "--quiet"],
                                         cwd=tmp_path, env=env, stdout=out, stderr=err)

    @property
    def stderr(self) -> str:
        """What the child wrote to stderr so far."""
        return self.stderr_path.read_text(errors="replace")

    def wait(self, timeout: float = EXIT_TIMEOUT_S) -> int:
        """The child's exit code, waiting at most ``timeout`` seconds."""
        return self.proc.wait(timeout=timeout)

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=60)


def wait_until(check: Callable[[], T | None], what: str, child: Child | None = None,
               timeout: float = START_TIMEOUT_S) -> T:
    """Poll ``check()`` until it returns a value other than None; returns it.

    A store error while the child writes (SQLite locked under load) is a "not yet", not a failure.

    Raises:
        AssertionError: ``child`` exited meanwhile (its stderr tail is shown), or ``timeout`` seconds passed.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = check()
        except Exception:  # noqa: BLE001 - a transient read error of the store
            value = None
        if value is not None:
            return value
        if child is not None and child.proc.poll() is not None:
            raise AssertionError(f"the child exited ({child.proc.returncode}) before {what}: {child.stderr[-2000:]}")
        time.sleep(0.5)
    raise AssertionError(f"{what} did not happen within {timeout:g} s")


def _running_run(child: Child) -> mlflow.entities.Run:
    """The child's run, once it is optimising (its first GEPA metric is in the store)."""
    def optimising() -> mlflow.entities.Run | None:
        runs = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")
        return runs[0] if runs and "gepa.best_val_score" in runs[0].data.metrics else None

    return wait_until(optimising, "the run started optimising", child)


def _delivered(pid: int, sig: signal.Signals) -> bool | None:
    """True once ``sig`` is no longer pending for process ``pid`` (the kernel handed it to the process, whose C-level
    handler ran), else None; read from ``/proc/<pid>/status`` (``SigPnd``/``ShdPnd``; True where there is no
    ``/proc``)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    masks = [int(line.split()[1], 16) for line in status.splitlines() if line.startswith(("SigPnd:", "ShdPnd:"))]
    return True if not any(mask & (1 << (sig - 1)) for mask in masks) else None


def _signal_run(tmp_path: Path, store: str, signals: list[tuple[signal.Signals, float]]) -> tuple[int, str, str]:
    """Start a run, send ``signals`` once it optimises and return (exit code, stderr, run id).

    Each signal after the first waits until the previous one was delivered, then its gap (seconds, the timing
    the test is about): two signals sent back to back could otherwise merge into one pending signal."""
    with Child(tmp_path, store) as child:
        run = _running_run(child)
        previous: signal.Signals | None = None
        for sig, gap in signals:
            if previous is not None:
                wait_until(lambda prev=previous: _delivered(child.proc.pid, prev), f"{previous.name} delivered",
                           timeout=60)
            time.sleep(gap)
            child.proc.send_signal(sig)
            previous = sig
        code = child.wait()
        return code, child.stderr, run.info.run_id


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
    with Child(tmp_path, mlflow_store, heartbeat_s=1) as child:
        run = _running_run(child)
        assert run.data.tags[PID_TAG] == str(child.proc.pid) and run.data.tags[HOST_TAG] == socket.gethostname()
        first_beat = float(run.data.tags[HEARTBEAT_TAG])

        def beat() -> float | None:  # HARNESS_HEARTBEAT_S=1: the daemon thread beats again (unix seconds)
            value = float(mlflow.MlflowClient().get_run(run.info.run_id).data.tags[HEARTBEAT_TAG])
            return value if value > first_beat else None

        wait_until(beat, "a later heartbeat", child, timeout=120)
        assert reap_orphans() == []  # a live process's run is never reaped
        child.proc.kill()
        child.wait()
    assert mlflow.MlflowClient().get_run(run.info.run_id).info.status == "RUNNING"  # no handler ran
    result = CliRunner().invoke(main, ["runs", "reap"])
    assert result.exit_code == 0, result.output
    assert f"run {run.info.run_id}" in result.output and "1 orphaned run(s)" in result.output
    reaped = mlflow.MlflowClient().get_run(run.info.run_id)
    assert reaped.info.status == "KILLED"
    assert f"process {child.proc.pid}" in reaped.data.tags["run.error"] and "is gone" in reaped.data.tags["run.error"]


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


def test_late_signals_are_ignored_at_exit_only_after_an_interrupt() -> None:
    # Python's finalisation resets handled signals to their default action but leaves ignored ones ignored, so the
    # atexit hook is what keeps a second Ctrl-C in the last moments of a quick clean-up from killing the process
    from harness.cli.common import HANDLED_SIGNALS, Interrupts

    saved = {sig: signal.getsignal(sig) for sig in HANDLED_SIGNALS}
    try:
        interrupts = Interrupts().install()
        interrupts.ignore_late_signals()  # no signal received: handlers unchanged
        assert all(signal.getsignal(sig) == interrupts.handle for sig in HANDLED_SIGNALS)
        interrupts.received.append(signal.SIGINT)
        interrupts.ignore_late_signals()
        assert all(signal.getsignal(sig) == signal.SIG_IGN for sig in HANDLED_SIGNALS)
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
