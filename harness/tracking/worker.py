"""The tracker's store writes in a worker process of their own, off the run's GIL (issue 18).

A :class:`~harness.tracking.writer.StoreWriter` thread keeps the run from waiting on the store, but its SQLAlchemy
work (about 1 s of CPU in a tracked zero-latency run, BENCHMARKS.md) still holds the interpreter lock the run
needs.  :class:`ProcessWriter` has the same methods and runs that same ``StoreWriter`` in a child process forked
when the tracker is entered, so on a machine with a second core the writes overlap the run instead of taking
turns with it.  Fork, not spawn: the child starts with MLflow already imported (a spawned child would spend 1-2 s
of CPU importing it); right after the fork it drops the SQLAlchemy connection pools it inherited (SQLAlchemy's
rule for forked processes: ``Engine.dispose(close=False)``), so it never uses a connection of the parent.

Protocol (one ``multiprocessing`` pipe, pickled messages): the parent sends writes (``log_batch``, ``log_inputs``,
a split's frame to build its dataset input from, a call of a module-level function ``fn(client, *args)``); the
child queues them on its ``StoreWriter`` in order, so they are coalesced as before.  Only requests that need an
answer are answered, in submission order: a call's result (:meth:`ProcessWriter.call_with`), a wait for every
write so far, and the close, which carries the first error a write raised (re-raised in the run by
:meth:`ProcessWriter.close`) and the writer's timings.

Signals: the child ignores SIGINT and SIGHUP (a terminal sends them to the whole process group;
:mod:`harness.forked`), so an interrupted run's parent decides what happens: it queues its last facts
(``error.txt``, the outcome tags), closes the writer and marks the run KILLED.  If the parent dies outright, the
child sees the pipe close (or its parent change), writes what it was sent and exits; the reaper marks the run
KILLED later, as before.

Priority: the child's writes that nobody waits for run at a lower scheduling priority (:data:`WRITER_NICE_ENV`), so
that they take the CPU the run and its plot process leave idle instead of turns with them; the writes the run waits
for (its end, a read of the store) run at the run's priority (``StoreWriter(nice=...)``, see
:mod:`harness.tracking.writer` and :func:`_lower_priority`).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from harness.forked import (
    ParentWatch,
    WorkerError,
    can_fork,
    freeze_inherited_objects,
    ignore_run_signals,
    portable,
    reap_later,
)
from harness.tracking.writer import LINGER_S, StoreWriter

T = TypeVar("T")

#: environment variable choosing where the store writes run: ``process`` (default where ``fork`` exists) or
#: ``thread`` (the in-process writer thread; also used where ``fork`` does not exist)
WRITER_ENV = "HARNESS_STORE_WRITER"
#: environment variable: how much the writer process lowers its scheduling priority (``os.nice`` increment, 0-19;
#: default :data:`WRITER_NICE`; 0 keeps the run's)
WRITER_NICE_ENV = "HARNESS_STORE_WRITER_NICE"
#: the writer process's default ``os.nice`` increment: the lowest priority (see :func:`_lower_priority`)
WRITER_NICE = 19
_WHERE = "the MLflow writer process"
#: seconds between the child's checks that its parent is still alive while the pipe is quiet
_PARENT_POLL_S = 1.0


def use_process_writer() -> bool:
    """Whether a tracker's writes go to a worker process (:data:`WRITER_ENV`, and ``fork`` available)."""
    choice = os.environ.get(WRITER_ENV, "process").strip().lower()
    if choice not in ("process", "thread"):
        raise ValueError(f"{WRITER_ENV}={choice!r}: expected 'process' or 'thread'")
    return choice == "process" and can_fork()


def writer_nice() -> int:
    """The ``os.nice`` increment of the writer process (:data:`WRITER_NICE_ENV`, else :data:`WRITER_NICE`).

    Raises:
        ValueError: the variable is not a whole number from 0 to 19.
    """
    text = os.environ.get(WRITER_NICE_ENV, "").strip()
    if not text:
        return WRITER_NICE
    if not text.isdigit() or int(text) > 19:
        raise ValueError(f"{WRITER_NICE_ENV}={text!r}: expected a whole number from 0 to 19")
    return int(text)


