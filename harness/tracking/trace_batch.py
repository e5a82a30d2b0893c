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
    ``commit`` to the batch's end (one transaction).

    Two writes of ``_log_spans_once`` are made cheaper for the traces this batch created (:meth:`created`), the
    rows unchanged (issue 18: together about a sixth of a variant's write CPU):

    - ``merge`` of a tag of such a trace: MLflow merges the ``mlflow.trace.spansLocation`` tag into every trace,
      a primary-key ``SELECT`` each and a unit-of-work insert.  A trace created in this transaction has exactly
      the tags inserted with it (:meth:`created`), so the merge of a new key is an insert (queued, then sent with
      one ``executemany`` before the session's next statement), and of a key with the same value a no-op; any
      other merge is SQLAlchemy's.
    - its multi-row span upsert (``_bulk_upsert``): an ``INSERT ... VALUES`` of every span, which SQLAlchemy can
      not cache and so compiles anew on each call (its cache key is None), is sent as the same upsert of one row
      executed for every row (``executemany``), compiled once per process (:func:`_as_executemany`)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._tags: dict[tuple[str, str], Any] = {}  # (trace id, key) -> value of the created traces' tags
        self._queued_tags: list[dict[str, Any]] = []  # tag rows merged in, not sent yet

    def created(self, groups: Sequence[tuple[Any, list[dict[str, Any]]]]) -> None:
        """Note the traces whose rows :func:`insert_pending` just inserted (its ``groups``): they hold exactly
        these tags (the traces are new in this transaction: a taken id aborts the batch)."""
        traces = {row["request_id"] for table, rows in groups if table.name == "trace_info" for row in rows}
        for table, rows in groups:
            if table.name == "trace_tags":
                self._tags.update(((row["request_id"], row["key"]), row["value"]) for row in rows)
        self._tags.update({(trace, None): None for trace in traces})  # marks the trace as created here

    def merge(self, instance: Any, **kwargs: Any) -> Any:
        """``session.merge``, or for a tag of a trace created here its insert or nothing (see the class)."""
        from mlflow.store.tracking.dbmodels.models import SqlTraceTag

        if type(instance) is SqlTraceTag and not kwargs and (instance.request_id, None) in self._tags:
            key = (instance.request_id, instance.key)
            if key not in self._tags:
                self._tags[key] = instance.value
                self._queued_tags.append({"request_id": instance.request_id, "key": instance.key,
                                          "value": instance.value})
                return instance
            if self._tags[key] == instance.value:
                return instance
        self.send_queued()
        return self._session.merge(instance, **kwargs)

    def send_queued(self) -> None:
        """Insert the tag rows :meth:`merge` queued (one ``executemany``)."""
        if self._queued_tags:
            from mlflow.store.tracking.dbmodels.models import SqlTraceTag
            from sqlalchemy import insert

            rows, self._queued_tags = self._queued_tags, []
            self._session.execute(insert(SqlTraceTag.__table__), rows)

    def execute(self, statement: Any, *args: Any, **kwargs: Any) -> Any:
        self.send_queued()
        if not args and not kwargs:
            converted = _as_executemany(statement)
            if converted is not None:
                return self._session.execute(*converted)
        return self._session.execute(statement, *args, **kwargs)

    def query(self, *entities: Any, **kwargs: Any) -> Any:
        self.send_queued()
        return self._session.query(*entities, **kwargs)

    def rollback(self) -> None:
        raise _BatchAborted("the store's writer rolled back (a row of the batch exists already)")

    def flush(self, objects: Any = None) -> None:
        """Deferred (see the class docstring)."""

    def commit(self) -> None:
        """Deferred (see the class docstring)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def _as_executemany(statement: Any) -> tuple[Any, list[dict[str, Any]]] | None:
    """``(statement, rows)`` executing the SQLite multi-row span upsert ``statement`` (MLflow's ``_bulk_upsert``
    into ``spans``: ``INSERT ... VALUES (...), (...) ON CONFLICT (pk) DO UPDATE SET col = excluded.col``) as one
    row's upsert over ``rows``: the same rows and conflict rule, in a statement SQLAlchemy caches.  None for any
    other statement (sent as it is).  Leans on SQLAlchemy's private ``_multi_values`` and
    ``_post_values_clause``; a shape it does not know is left alone."""
    from sqlalchemy.dialects.sqlite import Insert, insert
    from sqlalchemy.dialects.sqlite.dml import OnConflictDoUpdate

    if not isinstance(statement, Insert) or getattr(statement.table, "name", None) != "spans":
        return None
    multi = getattr(statement, "_multi_values", ())
    clause = getattr(statement, "_post_values_clause", None)
    if len(multi) != 1 or not isinstance(clause, OnConflictDoUpdate) or clause.update_whereclause is not None:
        return None
    rows = multi[0]
    if not rows or not all(isinstance(row, dict) and row.keys() == rows[0].keys() for row in rows) \
            or not all(isinstance(key, str) for key in rows[0]):
        return None
    columns = list(clause.inferred_target_elements or ())
    to_set = clause.update_values_to_set
    pairs = list(to_set.items()) if isinstance(to_set, dict) else list(to_set)
    # each column set to the same column of the row proposed for insertion (``excluded.<name>``), as MLflow's is
    if not columns or not all(isinstance(name, str) for name in columns) or not all(
            isinstance(name, str) and getattr(value, "name", None) == name
            and getattr(getattr(value, "table", None), "name", None) == "excluded" for name, value in pairs):
        return None
    updated = [name for name, _ in pairs]
    one = insert(statement.table)
    one = one.on_conflict_do_update(index_elements=columns, set_={name: one.excluded[name] for name in updated})
    return one, list(rows)


def _batch_store(store: Any, shared: _BatchSession, experiments: dict[str, Any]) -> Any:
    """A shallow copy of ``store`` whose sessions are all ``shared`` (never committed or closed here) and whose
    experiment reads come from ``experiments`` (filled on first use)."""

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

    def __init__(self, store: Any, session: Any, shared: _BatchSession) -> None:
        self.store = store
        self.session = session  # the real session (``insert_pending`` needs it, not the store's wrapper)
        self._shared = shared

    def flush(self) -> None:
        """Send the ORM objects made so far (a new run and its tags, whose rows later writes refer to)."""
        self.session.flush()

    def write_traces(self, infos: Sequence[Any], grouped: dict[str, list[Any]], run_id: str | None) -> None:
        """The trace infos, then their spans (``grouped`` by experiment: :func:`_by_location`), then the links of
        the traces to run ``run_id`` (None: none)."""
        for info in infos:
            self.store._start_trace_once(info)
        self._shared.created(insert_pending(self.session))
        for location, located in grouped.items():
            self.store._log_spans_once(location, located)
        self._shared.send_queued()
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
        shared = _BatchSession(session)
        yield Transaction(_batch_store(store, shared, experiments if experiments is not None else {}), session,
                          shared)
        shared.send_queued()
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


def insert_pending(session: Any) -> list[tuple[Any, list[dict[str, Any]]]]:
    """Insert the session's pending ORM objects with one Core ``INSERT`` (executemany) per table and column set,
    then expunge them, instead of SQLAlchemy's unit-of-work flush: the same rows (the columns' defaults apply
    alike; every foreign key is set on the objects themselves, which :func:`_pending_rows` checks), without its
    per-object bookkeeping, which was the largest part of a batch's CPU (issue 18).  With MLflow's opt-in SQL trace
    rollups on, the session is flushed as usual (those writers keep ORM state of their own).

    Returns the inserted rows as ``(table, rows)`` groups (none when the session was flushed as usual).

    Raises:
        _BatchAborted: see :func:`_pending_rows` (nothing was inserted).
    """
    from mlflow.store.tracking.utils.sql_trace_rollups import rollups_enabled
    from sqlalchemy import insert

    if rollups_enabled():
        session.flush()
        return []
    pending = list(session.new)
    groups = _pending_rows(session)
    for obj in pending:
        if obj in session:  # expunging a trace info expunges its tags, metadata and assessments too (cascade)
            session.expunge(obj)
    for table, rows in groups:
        session.execute(insert(table), rows)
    return groups


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
                batch = _batch_store(store, _BatchSession(session), {})
                batch.log_batch(run_id, metrics=list(metrics), params=list(params), tags=list(tags))
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
