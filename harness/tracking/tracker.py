"""Every MLflow call of the harness lives here; the engine hands this module its results.

A run is opened with :class:`MlflowTracker` as a context manager.  Under ``mlflow run`` the run that
MLflow Projects created (``MLFLOW_RUN_ID``) is resumed; otherwise a new run is started in the
experiment named after the skill.  Leaving the context ends the run as FINISHED, as KILLED on an
interrupt (Ctrl-C, SIGTERM, SIGHUP) or as FAILED on an exception, whose text is logged as ``error.txt`` first
(URL credentials redacted); whatever was logged before stays.  While open, the run carries its process id,
host and a heartbeat (:mod:`harness.tracking.reaper`), so a run whose process was killed outright is marked
KILLED by the next command.

:class:`NullTracker` has the same methods and logs nothing, so the engine runs without a store.
"""

from __future__ import annotations

import json
import os
import shlex
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pandas as pd

from harness.artifacts import ERROR_TEXT, HOLDOUT_EXPERIMENT_SUFFIX, TAG_DESCRIPTION, TAG_EVALUATION_OF
from harness.messages import redact_text
from harness.tracking.store import retry_duplicate_insert
from harness.tracking.views import set_verdict_view

if TYPE_CHECKING:
    from harness.engine.graders import Grader
    from harness.engine.holdout import HoldoutRow
    from harness.engine.program import SkillProgram
    from verifiers import Task

T = TypeVar("T")

#: params longer than this go to artifacts instead (MLflow's own limit is 6,000 characters)
MAX_PARAM_CHARS = 500


class Tracker(Protocol):
    """What the engine needs from a tracking back-end."""

    run_id: str | None

    def log_params(self, params: Mapping[str, Any]) -> None: ...
    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None: ...
    def set_tags(self, tags: Mapping[str, str]) -> None: ...
    def log_text(self, text: str, artifact_file: str) -> None: ...
    def log_dict(self, data: Any, artifact_file: str) -> None: ...
    def log_table(self, frame: pd.DataFrame, artifact_file: str) -> None: ...
    def log_artifacts(self, directory: Path, artifact_path: str) -> None: ...
    def log_file(self, path: Path, artifact_path: str) -> None: ...
    def log_dataset(self, frame: pd.DataFrame, name: str, context: str, digest: str,
                    source: str | None = None) -> None: ...
    def register_skill_version(self, skill: Any, evolved_text: str, fitness: str, verdict: str,
                               delta: float | None, *, task_model: str = "",
                               dataset_digest: str = "") -> int | None: ...
    def evaluate_holdout(self, program: SkillProgram, tasks: Sequence[Task], graders: Sequence[Grader],
                         variant: str, *, num_threads: int = 1,
                         on_done: Callable[[], None] | None = None) -> list[HoldoutRow]: ...


class NullTracker:
    """A :class:`Tracker` that records nothing (for tests and dry runs)."""

    run_id: str | None = None

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Discard."""

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Discard."""

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Discard."""

    def log_text(self, text: str, artifact_file: str) -> None:
        """Discard."""

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Discard."""

    def log_table(self, frame: pd.DataFrame, artifact_file: str) -> None:
        """Discard."""

    def log_artifacts(self, directory: Path, artifact_path: str) -> None:
        """Discard."""

    def log_file(self, path: Path, artifact_path: str) -> None:
        """Discard."""

    def log_dataset(self, frame: pd.DataFrame, name: str, context: str, digest: str,
                    source: str | None = None) -> None:
        """Discard."""

    def register_skill_version(self, skill: Any, evolved_text: str, fitness: str, verdict: str,
                               delta: float | None, *, task_model: str = "",
                               dataset_digest: str = "") -> int | None:
        """Nothing is registered without a store."""
        return None

    def evaluate_holdout(self, program: SkillProgram, tasks: Sequence[Task], graders: Sequence[Grader],
                         variant: str, *, num_threads: int = 1,
                         on_done: Callable[[], None] | None = None) -> list[HoldoutRow]:
        """Answer and grade the holdout in-process (:func:`harness.engine.holdout.generate` then ``grade``)."""
        from harness.engine import holdout

        outputs = holdout.generate(program, tasks, num_threads, on_done=on_done)
        return holdout.grade(outputs, graders, variant)


