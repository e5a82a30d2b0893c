"""Render a run's PNG plots in worker processes, so matplotlib's work runs beside the run instead of in it.

A run's plots cost about 0.25-0.4 s of CPU each (layout and Agg rendering; BENCHMARKS.md, issue 18).  Drawn in a
thread they still take turns with the run for the interpreter lock (a background thread made the run slower
than drawing inline on 2 cores), so a :class:`PlotJobs` forks its worker processes when it is created (their start
overlaps the run; a forked child has the parent's matplotlib already imported, else it imports it there) and
sends them each plot as soon as its data exists (the optimisation curve after optimising, the per-task charts once
the holdout table is built, the agreement matrices with the evidence).  Each plot goes to the first free worker,
and the finished files are handed back, in submission order, when the run collects them after its other logging.
Each plot builds its own ``Figure`` (:mod:`harness.analysis.plots` never touches ``pyplot``).

With a cache folder (:class:`PlotCache`; a run passes one inside DSPy's response cache) a plot whose inputs,
plot code and matplotlib settings were drawn before is copied from there instead of drawn again: a cached rerun
makes no LM call, and now draws no plot either (their 1-2 s of CPU were most of such a rerun's time; issue 18).

The workers ignore the terminal's signals (:mod:`harness.forked`) and exit when the run collects, when the
jobs are dropped uncollected, or when the run is gone.  Where ``fork``
does not exist, the plots are drawn in a background thread instead (same results).
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import os
import pickle
import queue
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.forked import (
    ParentWatch,
    WorkerError,
    can_fork,
    freeze_inherited_objects,
    ignore_run_signals,
    portable,
    reap_later,
)

#: the artifact folder a plot is logged under unless said otherwise
PLOTS_ARTIFACT_PATH = "plots"
#: the :class:`PlotCache` folder's name inside DSPy's response cache folder (``harness.run.plot_cache_dir``)
PLOT_CACHE_FOLDER = "harness-plots"
_WHERE = "the plot process"
#: seconds between the worker's checks that the run is still alive while no plot comes
_PARENT_POLL_S = 1.0
#: plot processes a :class:`PlotJobs` forks: one per core of the 2-core machine the benchmarks run on; the run's
#: last three plots arrive together and each costs 0.1-0.4 s of CPU (BENCHMARKS.md, issue 18)
PLOT_WORKERS = 2


def render(name: str, *args: Any, **kwargs: Any) -> Path:
    """``harness.analysis.plots.<name>(*args, **kwargs)``, imported where it runs (matplotlib's import is part of
    the work taken off the run's path); a picklable job for :meth:`PlotJobs.submit`."""
    from harness.analysis import plots

    return getattr(plots, name)(*args, **kwargs)  # type: ignore[no-any-return]


class PlotCache:
    """PNG files in ``folder``, each named by a fingerprint of the plot job that drew it: the job's function and
    arguments (data frames by their content), the plot module's source, the versions of matplotlib, pandas and
    numpy, and matplotlib's settings.  The job's output path (its one ``os.PathLike`` argument) is left out of the
    fingerprint: a hit is copied there.

    A cache that cannot be read or written only costs the drawing (the plot is drawn as without a cache).
    Nothing is ever evicted: a plot is some 50-150 KB, and a new one is stored only when a run's results changed.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._environment: bytes | None = None

    def draw(self, draw: Callable[..., Path], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Path:
        """``draw(*args, **kwargs)``, or the stored copy of what an identical job drew before (copied to the job's
        output path); what is drawn is stored.  A job without exactly one path argument is always drawn."""
        paths = [a for a in (*args, *kwargs.values()) if isinstance(a, os.PathLike)]
        if len(paths) != 1:
            return draw(*args, **kwargs)
        out, key = Path(paths[0]), self.key(draw, args, kwargs)
        stored = self.folder / f"{key}.png"
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(stored, out)
            return out
        except OSError:  # not stored (or unreadable): draw it
            pass
        drawn = draw(*args, **kwargs)
        self._store(Path(drawn), stored)
        return drawn

    def _store(self, drawn: Path, stored: Path) -> None:
        tmp: str | None = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".tmp", delete=False) as handle:
                tmp = handle.name
                handle.write(drawn.read_bytes())
            os.replace(tmp, stored)  # whole or absent: a concurrent run never reads half a file
        except OSError:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def key(self, draw: Callable[..., Path], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """The hex fingerprint of the job ``draw(*args, **kwargs)``, its path argument left out."""
        digest = hashlib.sha256(self._plot_environment())
        _feed(digest, (f"{draw.__module__}.{draw.__qualname__}", args, sorted(kwargs.items())))
        return digest.hexdigest()

    def _plot_environment(self) -> bytes:
        """The plot module's source, the versions of matplotlib, pandas and numpy, and matplotlib's settings: a
        change to any draws anew."""
        if self._environment is None:
            import matplotlib
            import numpy as np
            import pandas as pd

            from harness.analysis import plots

            versions = f"{matplotlib.__version__} {pd.__version__} {np.__version__}"
            settings = repr(sorted((k, repr(v)) for k, v in matplotlib.rcParams.items()))
            self._environment = hashlib.sha256(Path(plots.__file__).read_bytes() + versions.encode()
                                               + settings.encode()).digest()
        return self._environment


def _feed(digest: Any, value: Any) -> None:
    """Add ``value`` to ``digest``: data frames and arrays by their content (pandas' row hashes, the raw
    buffer), containers item by item, paths as one placeholder, anything else by its pickle."""
    import numpy as np
    import pandas as pd

    digest.update(type(value).__name__.encode() + b"\0")
    if isinstance(value, os.PathLike):
        return
    if isinstance(value, pd.DataFrame):
        _feed(digest, ([str(c) for c in value.columns], [str(t) for t in value.dtypes]))
        try:
            digest.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
        except TypeError:  # cells pandas cannot hash (lists, dicts)
            digest.update(pickle.dumps(value))
    elif isinstance(value, np.ndarray):
        _feed(digest, (str(value.dtype), value.shape))
        digest.update(np.ascontiguousarray(value).tobytes() if value.dtype != object else pickle.dumps(value))
    elif isinstance(value, list | tuple):
        digest.update(str(len(value)).encode())
        for item in value:
            _feed(digest, item)
    elif isinstance(value, dict):
        _feed(digest, [(k, v) for k, v in value.items()])
    else:
        digest.update(pickle.dumps(value))
    digest.update(b"\1")


def _draw(cache: PlotCache | None, draw: Callable[..., Path], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Path:
    """``draw(*args, **kwargs)``, through ``cache`` when there is one."""
    return draw(*args, **kwargs) if cache is None else cache.draw(draw, args, kwargs)


def _warm() -> None:
    """(Worker) import matplotlib and the plot module before the first plot is asked for."""
    from harness.analysis import plots  # noqa: F401


def _serve(jobs: Any, results: Any, cache: PlotCache | None = None) -> None:
    """(Worker) draw each ``(index, render, args, kwargs)`` from ``jobs`` (through ``cache`` when given) and put
    ``(index, path, error)`` on ``results``, until a None job or the run is gone.  Several workers may share
    ``jobs``: each takes the next job as soon as it is free."""
    freeze_inherited_objects()
    ignore_run_signals()
    parent = ParentWatch()
    _warm()
    while True:
        try:
            job = jobs.get(timeout=_PARENT_POLL_S)
        except queue.Empty:
            if parent.gone():
                return
            continue
        if job is None:
            return
        index, draw, args, kwargs = job
        try:
            results.put((index, _draw(cache, draw, args, kwargs), None))
        except BaseException as exc:  # noqa: BLE001 - handed to the run by results()
            results.put((index, None, portable(exc, _WHERE)))


class _Job(threading.Thread):
    """(No fork) one plot in a thread: waits for the previous job, then draws; keeps the path or the exception."""

    def __init__(self, draw: Callable[..., Path], args: tuple[Any, ...], kwargs: dict[str, Any],
                 previous: _Job | None, cache: PlotCache | None = None) -> None:
        super().__init__(name="harness-plot", daemon=False)
        self._draw, self._args, self._kwargs, self._previous = draw, args, kwargs, previous
        self._cache = cache
        self.path: Path | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        if self._previous is not None:
            self._previous.join()
        try:
            self.path = _draw(self._cache, self._draw, self._args, self._kwargs)
        except BaseException as exc:  # handed to the collecting thread by results()
            self.error = exc


class PlotJobs:
    """Plots drawn beside the run by ``workers`` forked processes, collected in submission order.

    Usage::

        jobs = PlotJobs()                    # forks the plot workers
        jobs.submit(render, "optimisation_curve_png", points, folder / "curve.png")
        ...                                  # other work meanwhile
        for path, artifact_path in jobs.placed():   # waits; re-raises a plot's exception
            tracker.log_file(path, artifact_path)

    ``render`` and its arguments are sent to the workers pickled: a module-level function (:func:`render`) and
    plain data (lists, data frames, paths).  The workers share one job queue, so each plot is drawn by the first
    free worker: the three plots a run asks for in its last fraction of a second (they need the evolved skill's
    grades) are drawn side by side instead of one after another (issue 18).

    Args:
        cache: a folder of plots drawn before (:class:`PlotCache`): an identical job is copied from there instead
            of drawn; None: every plot is drawn.
        workers: plot processes to fork (at least 1); :data:`PLOT_WORKERS` by default.  Without ``fork`` one
            background thread draws the plots one after another whatever this says.
    """

    def __init__(self, cache: str | os.PathLike[str] | None = None, workers: int = 0) -> None:
        self._cache = PlotCache(cache) if cache is not None else None
        self._workers = workers if workers > 0 else PLOT_WORKERS
        self._where: list[str] = []  # artifact path of each pending plot
        self._threads: list[_Job] = []
        self._processes: list[Any] = []
        self._jobs: Any = None
        self._results: Any = None
        self._fork = can_fork()
        if self._fork:
            self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        self._jobs, self._results = context.Queue(), context.Queue()
        self._processes = [context.Process(target=_serve, args=(self._jobs, self._results, self._cache),
                                           name=f"harness-plot-{number}", daemon=True)
                           for number in range(self._workers)]
        for process in self._processes:
            process.start()
        # a run that fails before collecting: the workers stop when these jobs are dropped
        self._finalizer = weakref.finalize(self, _stop, self._jobs, len(self._processes))

    def submit(self, draw: Callable[..., Path], *args: Any, artifact_path: str = PLOTS_ARTIFACT_PATH,
               **kwargs: Any) -> None:
        """Start drawing ``draw(*args, **kwargs)`` (a plot function returning the PNG's path, e.g. :func:`render`)
        beside the run, as soon as a worker is free; ``artifact_path``: where the run logs the file."""
        index = len(self._where)
        self._where.append(artifact_path)
        if self._fork and not self._processes:
            self._start()
        if self._processes:
            self._jobs.put((index, draw, args, kwargs))  # a feeder thread sends it: the run does not wait
            return
        job = _Job(draw, args, kwargs, self._threads[-1] if self._threads else None, self._cache)
        self._threads.append(job)
        job.start()

    def placed(self) -> list[tuple[Path, str]]:
        """``(path, artifact_path)`` of every plot submitted so far, in submission order, once all are drawn;
        the workers then stop (a later :meth:`submit` starts others; their exit is not waited for).

        Raises:
            Exception: the first exception a plot raised, in submission order (after every plot has finished).
            WorkerError: every plot process ended before drawing every plot.
        """
        where, self._where = self._where, []
        outcomes: list[tuple[Path | None, BaseException | None]] = []
        if self._processes:
            processes, self._processes = self._processes, []
            self._finalizer.detach()
            _stop(self._jobs, len(processes))  # after the plots sent before: each worker ends on one
            drawn: dict[int, tuple[Path | None, BaseException | None]] = {}
            while len(drawn) < len(where):
                index, path, error = self._next_result(processes)
                drawn[index] = (path, error)
            outcomes = [drawn[index] for index in range(len(where))]
            for process in processes:
                reap_later(process)  # it has handed back every plot: its exit is not waited for
        else:
            threads, self._threads = self._threads, []
            for job in threads:
                job.join()
                outcomes.append((job.path, job.error))
        for _, error in outcomes:
            if error is not None:
                raise error
        return [(path, at) for (path, _), at in zip(outcomes, where, strict=True) if path is not None]

    def _next_result(self, processes: list[Any]) -> tuple[int, Path | None, BaseException | None]:
        while True:
            try:
                return self._results.get(timeout=_PARENT_POLL_S)  # type: ignore[no-any-return]
            except queue.Empty:
                if not any(process.is_alive() for process in processes):
                    codes = ", ".join(str(process.exitcode) for process in processes)
                    raise WorkerError(f"the plot processes ended (exit codes {codes}) before drawing every "
                                      "plot") from None

    def results(self) -> list[Path]:
        """The paths of :meth:`placed` (same waits and errors)."""
        return [path for path, _ in self.placed()]


def _stop(jobs: Any, workers: int) -> None:
    """Send ``workers`` stop marks on ``jobs``: each worker ends on the first it takes."""
    for _ in range(workers):
        jobs.put(None)
