"""One thread writing a run's facts to the tracking store, in submission order, so the run never waits on it.

:class:`StoreWriter` is the only thread of a :class:`~harness.tracking.tracker.MlflowTracker` that writes to its
store.  Why one thread (issue 18, BENCHMARKS.md): on SQLite every write takes the database's single write lock,
and a second writer meanwhile (MLflow's async metric pool, the main thread) waits in SQLite's busy handler, which
sleeps 1 to 100 ms at a time; a profiled zero-latency run spent 3 s of its 5 s so.  Writes queued here never
compete, and the main thread only enqueues them (microseconds).

Consecutive key-value writes to one run are coalesced into one ``MlflowClient.log_batch`` (one transaction), and
consecutive dataset inputs into one ``log_inputs``, within MLflow's batch limits; any other write is a function
run as it is.  Writes marked :func:`artifact_only` (files: texts, tables, plots) do not separate neighbours: a
batch queued after one is merged into the batch queued before it, since neither reads the other's data (issue 18:
a run's last logging alternates tables and metrics, and each ``log_batch`` costs SQLAlchemy several sessions).
In the tracker's writers a batch also waits up to :data:`LINGER_S` (0.1 s) in the queue before it is written,
while only mergeable writes (batches, inputs, artifact-only writes) come after it, so that the run's key-value
writes of that time reach the store as one ``log_batch`` (issue 18: a run's metrics, tags and params come a few
at a time, and each ``log_batch`` is one transaction with a commit).  Any other write, :meth:`StoreWriter.wait` and
:meth:`StoreWriter.close` end the wait at once, so nothing that reads the store, nor the run's end, waits for it.
A failed write does not stop the later ones: the errors are kept and :meth:`StoreWriter.close` raises the first.

Priority (``nice``, the tracker's worker process: :mod:`harness.tracking.worker`): a write nobody waits for runs in
a thread at a lower scheduling priority, so it takes the CPU the run leaves idle; once someone waits for the
writes (:meth:`StoreWriter.wait`, :meth:`StoreWriter.close`, :meth:`StoreWriter.hurry`: the run's end, or a read
of the store), the writes queued so far run in a thread at the caller's priority.  Why (issue 18): at the lowest
priority the writer's backlog starved whenever the run was busy, and the run's end then waited for it while
other programs held the cores: a tracked run's end waited 1-15 s for 0.6 s of the writer's CPU at load 7-8.  A
thread can only lower its own priority (raising it needs a privilege), so each priority has a thread of its
own (:class:`_Lane`; Linux's priorities are per thread), and the writes still run one at a time, in order.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

#: the attribute :func:`artifact_only` sets on a write function
ARTIFACT_ONLY = "harness_artifact_only"
#: seconds a queued batch waits for more mergeable writes before it is written (see the module docstring)
LINGER_S = 0.1
#: MLflow's limits for one ``log_batch`` (``mlflow.utils.validation``): entities in all, params, tags
MAX_BATCH_ENTITIES = 1000
MAX_BATCH_PARAMS = 100
MAX_BATCH_TAGS = 100


def artifact_only(fn: Callable[..., T]) -> Callable[..., T]:
    """Mark the write ``fn(client, *args)`` as one that writes a run's artifact files only, never reading or writing
    its params, metrics, tags, inputs or status, so queued batches may be merged across it; returns ``fn``."""
    setattr(fn, ARTIFACT_ONLY, True)
    return fn


@dataclass
class _Batch:
    """Metrics, params and tags for one run (``log_batch``); tags by key, so a later value wins, as it would."""

    run_id: str
    metrics: list[Any] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, Any] = field(default_factory=dict)

    def size(self) -> int:
        return len(self.metrics) + len(self.params) + len(self.tags)

    def absorb(self, other: _Batch) -> bool:
        """Add ``other`` to this batch if the sum stays one valid ``log_batch`` (same run, within the limits, no
        param key twice: MLflow refuses a batch repeating one); returns whether it did."""
        if (other.run_id != self.run_id or self.size() + other.size() > MAX_BATCH_ENTITIES
                or len(self.params) + len(other.params) > MAX_BATCH_PARAMS
                or len(self.tags.keys() | other.tags.keys()) > MAX_BATCH_TAGS
                or self.params.keys() & other.params.keys()):
            return False
        self.metrics += other.metrics
        self.params.update(other.params)
        self.tags.update(other.tags)
        return True


@dataclass
class _Inputs:
    """Dataset inputs of one run (``log_inputs``)."""

    run_id: str
    datasets: list[Any]

    def absorb(self, other: _Inputs) -> bool:
        if other.run_id != self.run_id:
            return False
        self.datasets += other.datasets
        return True


@dataclass
class _Call:
    """Any other write: ``function()``, its result or exception set on ``future``; ``report``: its exception is
    also raised by :meth:`StoreWriter.close` (nobody waits on the future of a deferred write); ``artifact_only``:
    it writes files only (:func:`artifact_only`), so batches merge across it."""

    function: Callable[[], Any]
    report: bool = True
    future: Future[Any] = field(default_factory=Future)
    artifact_only: bool = False


_Op = _Batch | _Inputs | _Call
#: the queue's stop mark
_STOP = _Call(lambda: None)


def _mergeable(op: _Op) -> bool:
    """Whether a batch queued after ``op`` may still be merged into one queued before it (:func:`_merge_into`)."""
    return not isinstance(op, _Call) or (op.artifact_only and op is not _STOP)


def lower_thread_priority(increment: int) -> bool:
    """Lower the calling thread's scheduling priority by ``increment`` (Linux: a priority belongs to a thread, and
    ``setpriority`` with a thread id changes that thread alone, see setpriority(2)); returns whether it did.
    Elsewhere (a priority per process), or when refused, nothing changes."""
    if increment <= 0 or not sys.platform.startswith("linux") or not hasattr(os, "setpriority"):
        return False
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + increment))
        return True
    except OSError:
        return False


class _Lane:
    """A daemon thread running the functions handed to :meth:`run`, one at a time, at its own priority (lowered by
    ``nice`` when it starts)."""

    def __init__(self, nice: int, name: str) -> None:
        self._nice = nice
        self._cond = threading.Condition()
        self._job: Callable[[], None] | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def run(self, function: Callable[[], None]) -> None:
        """Run ``function`` (which must not raise) in this lane's thread; returns when it has."""
        done = threading.Event()

        def job() -> None:
            try:
                function()
            finally:
                done.set()

        with self._cond:
            self._job = job
            self._cond.notify()
        done.wait()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def _serve(self) -> None:
        lower_thread_priority(self._nice)
        while True:
            with self._cond:
                while self._job is None and not self._stopped:
                    self._cond.wait()
                if self._job is None:
                    return
                job, self._job = self._job, None
            job()


