"""Many traces, their spans and their links to a run written in one SQL transaction, through MLflow's own code.

``TracingClient.start_trace`` costs one transaction and one experiment read per trace: about 50 ms of
SQLAlchemy work each on SQLite in a profiled tracked run, 2.4 s for the 48 traces of a 16-task holdout (issue 18,
BENCHMARKS.md), in the writer process, on a core the run's plot process needs.  :func:`write_trace_batch` makes
the SQL store write a variant's traces in one session: it runs the store's own writers (``_start_trace_once`` per
trace, ``_log_spans_once`` for all spans, ``link_traces_to_run``; so every row is exactly what ``start_trace``,
``log_spans`` and ``MlflowClient.link_traces_to_run`` write) on a shallow copy of the store whose session factory
hands out one open session and whose experiment lookup is read once.  The per-trace ``flush`` of
``_start_trace_once`` is deferred, and the ORM objects it made for the whole batch are then inserted with one Core
``executemany`` per table (:func:`insert_pending`) instead of SQLAlchemy's unit of work; the session commits once
at the end.

The same one-session store copy writes the run's key-value batches (:func:`log_batch_one_session`): MLflow's own
``log_batch`` in one session instead of four.

This leans on private names of MLflow's SQL store (:data:`_STORE_NAMES`).  When they are missing (another MLflow
version), the store is not a SQL store (an ``http://`` server), or the batch fails in any way (its transaction is
rolled back as a whole), the public calls write the same facts instead (one ``start_trace`` per trace, one
``log_spans``, one link call per 100 traces); only the speed differs.
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
_STORE_NAMES = ("_start_trace_once", "_log_spans_once", "link_traces_to_run", "ManagedSessionMaker",
                "get_experiment")
#: MLflow's limit of traces linked to a run in one call (``MAX_TRACE_LINKS_PER_REQUEST``)
MAX_LINKS_PER_CALL = 100


class _BatchAborted(RuntimeError):
    """The store's writer asked to roll back (a trace id already taken): write with the public calls instead."""


class _BatchSession:
    """The batch's one session, as the store's writers see it: ``rollback`` aborts the whole batch (the store's
    writer rolls back to recover from a taken trace id, which in a shared session would drop the traces written
    before it), ``flush`` is deferred to the batch's end or its next query (SQLAlchemy's autoflush) and
    ``commit`` to the batch's end (one transaction)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def rollback(self) -> None:
        raise _BatchAborted("the store's writer rolled back (a row of the batch exists already)")

    def flush(self, objects: Any = None) -> None:
        """Deferred (see the class docstring)."""

    def commit(self) -> None:
        """Deferred (see the class docstring)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def _batch_store(store: Any, session: Any, experiments: dict[str, Any]) -> Any:
    """A shallow copy of ``store`` whose sessions are all ``session`` (never committed or closed here) and whose
    experiment reads come from ``experiments`` (filled on first use)."""
    shared = _BatchSession(session)

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


