"""The tracker's store writes (issue 18): one writer thread, in order, coalesced; tables as MLflow writes them; the
holdout traces of a variant in one transaction with the same rows as one ``start_trace`` each."""

from __future__ import annotations

import functools
import json
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import mlflow
import pandas as pd
import pytest
from mlflow.entities import AssessmentSource, Feedback, Metric, Param, RunTag, TraceInfo, TraceLocation, TraceState

from harness.tracking import trace_batch
from harness.tracking.tables import LoggedTables, table_json
from harness.tracking.tracker import MlflowTracker
from harness.tracking.writer import MAX_BATCH_PARAMS, StoreWriter


class RecordingClient:
    """Records the ``log_batch`` calls a writer makes (thread, run, metric keys, params, tags); ``gate`` holds the
    first call until set, so the writes queued meanwhile can coalesce."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, list[str], dict[str, str], dict[str, str]]] = []
        self.gate = threading.Event()

    def log_batch(self, run_id: str, metrics: Any = (), params: Any = (), tags: Any = ()) -> None:
        self.gate.wait(5)
        self.calls.append((threading.current_thread().name, run_id, [m.key for m in metrics],
                           {p.key: p.value for p in params}, {t.key: t.value for t in tags}))


def _metric(key: str, value: float = 1.0) -> Metric:
    return Metric(key, value, 0, 0)


def test_writes_run_in_order_in_one_thread_and_neighbours_coalesce() -> None:
    client = RecordingClient()
    writer = StoreWriter(client)
    writer.log_batch("r1", metrics=[_metric("first")])  # taken at once, held by the gate
    time.sleep(0.1)
    order: list[str] = []
    writer.log_batch("r1", metrics=[_metric("a")], tags={"t": RunTag("t", "1")})
    writer.log_batch("r1", metrics=[_metric("b")], tags={"t": RunTag("t", "2")})  # later tag value wins
    writer.log_batch("r2", params={"p": Param("p", "x")})  # another run: a batch of its own
    writer.submit(lambda: order.append("call"))
    writer.log_batch("r1", metrics=[_metric("c")])  # after a call: not merged across it
    client.gate.set()
    writer.close()
    assert [(run, keys, tags) for _, run, keys, _, tags in client.calls] == [
        ("r1", ["first"], {}), ("r1", ["a", "b"], {"t": "2"}), ("r2", [], {}), ("r1", ["c"], {})]
    assert client.calls[2][3] == {"p": "x"} and order == ["call"]
    assert {name for name, *_ in client.calls} == {"harness-mlflow-writer"}


def _file_write(client: Any, order: list[str], name: str) -> None:
    order.append(name)


def test_batches_merge_across_artifact_only_writes_but_not_across_other_calls() -> None:
    """A run's last logging alternates files and tags (issue 18): batches merge across writes marked
    ``artifact_only`` (and dataset inputs), never across any other call, and every write still runs once."""
    from harness.tracking.writer import artifact_only

    client = RecordingClient()
    client.log_inputs = lambda run_id, datasets: order.append(f"inputs {len(datasets)}")  # type: ignore[attr-defined]
    writer = StoreWriter(client)
    order: list[str] = []
    files = artifact_only(functools.partial(_file_write))
    writer.log_batch("r1", metrics=[_metric("first")])  # taken at once, held by the gate
    time.sleep(0.1)
    writer.log_batch("r1", metrics=[_metric("a")], tags={"t": RunTag("t", "1")})
    writer.submit_call(files, order, "table")
    writer.log_batch("r1", tags={"t": RunTag("t", "2")})  # merged into the batch before the file write
    writer.log_inputs("r1", ["d1"])
    writer.log_batch("r1", metrics=[_metric("b")])  # merged too: inputs write another table
    writer.log_inputs("r1", ["d2"])  # merged into the first inputs
    writer.submit_call(_file_write, order, "other")  # not marked: batches after it stay after it
    writer.log_batch("r1", metrics=[_metric("c")])
    client.gate.set()
    writer.close()
    assert [(run, keys, tags) for _, run, keys, _, tags in client.calls] == [
        ("r1", ["first"], {}), ("r1", ["a", "b"], {"t": "2"}), ("r1", ["c"], {})]
    assert order == ["table", "inputs 2", "other"]


def test_a_batch_never_repeats_a_param_key_nor_exceeds_mlflows_limits() -> None:
    client = RecordingClient()
    writer = StoreWriter(client)
    writer.log_batch("r", metrics=[_metric("hold")])
    time.sleep(0.1)
    writer.log_batch("r", params={"k": Param("k", "1")})
    writer.log_batch("r", params={"k": Param("k", "1")})  # MLflow refuses a batch naming a param twice
    for i in range(MAX_BATCH_PARAMS + 5):
        writer.log_batch("r", params={f"p{i}": Param(f"p{i}", "v")})
    client.gate.set()
    writer.close()
    batches = [params for *_, params, _ in client.calls[1:]]
    assert all(len(b) <= MAX_BATCH_PARAMS for b in batches)
    assert sum("k" in b for b in batches) == 2
    assert sum(len(b) for b in batches) == MAX_BATCH_PARAMS + 7


def test_a_failed_write_does_not_stop_later_ones_and_close_raises_it_once() -> None:
    done: list[int] = []
    writer = StoreWriter(RecordingClient())

    def fail() -> None:
        raise RuntimeError("store refused")

    writer.submit(fail)
    writer.submit(lambda: done.append(1))
    with pytest.raises(RuntimeError, match="store refused"):
        writer.close()
    assert done == [1]
    writer.close()  # reported once
    with pytest.raises(ValueError, match="sync"):  # a call's exception goes to its caller, not to close()
        writer.call(lambda: (_ for _ in ()).throw(ValueError("sync")))
    writer.close()


def test_logged_tables_append_and_tag_like_mlflow(mlflow_store: str) -> None:
    first = pd.DataFrame({"task_id": ["a", "b"], "score": [1.0, 0.5]})
    with MlflowTracker("tables") as tracker:
        tracker.log_table(first, "holdout/table.json")
        tracker.log_table(first.iloc[:1], "holdout/table.json")  # appended, as MlflowClient.log_table does
        tracker.log_table(first, "other.json")
        with pytest.raises(ValueError, match="must end in .json"):
            tracker.log_table(first, "table.csv")
    run_id = str(tracker.run_id)
    mlflow.set_experiment("tables")
    table = mlflow.load_table("holdout/table.json", run_ids=[run_id])
    assert list(table.task_id) == ["a", "b", "a"] and list(table.columns) == ["task_id", "score"]
    tag = json.loads(mlflow.get_run(run_id).data.tags["mlflow.loggedArtifacts"])
    assert tag == [{"path": "holdout/table.json", "type": "table"}, {"path": "other.json", "type": "table"}]
    # the same file MlflowClient.log_table writes
    client = mlflow.MlflowClient()
    reference = client.create_run(client.get_experiment_by_name("tables").experiment_id).info.run_id
    client.log_table(reference, first, "other.json")
    assert mlflow.artifacts.load_text(f"runs:/{reference}/other.json") == table_json(first) \
        == mlflow.artifacts.load_text(f"runs:/{run_id}/other.json")
    assert json.loads(LoggedTables('[{"path": "x.json", "type": "table"}]').add(first, "y.json")[1]) == [
        {"path": "x.json", "type": "table"}, {"path": "y.json", "type": "table"}]


def _infos(experiment_id: str, n: int) -> list[TraceInfo]:
    infos = []
    for i in range(n):
        trace_id = f"tr-{uuid.uuid4().hex}"
        feedback = [Feedback(name=f"grader{j}", value=0.25 * j, rationale=f"why {i}", trace_id=trace_id,
                             source=AssessmentSource(source_type="CODE", source_id="test"), metadata={"m": str(j)})
                    for j in range(2)]
        infos.append(TraceInfo(trace_id=trace_id, trace_location=TraceLocation.from_experiment_id(experiment_id),
                               request_time=1_700_000_000_000 + i, state=TraceState.OK, request_preview="q",
                               response_preview="a", execution_duration=3,
                               trace_metadata={"mlflow.trace_schema.version": "3", "k": str(i)},
                               tags={"task_id": str(i), "mlflow.traceName": "holdout.baseline"},
                               assessments=feedback))
    return infos


def _stored(client: Any, experiment_id: str) -> list[tuple[Any, ...]]:
    """Every stored trace of the experiment as comparable facts (tags, metadata, assessments), by task id."""
    out = []
    for info in client.search_traces(locations=[experiment_id], max_results=100, include_spans=False):
        info = info.info
        tags = {k: v for k, v in info.tags.items() if k != "mlflow.artifactLocation"}
        metadata = {k: v for k, v in info.trace_metadata.items() if k != "mlflow.trace.sizeBytes"}
        assessments = sorted((a.name, a.value, a.rationale, json.dumps(a.metadata, sort_keys=True))
                             for a in info.assessments)
        out.append((tags["task_id"], json.dumps(tags, sort_keys=True), json.dumps(metadata, sort_keys=True),
                    info.state, info.execution_duration, assessments))
    return sorted(out)


@pytest.mark.parametrize("break_batch", [False, True], ids=["one-transaction", "fallback"])
def test_batched_traces_are_the_traces_start_trace_writes(mlflow_store: str, break_batch: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow.tracing.client import TracingClient

    client = mlflow.MlflowClient()
    tracing = TracingClient(mlflow_store)
    one_by_one, batched = client.create_experiment("each"), client.create_experiment("batch")
    for info in _infos(one_by_one, 5):
        tracing.start_trace(info)
    if break_batch:  # another MLflow version without the private writer: the public path, same rows
        monkeypatch.setattr(trace_batch, "_STORE_NAMES", ("_no_such_method",))
    assert trace_batch.write_trace_batch(tracing, _infos(batched, 5)) == ("each" if break_batch else "batch")
    expected = _stored(client, one_by_one)
    assert len(expected) == 5 and _stored(client, batched) == expected


def _fail(client: Any, message: str) -> None:
    raise RuntimeError(message)


def _unpicklable_failure(client: Any) -> None:
    class Local(Exception):  # a local class cannot be pickled back to the run
        pass

    raise Local("local failure")


def _pid(client: Any) -> int:
    import os

    return os.getpid()


def test_process_writer_writes_in_another_process_and_raises_failed_writes_in_the_run(mlflow_store: str) -> None:
    import os

    from harness.forked import WorkerError
    from harness.tracking.worker import ProcessWriter

    client = mlflow.MlflowClient()
    run_id = client.create_run(client.create_experiment("process-writer")).info.run_id
    writer = ProcessWriter(mlflow_store).start()
    assert writer.call_with(_pid) != os.getpid()
    writer.submit_call(_fail, "store refused")
    writer.log_batch(run_id, tags={"after": RunTag("after", "the failure")})  # still written
    with pytest.raises(RuntimeError, match="store refused"):
        writer.close()
    assert client.get_run(run_id).data.tags["after"] == "the failure"
    writer.submit_call(_unpicklable_failure)  # a write after close starts a new worker
    with pytest.raises(WorkerError, match="Local: local failure"):
        writer.close()
    writer.close()  # reported once


def _inputs(client: Any, run_id: str) -> list[tuple[Any, ...]]:
    """A run's dataset inputs as comparable facts (name, digest, source, schema, profile, context tags)."""
    return sorted((i.dataset.name, i.dataset.digest, i.dataset.source_type, i.dataset.source, i.dataset.schema,
                   i.dataset.profile, sorted((t.key, t.value) for t in i.tags))
                  for i in client.get_run(run_id).inputs.dataset_inputs)