class StoreWriter:
    """A FIFO of writes to one store, run by one daemon thread (started on the first write).

    Args:
        client: the ``mlflow.MlflowClient`` the writes go through.
        log_inputs: how a run's dataset inputs are written, ``(run_id, datasets)``; default
            ``client.log_inputs`` (the tracker wraps it in its duplicate-insert retry).
        log_batch: how a coalesced batch is written, ``(run_id, metrics=, params=, tags=)``; default
            ``client.log_batch`` (the tracker's: :func:`harness.tracking.trace_batch.log_batch_one_session`).
        linger_s: seconds a queued batch waits for more mergeable writes (0, the default: none; the tracker's
            writers wait :data:`LINGER_S`).
        nice: how much lower the priority of the writes nobody waits for is (0, the default: the same; see the
            module docstring).
    """

    def __init__(self, client: Any, log_inputs: Callable[[str, list[Any]], None] | None = None,
                 log_batch: Callable[..., None] | None = None, linger_s: float = 0.0, nice: int = 0) -> None:
        self._client = client
        self._linger_s = linger_s
        self._nice = nice
        self._hurry_to = 0  # the writes submitted up to this count run at the waiter's priority
        self._waiters = 0  # threads in wait(): a lingering batch is written at once
        self._log_inputs = log_inputs or (lambda run_id, datasets: client.log_inputs(run_id, datasets=datasets))
        self._log_batch = log_batch or client.log_batch
        self._queue: deque[_Op] = deque()
        self._cond = threading.Condition()
        self._submitted = 0
        self._done = 0
        self._errors: list[BaseException] = []
        self._thread: threading.Thread | None = None
        self.seconds = 0.0  # wall time of the writes in this writer's thread, s (for benchmarks)
        self.cpu_seconds = 0.0  # CPU time of that thread in them, s (the share the run's own threads lose)

    # -------------------------------------------------------------------------------------------- enqueue

    def log_batch(self, run_id: str, *, metrics: Sequence[Any] = (), params: Mapping[str, Any] | None = None,
                  tags: Mapping[str, Any] | None = None) -> None:
        """Queue ``mlflow.entities`` Metric, Param and RunTag objects (params and tags by key) for run ``run_id``."""
        batch = _Batch(run_id, list(metrics), dict(params or {}), dict(tags or {}))
        if batch.size():
            self._put(batch)

    def log_inputs(self, run_id: str, datasets: Sequence[Any]) -> None:
        """Queue ``mlflow.entities.DatasetInput`` objects for run ``run_id``."""
        if datasets:
            self._put(_Inputs(run_id, list(datasets)))

    def log_dataset(self, run_id: str, frame: Any, name: str, context: str, digest: str,
                    source: str | None = None) -> None:
        """Queue the dataset input :func:`harness.tracking.datasets.dataset_input` builds (built here, now)."""
        from harness.tracking.datasets import dataset_input

        self.log_inputs(run_id, [dataset_input(frame, name, context, digest, source)])

    def submit(self, function: Callable[[], T], *, report: bool = True, artifact_only: bool = False) -> Future[T]:
        """Queue ``function`` (a write through this store); returns its future (result or exception).  With
        ``report``, its exception is also raised by :meth:`close`; ``artifact_only``: see :func:`artifact_only`."""
        call = _Call(function, report, artifact_only=artifact_only)
        self._put(call)
        return call.future

    def call(self, function: Callable[[], T]) -> T:
        """Run ``function`` in the writer thread after every write queued before it, and return its result.

        Raises:
            Exception: whatever ``function`` raised.
        """
        return self.submit(function, report=False).result()

    def submit_call(self, fn: Callable[..., Any], *args: Any, report: bool = True) -> None:
        """Queue ``fn(client, *args)`` (``client``: this writer's); with ``report``, its exception is raised by
        :meth:`close` (the interface :class:`harness.tracking.worker.ProcessWriter` shares)."""
        self.submit(lambda: fn(self._client, *args), report=report, artifact_only=getattr(fn, ARTIFACT_ONLY, False))

    def call_with(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(client, *args)`` run after every write queued before it; returns its result.

        Raises:
            Exception: whatever ``fn`` raised.
        """
        return self.call(lambda: fn(self._client, *args))

    def _put(self, op: _Op) -> None:
        with self._cond:
            self._queue.append(op)
            self._submitted += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="harness-mlflow-writer", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    # ------------------------------------------------------------------------------------------------ wait

    def hurry(self) -> None:
        """Run the writes queued so far at the priority of the writer's own (unlowered) threads: someone waits for
        them (see the module docstring)."""
        with self._cond:
            self._hurry_to = self._submitted
            self._cond.notify_all()

    def wait(self) -> None:
        """Block until every write queued so far has run (errors stay kept for :meth:`close`); they run at the
        writer's unlowered priority (:meth:`hurry`)."""
        with self._cond:
            target = self._submitted
            self._hurry_to = target
            self._waiters += 1
            self._cond.notify_all()  # ends a linger (_take)
            try:
                while self._done < target:
                    self._cond.wait()
            finally:
                self._waiters -= 1

    def close(self) -> None:
        """Wait for every queued write, then stop the thread (a later write starts a new one).

        Raises:
            Exception: the first exception a queued write raised (every write ran), once.
        """
        self.wait()
        with self._cond:
            thread = self._thread
            if thread is not None:
                self._queue.append(_STOP)
                self._cond.notify_all()
        if thread is not None:
            thread.join()
        with self._cond:
            errors, self._errors = self._errors, []
        if errors:
            raise errors[0]

    # -------------------------------------------------------------------------------------------- the thread

    def _loop(self) -> None:
        # with a lowered priority, the writes run in a lane of each priority (this thread's, unlowered, and a
        # lowered one), chosen per write; this thread only hands them over
        lanes = (_Lane(0, "harness-mlflow-writer-waited"), _Lane(self._nice, "harness-mlflow-writer-low")) \
            if self._nice > 0 else None
        try:
            while True:
                ops = self._take()
                stop = any(op is _STOP for op in ops)
                for op, count in _coalesce([op for op in ops if op is not _STOP]):
                    if lanes is None:
                        self._timed_run(op, count)
                    else:
                        with self._cond:
                            waited = self._waiters > 0 or self._done < self._hurry_to
                        lanes[0 if waited else 1].run(lambda op=op, count=count: self._timed_run(op, count))
                if stop:
                    with self._cond:
                        if not self._queue:
                            self._thread = None  # the next write starts a new thread
                            return
                        self._queue.append(_STOP)  # writes came meanwhile: they run first
        finally:
            for lane in lanes or ():
                lane.stop()

    def _timed_run(self, op: _Op, count: int) -> None:
        """Run ``op`` (standing for ``count`` queued writes), keeping its error and timing; never raises."""
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            self._run(op)
        except BaseException as exc:  # kept for close(); the later writes still run
            if not isinstance(op, _Call) or op.report:
                self._errors.append(exc)
        finally:
            self.seconds += time.perf_counter() - started
            self.cpu_seconds += time.thread_time() - cpu
            with self._cond:
                self._done += count
                self._cond.notify_all()

    def _take(self) -> list[_Op]:
        """(Writer thread) wait for queued writes and take them all; while they hold a batch or inputs and nothing
        but mergeable writes, first wait up to ``linger_s`` for more (see the module docstring)."""
        with self._cond:
            while not self._queue:
                self._cond.wait()
            if self._linger_s > 0:
                deadline = time.monotonic() + self._linger_s
                checked = 0  # ops already known to be mergeable
                while not self._waiters:
                    queued = list(self._queue)
                    if not all(_mergeable(op) for op in queued[checked:]):
                        break
                    checked = len(queued)
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or not any(isinstance(op, _Batch | _Inputs) for op in queued):
                        break
                    self._cond.wait(remaining)
            ops = list(self._queue)
            self._queue.clear()
            return ops

    def _run(self, op: _Op) -> None:
        if isinstance(op, _Batch):
            self._log_batch(op.run_id, metrics=op.metrics, params=list(op.params.values()),
                            tags=list(op.tags.values()))
        elif isinstance(op, _Inputs):
            self._log_inputs(op.run_id, op.datasets)
        else:
            try:
                op.future.set_result(op.function())
            except BaseException as exc:
                op.future.set_exception(exc)
                raise


def _merge_into(merged: list[tuple[_Op, int]], op: _Batch | _Inputs) -> bool:
    """Merge ``op`` into the nearest earlier op of its kind in ``merged`` when only artifact-only calls and ops of
    the other kind (batches and inputs write different tables) lie between them; returns whether it did."""
    for index in range(len(merged) - 1, -1, -1):
        earlier, count = merged[index]
        if type(earlier) is type(op):
            if earlier.absorb(op):  # type: ignore[union-attr, arg-type]
                merged[index] = (earlier, count + 1)
                return True
            return False
        if isinstance(earlier, _Call) and not earlier.artifact_only:
            return False
    return False


def _coalesce(ops: Sequence[_Op]) -> list[tuple[_Op, int]]:
    """``ops`` with mergeable batches and inputs merged (:func:`_merge_into`): (op, how many ops it stands for)."""
    merged: list[tuple[_Op, int]] = []
    for op in ops:
        if not isinstance(op, _Call) and _merge_into(merged, op):
            continue
        if isinstance(op, _Batch):  # a copy: absorbing into it must not change what the caller queued
            op = _Batch(op.run_id, list(op.metrics), dict(op.params), dict(op.tags))
        elif isinstance(op, _Inputs):
            op = _Inputs(op.run_id, list(op.datasets))
        merged.append((op, 1))
    return merged


__all__ = ["ARTIFACT_ONLY", "LINGER_S", "MAX_BATCH_ENTITIES", "MAX_BATCH_PARAMS", "MAX_BATCH_TAGS", "StoreWriter",
           "artifact_only", "lower_thread_priority"]
