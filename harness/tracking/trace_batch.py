"""Many traces written in one SQL transaction, through MLflow's own trace-writing code.

``TracingClient.start_trace`` costs one transaction and one experiment read per trace: about 50 ms of
SQLAlchemy work each on SQLite in a profiled tracked run, 2.4 s for the 48 traces of a 16-task holdout (issue 18,
BENCHMARKS.md), in the writer thread but on the same GIL as the run.  :func:`start_traces` makes the SQL store
write them all in one session: it runs the store's own per-trace writer (``SqlAlchemyStore._start_trace_once``,
so every row is exactly what ``start_trace`` writes) on a shallow copy of the store whose session factory hands
out one open session and whose experiment lookup is read once; the session commits once at the end.

This leans on two private names of MLflow's SQL store (``_start_trace_once``, ``ManagedSessionMaker``).  When
they are missing (another MLflow version), the store is not a SQL store (an ``http://`` server), or the batch
fails in any way (its transaction is rolled back as a whole), each trace is written with the public
``start_trace`` instead, so the traces are always written; only the speed differs.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Iterator, Sequence
from typing import Any

from harness.tracking.store import retry_duplicate_insert

_logger = logging.getLogger(__name__)

#: the private names of MLflow's SQL store the batch path needs
_STORE_NAMES = ("_start_trace_once", "ManagedSessionMaker", "get_experiment")


class _BatchAborted(RuntimeError):
    """The store's per-trace writer asked to roll back (a trace id already taken): write one by one instead."""


class _NoRollbackSession:
    """A session whose ``rollback`` aborts the whole batch: the store's writer rolls back to recover from a
    taken trace id, which in a shared session would drop the traces written before it."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def rollback(self) -> None:
        raise _BatchAborted("a trace of the batch exists already")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def _batch_store(store: Any, session: Any, experiments: dict[str, Any]) -> Any:
    """A shallow copy of ``store`` whose sessions are all ``session`` (never committed or closed here) and whose
    experiment reads come from ``experiments`` (filled on first use)."""
    shared = _NoRollbackSession(session)

    @contextlib.contextmanager
    def one_session(read_only: bool = True) -> Iterator[Any]:
        yield shared

    def get_experiment(experiment_id: str) -> Any:
        if experiment_id not in experiments:
            experiments[experiment_id] = store.get_experiment(experiment_id)
        return experiments[experiment_id]

    batch = copy.copy(store)  # the copy's attributes are its own: other threads keep using ``store`` as it is
    batch.ManagedSessionMaker = one_session
    batch.get_experiment = get_experiment
    return batch


def _write_batch(store: Any, infos: Sequence[Any]) -> None:
    experiments: dict[str, Any] = {}
    # the experiment is read before the write session opens: SQLite allows one session at a time to write
    for experiment_id in dict.fromkeys(info.experiment_id for info in infos):  # one read per experiment
        experiments[experiment_id] = store.get_experiment(experiment_id)
    with store.ManagedSessionMaker(read_only=False) as session:  # commits once, or rolls back all
        batch = _batch_store(store, session, experiments)
        for info in infos:
            batch._start_trace_once(info)


def start_traces(tracing: Any, infos: Sequence[Any]) -> str:
    """Write the trace infos (each with its tags, metadata and assessments) through ``tracing`` (a
    ``mlflow.tracing.client.TracingClient``); returns how: ``"batch"`` (one transaction) or ``"each"`` (one
    ``start_trace`` per trace, see the module docstring).

    Raises:
        mlflow.exceptions.MlflowException: the store refused a trace (in the one-by-one path).
    """
    if not infos:
        return "batch"
    store = tracing.store
    if all(hasattr(store, name) for name in _STORE_NAMES):
        try:
            _write_batch(store, infos)
            return "batch"
        except Exception as exc:  # rolled back as a whole: nothing of it is in the store
            _logger.debug("one-transaction trace write failed (%s); writing the traces one by one", exc)
    for info in infos:
        retry_duplicate_insert(lambda info=info: tracing.start_trace(info))
    return "each"


__all__ = ["start_traces"]
