"""Holdout evaluation answered and graded in-process, its traces then written to MLflow in one batch.

:func:`batch_holdout` gives the same facts :func:`harness.tracking.genai_eval.genai_holdout` gives (one trace per
task, attached to the run, with the task LM's call and every grader's assessment, the rows read back from those
assessments) without ``mlflow.genai.evaluate``, whose synchronous per-span and per-assessment writes cost about
25 SQL transactions per task and serialise its workers on SQLite's single writer (issue 18, BENCHMARKS.md):

1. every task is answered and graded in a worker thread of this process (``num_threads``): the program runs
   with a DSPy callback (:class:`LMCallRecorder`) that records each task LM call (inputs, outputs, times) in
   memory, and each grader is called through its scorer (:class:`harness.tracking.scorers.GraderScorer`), so an
   assessment is exactly what ``mlflow.genai.evaluate`` would have stored;
2. each task becomes one :class:`mlflow.entities.Trace` built in memory: a root span ``holdout.<variant>``
   (inputs ``{"question": ...}``, output the answer; status ERROR and trace state ERROR when the program
   raised) with one ``LM.__call__`` child span per task LM call; trace tags ``variant``, ``task_id``,
   ``holdout.index``, ``holdout.eval_id`` (and ``holdout.error``) and the task's other fields
   (:func:`task_tags`: ``task.kind``, ``task.answer``, ...), metadata ``mlflow.sourceRun`` = the run, the
   response preview led by the variant (:func:`response_preview`), and the graders' feedback as assessments
   (feedback metadata ``mlflow.assessment.sourceRunId`` = the run, as ``mlflow.genai.evaluate`` writes it).
   Unlike ``mlflow.genai.evaluate`` no expectation assessments: MLflow's "Compare to" view shows every
   expectation as a column before the graders' and hides the graders' columns once more than 10 would show
   (see :func:`task_tags`);
3. the traces are written with MLflow's trace export API (:class:`mlflow.tracing.client.TracingClient`): the
   trace infos (tags, metadata and all assessments) of the variant in one transaction on a SQL store
   (:mod:`harness.tracking.trace_batch`; elsewhere one ``start_trace`` each) and one ``log_spans`` for every
   span of the variant; the traces are linked to the run (``link_traces_to_run``), the
   run gets MLflow's evaluation run type tag (``mlflow.runType = genai_evaluate``, when unset) and the tag
   ``holdout.<variant>.eval_id``, as with ``mlflow.genai.evaluate``.

The rows come from the very assessments written (:func:`harness.tracking.genai_eval.rows_from_traces` over the
in-memory records), and reading the stored traces back gives the same rows.  The graders' own DSPy calls (the
judge's LM) are not traced, as in ``genai_holdout``.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from harness.engine.graders import Grader
from harness.engine.holdout import HoldoutRow
from harness.engine.program import SkillProgram
from harness.tracking.genai_eval import (
    _SOURCE_RUN_KEY,
    _SOURCE_RUN_TRACE_KEY,
    MAX_ERROR_CHARS,
    TAG_ERROR,
    TAG_EVAL_ID,
    TAG_INDEX,
    check_holdout_arguments,
    holdout_data,
    rows_from_traces,
)
from harness.tracking.scorers import GraderScorer, grader_scorer
from harness.tracking.trace_batch import write_trace_batch
from verifiers import Task

#: the span name of a task LM call (the name MLflow's DSPy autologging gives it)
LM_SPAN_NAME = "LM.__call__"
#: characters of the request / response kept in a trace's previews (MLflow's own preview limit is 1,000)
PREVIEW_CHARS = 1000
#: the trace tag key prefix of a task's fields other than its id (tag ``task_id``) and question (the request)
TASK_TAG_PREFIX = "task."
#: longest trace tag value MLflow keeps (``mlflow.tracing.constant.MAX_CHARS_IN_TRACE_INFO_TAGS_VALUE``)
MAX_TAG_CHARS = 4096


@dataclass
class LMCall:
    """One recorded LM call: times in ns since the epoch, JSON-ready inputs and outputs, and the error."""

    start_ns: int
    inputs: dict[str, Any]
    end_ns: int = 0
    outputs: Any = None
    error: str = ""


@dataclass
class TaskRecord:
    """One holdout task, answered and graded: the answer (``""`` on failure), the program's error, the times
    of the root span (ns), the LM calls and the graders' feedback assessments (grader order)."""

    task: Task
    index: int
    text: str = ""
    error: str = ""
    start_ns: int = 0
    end_ns: int = 0
    lm_calls: list[LMCall] = field(default_factory=list)
    feedbacks: list[Any] = field(default_factory=list)