#: attribute of an exception that ended MLflow runs: their ids, innermost run first
ENDED_RUNS_ATTR = "harness_ended_runs"


def mark_ended_run(exc: BaseException, run_id: str) -> None:
    """Record on ``exc`` that it ended run ``run_id`` (as FAILED or KILLED), so the CLI can name the run."""
    ended = getattr(exc, ENDED_RUNS_ATTR, None)
    if ended is None:
        ended = []
        setattr(exc, ENDED_RUNS_ATTR, ended)
    ended.append(run_id)


def ended_runs(exc: BaseException) -> list[str]:
    """The ids of the runs ``exc`` ended, innermost (e.g. a child run) first; empty when it ended none."""
    return list(getattr(exc, ENDED_RUNS_ATTR, None) or [])


class MlflowTracker:
    """Open (or resume) one MLflow run; see the module docstring for the status rules.

    All calls go through ``MlflowClient`` with this run's id, never through the fluent "active run", so
    child runs, threads and processes cannot log into each other's runs.

    Args:
        experiment_name: used when no run was created for us by ``mlflow run``.
        run_name: display name of a new run.
        tags: tags set on the run at start.
        parent_run_id: make a new child run of this run (tag ``mlflow.parentRunId``, the parent's
            experiment); ``MLFLOW_RUN_ID`` from the environment is then ignored, so a child never
            writes into the parent that ``mlflow run`` created.
        tracking_uri: the store (default: MLflow's current tracking URI).
    """

    def __init__(self, experiment_name: str, run_name: str | None = None, tags: Mapping[str, str] | None = None,
                 parent_run_id: str | None = None, tracking_uri: str | None = None) -> None:
        self.experiment_name = experiment_name
        self.run_name = run_name
        self.tags = dict(tags or {})
        self.parent_run_id = parent_run_id
        self.tracking_uri = tracking_uri
        self.run_id: str | None = None
        self._client: Any = None
        self._writer: ThreadPoolExecutor | None = None
        self._writes: list[Future[Any]] = []
        self._metric_writes: list[Any] = []
        #: evaluation runs (one per holdout variant) to end after their deferred traces: ending a run shuts
        #: MLflow's async logging queue down, so they end in :meth:`flush`, never in the middle of the run
        self._evaluation_runs: list[str] = []
        self._heartbeat: Any = None

    @property
    def client(self) -> Any:
        """The ``mlflow.MlflowClient`` of this tracker."""
        if self._client is None:
            import mlflow

            self._client = mlflow.MlflowClient(tracking_uri=self.tracking_uri)
        return self._client

    def _experiment_id(self) -> str:
        experiment = self.client.get_experiment_by_name(self.experiment_name)
        if experiment is not None:
            return experiment.experiment_id
        try:
            return self.client.create_experiment(self.experiment_name)
        except Exception:  # created meanwhile by a concurrent process
            experiment = self.client.get_experiment_by_name(self.experiment_name)
            if experiment is None:
                raise
            return experiment.experiment_id

    def __enter__(self) -> MlflowTracker:
        from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID, MLFLOW_RUN_NAME

        from harness.tracking.reaper import liveness_tags

        env_run = os.environ.get("MLFLOW_RUN_ID")
        tags = {**self.tags, **liveness_tags()}  # pid, host, heartbeat: a run whose process dies can be reaped
        if self.parent_run_id:
            experiment_id = self.client.get_run(self.parent_run_id).info.experiment_id
            tags[MLFLOW_PARENT_RUN_ID] = self.parent_run_id
        elif env_run:
            self.run_id = env_run
            self.client.update_run(env_run, status="RUNNING", name=self.run_name)
            self.set_tags(tags)
            self._start_heartbeat()
            return self
        else:
            experiment_id = self._experiment_id()
            set_verdict_view(self.client, experiment_id)  # the runs table's "verdict" view (harness.tracking.views)
        if self.run_name:
            tags[MLFLOW_RUN_NAME] = self.run_name
        # MLflow's context tags, as the fluent start_run would add them: source, user, git commit
        from mlflow.tracking.context.registry import resolve_tags

        run = self.client.create_run(experiment_id, tags=resolve_tags(tags), run_name=self.run_name)
        self.run_id = run.info.run_id
        self._start_heartbeat()
        return self

    def _start_heartbeat(self) -> None:
        from harness.tracking.reaper import Heartbeat

        self._heartbeat = Heartbeat(self.set_tags).start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        if exc_type is None:
            try:
                self.flush()
            except BaseException:
                self.client.set_terminated(self.run_id, "FAILED")
                raise
            self.client.set_terminated(self.run_id, "FINISHED")
            return
        interrupted = issubclass(exc_type, (KeyboardInterrupt, SystemExit))
        status = "KILLED" if interrupted else "FAILED"
        if exc is not None and self.run_id:
            mark_ended_run(exc, self.run_id)
        try:
            try:
                self.flush()  # what was logged before the failure stays, deferred writes included
            except Exception:  # the run's own exception is the one to report
                pass
            text = redact_text("".join(traceback.format_exception(exc_type, exc, tb)))  # no URL credentials
            self.log_text(text, ERROR_TEXT)
            self.set_tags({"run.outcome": status.lower(),
                           "run.error": redact_text(str(exc) or exc_type.__name__)[:MAX_PARAM_CHARS]})
        finally:
            self.client.set_terminated(self.run_id, status)

    def defer(self, write: Callable[[], Any]) -> None:
        """Run ``write`` (a function writing to this tracker's store) in this tracker's writer thread, in
        submission order, so the run goes on meanwhile; :meth:`flush` (called when the run ends) waits for it."""
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-mlflow-writer")
        self._writes.append(self._writer.submit(write))

    def flush(self) -> None:
        """Wait for every deferred write and async metric batch, then stop the writer thread.

        Raises:
            Exception: the first exception a deferred write raised (after all of them ended).
        """
        writes, self._writes = self._writes, []
        errors: list[BaseException | None] = [f.exception() for f in writes]
        metric_writes, self._metric_writes = self._metric_writes, []
        for operation in metric_writes:
            try:
                operation.wait()
            except Exception as exc:  # reported below, after every write ended
                errors.append(exc)
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
        evaluation_runs, self._evaluation_runs = self._evaluation_runs, []
        for eval_run in evaluation_runs:
            self.client.set_terminated(eval_run, "FINISHED" if not any(errors) else "FAILED")
        for error in errors:
            if error is not None:
                raise error

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log params; a value longer than MAX_PARAM_CHARS goes to ``params/<key>.txt`` instead.

        Under ``mlflow run`` the project's parameters are already logged (shell-quoted: ``''`` for an
        empty value); a key logged with the same value is left alone, and a key whose earlier value
        differs (``20.0`` vs ``20``) is logged as ``harness.<key>``, since MLflow forbids changing a param.
        """
        from mlflow.entities import Param

        existing = self.client.get_run(self.run_id).data.params
        batch: list[Param] = []
        for key, value in params.items():
            text = "" if value is None else str(value)
            if len(text) > MAX_PARAM_CHARS:
                self.log_text(text, f"params/{key}.txt")
                text = f"(long value: artifact params/{key}.txt)"
            if key in existing:
                if existing[key] in (text, shlex.quote(text)):
                    continue
                key = f"harness.{key}"
            batch.append(Param(key, text))
        if batch:
            self.client.log_batch(self.run_id, params=batch)

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log finite metrics (NaN values are skipped: MLflow would plot them as gaps anyway) through MLflow's
        async logging (GEPA logs progress every iteration); they are in the store after :meth:`flush`."""
        self._log_metrics_to(self.run_id, metrics, step)

    def _log_metrics_to(self, run_id: str | None, metrics: Mapping[str, float], step: int | None = None) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        batch = [Metric(k, float(v), now, step or 0) for k, v in metrics.items() if v == v]
        if batch:  # MLflow's async queue: batched with the next calls in its thread; flush() waits for it
            self._metric_writes.append(self.client.log_batch(run_id, metrics=batch, synchronous=False))

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Set tags on the run."""
        from mlflow.entities import RunTag

        self.client.log_batch(self.run_id, tags=[RunTag(k, str(v)) for k, v in tags.items()])

    def log_text(self, text: str, artifact_file: str) -> None:
        """Log ``text`` as an artifact file."""
        self.client.log_text(self.run_id, text, artifact_file)

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Log JSON-serialisable ``data`` as an artifact file."""
        self.log_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), artifact_file)

    def log_table(self, frame: pd.DataFrame, artifact_file: str) -> None:
        """Log ``frame`` with ``MlflowClient.log_table`` (shown in the UI's evaluation/table views)."""
        self.client.log_table(self.run_id, data=frame, artifact_file=artifact_file)

    def log_artifacts(self, directory: Path, artifact_path: str) -> None:
        """Log every file in ``directory`` under ``artifact_path``."""
        self.client.log_artifacts(self.run_id, str(directory), artifact_path=artifact_path)

    def log_file(self, path: Path, artifact_path: str) -> None:
        """Log one local file under ``artifact_path``."""
        self.client.log_artifact(self.run_id, str(path), artifact_path=artifact_path)

    def log_dataset(self, frame: pd.DataFrame, name: str, context: str, digest: str,
                    source: str | None = None) -> None:
        """Log ``frame`` as an MLflow dataset input with ``context`` (trainset / valset / holdout); ``source``
        (a task file's path) becomes the dataset's source."""
        import mlflow
        from mlflow.entities import DatasetInput, InputTag
        from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

        dataset = mlflow.data.from_pandas(frame, source=source, name=name, digest=digest)
        entity = DatasetInput(dataset._to_mlflow_entity(), tags=[InputTag(MLFLOW_DATASET_CONTEXT, context)])
        retry_duplicate_insert(lambda: self.client.log_inputs(self.run_id, datasets=[entity]))

    def register_skill_version(self, skill: Any, evolved_text: str, fitness: str, verdict: str,
                               delta: float | None, *, task_model: str = "",
                               dataset_digest: str = "") -> int | None:
        """Register ``evolved_text`` in MLflow's prompt registry as the next version of the skill's prompt
        (the baseline is version 1), tagged with this run, the fitness, the verdict, the holdout delta, the task
        model and the dataset digest (:func:`harness.tracking.prompts.register_evolved`: an identical text
        reuses its version; the ``verified`` alias moves only on an ``improved`` verdict of a real model).

        Returns the version, or None when the registry already holds a different baseline for this skill
        name (then nothing is registered and the tag ``registry.note`` says why).
        """
        from harness.tracking.prompts import BaselineMismatchError, register_evolved

        try:
            # parallel child runs race on the prompt's aliases; register_evolved is idempotent per run and text
            version = retry_duplicate_insert(
                lambda: register_evolved(skill, evolved_text, self.run_id or "", fitness, verdict, delta,
                                         client=self.client, task_model=task_model,
                                         dataset_digest=dataset_digest))
        except BaselineMismatchError as exc:
            self.set_tags({"registry.note": str(exc)[:MAX_PARAM_CHARS]})
            return None
        self.set_tags({"registry.version": str(version)})
        return version

    def evaluate_holdout(self, program: SkillProgram, tasks: Sequence[Task], graders: Sequence[Grader],
                         variant: str, *, num_threads: int = 1,
                         on_done: Callable[[], None] | None = None) -> list[HoldoutRow]:
        """Answer and grade the holdout in-process and write its traces in one batch
        (:func:`harness.tracking.holdout_traces.batch_holdout`: one trace per task with the task LM's call and every
        grader's assessment, as ``mlflow.genai.evaluate`` would write them, at a fraction of its SQL writes;
        BENCHMARKS.md, issue 18) into an evaluation run of their own, one per variant.

        That run is named ``"<variant> · <run name>"``, lives in the experiment ``<this run's experiment>/holdout``
        (so the variants are separate evaluation runs that MLflow's "Compare to" view puts side by side per task,
        and this experiment's runs table holds only the harness's runs), is tagged ``holdout.evaluation_of`` = this
        run, ``variant`` and a description, and holds the metrics ``<grader>/mean`` (over scored tasks),
        ``<grader>/scored`` and ``<grader>/unscored``; this run gets the tag ``holdout.<variant>.run_id``.  The
        rows are returned at once; the traces are written in the writer thread (:meth:`defer`); the evaluation
        run ends in :meth:`flush`, when this run ends.
        """
        from harness.tracking.holdout_traces import batch_holdout

        eval_run = self._evaluation_run(variant)
        try:
            rows = batch_holdout(program, tasks, graders, variant, eval_run, num_threads=num_threads,
                                 on_done=on_done, tracking_uri=self.client.tracking_uri, defer=self.defer)
        except BaseException:  # the run fails with it: nothing more is logged asynchronously
            self.client.set_terminated(eval_run, "FAILED")
            raise
        self._evaluation_runs.append(eval_run)  # ended by flush(), after its traces are written
        self.set_tags({f"holdout.{variant}.run_id": eval_run})
        self._log_evaluation_metrics(eval_run, rows)
        return rows

    def _evaluation_run(self, variant: str) -> str:
        """Create the (running) evaluation run of ``variant``; returns its id."""
        from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

        run = self.client.get_run(self.run_id)
        experiment = self.client.get_experiment(run.info.experiment_id)
        holdout = MlflowTracker(experiment.name + HOLDOUT_EXPERIMENT_SUFFIX, tracking_uri=self.tracking_uri)
        holdout._client = self.client
        run_name = self.run_name or run.info.run_name or str(self.run_id)
        # the evaluation runs table shows ~10 characters of a name: the variant and the arm (``verifier s0``) first
        name = f"{variant} · {run_name}"
        tags = {MLFLOW_RUN_NAME: name, TAG_EVALUATION_OF: str(self.run_id), "variant": variant,
                TAG_DESCRIPTION: (f"Holdout of the **{variant}** skill of run `{self.run_id}` ({run_name}): one "
                                  "trace per task with every grader's assessment. Compare it to the sibling "
                                  "evaluation run of the other variant (Evaluation runs → Compare to).\n")}
        return str(self.client.create_run(holdout._experiment_id(), tags=tags, run_name=name).info.run_id)

    def _log_evaluation_metrics(self, eval_run: str, rows: Sequence[HoldoutRow]) -> None:
        metrics: dict[str, float] = {}
        for grader in dict.fromkeys(r.grader for r in rows):
            scored = [r.composite for r in rows if r.grader == grader and r.composite == r.composite]
            total = sum(1 for r in rows if r.grader == grader)
            metrics[f"{grader}/mean"] = sum(scored) / len(scored) if scored else float("nan")
            metrics[f"{grader}/scored"] = float(len(scored))
            metrics[f"{grader}/unscored"] = float(total - len(scored))
        self._log_metrics_to(eval_run, metrics)
