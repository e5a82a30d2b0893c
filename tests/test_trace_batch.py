"""A variant's traces, spans and run links in one transaction (harness.tracking.trace_batch, issue 18): every row
of every trace table is the row MLflow's public calls write (start_trace each, log_spans, link_traces_to_run),
and a batch that cannot run (another MLflow version, a taken trace id) falls back to those calls."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import mlflow
import pytest
from mlflow.entities import AssessmentSource, Feedback
from mlflow.tracing.client import TracingClient

from harness.tracking import trace_batch
from harness.tracking.holdout_traces import LMCall, TaskRecord, build_trace
from verifiers import Task

#: the tables a trace writes into, with the column that names the trace
TRACE_TABLES = {"trace_info": "request_id", "trace_tags": "request_id", "trace_request_metadata": "request_id",
                "assessments": "trace_id", "spans": "trace_id"}
#: columns made fresh by each write (random ids, the time a link was written): left out of the comparison
FRESH_COLUMNS = {"assessment_id", "association_id", "created_time"}  # created_time: when a link was written
#: an expectation's times are when ``build_trace`` made it (each write builds its own), not what the store wrote
EXPECTATION_TIMES = {"created_timestamp", "last_updated_timestamp"}


def _records(n: int) -> list[TaskRecord]:
    """``n`` answered and graded tasks, one failed, each with one or two LM calls and two graders' feedback."""
    records = []
    for i in range(n):
        task = Task(task_id=f"t{i}", kind="title", question=f"Which paper is {i}?",
                    expected_behavior="names the title", answer=f"answer {i}", group=f"g{i}")
        start = 1_700_000_000_000_000_000 + i * 1_000_000_000
        calls = [LMCall(start + 10 + j, {"model": "test/oracle", "messages": [{"role": "user", "content": f"q{i}"}]},
                        start + 500 + j, [f"reply {i}.{j}"]) for j in range(1 + i % 2)]
        feedback = [Feedback(name=name, value=0.5 * k, rationale=f"{name} on {i}",
                             source=AssessmentSource(source_type="CODE", source_id=name), metadata={"k": str(k)})
                    for k, name in enumerate(("verifier", "keyword"))]
        records.append(TaskRecord(task, i, text=f"answer {i}" if i != 1 else "", error="" if i != 1 else "E: x",
                                  start_ns=start, end_ns=start + 900, lm_calls=calls, feedbacks=feedback))
    return records


def _write(tracing: TracingClient, experiment_id: str, run_id: str, records: list[TaskRecord]) -> str:
    built = [build_trace(r, "evolved", "eval-1", experiment_id, run_id) for r in copy.deepcopy(records)]
    return trace_batch.write_trace_batch(tracing, [info for info, _ in built],
                                         [s for _, spans in built for s in spans], run_id)