def _jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (anything else becomes its ``str``)."""
    return json.loads(json.dumps(value, default=str))


class LMCallRecorder(BaseCallback):
    """A DSPy callback recording the LM calls made in a thread into that thread's current :class:`TaskRecord`
    (set with :meth:`recording`); calls made elsewhere (another thread, no record set) are ignored."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._open: dict[str, LMCall] = {}
        self._lock = threading.Lock()

    def recording(self, record: TaskRecord | None) -> None:
        """Record this thread's LM calls into ``record`` from now on (None: stop)."""
        self._local.record = record

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        record = getattr(self._local, "record", None)
        if record is None:
            return
        call = LMCall(time.time_ns(), _jsonable({"model": getattr(instance, "model", ""), **inputs}))
        record.lm_calls.append(call)
        with self._lock:
            self._open[call_id] = call

    def on_lm_end(self, call_id: str, outputs: Any | None, exception: Exception | None = None) -> None:
        with self._lock:
            call = self._open.pop(call_id, None)
        if call is None:
            return
        call.end_ns = time.time_ns()
        call.outputs = _jsonable(outputs)
        if exception is not None:
            call.error = f"{type(exception).__name__}: {exception}"[:MAX_ERROR_CHARS]


def _recording_lm(program: Any, lm: Any, recorder: LMCallRecorder) -> Any:
    """A copy of the task LM ``lm`` with ``recorder`` among its own callbacks, or None when ``recorder`` must be a
    global callback instead: ``lm`` has no callbacks list, or a predictor of ``program`` has an LM of its own (or
    ``program`` is no DSPy module, so that is unknown) and would bypass the copy.

    Why: DSPy calls an LM's own callbacks for that LM's calls alone, a global callback for every module and
    adapter step too (each costing DSPy a handler lookup); the copy shares the LM's client, cache and history."""
    predictors = program.predictors() if isinstance(program, dspy.Module) else None
    if predictors is None or any(getattr(p, "lm", None) is not None for p in predictors):
        return None
    if not isinstance(getattr(lm, "callbacks", None), list):
        return None
    copied = copy.copy(lm)
    copied.callbacks = [*lm.callbacks, recorder]
    return copied


def answer_and_grade(program: SkillProgram, tasks: Sequence[Task], scorers: Sequence[GraderScorer], *,
                     num_threads: int = 1,
                     on_done: Callable[[], None] | None = None) -> list[TaskRecord]:
    """Answer every task with ``program`` and grade it with every scorer, in ``num_threads`` worker threads.

    The task LM is DSPy's current one in the calling thread (``dspy.context(lm=...)`` works: the settings are
    copied into each worker).  A failure of the program is kept as the record's ``error`` (``"<Type>: <msg>"``)
    and the empty answer is graded, like :func:`harness.engine.holdout.generate`; a scorer's failure is its
    assessment error (see :mod:`harness.tracking.scorers`).  ``on_done`` is called after each task's answer.
    Returns the records in task order.
    """
    recorder = LMCallRecorder()
    settings = dict(dspy.settings.config)
    callbacks = list(settings.pop("callbacks", None) or [])
    recording_lm = _recording_lm(program, settings.get("lm"), recorder)
    if recording_lm is not None:
        settings["lm"] = recording_lm
    else:
        callbacks.append(recorder)
    rows = holdout_data(tasks, "", "")

    def one(index: int) -> TaskRecord:
        task = tasks[index]
        record = TaskRecord(task, index, start_ns=time.time_ns())
        recorder.recording(record)
        try:
            with dspy.context(**settings, callbacks=callbacks):
                record.text = str(program(question=task.question).answer or "")
        except Exception as exc:  # an example's failure is a failure grade, kept with its reason
            record.error = f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]
        finally:
            recorder.recording(None)
            record.end_ns = time.time_ns()
            if on_done is not None:
                on_done()
        with dspy.context(**settings):
            for scorer in scorers:
                record.feedbacks.append(scorer(inputs=rows[index]["inputs"], outputs=record.text,
                                               expectations=rows[index].get("expectations")))
        return record

    if num_threads <= 1:
        return [one(i) for i in range(len(tasks))]
    with ThreadPoolExecutor(max_workers=num_threads) as pool:
        return list(pool.map(one, range(len(tasks))))


