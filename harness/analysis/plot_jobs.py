"""Render a run's PNG plots in a background thread, so matplotlib's work overlaps the rest of the run.

A run's plots cost about 0.4-0.6 s each on 2 cores (layout and Agg rendering; BENCHMARKS.md, issue 18).  A
:class:`PlotJobs` starts each plot as soon as its data exists (the optimisation curve after optimising, the
per-task charts once the holdout table is built) and hands the finished files back when the run collects them,
after its other logging.  The plots are drawn one after another (each job's thread first waits for the one
before it), so matplotlib is never used from two threads at once; each plot builds its own ``Figure``
(:mod:`harness.analysis.plots` never touches ``pyplot``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class _Job(threading.Thread):
    """One plot: waits for the previous job, then draws; keeps the path or the exception."""

    def __init__(self, render: Callable[..., Path], args: tuple[Any, ...], kwargs: dict[str, Any],
                 previous: _Job | None) -> None:
        super().__init__(name="harness-plot", daemon=False)
        self._render, self._args, self._kwargs, self._previous = render, args, kwargs, previous
        self.path: Path | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        if self._previous is not None:
            self._previous.join()
        try:
            self.path = self._render(*self._args, **self._kwargs)
        except BaseException as exc:  # handed to the collecting thread by results()
            self.error = exc


class PlotJobs:
    """Plots drawn in the background, one at a time, collected in submission order.

    Nothing needs closing: a job thread ends when its plot is drawn, so a run that fails before collecting
    leaves no thread behind once the plots in flight finish.

    Usage::

        jobs = PlotJobs()
        jobs.submit(optimisation_curve_png, points, folder / "curve.png")
        ...                                  # other work meanwhile
        for path in jobs.results():         # waits; re-raises a plot's exception
            tracker.log_file(path, "plots")
    """

    def __init__(self) -> None:
        self._jobs: list[_Job] = []

    def submit(self, render: Callable[..., Path], *args: Any, **kwargs: Any) -> None:
        """Start drawing ``render(*args, **kwargs)`` (a plot function returning the PNG's path) in the
        background, after the plots submitted before it."""
        job = _Job(render, args, kwargs, self._jobs[-1] if self._jobs else None)
        self._jobs.append(job)
        job.start()

    def results(self) -> list[Path]:
        """The paths of every plot submitted so far, in submission order, once all are drawn; the list of
        pending plots is then empty.

        Raises:
            Exception: the first exception a plot raised (after every plot has finished).
        """
        jobs, self._jobs = self._jobs, []
        for job in jobs:
            job.join()
        for job in jobs:
            if job.error is not None:
                raise job.error
        return [job.path for job in jobs if job.path is not None]