def _chunks(items: Sequence[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield list(items[start:start + size])


def _write_batch(store: Any, infos: Sequence[Any], grouped: dict[str, list[Any]], run_id: str | None) -> None:
    experiments: dict[str, Any] = {}
    # the experiment is read before the write session opens: SQLite allows one session at a time to write
    for experiment_id in dict.fromkeys(info.experiment_id for info in infos):  # one read per experiment
        experiments[experiment_id] = store.get_experiment(experiment_id)
    with one_transaction(store, experiments) as transaction:
        transaction.write_traces(infos, grouped, run_id)


class Transaction:
    """One open session of a SQL store (:func:`one_transaction`): :attr:`store`, a copy of the store whose every
    write goes into that session, and :meth:`write_traces`, the trace rows written as :func:`write_trace_batch`
    writes them."""

    def __init__(self, store: Any, session: Any) -> None:
        self.store = store
        self.session = session  # the real session (``insert_pending`` needs it, not the store's wrapper)

    def flush(self) -> None:
        """Send the ORM objects made so far (a new run and its tags, whose rows later writes refer to)."""
        self.session.flush()

    def write_traces(self, infos: Sequence[Any], grouped: dict[str, list[Any]], run_id: str | None) -> None:
        """The trace infos, then their spans (``grouped`` by experiment: :func:`_by_location`), then the links of
        the traces to run ``run_id`` (None: none)."""
        for info in infos:
            self.store._start_trace_once(info)
        insert_pending(self.session)
        for location, located in grouped.items():
            self.store._log_spans_once(location, located)
        if run_id:
            for ids in _chunks([info.trace_id for info in infos], MAX_LINKS_PER_CALL):
                self.store.link_traces_to_run(ids, run_id)


def sql_store(client: Any) -> Any | None:
    """The SQL store behind the ``MlflowClient`` ``client`` when it has every private name a one-transaction write
    needs (:data:`_STORE_NAMES`, ``create_run``, ``log_batch``, ``update_run_info``), else None (another store,
    e.g. an ``http://`` server, or another MLflow version)."""
    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    needed = (*_STORE_NAMES, "create_run", "log_batch", "update_run_info")
    return store if store is not None and all(hasattr(store, name) for name in needed) else None


@contextlib.contextmanager
def one_transaction(store: Any, experiments: dict[str, Any] | None = None) -> Iterator[Transaction]:
    """A :class:`Transaction` on ``store`` (a SQL store) committed once when the block ends, or rolled back as a
    whole when it raises.  ``experiments``: experiment entities by id, read before (SQLite lets one session at a
    time write; an experiment missing there is read on first use, in a session of its own).

    Raises:
        Exception: whatever the block or the commit raised (nothing of the transaction is in the store).
    """
    with store.ManagedSessionMaker(read_only=False) as session:  # commits once, or rolls back all
        yield Transaction(_batch_store(store, session, experiments if experiments is not None else {}), session)
        session.flush()


def _pending_rows(session: Any) -> list[tuple[Any, list[dict[str, Any]]]]:
    """The rows of the session's pending ORM objects as ``(table, rows)`` groups, one per table and set of columns
    given, tables in their metadata's dependency order (parents first), rows in the order they were added.

    Raises:
        _BatchAborted: an object whose mapper is not one plain table (inheritance, several tables), or with a
            foreign key left unset (the unit of work may fill it from a relationship; MLflow's trace writers set
            every one, and every foreign key of their tables is required).
    """
    from sqlalchemy import inspect

    groups: dict[tuple[Any, tuple[str, ...]], list[dict[str, Any]]] = {}
    for obj in list(session.new):
        state = inspect(obj)
        mapper = state.mapper
        if mapper.inherits is not None or len(mapper.tables) != 1:
            raise _BatchAborted(f"{type(obj).__name__} is not mapped to one table")
        values = state.dict
        row = {prop.columns[0].key: values[prop.key] for prop in mapper.column_attrs if prop.key in values}
        for column in mapper.local_table.columns:  # a key the unit of work may copy from a parent object
            if column.foreign_keys and row.get(column.key) is None:
                raise _BatchAborted(f"{type(obj).__name__}.{column.key} is set by a relationship")
        groups.setdefault((mapper.local_table, tuple(row)), []).append(row)
    order = {table: index for index, table in enumerate(next(iter(groups))[0].metadata.sorted_tables)} \
        if groups else {}
    return sorted(((table, rows) for (table, _), rows in groups.items()), key=lambda group: order[group[0]])


def insert_pending(session: Any) -> None:
    """Insert the session's pending ORM objects with one Core ``INSERT`` (executemany) per table and column set,
    then expunge them, instead of SQLAlchemy's unit-of-work flush: the same rows (the columns' defaults apply
    alike; every foreign key is set on the objects themselves, which :func:`_pending_rows` checks), without its
    per-object bookkeeping, which was the largest part of a batch's CPU (issue 18).  With MLflow's opt-in SQL trace
    rollups on, the session is flushed as usual (those writers keep ORM state of their own).

    Raises:
        _BatchAborted: see :func:`_pending_rows` (nothing was inserted).
    """
    from mlflow.store.tracking.utils.sql_trace_rollups import rollups_enabled
    from sqlalchemy import insert

    if rollups_enabled():
        session.flush()
        return
    pending = list(session.new)
    groups = _pending_rows(session)
    for obj in pending:
        if obj in session:  # expunging a trace info expunges its tags, metadata and assessments too (cascade)
            session.expunge(obj)
    for table, rows in groups:
        session.execute(insert(table), rows)


def log_batch_one_session(client: Any, run_id: str, metrics: Sequence[Any] = (), params: Sequence[Any] = (),
                          tags: Sequence[Any] = ()) -> None:
    """``client.log_batch(run_id, metrics=..., params=..., tags=...)`` (``mlflow.entities`` Metric, Param and
    RunTag objects, within MLflow's batch limits) in one session and transaction of a SQL store.

    MLflow's ``SqlAlchemyStore.log_batch`` opens a session of its own for the params, the metrics and the tags
    besides its own (each with its SQLite pragmas, run read and commit): about 20-27 ms of CPU a call, a tracked
    run's writer making about a dozen (issue 18).  Here the store's own ``log_batch`` runs on a copy of the store
    whose sessions are one, so the rows are those it writes.  Any failure (the transaction is rolled back whole),
    another store or missing private names: ``client.log_batch`` writes the batch instead (and raises what it
    raises).  Metric values must be floats already (``MlflowClient.log_batch`` converts them first).
    """
    store = getattr(getattr(client, "_tracking_client", None), "store", None)
    if store is not None and all(hasattr(store, name) for name in ("ManagedSessionMaker", "log_batch")):
        try:
            with store.ManagedSessionMaker(read_only=False) as session:
                _batch_store(store, session, {}).log_batch(run_id, metrics=list(metrics), params=list(params),
                                                           tags=list(tags))
            return
        except Exception as exc:  # rolled back as a whole: the public call writes it, or reports why not
            _logger.debug("one-session log_batch failed (%s); writing with MlflowClient.log_batch", exc)
    client.log_batch(run_id, metrics=list(metrics), params=list(params), tags=list(tags))


def _by_location(infos: Sequence[Any], spans: Sequence[Any]) -> dict[str, list[Any]]:
    """The spans grouped by their trace's experiment id (``log_spans``' location), in the given order.

    Raises:
        ValueError: a span of a trace that is not among ``infos``.
    """
    experiment_of = {info.trace_id: info.experiment_id for info in infos}
    grouped: dict[str, list[Any]] = {}
    for span in spans:
        if span.trace_id not in experiment_of:
            raise ValueError(f"span {span.span_id} belongs to trace {span.trace_id}, which is not in the batch")
        grouped.setdefault(experiment_of[span.trace_id], []).append(span)
    return grouped


def write_trace_batch(tracing: Any, infos: Sequence[Any], spans: Sequence[Any] = (),
                      run_id: str | None = None) -> str:
    """Write the trace infos (each with its tags, metadata and assessments), then ``spans`` (of those traces),
    then link the traces to run ``run_id`` (None: no link), through ``tracing`` (a
    ``mlflow.tracing.client.TracingClient``); returns how: ``"batch"`` (one transaction) or ``"each"`` (the public
    calls, see the module docstring).

    Raises:
        ValueError: a span of a trace not in ``infos``.
        mlflow.exceptions.MlflowException: the store refused a write (in the public path).
    """
    if not infos:
        return "batch"
    grouped = _by_location(infos, spans)
    store = tracing.store
    if all(hasattr(store, name) for name in _STORE_NAMES):
        try:
            _write_batch(store, infos, grouped, run_id)
            return "batch"
        except Exception as exc:  # rolled back as a whole: nothing of it is in the store
            _logger.debug("one-transaction trace write failed (%s); writing with the public calls", exc)
    for info in infos:
        retry_duplicate_insert(lambda info=info: tracing.start_trace(info))
    for location, located in grouped.items():
        tracing.log_spans(location, located)
    if run_id:
        from mlflow.tracking import MlflowClient

        client = MlflowClient(tracking_uri=tracing.tracking_uri)
        for ids in _chunks([info.trace_id for info in infos], MAX_LINKS_PER_CALL):
            client.link_traces_to_run(ids, run_id)
    return "each"


__all__ = ["MAX_LINKS_PER_CALL", "Transaction", "insert_pending", "log_batch_one_session", "one_transaction",
           "sql_store", "write_trace_batch"]