def _span(trace_id: str, span_id: int, parent_id: int | None, name: str, span_type: str,
          start_ns: int, end_ns: int, inputs: Any, outputs: Any, error: str) -> Any:
    """One finished :class:`mlflow.entities.Span` (attributes JSON-encoded, as MLflow's own spans hold them)."""
    from mlflow.entities import Span
    from mlflow.tracing.constant import SpanAttributeKey
    from mlflow.tracing.utils import encode_span_id

    attributes = {SpanAttributeKey.REQUEST_ID: json.dumps(trace_id), SpanAttributeKey.SPAN_TYPE: json.dumps(span_type),
                  SpanAttributeKey.INPUTS: json.dumps(inputs, default=str),
                  SpanAttributeKey.OUTPUTS: json.dumps(outputs, default=str)}
    return Span.from_dict({
        "trace_id": trace_id, "span_id": encode_span_id(span_id),
        "parent_span_id": encode_span_id(parent_id) if parent_id else None, "name": name,
        "start_time_unix_nano": start_ns, "end_time_unix_nano": max(end_ns, start_ns),
        "status": {"code": "STATUS_CODE_ERROR" if error else "STATUS_CODE_OK", "message": error},
        "attributes": attributes, "events": []})


def response_preview(variant: str, text: str) -> str:
    """The response preview of a holdout trace: ``"[evolved] <answer>"``, cut at :data:`PREVIEW_CHARS`.

    The Traces tab shows the request and response previews by default and the trace name (``holdout.<variant>``)
    only on demand, so the variant goes into the response preview; not into the request preview, which MLflow's
    "Compare to" view pairs the traces of two evaluation runs by (the same task in both).  The trace's outputs
    (root span, ``mlflow.traceOutputs``) stay the bare answer, and so do the rows read back from the traces."""
    return f"[{variant}] {text}"[:PREVIEW_CHARS]


def task_tags(task: Task) -> dict[str, str]:
    """The trace tags holding a task's fields besides its id and question: ``task.kind``, ``task.answer``,
    ``task.expected_behavior`` and ``task.group``, the non-empty ones, each cut at :data:`MAX_TAG_CHARS`.

    Tags, not expectation assessments (which ``mlflow.genai.evaluate`` writes): MLflow 3.17's "Compare to" view
    (the Traces tab of an evaluation run compared to another) selects by default the request, trace id,
    response, execution time, state, every expectation and every assessment, orders them base columns,
    expectations, assessments, and, when more than 10 would show, hides assessments first (module ``33972`` of
    its JS bundle, ``to``/``no``; the ``selectedColumns`` URL parameter is switched off in its open-source
    build, so only a user's own choice, kept in the browser's ``localStorage``, changes that).  A task's five
    expectations took the count past 10 and so hid every grader's column; without them the graders' columns
    follow the response, per task, for both runs (up to 5 graders)."""
    fields = (("kind", task.kind), ("answer", task.answer), ("expected_behavior", task.expected_behavior),
              ("group", task.group))
    return {f"{TASK_TAG_PREFIX}{key}": value[:MAX_TAG_CHARS] for key, value in fields if value}


