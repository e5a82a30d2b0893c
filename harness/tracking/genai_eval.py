"""Holdout evaluation through ``mlflow.genai.evaluate``: one trace per task, graded once, read two ways.

:func:`genai_holdout` runs a skill program on every holdout task inside ``mlflow.genai.evaluate``:

* each task is one MLflow trace, attached to the run: a root span ``holdout.<variant>`` (inputs
  ``{"question": ...}``, output the answer text) around the program, under which MLflow's DSPy autologging
  (switched on by ``mlflow.genai.evaluate`` for the evaluation) records ``SkillProgram.forward``,
  ``Predict.forward`` and the task LM call ``LM.__call__`` with its messages;
* every grader is a scorer (:mod:`harness.tracking.scorers`), so each trace holds one assessment per grader (value =
  composite, rationale = feedback, sub-scores in metadata; an unscored grade is an assessment error) and
  the task's expectations (``task_id``, ``kind``, ``expected_behavior``, ``answer``, ``group``);
* each trace is tagged ``variant`` (baseline / evolved), ``task_id``, ``holdout.index`` (position in
  ``tasks``) and ``holdout.eval_id`` (one id per call, also the run tag ``holdout.<variant>.eval_id``), so
  the UI can filter and compare the variants (``tags.variant = 'evolved'``);
* the graders' own DSPy calls (the judge's LM) are not traced (:func:`harness.tracking.scorers.untraced_dspy_calls`),
  so the run holds exactly one trace per task and variant.

The :class:`harness.engine.holdout.HoldoutRow` objects returned are built **from those assessments** (read back
from the evaluation result), so the holdout table and the MLflow traces are two views of one grading.  For
the same outputs they equal what ``harness.engine.holdout.grade`` gives (same values, feedback and errors; an
unscored grade is NaN with feedback ``"unscored by <grader>[: <reason>]"``, a grader that raised NaN with
``"unscored by <grader>: <ExceptionType>: <message>"``).

Run attachment: ``mlflow.genai.evaluate`` logs into the active run of the calling thread, or starts a new
run when there is none.  ``genai_holdout(..., run_id=R)`` makes ``R`` that active run for the call (resuming
it, nested under another active run if needed, and restoring its status afterwards), so no extra run is
created; with ``run_id=None`` the active run is used, and only when there is none does MLflow create one.
Each trace's source run (metadata ``mlflow.sourceRun``) is set to that run explicitly.
``mlflow.genai.evaluate`` also sets the run tag ``mlflow.runType = genai_evaluate`` (when unset) and logs
the evaluation data as a run input named ``dataset``.  No aggregate metrics are logged by the evaluation
(both variants share one run and MLflow's ``<scorer>/mean`` names would collide); the harness logs its own
``holdout.<grader>.<variant>`` metrics from the rows.

Not thread-safe (neither is ``mlflow.genai.evaluate``): for the call it sets the environment variables
``MLFLOW_GENAI_EVAL_SKIP_TRACE_VALIDATION=true`` (the program is traced here, so MLflow's extra trial call
of ``predict_fn`` is skipped), ``MLFLOW_GENAI_EVAL_MAX_WORKERS`` (``num_threads``) and, unless already set,
``MLFLOW_GENAI_EVAL_PREDICT_RATE_LIMIT=0`` (no client-side rate limit; DSPy's LM retries handle API limits),
and it sends MLflow's closing message to stderr, keeping stdout parseable.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import dspy
import pandas as pd

from harness.engine.graders import Grader, unscored_feedback
from harness.engine.holdout import HoldoutRow
from harness.engine.program import SkillProgram
from harness.tracking.envvars import temporary_env
from harness.tracking.scorers import SUB_SCORE_KEYS, UNSCORED_ERROR_CODE, grader_scorer, output_text
from harness.tracking.store import retry_duplicate_insert
from verifiers import Task

#: trace tag keys set on every holdout trace
TAG_VARIANT = "variant"
TAG_TASK_ID = "task_id"
TAG_INDEX = "holdout.index"
TAG_EVAL_ID = "holdout.eval_id"
#: trace tag holding ``"<ExceptionType>: <message>"`` when the program failed on the task
TAG_ERROR = "holdout.error"
#: longest error text kept in :data:`TAG_ERROR` (characters)
MAX_ERROR_CHARS = 4000

_SOURCE_RUN_KEY = "mlflow.assessment.sourceRunId"
_SOURCE_RUN_TRACE_KEY = "mlflow.sourceRun"


class GenaiHoldoutError(RuntimeError):
    """The evaluation did not give one trace per task with one assessment per grader (message says which)."""


def holdout_data(tasks: Sequence[Task], variant: str, eval_id: str) -> list[dict[str, Any]]:
    """The ``data`` rows of ``mlflow.genai.evaluate``: ``inputs`` (question), ``expectations`` (the non-empty
    task fields) and ``tags`` (variant, task id, index, evaluation id), one per task, in order."""
    rows = []
    for index, task in enumerate(tasks):
        expectations = {key: value for key, value in (("task_id", task.task_id), ("kind", task.kind),
                                                      ("expected_behavior", task.expected_behavior),
                                                      ("answer", task.answer), ("group", task.group)) if value}
        row: dict[str, Any] = {"inputs": {"question": task.question},
                               "tags": {TAG_VARIANT: variant, TAG_TASK_ID: task.task_id, TAG_INDEX: str(index),
                                        TAG_EVAL_ID: eval_id}}
        if expectations:
            row["expectations"] = expectations
        rows.append(row)
    return rows


@contextlib.contextmanager
def tracking_uri_set(uri: str | None) -> Iterator[None]:
    """MLflow's fluent API (``mlflow.genai.evaluate``, tracing) writes to the global tracking URI: make it ``uri``
    for the block (None keeps it), and restore the previous one afterwards, so the evaluation writes to the
    same store as the tracker that asked for it."""
    import mlflow

    if uri is None:
        yield
        return
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(previous)


@contextlib.contextmanager
def attached_run(run_id: str | None) -> Iterator[str | None]:
    """Make run ``run_id`` the active run of this thread for the block; yields the active run id.

    ``None`` keeps whatever is active (yields its id, or None when no run is active).  A run that is
    resumed here gets its previous status back at the end (``RUNNING`` stays running).

    Raises:
        mlflow.exceptions.MlflowException: ``run_id`` does not exist.
    """
    import mlflow

    active = mlflow.active_run()
    if run_id is None or (active is not None and active.info.run_id == run_id):
        yield active.info.run_id if active is not None else None
        return
    status = mlflow.MlflowClient(tracking_uri=mlflow.get_tracking_uri()).get_run(run_id).info.status
    mlflow.start_run(run_id=run_id, nested=active is not None)
    try:
        yield run_id
    finally:
        mlflow.end_run(status=status)


def _same_object_union(first: Sequence[Any], second: Sequence[Any]) -> list[Any]:
    out = list(first)
    out.extend(item for item in second if all(item is not kept for kept in out))
    return out


def make_predict_fn(program: SkillProgram, variant: str, on_done: Callable[[], None] | None = None,
                    run_id: str | None = None) -> Callable[[str], str]:
    """The traced ``predict_fn(question) -> answer text`` of one variant.

    ``run_id`` becomes each trace's source run (metadata ``mlflow.sourceRun``).  MLflow would otherwise
    record the most recently *started* run active in any thread, which is the wrong one when an older run is
    resumed while a newer one is active.

    DSPy settings of the calling thread (``with dspy.context(lm=...)``) are captured now and applied in
    MLflow's worker threads, which would otherwise see only the global DSPy configuration; callbacks are
    merged, so the tracing callback MLflow adds during the evaluation stays in place.  A failure of the
    program is recorded as the trace tag :data:`TAG_ERROR` and re-raised (MLflow marks the trace ERROR and
    the scorers grade the empty output, like ``harness.engine.holdout.generate`` does).
    """
    import mlflow
    from mlflow.entities import SpanType

    captured = dict(dspy.settings.config)
    captured_callbacks = list(captured.pop("callbacks", None) or [])

    @mlflow.trace(name=f"holdout.{variant}", span_type=SpanType.CHAIN)
    def predict(question: str) -> str:
        if run_id:
            mlflow.update_current_trace(metadata={_SOURCE_RUN_TRACE_KEY: run_id})
        try:
            callbacks = _same_object_union(captured_callbacks, list(dspy.settings.callbacks or []))
            with dspy.context(**captured, callbacks=callbacks):
                pred = program(question=question)
            return str(pred.answer or "")
        except Exception as exc:
            mlflow.update_current_trace(tags={TAG_ERROR: f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]})
            raise
        finally:
            if on_done is not None:
                on_done()

    return predict


def _feedbacks(assessments: Any, run_id: str | None) -> dict[str, dict[str, Any]]:
    """Feedback assessments of one trace by name (only those this run made)."""
    out: dict[str, dict[str, Any]] = {}
    for item in assessments if isinstance(assessments, list) else []:
        if not isinstance(item, Mapping) or "feedback" not in item:
            continue
        source_run = (item.get("metadata") or {}).get(_SOURCE_RUN_KEY)
        if run_id and source_run and source_run != run_id:
            continue
        out[str(item.get("assessment_name"))] = dict(item)
    return out


def _response_text(response: Any) -> str:
    """A trace's response as the scorers read it (:func:`harness.tracking.scorers.output_text`); NaN (a missing
    response in a pandas frame) is the empty output."""
    if isinstance(response, float) and math.isnan(response):
        return ""
    return output_text(response)


def rows_from_traces(frame: pd.DataFrame, tasks: Sequence[Task], graders: Sequence[Grader], variant: str,
                     run_id: str | None) -> list[HoldoutRow]:
    """Holdout rows (task order, then grader order) from the traces of one evaluation.

    A grade is read from the trace's assessment named after the grader: value -> ``composite``, metadata ->
    the sub-scores, rationale -> ``feedback``.  An assessment error gives NaN values and the feedback
    ``harness.engine.holdout.grade`` writes: ``"unscored by <grader>[: <reason>]"`` (the error message) when the
    grader could not grade, ``"unscored by <grader>: <ExceptionType>: <message>"`` when it raised.  The output
    text is the trace's response, and ``error`` the trace's :data:`TAG_ERROR` (then the output is ``""``).

    Args:
        frame: ``EvaluationResult.result_df`` or ``mlflow.search_traces(...)`` (pandas): columns ``tags``,
            ``assessments``, ``response``.
        run_id: only assessments made in this run count (None = all).

    Raises:
        GenaiHoldoutError: a task has no trace, or a trace lacks a grader's assessment.
    """
    by_index: dict[int, Mapping[str, Any]] = {}
    for record in frame.to_dict(orient="records"):
        tags = record.get("tags") or {}
        try:
            by_index[int(tags[TAG_INDEX])] = record
        except (KeyError, TypeError, ValueError):
            continue
    missing = [t.task_id for i, t in enumerate(tasks) if i not in by_index]
    if missing:
        raise GenaiHoldoutError(f"{len(missing)} of {len(tasks)} {variant} holdout tasks have no trace in the "
                                f"evaluation result: {', '.join(missing[:5])}")
    nan = float("nan")
    rows: list[HoldoutRow] = []
    for index, task in enumerate(tasks):
        record = by_index[index]
        tags = record.get("tags") or {}
        error = str(tags.get(TAG_ERROR, ""))
        text = "" if error else _response_text(record.get("response"))
        feedbacks = _feedbacks(record.get("assessments"), run_id)
        for grader in graders:
            item = feedbacks.get(grader.name)
            if item is None:
                raise GenaiHoldoutError(f"the trace of {variant} task {task.task_id} has no {grader.name} assessment")
            feedback_value = item.get("feedback") or {}
            problem = feedback_value.get("error")
            if problem:
                values: tuple[float, ...] = (nan, nan, nan, nan)
                message = str(problem.get("error_message") or "")
                if str(problem.get("error_code", "")) == UNSCORED_ERROR_CODE:  # the message is the feedback
                    feedback = message or unscored_feedback(grader.name)
                else:
                    feedback = unscored_feedback(grader.name, message or str(problem.get("error_code")))
            else:
                metadata = item.get("metadata") or {}
                values = (*(float(metadata[key]) for key in SUB_SCORE_KEYS), float(feedback_value["value"]))
                feedback = str(item.get("rationale") or "")
            rows.append(HoldoutRow(task.task_id, task.kind, task.group, variant, grader.name, text, *values,
                                   feedback=feedback, error=error))
    return rows


def check_holdout_arguments(caller: str, graders: Sequence[Grader], variant: str, num_threads: int) -> None:
    """The arguments every holdout writer shares (graders with distinct names, a variant, a thread count).

    Raises:
        ValueError: duplicate grader names, no graders, an empty variant or ``num_threads < 1``; the message names
            ``caller``.
    """
    names = [g.name for g in graders]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"{caller} needs graders with distinct names, got {names}")
    if not variant:
        raise ValueError("variant must be a non-empty string (baseline or evolved)")
    if num_threads < 1:
        raise ValueError(f"num_threads must be at least 1, got {num_threads}")


def genai_holdout(program: SkillProgram, tasks: Sequence[Task], graders: Sequence[Grader], variant: str,
                  run_id: str | None = None, *, num_threads: int = 1,
                  on_done: Callable[[], None] | None = None, tracking_uri: str | None = None) -> list[HoldoutRow]:
    """Run and grade one variant on the holdout through ``mlflow.genai.evaluate`` (see the module docstring).

    Args:
        program: the variant's skill program; the task LM is DSPy's current one (``dspy.context(lm=...)``
            in the calling thread works).
        tasks: the holdout tasks, in table order.
        graders: graders with distinct names; each becomes a scorer of that name.
        variant: ``baseline`` or ``evolved`` (any non-empty string is accepted and used as the tag).
        run_id: the run the traces belong to (None = the active run).
        num_threads: parallel predictions and gradings (MLflow worker threads).
        on_done: called after each task's prediction (progress).
        tracking_uri: the store to write to (the tracker's); None = MLflow's current tracking URI.

    Returns:
        ``len(tasks) * len(graders)`` rows, task-major, the same fields ``harness.engine.holdout.grade`` fills.

    Raises:
        ValueError: duplicate grader names, no graders, an empty variant or ``num_threads < 1``.
        GenaiHoldoutError: see :func:`rows_from_traces`.
        mlflow.exceptions.MlflowException: ``run_id`` does not exist or the store refused a write.
    """
    import mlflow

    check_holdout_arguments("genai_holdout", graders, variant, num_threads)
    if not tasks:
        return []
    eval_id = uuid.uuid4().hex
    scorers = [grader_scorer(g, aggregations=[], timeout=0) for g in graders]
    env = {"MLFLOW_GENAI_EVAL_SKIP_TRACE_VALIDATION": "true", "MLFLOW_GENAI_EVAL_MAX_WORKERS": str(num_threads)}
    if "MLFLOW_GENAI_EVAL_PREDICT_RATE_LIMIT" not in os.environ:
        env["MLFLOW_GENAI_EVAL_PREDICT_RATE_LIMIT"] = "0"
    with tracking_uri_set(tracking_uri):
        client = mlflow.MlflowClient(tracking_uri=tracking_uri)
        with attached_run(run_id) as active_id, temporary_env(env), contextlib.redirect_stdout(sys.stderr):
            predict_fn = make_predict_fn(program, variant, on_done, active_id)
            data = holdout_data(tasks, variant, eval_id)
            result = retry_duplicate_insert(lambda: mlflow.genai.evaluate(data=data, predict_fn=predict_fn,
                                                                          scorers=scorers))
        frame = result.result_df
        if frame is None or len(frame) < len(tasks):
            frame = mlflow.search_traces(locations=[client.get_run(result.run_id).info.experiment_id],
                                         run_id=result.run_id, filter_string=f"tags.`{TAG_EVAL_ID}` = '{eval_id}'")
        client.set_tag(result.run_id, f"holdout.{variant}.eval_id", eval_id)
    return rows_from_traces(frame, tasks, graders, variant, result.run_id)