def _rows(db: Path, experiment_id: str, run_id: str, artifact_root: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the experiment's traces own, each id replaced by what it stands for (the task, the span's name
    and order, the run), so two writes of the same records compare equal."""
    with sqlite3.connect(db) as connection:
        connection.row_factory = sqlite3.Row
        traces = connection.execute("SELECT request_id FROM trace_info WHERE experiment_id = ?",
                                    (experiment_id,)).fetchall()
        ids = [row["request_id"] for row in traces]
        names = {trace: connection.execute("SELECT value FROM trace_tags WHERE request_id = ? AND key = 'task_id'",
                                           (trace,)).fetchone()[0] for trace in ids}
        spans = connection.execute(f"SELECT trace_id, span_id FROM spans WHERE trace_id IN ({','.join('?' * len(ids))})"
                                   " ORDER BY start_time_unix_nano", ids).fetchall()
        replace = {trace: f"<trace {name}>" for trace, name in names.items()}
        replace.update({row["span_id"]: f"<span {names[row['trace_id']]}.{k}>" for k, row in enumerate(spans)})
        replace.update({run_id: "<run>", artifact_root: "<artifacts>"})

        def normal(value: Any, key: str = "") -> Any:
            if key == "content":  # a span's JSON names its ids in OTel's base64 form: compared as the columns
                value = json.dumps({k: v for k, v in json.loads(value).items()
                                    if k not in ("trace_id", "span_id", "parent_span_id")}, sort_keys=True)
            if isinstance(value, str):
                for old, new in replace.items():
                    value = value.replace(old, new)
            return value

        out: dict[str, list[tuple[Any, ...]]] = {}
        marks = ",".join("?" * len(ids))
        for table, column in TRACE_TABLES.items():
            rows = connection.execute(f"SELECT * FROM {table} WHERE {column} IN ({marks})", ids).fetchall()
            out[table] = sorted(tuple((key, normal(row[key], key)) for key in row.keys()
                                      if key not in FRESH_COLUMNS and key != "experiment_id"
                                      and not (key in EXPECTATION_TIMES and row["assessment_type"] == "expectation"))
                                for row in rows)
        links = connection.execute(f"SELECT * FROM entity_associations WHERE source_id IN ({marks})", ids).fetchall()
        out["entity_associations"] = sorted(tuple((key, normal(row[key])) for key in row.keys()
                                                  if key not in FRESH_COLUMNS) for row in links)
    return out


def _experiment(client: Any, name: str) -> tuple[str, str, str]:
    experiment_id = client.create_experiment(name)
    run_id = client.create_run(experiment_id).info.run_id
    return experiment_id, run_id, client.get_experiment(experiment_id).artifact_location


@pytest.mark.parametrize("fallback", [False, True], ids=["one-transaction", "public-calls"])
def test_a_batch_writes_the_rows_mlflows_public_calls_write(mlflow_store: str, fallback: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    client = mlflow.MlflowClient()
    tracing = TracingClient(mlflow_store)
    records = _records(5)
    public = _experiment(client, "public")
    batched = _experiment(client, "batched")
    monkeypatch.setattr(trace_batch, "_STORE_NAMES", ("_no_such_method",))  # the public calls, for reference
    assert _write(tracing, public[0], public[1], records) == "each"
    monkeypatch.undo()
    if fallback:  # another MLflow version without the private writers
        monkeypatch.setattr(trace_batch, "_STORE_NAMES", ("_no_such_method",))
    assert _write(tracing, batched[0], batched[1], records) == ("each" if fallback else "batch")
    db = Path(mlflow_store.removeprefix("sqlite:///"))
    expected, got = _rows(db, *public), _rows(db, *batched)
    assert len(expected["trace_info"]) == 5 and len(expected["spans"]) == 5 + 7  # a root span + 1 or 2 LM calls
    kinds = [dict(row)["assessment_type"] for row in expected["assessments"]]
    # two graders' feedback; the task's fields are trace tags, not expectations (holdout_traces.task_tags)
    assert kinds.count("feedback") == 5 * 2 and kinds.count("expectation") == 0
    assert len(expected["entity_associations"]) == 5
    for table in expected:
        assert got[table] == expected[table], table
    # what MLflow reads back: every task a trace of the run, with its LM span and every grader's assessment
    traces = client.search_traces(locations=[batched[0]], run_id=batched[1], max_results=100)
    assert sorted(t.info.tags["task_id"] for t in traces) == [f"t{i}" for i in range(5)]
    assert all(t.info.tags.get("task.kind") for t in traces)
    assert all({s.name for s in t.data.spans} == {"holdout.evolved", "LM.__call__"} for t in traces)
    assert all({a.name for a in t.info.assessments} >= {"verifier", "keyword"} for t in traces)


def _table_counts(db: Path) -> dict[str, int]:
    """Rows in every table of the store."""
    with sqlite3.connect(db) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: connection.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] for table in tables}


def test_a_batch_adds_rows_to_the_tables_the_public_calls_add_to_and_no_other(mlflow_store: str,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the trace tables compared above: the one-transaction write (its ORM rows inserted with Core
    executemany, ``trace_batch.insert_pending``) adds as many rows to every table of the store as the public calls."""
    client = mlflow.MlflowClient()
    tracing = TracingClient(mlflow_store)
    db = Path(mlflow_store.removeprefix("sqlite:///"))
    records = _records(6)
    deltas = []
    for name, fallback in (("public", True), ("batched", False)):
        experiment_id, run_id, _ = _experiment(client, name)
        before = _table_counts(db)
        with monkeypatch.context() as patch:
            if fallback:
                patch.setattr(trace_batch, "_STORE_NAMES", ("_no_such_method",))
            assert _write(tracing, experiment_id, run_id, records) == ("each" if fallback else "batch")
        after = _table_counts(db)
        deltas.append({table: after[table] - before.get(table, 0) for table in after
                       if after[table] != before.get(table, 0)})
    assert deltas[0] == deltas[1]
    assert {"trace_info", "trace_tags", "trace_request_metadata", "assessments", "spans"} <= set(deltas[0])