def build_trace(record: TaskRecord, variant: str, eval_id: str, experiment_id: str,
                run_id: str | None) -> tuple[Any, list[Any]]:
    """The trace info (tags, metadata, assessments) and spans of one task record (see the module docstring)."""
    from mlflow.entities import SpanType, TraceInfo, TraceLocation, TraceState
    from mlflow.tracing.constant import TRACE_SCHEMA_VERSION, TRACE_SCHEMA_VERSION_KEY, TraceMetadataKey

    trace_id = f"tr-{uuid.uuid4().hex}"
    task = record.task
    data = holdout_data([task], variant, eval_id)[0]
    tags = {**data["tags"], **task_tags(task), TAG_INDEX: str(record.index),
            "mlflow.traceName": f"holdout.{variant}"}
    if record.error:
        tags[TAG_ERROR] = record.error
    inputs = {"question": task.question}
    metadata = {TRACE_SCHEMA_VERSION_KEY: str(TRACE_SCHEMA_VERSION),
                TraceMetadataKey.INPUTS: json.dumps(inputs)[:PREVIEW_CHARS],
                TraceMetadataKey.OUTPUTS: json.dumps(record.text)[:PREVIEW_CHARS]}
    if run_id:
        metadata[_SOURCE_RUN_TRACE_KEY] = run_id
    for feedback in record.feedbacks:
        feedback.trace_id = trace_id
    info = TraceInfo(trace_id=trace_id, trace_location=TraceLocation.from_experiment_id(experiment_id),
                     request_time=record.start_ns // 1_000_000,
                     state=TraceState.ERROR if record.error else TraceState.OK,
                     request_preview=json.dumps(inputs)[:PREVIEW_CHARS],
                     response_preview=response_preview(variant, record.text),
                     execution_duration=(record.end_ns - record.start_ns) // 1_000_000, trace_metadata=metadata,
                     tags=tags, assessments=list(record.feedbacks))
    root_id = uuid.uuid4().int >> 64
    spans = [_span(trace_id, root_id, None, f"holdout.{variant}", SpanType.CHAIN, record.start_ns,
                   record.end_ns, inputs, record.text, record.error)]
    for call in record.lm_calls:
        spans.append(_span(trace_id, uuid.uuid4().int >> 64, root_id, LM_SPAN_NAME, SpanType.CHAT_MODEL,
                           call.start_ns, call.end_ns or record.end_ns, call.inputs, call.outputs, call.error))
    return info, spans


def record_frame_rows(records: Sequence[TaskRecord], infos: Sequence[Any] | None = None) -> list[dict[str, Any]]:
    """The records as the rows of ``mlflow.search_traces``' frame (``tags``, ``assessments``, ``response``) that
    :func:`harness.tracking.genai_eval.rows_from_traces` reads: from the built traces ``infos`` (one per record),
    or, before any trace is built (None), from the records themselves (the index and error tags, the graders'
    feedback), which gives the same rows."""
    if infos is not None:
        return [{"tags": info.tags, "assessments": [a.to_dictionary() for a in info.assessments],
                 "response": record.text} for record, info in zip(records, infos, strict=True)]
    return [{"tags": {TAG_INDEX: str(r.index), **({TAG_ERROR: r.error} if r.error else {})},
             "assessments": [f.to_dictionary() for f in r.feedbacks], "response": r.text} for r in records]


def record_rows(records: Sequence[TaskRecord], tasks: Sequence[Task], graders: Sequence[Grader],
                variant: str) -> list[HoldoutRow]:
    """The holdout rows of answered and graded records (``len(tasks) * len(graders)``, task-major), read from the
    very assessments the traces will hold (:func:`harness.tracking.genai_eval.rows_from_traces`)."""
    import pandas as pd

    return rows_from_traces(pd.DataFrame(record_frame_rows(records)), tasks, graders, variant, None)


def trace_records(client: Any, records: Sequence[TaskRecord], variant: str, run_id: str, experiment_id: str, *,
                  run_type_unset: bool) -> dict[str, str]:
    """Write one trace per record into experiment ``experiment_id``, linked to run ``run_id`` (steps 2 and 3 of
    the module docstring; the feedback gets ``mlflow.assessment.sourceRunId`` = ``run_id``); returns the run tags
    to set: ``holdout.<variant>.eval_id`` and, when ``run_type_unset``, ``mlflow.runType = genai_evaluate``.

    Raises:
        mlflow.exceptions.MlflowException: the store refused a write.
    """
    infos, spans, tags = build_traces(records, variant, run_id, experiment_id, run_type_unset=run_type_unset)
    write_traces(client, experiment_id, infos, spans, run_id)
    return tags