@pytest.mark.parametrize("where", ["process", "thread"])
def test_dataset_inputs_built_by_the_writer_are_those_built_in_the_run(mlflow_store: str, where: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.tracking.datasets import dataset_input
    from harness.tracking.worker import WRITER_ENV

    monkeypatch.setenv(WRITER_ENV, where)
    client = mlflow.MlflowClient()
    experiment = client.create_experiment("datasets")
    frames = {name: pd.DataFrame({"task_id": [f"{name}{i}" for i in range(n)], "answer": ["x"] * n}, dtype="string")
              for name, n in (("trainset", 3), ("valset", 2), ("holdout", 4))}
    reference = client.create_run(experiment).info.run_id
    client.log_inputs(reference, [dataset_input(f, f"skill-{k}", k, "d1", "/tasks.jsonl") for k, f in frames.items()])
    with MlflowTracker("datasets") as tracker:
        for name, frame in frames.items():
            tracker.log_dataset(frame, f"skill-{name}", name, "d1", source="/tasks.jsonl")
    assert len(_inputs(client, str(tracker.run_id))) == 3
    assert _inputs(client, str(tracker.run_id)) == _inputs(client, reference)
    assert client.get_run(str(tracker.run_id)).info.status == "FINISHED"  # ended by the writer, after its writes


def test_a_dataset_the_worker_cannot_build_fails_the_run_at_its_end(mlflow_store: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.tracking.worker import WRITER_ENV

    monkeypatch.setenv(WRITER_ENV, "process")
    with pytest.raises(AttributeError, match="size"), MlflowTracker("bad-dataset") as tracker:
        tracker.log_dataset("not a frame", "skill-holdout", "holdout", "d1")  # type: ignore[arg-type]
        tracker.set_tags({"after": "the failure"})  # still written
    run = mlflow.MlflowClient().get_run(str(tracker.run_id))
    assert run.info.status == "FAILED" and run.data.tags["after"] == "the failure"


def _run_rows(db: str, run_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """The rows run ``run_id`` owns in MLflow's run tables, its id left out (two runs compare equal)."""
    import sqlite3

    out = {}
    with sqlite3.connect(db) as connection:
        for table in ("params", "metrics", "latest_metrics", "tags"):
            cursor = connection.execute(f"SELECT * FROM {table} WHERE run_uuid = ?", (run_id,))
            names = [d[0] for d in cursor.description]
            out[table] = sorted(tuple((n, v) for n, v in zip(names, row, strict=True) if n != "run_uuid")
                                for row in cursor.fetchall())
        out["runs"] = [connection.execute("SELECT name, status FROM runs WHERE run_uuid = ?", (run_id,)).fetchone()]
    return out


def test_log_batch_in_one_session_writes_the_rows_log_batch_writes(mlflow_store: str) -> None:
    """Issue 18: the writer's batches go through MLflow's own ``log_batch`` in one session; the rows are those of
    ``MlflowClient.log_batch`` (params, metrics, latest metrics, tags, a tag set again, the run name), and a batch
    MLflow refuses is refused the same way."""
    from mlflow.exceptions import MlflowException

    from harness.tracking.trace_batch import log_batch_one_session

    client = mlflow.MlflowClient()
    experiment_id = client.create_experiment("one-session")
    runs = [client.create_run(experiment_id).info.run_id for _ in range(2)]
    for write, run_id in ((client.log_batch, runs[0]), (functools.partial(log_batch_one_session, client), runs[1])):
        write(run_id, metrics=[Metric("m", 0.5, 10, 0), Metric("m", 0.75, 11, 1), Metric("n", 1.0, 10, 0)],
              params=[Param("p", "1")], tags=[RunTag("t", "a"), RunTag("mlflow.runName", "named")])
        write(run_id, metrics=[Metric("m", 0.25, 12, 2)], tags=[RunTag("t", "b")])  # a tag set again
        with pytest.raises(MlflowException):
            write(run_id, params=[Param("p", "2")])  # a param changed: refused by both
    db = mlflow_store.removeprefix("sqlite:///")
    assert _run_rows(db, runs[1]) == _run_rows(db, runs[0])
    assert _run_rows(db, runs[0])["runs"] == [("named", "RUNNING")]


def test_a_batch_lingers_for_later_mergeable_writes_but_not_past_a_wait_or_another_call() -> None:
    """Issue 18: in the tracker's writers a batch waits up to ``linger_s`` for more batches to merge with, across
    artifact-only writes; ``wait`` and any other call end the wait at once (the run's end never waits for it)."""
    from harness.tracking.writer import artifact_only

    order: list[str] = []
    files = artifact_only(functools.partial(_file_write))
    for linger, merged in ((0.0, [["a"], ["b"]]), (5.0, [["a", "b"]])):
        client = RecordingClient()
        client.gate.set()
        writer = StoreWriter(client, linger_s=linger)
        writer.log_batch("r1", metrics=[_metric("a")])
        time.sleep(0.2)  # without a linger, "a" is written alone meanwhile
        writer.submit_call(files, order, "file")
        writer.log_batch("r1", metrics=[_metric("b")])
        started = time.monotonic()
        writer.wait()
        assert time.monotonic() - started < 2.5  # not the 5 s linger
        assert [keys for _, _, keys, _, _ in client.calls] == merged
        writer.log_batch("r1", metrics=[_metric("c")])
        done = writer.submit(lambda: order.append("call"))  # a plain call: "c" is written before it, at once
        done.result(timeout=2.5)
        assert [keys for _, _, keys, _, _ in client.calls][-1] == ["c"]
        writer.close()
    assert order == ["file", "call"] * 2


def _slow_exit(client: Any, seconds: float) -> None:
    """(Writer process) make the process's exit take ``seconds`` (a finalizer run as it exits)."""
    from multiprocessing import util

    util.Finalize(None, time.sleep, args=(seconds,), exitpriority=0)


def _gone(pid: int, timeout: float) -> bool:
    """Whether process ``pid`` is reaped within ``timeout`` seconds (a zombie keeps its /proc entry)."""
    from pathlib import Path

    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}").exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs /proc")
def test_closing_the_process_writer_returns_once_the_writes_are_committed_not_when_it_exits(
        mlflow_store: str) -> None:
    """Issue 18: the run's end does not wait for the writer process to exit (it is reaped later), yet every write
    is in the store when ``close`` returns."""
    from harness.forked import can_fork
    from harness.tracking.worker import ProcessWriter

    if not can_fork():
        pytest.skip("no fork here")
    client = mlflow.MlflowClient()
    run_id = client.create_run(client.create_experiment("slow-exit")).info.run_id
    writer = ProcessWriter(mlflow_store).start()
    pid = writer.call_with(_pid)
    writer.submit_call(_slow_exit, 4.0)
    writer.log_batch(run_id, tags={"last": RunTag("last", "write")})
    started = time.monotonic()
    writer.close()
    assert time.monotonic() - started < 3.0
    assert client.get_run(run_id).data.tags["last"] == "write"
    assert _gone(pid, 20.0)  # reaped, not left a zombie


#: environment variable naming the file :func:`_remove_recorded` notes where it ran in
_REMOVED_LOG = "HARNESS_TEST_REMOVED_LOG"


def _remove_recorded(client: Any, path: str) -> None:
    """(Writer) :func:`harness.tracking.tracker._remove_stage`, noting where it ran (process id, thread name) in the
    file :data:`_REMOVED_LOG` names."""
    import os
    import shutil

    shutil.rmtree(path)
    with open(os.environ[_REMOVED_LOG], "w", encoding="utf-8") as out:
        out.write(f"{os.getpid()} {threading.current_thread().name}")


@pytest.mark.parametrize("where", ["process", "thread"])
def test_staged_copies_are_deleted_by_the_writer_after_their_upload(mlflow_store: str, where: str, tmp_path: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from harness.tracking import tracker as tracker_module
    from harness.tracking.worker import WRITER_ENV

    monkeypatch.setenv(WRITER_ENV, where)
    monkeypatch.setattr(tracker_module, "_remove_stage", _remove_recorded)
    monkeypatch.setenv(_REMOVED_LOG, str(tmp_path / "removed.txt"))
    source = tmp_path / "notes.txt"
    source.write_text("staged", encoding="utf-8")
    with MlflowTracker("staged") as tracker:
        tracker.log_file(source, "files")
        stage = tracker._stage.path  # type: ignore[union-attr]
    assert not os.path.exists(stage)
    pid, thread = (tmp_path / "removed.txt").read_text(encoding="utf-8").split(" ", 1)
    if where == "process":
        assert int(pid) != os.getpid()
    else:
        assert int(pid) == os.getpid() and thread == "harness-mlflow-writer"
    assert mlflow.artifacts.load_text(f"runs:/{tracker.run_id}/files/notes.txt") == "staged"


def _keep_stage(client: Any, path: str) -> None:
    """(Writer) a removal that leaves the staged copies (as a writer that failed before it would)."""


def test_staged_copies_are_deleted_by_the_run_when_the_writer_failed(mlflow_store: str, tmp_path: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from harness.tracking import tracker as tracker_module
    from harness.tracking.worker import WRITER_ENV

    monkeypatch.setenv(WRITER_ENV, "thread")
    monkeypatch.setattr(tracker_module, "_remove_stage", _keep_stage)
    source = tmp_path / "notes.txt"
    source.write_text("staged", encoding="utf-8")
    with pytest.raises(RuntimeError, match="store refused"), MlflowTracker("staged-failed") as tracker:
        tracker.log_file(source, "files")
        tracker.defer(functools.partial(_fail, None, "store refused"))
        stage = tracker._stage.path  # type: ignore[union-attr]
    assert not os.path.exists(stage)
    assert mlflow.MlflowClient().get_run(str(tracker.run_id)).info.status == "FAILED"


def test_the_writer_process_is_forked_after_the_runs_own_store_calls_at_start(mlflow_store: str,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: the writer process starts when the run exists (its store calls at start are done), still inside
    ``__enter__``, so its start-up overlaps the run."""
    from harness.forked import can_fork
    from harness.tracking.worker import WRITER_ENV, ProcessWriter

    if not can_fork():
        pytest.skip("no fork here")
    monkeypatch.setenv(WRITER_ENV, "process")
    started: list[str | None] = []
    original = ProcessWriter.start

    def start(self: ProcessWriter) -> ProcessWriter:
        if self._process is None:
            started.append(tracker.run_id)
        return original(self)

    monkeypatch.setattr(ProcessWriter, "start", start)
    tracker = MlflowTracker("fork-order")
    with tracker:
        assert len(started) == 1 and started[0] == tracker.run_id is not None


def _collected_objects(client: Any) -> int:
    """(Writer process) how many objects its garbage collector would walk."""
    import gc

    return len(gc.get_objects())


def test_the_writer_process_collector_walks_only_its_own_objects(mlflow_store: str) -> None:
    """Issue 18: a full collection in the forked writer walked the run's whole inherited heap (about 0.5 s of CPU
    and a page copy per page it marked); the worker freezes what it inherited."""
    import gc

    from harness.tracking.worker import ProcessWriter

    inherited = [[index] for index in range(200_000)]  # tracked containers the run holds at the fork
    assert len(gc.get_objects()) > len(inherited)
    writer = ProcessWriter(mlflow_store).start()
    try:
        assert writer.call_with(_collected_objects) < len(inherited) // 4
    finally:
        writer.close()
    del inherited


def _niceness(client: Any) -> int:
    import os

    return os.nice(0)  # the calling thread's (Linux: a priority per thread)


def _record_niceness(client: Any, path: str) -> None:
    import os

    with open(path, "a") as handle:
        handle.write(f"{os.nice(0)}\n")


def _recorded(path: Path, count: int, timeout: float = 30.0) -> list[int]:
    """The niceness values written to ``path``, once it holds ``count`` (waiting up to ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        values = [int(line) for line in path.read_text().split()] if path.exists() else []
        if len(values) >= count:
            return values
        time.sleep(0.05)
    raise AssertionError(f"{path} did not get {count} values")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a priority per thread: Linux")
def test_the_writer_process_runs_unwaited_writes_at_a_lower_priority_and_waited_ones_at_the_runs(
        mlflow_store: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue 18: the writer takes the CPU the run and its plots leave idle, not turns with them; but what the run
    waits for (its end, a read) runs at the run's priority: at the lowest one, a loaded machine made the run's end
    wait 1-15 s for 0.6 s of the writer's CPU."""
    import os

    from harness.tracking.worker import WRITER_NICE, WRITER_NICE_ENV, ProcessWriter

    ours = os.nice(0)
    if ours == 19:
        pytest.skip("the tests already run at the lowest priority")
    monkeypatch.delenv(WRITER_NICE_ENV, raising=False)
    writer = ProcessWriter(mlflow_store).start()
    unwaited = tmp_path / "unwaited.txt"
    try:
        writer.submit_call(_record_niceness, str(unwaited))  # nobody waits for it
        assert _recorded(unwaited, 1) == [min(19, ours + WRITER_NICE)]
        assert writer.call_with(_niceness) == ours  # the run waits for this one
        writer.submit_call(_record_niceness, str(unwaited))  # and later unwaited writes are lowered again
        assert _recorded(unwaited, 2)[1] == min(19, ours + WRITER_NICE)
    finally:
        writer.close()
    monkeypatch.setenv(WRITER_NICE_ENV, "0")
    writer = ProcessWriter(mlflow_store).start()
    off = tmp_path / "off.txt"
    try:
        writer.submit_call(_record_niceness, str(off))
        assert _recorded(off, 1) == [ours]
    finally:
        writer.close()
    monkeypatch.setenv(WRITER_NICE_ENV, "high")
    with pytest.raises(ValueError, match=WRITER_NICE_ENV):
        ProcessWriter(mlflow_store).start()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a priority per thread: Linux")
def test_a_store_writer_runs_the_writes_queued_before_a_wait_at_the_waiters_priority() -> None:
    """The writes queued while nobody waits run lowered (``nice``); a write running when the wait comes finishes
    where it is; the rest of what the wait waits for, and the writes queued while it waits, run unlowered."""
    import os

    ours = os.nice(0)
    if ours == 19:
        pytest.skip("the tests already run at the lowest priority")
    seen: list[tuple[str, int]] = []
    gate, started = threading.Event(), threading.Event()

    def first() -> None:
        seen.append(("first", os.nice(0)))
        started.set()
        gate.wait(10)

    writer = StoreWriter(RecordingClient(), nice=5)
    writer.submit(first)
    writer.submit(lambda: seen.append(("second", os.nice(0))))
    assert started.wait(10)
    waiting = threading.Thread(target=writer.wait)
    waiting.start()
    time.sleep(0.2)
    gate.set()
    waiting.join(10)
    writer.submit(lambda: seen.append(("later", os.nice(0)))).result(10)
    writer.close()
    assert seen == [("first", min(19, ours + 5)), ("second", ours), ("later", min(19, ours + 5))]
    assert os.nice(0) == ours  # the caller's own priority is untouched