def _lower_priority(increment: int) -> int:
    """(Child) the priority increment the child's writer gives the writes nobody waits for; where a priority
    belongs to a thread (Linux) that is ``increment`` (the writer lowers its own thread's), elsewhere the whole
    process is lowered here (``os.nice``; nothing where it fails) and 0 is returned.

    Why (issue 18): the writes are not on the run's critical path, but the run's thread and the plot process are,
    and on two cores the writer's CPU (0.6-0.9 s in a zero-latency run) took turns with them: the run reached
    its plots 0.3-1 s later than an untracked one.  At the lowest priority the writer runs on a core the two
    leave idle (while the run waits for its plots, or for the LM).  With Linux's autogroups on (the default of
    desktop and server kernels), a nice value only counts against the processes of the same session (sched(7)),
    so the writer gives way to its own run, not to other programs.  But the run's end waits for what is left, and
    at the lowest priority that wait was 1-15 s for 0.6 s of CPU on a loaded machine (load 7-8): the writes the
    run waits for run at its own priority (:class:`harness.tracking.writer.StoreWriter`'s ``nice``)."""
    if increment <= 0:
        return 0
    if sys.platform.startswith("linux") and hasattr(os, "setpriority"):
        return increment
    if hasattr(os, "nice"):
        try:
            os.nice(increment)
        except OSError:  # not allowed here: the writes only lose their lower priority
            pass
    return 0


def _portable(exc: BaseException) -> BaseException:
    return portable(exc, _WHERE)


def _reset_inherited_pools() -> None:
    """(Child) forget the SQLAlchemy connections and locks inherited from the parent: each engine MLflow cached
    makes new connections from now on, and the parent's stay untouched (``dispose(close=False)``)."""
    import sys

    for name in ("mlflow.store.tracking.sqlalchemy_store", "mlflow.store.model_registry.sqlalchemy_store",
                 "mlflow.store.jobs.sqlalchemy_store"):
        module = sys.modules.get(name)
        store = getattr(module, "SqlAlchemyStore", None) if module else None
        if store is None or not hasattr(store, "_engine_map"):
            continue
        store._engine_map_lock = threading.Lock()  # another thread of the parent may have held it at the fork
        for engine in list(store._engine_map.values()):
            engine.dispose(close=False)


def _raise(exc: BaseException) -> None:
    raise exc


def _serve(conn: Any, parent_end: Any, tracking_uri: str, registry_uri: str | None, nice: int = 0) -> None:
    """(Child) receive writes until told to close or the parent is gone; see the module docstring.  ``nice``:
    :func:`_lower_priority`'s increment."""
    freeze_inherited_objects()
    ignore_run_signals()
    thread_nice = _lower_priority(nice)
    parent_end.close()  # only the parent keeps its end: the pipe closes when the parent does
    parent = ParentWatch()
    _reset_inherited_pools()
    import mlflow

    from harness.tracking.store import retry_duplicate_insert
    from harness.tracking.trace_batch import log_batch_one_session

    client = mlflow.MlflowClient(tracking_uri=tracking_uri, registry_uri=registry_uri)
    writer = StoreWriter(client, log_inputs=lambda run_id, datasets: retry_duplicate_insert(
        lambda: client.log_inputs(run_id, datasets=datasets)),
        log_batch=functools.partial(log_batch_one_session, client), linger_s=LINGER_S, nice=thread_nice)
    send_lock = threading.Lock()

    def reply(message: tuple[Any, ...]) -> None:
        with send_lock:
            conn.send(message)

    def answer(future: Any) -> None:
        error = future.exception()
        reply(("result", None, _portable(error)) if error is not None else ("result", future.result(), None))

    while True:
        if not conn.poll(_PARENT_POLL_S):
            if parent.gone():  # the parent died and the pipe stayed open (another fork holds it)
                break
            continue
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        kind = message[0]
        if kind == "batch":
            writer.log_batch(message[1], metrics=message[2], params=message[3], tags=message[4])
        elif kind == "inputs":
            writer.log_inputs(message[1], message[2])
        elif kind == "dataset":  # built here, off the run's CPU; queued like any input, so neighbours coalesce
            try:
                writer.log_dataset(*message[1:])
            except Exception as exc:  # noqa: BLE001 - reported by close(), as a failed write would be
                writer.submit(lambda exc=exc: _raise(exc))
        elif kind == "call":
            _, fn, args, report = message
            writer.submit_call(fn, *args, report=report)  # the writer's client is ``client``
        elif kind == "ask":  # a call whose result the parent waits for
            _, fn, args = message
            asked = writer.submit(lambda fn=fn, args=args: fn(client, *args), report=False)
            writer.hurry()  # this and the writes before it: the run waits for them
            asked.add_done_callback(answer)
        elif kind == "wait":
            waited = writer.submit(lambda: None, report=False)
            writer.hurry()
            waited.add_done_callback(answer)
        elif kind == "close":
            error: BaseException | None = None
            try:
                writer.close()
            except BaseException as exc:  # noqa: BLE001 - handed to the parent
                error = _portable(exc)
            reply(("closed", error, writer.seconds, writer.cpu_seconds))
            return
    try:  # the parent is gone: what it sent is written, nobody to tell about errors
        writer.close()
    except BaseException:  # noqa: BLE001, S110 - no one left to report to
        pass