def build_traces(records: Sequence[TaskRecord], variant: str, run_id: str, experiment_id: str, *,
                 run_type_unset: bool) -> tuple[list[Any], list[Any], dict[str, str]]:
    """The traces :func:`trace_records` writes, not written: (trace infos, all their spans, the run tags to set);
    each call makes new trace ids."""
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_TYPE, MLFLOW_RUN_TYPE_GENAI_EVALUATE

    for record in records:
        for feedback in record.feedbacks:
            feedback.metadata = {**(feedback.metadata or {}), _SOURCE_RUN_KEY: run_id}
    eval_id = uuid.uuid4().hex
    built = [build_trace(r, variant, eval_id, experiment_id, run_id) for r in records]
    tags = {f"holdout.{variant}.eval_id": eval_id}
    if run_type_unset:
        tags[MLFLOW_RUN_TYPE] = MLFLOW_RUN_TYPE_GENAI_EVALUATE
    return [info for info, _ in built], [s for _, spans in built for s in spans], tags


def write_traces(client: Any, experiment_id: str, infos: Sequence[Any], spans: Sequence[Any],
                 run_id: str | None) -> None:
    """Write the traces (info with assessments), then all spans, then link them to ``run_id``: one transaction for
    all on a SQL store (:func:`harness.tracking.trace_batch.write_trace_batch`), else MLflow's public calls.
    ``experiment_id``: the experiment of the trace infos (they name it themselves).

    Raises:
        mlflow.exceptions.MlflowException: the store refused a write.
    """
    from mlflow.tracing.client import TracingClient

    write_trace_batch(TracingClient(client.tracking_uri), infos, spans, run_id)


def batch_holdout(program: SkillProgram, tasks: Sequence[Task], graders: Sequence[Grader], variant: str,
                  run_id: str | None = None, *, num_threads: int = 1, on_done: Callable[[], None] | None = None,
                  tracking_uri: str | None = None,
                  defer: Callable[[Callable[[], None]], None] | None = None) -> list[HoldoutRow]:
    """Answer, grade and trace one variant on the holdout into run ``run_id`` (see the module docstring).

    Args: as :func:`harness.tracking.genai_eval.genai_holdout`; ``run_id`` None = the active run (there must be
        one: no run is created here); the run's experiment holds the traces.  ``defer``: called with the
        function that writes the traces and run tags, to run it later (e.g. in a writer thread, as
        :class:`harness.tracking.tracker.MlflowTracker` does); None = write them before returning.

    Returns:
        ``len(tasks) * len(graders)`` rows, task-major, equal to those ``genai_holdout`` returns.

    Raises:
        ValueError: duplicate grader names, no graders, an empty variant, ``num_threads < 1``, or no ``run_id``
            and no active run.
        mlflow.exceptions.MlflowException: ``run_id`` does not exist or the store refused a write.
    """
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_TYPE

    check_holdout_arguments("batch_holdout", graders, variant, num_threads)
    if not tasks:
        return []
    import mlflow

    if not run_id:
        active = mlflow.active_run()
        if active is None:
            raise ValueError("batch_holdout needs a run: pass run_id or start one (mlflow.start_run())")
        run_id = active.info.run_id

    client = mlflow.MlflowClient(tracking_uri=tracking_uri)  # every write names this store: no global URI
    run = client.get_run(run_id)
    scorers = [grader_scorer(g, aggregations=[], timeout=0) for g in graders]
    records = answer_and_grade(program, tasks, scorers, num_threads=num_threads, on_done=on_done)
    rows = record_rows(records, tasks, graders, variant)
    from mlflow.entities import RunTag

    def write() -> None:
        tags = trace_records(client, records, variant, str(run_id), run.info.experiment_id,
                             run_type_unset=run.data.tags.get(MLFLOW_RUN_TYPE) is None)
        client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])

    if defer is None:
        write()
    else:
        defer(write)
    return rows


__all__ = ["LM_SPAN_NAME", "LMCall", "LMCallRecorder", "MAX_TAG_CHARS", "TAG_EVAL_ID", "TASK_TAG_PREFIX", "TaskRecord",
           "answer_and_grade", "batch_holdout", "build_trace", "build_traces", "record_rows", "response_preview",
           "task_tags", "trace_records", "write_traces"]