def test_insert_pending_refuses_an_object_whose_foreign_key_a_relationship_would_fill(mlflow_store: str) -> None:
    """A child added only through its parent's relationship (the unit of work would copy the parent's key into
    it) is refused before anything is inserted, so the batch falls back to MLflow's public calls."""
    from mlflow.store.tracking.dbmodels.models import SqlTraceInfo, SqlTraceTag

    store = TracingClient(mlflow_store).store
    experiment_id = mlflow.MlflowClient().create_experiment("fk")
    with store.ManagedSessionMaker(read_only=False) as session:
        info = SqlTraceInfo(request_id="tr-fk", experiment_id=experiment_id, timestamp_ms=0, status="OK")
        info.tags = [SqlTraceTag(key="k", value="v")]  # no request_id of its own
        session.add(info)
        with pytest.raises(trace_batch._BatchAborted, match="relationship"):
            trace_batch.insert_pending(session)
        session.rollback()
    assert not _table_counts(Path(mlflow_store.removeprefix("sqlite:///")))["trace_info"]


def test_a_batch_that_meets_a_taken_trace_id_is_rolled_back_and_written_by_the_public_calls(
        mlflow_store: str) -> None:
    client = mlflow.MlflowClient()
    tracing = TracingClient(mlflow_store)
    experiment_id, run_id, _ = _experiment(client, "taken")
    built = [build_trace(r, "baseline", "eval-1", experiment_id, run_id) for r in _records(3)]
    infos, spans = [info for info, _ in built], [s for _, ss in built for s in ss]
    tracing.start_trace(infos[1])  # already there: the batch must not half-write the others
    assert trace_batch.write_trace_batch(tracing, infos, spans, run_id) == "each"
    traces = client.search_traces(locations=[experiment_id], max_results=100)
    assert len(traces) == 3 and all(len(t.data.spans) >= 2 for t in traces)


def test_a_span_of_a_trace_outside_the_batch_is_refused(mlflow_store: str) -> None:
    client = mlflow.MlflowClient()
    experiment_id, run_id, _ = _experiment(client, "stray")
    (info, _), (_, stray) = (build_trace(r, "baseline", "e", experiment_id, run_id) for r in _records(2))
    with pytest.raises(ValueError, match="not in the batch"):
        trace_batch.write_trace_batch(TracingClient(mlflow_store), [info], stray, run_id)


def _statements(tracing: TracingClient, experiment_id: str, run_id: str, records: list[TaskRecord]) -> list[
        tuple[str, bool]]:
    """The SQL statements (text, whether executed for many rows) a batch write of ``records`` sends."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    sent: list[tuple[str, bool]] = []

    def statement(conn: Any, cursor: Any, text: str, parameters: Any, context: Any, executemany: bool) -> None:
        sent.append((" ".join(text.split()), executemany))

    event.listen(Engine, "before_cursor_execute", statement)
    try:
        assert _write(tracing, experiment_id, run_id, records) == "batch"
    finally:
        event.remove(Engine, "before_cursor_execute", statement)
    return sent


def test_a_batch_sends_its_spans_and_spans_location_tags_once_for_all_traces(mlflow_store: str) -> None:
    """Issue 18: MLflow's span writer merges the ``mlflow.trace.spansLocation`` tag into each trace (a primary-key
    SELECT and an INSERT per trace) and upserts the spans as one multi-row INSERT that SQLAlchemy compiles anew on
    every call; for the traces the batch created, both are one executemany (the rows are those of the public
    calls: ``test_a_batch_writes_the_rows_mlflows_public_calls_write``)."""
    client = mlflow.MlflowClient()
    experiment_id, run_id, _ = _experiment(client, "statements")
    sent = _statements(TracingClient(mlflow_store), experiment_id, run_id, _records(4))
    tag_reads = [text for text, _ in sent if text.startswith("SELECT") and "FROM trace_tags" in text]
    assert not tag_reads
    span_inserts = [(text, many) for text, many in sent if text.startswith("INSERT INTO spans")]
    assert len(span_inserts) == 1 and span_inserts[0][1]  # one statement, for every row
    assert "ON CONFLICT (trace_id, span_id) DO UPDATE" in span_inserts[0][0]
    tag_inserts = [text for text, many in sent if text.startswith("INSERT INTO trace_tags") and many]
    assert len(tag_inserts) == 2  # the traces' own tags, then the spans-location tags merged into them
    location = client.search_traces(locations=[experiment_id], max_results=10)
    assert len(location) == 4 and all(t.info.tags.get("mlflow.trace.spansLocation") == "TRACKING_STORE"
                                       for t in location)
