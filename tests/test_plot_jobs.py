"""harness.analysis.plot_jobs: plots drawn in a forked process, handed back in order, the process not waited for
once it has handed them back (issue 18)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

from harness.analysis.plot_jobs import PlotCache, PlotJobs
from harness.forked import WorkerError, can_fork

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
    pids = [process.pid for process in jobs._processes]
    jobs.submit(_slow_exit_plot, tmp_path / "a.png", 4.0)
    jobs.submit(_slow_exit_plot, tmp_path / "b.png", 0.0, artifact_path="other")
    started = time.monotonic()
    assert jobs.placed() == [(tmp_path / "a.png", "plots"), (tmp_path / "b.png", "other")]
    assert time.monotonic() - started < 3.0  # not the 4 s exit
    deadline = time.monotonic() + 20.0
    while any(Path(f"/proc/{pid}").exists() for pid in pids):  # reaped later (a zombie keeps its /proc entry)
        assert time.monotonic() < deadline, "the plot process was never reaped"
        time.sleep(0.05)


def _counted_plot(table: pd.DataFrame, path: Path, log: str) -> Path:
    """(Plot process) a stand-in plot that writes the table's CSV as its "PNG" and notes each call in ``log``."""
    with open(log, "a") as handle:
        handle.write(f"{path.name}\n")
    path.write_text(table.to_csv())
    return path


def test_an_identical_plot_job_is_copied_from_the_cache_instead_of_drawn(tmp_path: Path) -> None:
    log, cache = str(tmp_path / "calls.log"), tmp_path / "cache"
    table = pd.DataFrame({"task_id": ["a", "b"], "composite": [0.5, 1.0]})
    for run in ("first", "rerun"):  # a new PlotJobs (and process) each time, as a new run has
        jobs = PlotJobs(cache=cache)
        jobs.submit(_counted_plot, table, tmp_path / run / "p.png", log)
        assert jobs.placed() == [(tmp_path / run / "p.png", "plots")]
    assert Path(log).read_text().splitlines() == ["p.png"]  # drawn once, by the first run only
    assert (tmp_path / "rerun" / "p.png").read_bytes() == (tmp_path / "first" / "p.png").read_bytes()


def test_a_plot_job_with_other_data_is_drawn_again(tmp_path: Path) -> None:
    log, cache = str(tmp_path / "calls.log"), PlotCache(tmp_path / "cache")
    table = pd.DataFrame({"task_id": ["a", "b"], "composite": [0.5, 1.0]})
    cache.draw(_counted_plot, (table, tmp_path / "1.png", log), {})
    cache.draw(_counted_plot, (table.assign(composite=[0.5, 0.75]), tmp_path / "2.png", log), {})
    cache.draw(_counted_plot, (table.rename(columns={"composite": "score"}), tmp_path / "3.png", log), {})
    cache.draw(_counted_plot, (table.copy(), tmp_path / "4.png", log), {})  # same content: a hit
    assert Path(log).read_text().splitlines() == ["1.png", "2.png", "3.png"]
    assert (tmp_path / "4.png").read_bytes() == (tmp_path / "1.png").read_bytes()


def test_an_unusable_cache_folder_only_costs_the_drawing(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    log = str(tmp_path / "calls.log")
    table = pd.DataFrame({"x": [1]})
    for name in ("1.png", "2.png"):
        assert PlotCache(blocker / "cache").draw(_counted_plot, (table, tmp_path / name, log), {}) == tmp_path / name
    assert Path(log).read_text().splitlines() == ["1.png", "2.png"]


def _collected_objects_plot(path: Path) -> Path:
    """(Plot process) a stand-in plot that writes how many objects the process's garbage collector would walk."""
    import gc

    path.write_text(str(len(gc.get_objects())))
    return path


def test_the_plot_process_collector_walks_only_its_own_objects(tmp_path: Path) -> None:
    """Issue 18: a full collection in the forked plot process walked the run's whole inherited heap (about 0.45 s
    of CPU on the run's critical path); the worker freezes what it inherited."""
    inherited = [[index] for index in range(200_000)]  # tracked containers the run holds at the fork
    jobs = PlotJobs()
    jobs.submit(_collected_objects_plot, tmp_path / "count.png")
    [(path, _)] = jobs.placed()
    assert int(path.read_text()) < len(inherited) // 4
    del inherited


def _timed_plot(path: Path, seconds: float) -> Path:
    """(Plot process) a stand-in plot that takes ``seconds`` and writes the drawing process's id and its start
    and end times."""
    started = time.time()
    time.sleep(seconds)
    path.write_text(f"{os.getpid()} {started} {time.time()}")
    return path


def test_plots_are_drawn_side_by_side_and_handed_back_in_submission_order(tmp_path: Path) -> None:
    """Issue 18: the run's last plots arrive together; two workers draw them at the same time, and a plot that
    finishes first is still handed back in its place."""
    jobs = PlotJobs(workers=2)
    jobs.submit(_timed_plot, tmp_path / "slow.png", 1.5)
    jobs.submit(_timed_plot, tmp_path / "fast.png", 0.1, artifact_path="other")
    jobs.submit(_timed_plot, tmp_path / "third.png", 0.1)
    assert jobs.placed() == [(tmp_path / "slow.png", "plots"), (tmp_path / "fast.png", "other"),
                             (tmp_path / "third.png", "plots")]
    slow, fast, third = ((int(pid), float(a), float(b)) for pid, a, b in
                         (p.read_text().split() for p in (tmp_path / "slow.png", tmp_path / "fast.png",
                                                          tmp_path / "third.png")))
    assert slow[0] != fast[0]  # two processes
    assert fast[1] < slow[2] and third[2] < slow[2]  # drawn while the slow one was being drawn


def _failing_plot(path: Path) -> Path:
    """(Plot process) a stand-in plot that raises."""
    raise ValueError(f"cannot draw {path.name}")


def test_a_plot_error_is_raised_after_every_plot_has_finished(tmp_path: Path) -> None:
    jobs = PlotJobs(workers=2)
    jobs.submit(_timed_plot, tmp_path / "a.png", 0.5)
    jobs.submit(_failing_plot, tmp_path / "b.png")
    jobs.submit(_timed_plot, tmp_path / "c.png", 0.0)
    with pytest.raises(ValueError, match="cannot draw b.png"):
        jobs.placed()
    assert (tmp_path / "a.png").exists() and (tmp_path / "c.png").exists()


def _dying_plot(path: Path) -> Path:
    """(Plot process) a stand-in plot whose process dies without answering."""
    os._exit(3)


def test_a_dead_plot_process_is_reported_not_waited_for(tmp_path: Path) -> None:
    jobs = PlotJobs(workers=2)
    jobs.submit(_timed_plot, tmp_path / "a.png", 0.0)
    jobs.submit(_dying_plot, tmp_path / "b.png")
    with pytest.raises(WorkerError, match="before drawing every plot"):
        jobs.placed()
