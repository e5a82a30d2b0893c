"""harness.analysis.plot_jobs: plots drawn in a forked process, handed back in order, the process not waited for
once it has handed them back (issue 18)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.analysis.plot_jobs import PlotJobs
from harness.forked import can_fork

pytestmark = pytest.mark.skipif(not (can_fork() and os.path.isdir("/proc/self")), reason="needs fork and /proc")


def _slow_exit_plot(path: Path, seconds: float) -> Path:
    """(Plot process) a stand-in plot that makes the process's exit take ``seconds`` (a finalizer run as it
    exits)."""
    from multiprocessing import util

    util.Finalize(None, time.sleep, args=(seconds,), exitpriority=0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n")
    return path


def test_placed_returns_the_plots_without_waiting_for_the_process_to_exit(tmp_path: Path) -> None:
    jobs = PlotJobs()
    pid = jobs._process.pid
    jobs.submit(_slow_exit_plot, tmp_path / "a.png", 4.0)
    jobs.submit(_slow_exit_plot, tmp_path / "b.png", 0.0, artifact_path="other")
    started = time.monotonic()
    assert jobs.placed() == [(tmp_path / "a.png", "plots"), (tmp_path / "b.png", "other")]
    assert time.monotonic() - started < 3.0  # not the 4 s exit
    deadline = time.monotonic() + 20.0
    while Path(f"/proc/{pid}").exists():  # reaped later (a zombie keeps its /proc entry)
        assert time.monotonic() < deadline, "the plot process was never reaped"
        time.sleep(0.05)