class ProcessWriter:
    """The :class:`~harness.tracking.writer.StoreWriter` interface, run in a forked worker process.

    Writes are ``mlflow.entities`` objects and module-level functions ``fn(client, *args)`` with picklable
    arguments (``client``: the worker's ``MlflowClient`` on the same store).  The worker starts on
    :meth:`start` or the first write, and again on a write after :meth:`close`.

    Args:
        tracking_uri: the store's resolved tracking URI.
        registry_uri: the model registry URI (None: MLflow's default for ``tracking_uri``).
    """

    def __init__(self, tracking_uri: str, registry_uri: str | None = None) -> None:
        self._uris = (tracking_uri, registry_uri)
        self._conn: Any = None
        self._process: Any = None
        self._send_lock = threading.Lock()
        self._ask_lock = threading.Lock()  # one request awaiting its answer at a time: answers come in order
        self.seconds = 0.0  # wall time of the writes in the worker, s (for benchmarks)
        self.cpu_seconds = 0.0  # CPU time of the worker's writer thread in them, s

    def start(self) -> ProcessWriter:
        """Fork the worker now (if it is not running), so its setup overlaps the caller's work; returns self."""
        with self._send_lock:
            if self._process is None:
                context = multiprocessing.get_context("fork")
                ours, theirs = context.Pipe(duplex=True)
                process = context.Process(target=_serve, args=(theirs, ours, *self._uris, writer_nice()),
                                          name="harness-mlflow-writer", daemon=True)
                process.start()
                theirs.close()
                self._conn, self._process = ours, process
        return self

    def _send(self, message: tuple[Any, ...]) -> None:
        self.start()
        with self._send_lock:
            self._conn.send(message)

    def _ask(self, message: tuple[Any, ...]) -> Any:
        with self._ask_lock:
            self._send(message)
            try:
                kind, value, error = self._conn.recv()
            except EOFError:
                raise WorkerError(f"the MLflow writer process ended (exit code {self._process.exitcode}) "
                                  "before answering") from None
        if error is not None:
            raise error
        return value

    # ----------------------------------------------------------------- the StoreWriter interface

    def log_batch(self, run_id: str, *, metrics: Sequence[Any] = (), params: Mapping[str, Any] | None = None,
                  tags: Mapping[str, Any] | None = None) -> None:
        """Queue ``mlflow.entities`` Metric, Param and RunTag objects (params and tags by key) for run ``run_id``."""
        if metrics or params or tags:
            self._send(("batch", run_id, list(metrics), dict(params or {}), dict(tags or {})))

    def log_inputs(self, run_id: str, datasets: Sequence[Any]) -> None:
        """Queue ``mlflow.entities.DatasetInput`` objects for run ``run_id``."""
        if datasets:
            self._send(("inputs", run_id, list(datasets)))

    def log_dataset(self, run_id: str, frame: Any, name: str, context: str, digest: str,
                    source: str | None = None) -> None:
        """Queue the dataset input :func:`harness.tracking.datasets.dataset_input` builds from these arguments, for
        run ``run_id``; it is built in the worker (an error building it is raised by :meth:`close`)."""
        self._send(("dataset", run_id, frame, name, context, digest, source))

    def submit_call(self, fn: Callable[..., Any], *args: Any, report: bool = True) -> None:
        """Queue ``fn(client, *args)`` (``fn`` module-level, ``args`` picklable); with ``report``, its exception is
        raised by :meth:`close`."""
        self._send(("call", fn, args, report))

    def call_with(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(client, *args)`` in the worker after every write queued before it; returns its result.

        Raises:
            Exception: whatever ``fn`` raised (or :class:`WorkerError` with its text).
        """
        return self._ask(("ask", fn, args))  # type: ignore[no-any-return]

    def wait(self) -> None:
        """Block until every write queued so far has run (errors stay kept for :meth:`close`)."""
        if self._process is not None:
            self._ask(("wait",))

    def close(self) -> None:
        """Wait for every queued write, then stop the worker (a later write starts a new one); its exit is not
        waited for (:func:`harness.forked.reap_later`).

        Raises:
            Exception: the first exception a queued write raised (every write ran), once.
            WorkerError: the worker ended without answering (its exit code named).
        """
        with self._ask_lock:
            if self._process is None:
                return
            process, conn = self._process, self._conn
            try:
                with self._send_lock:
                    conn.send(("close",))
                _, error, seconds, cpu = conn.recv()
            except (EOFError, OSError):
                process.join()
                raise WorkerError(f"the MLflow writer process ended (exit code {process.exitcode}) before its "
                                  "writes were confirmed") from None
            finally:
                with self._send_lock:
                    self._process = self._conn = None
            conn.close()
            # every write is committed (the answer comes after them): the worker's exit is not waited for
            reap_later(process)
        self.seconds += seconds
        self.cpu_seconds += cpu
        if error is not None:
            raise error


__all__ = ["WRITER_ENV", "WRITER_NICE", "WRITER_NICE_ENV", "ProcessWriter", "WorkerError", "use_process_writer",
           "writer_nice"]
