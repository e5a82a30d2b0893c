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

import functools
import json
import os
import shlex
import shutil
import tempfile
import time
import traceback
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pandas as pd

from harness.artifacts import ERROR_TEXT, HOLDOUT_EXPERIMENT_SUFFIX, TAG_DESCRIPTION, TAG_EVALUATION_OF
from harness.messages import redact_text
from harness.tracking.store import retry_duplicate_insert
from harness.tracking.tables import LoggedTables, table_json
from harness.tracking.trace_batch import log_batch_one_session
from harness.tracking.views import compare_view_path, set_trace_view, set_verdict_view
from harness.tracking.worker import ProcessWriter, use_process_writer
from harness.tracking.writer import LINGER_S, StoreWriter, artifact_only

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
    def name_verdict(self, headline: str) -> None: ...
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

    def name_verdict(self, headline: str) -> None:
        """Nothing is named without a store."""

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
    child runs, threads and processes cannot log into each other's runs.  Every write after the run's start
    goes through one writer thread (:class:`harness.tracking.writer.StoreWriter`): the run goes on while its
    facts are written, in order, and leaving the context waits for them (issue 18: on SQLite, concurrent writers
    wait on one another in SQLite's busy handler).  The tracker reads nothing back from the store during the run:
    it keeps what it logged (params, tags, tables).

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
        self.run_info: Any = None  #: the run's ``mlflow.entities.RunInfo`` when it was opened
        self._client: Any = None
        self._writer: StoreWriter | ProcessWriter | None = None
        self._params: dict[str, str] = {}  # params of the run (logged, or there when it was resumed)
        self._tags: dict[str, str] = {}  # tags this tracker set
        self._tables = LoggedTables()
        self._stage: _Stage | None = None  # copies of files queued for upload
        self._heartbeat: Any = None

    @property
    def client(self) -> Any:
        """The ``mlflow.MlflowClient`` of this tracker, after every queued write ran (so what the caller reads
        includes what was logged)."""
        if self._writer is not None:
            self._writer.wait()
        return self._store()

    def _store(self) -> Any:
        """The client, without waiting for queued writes (the writer thread's own calls, and run start)."""
        if self._client is None:
            import mlflow

            self._client = mlflow.MlflowClient(tracking_uri=self.tracking_uri)
        return self._client

    @property
    def writer(self) -> StoreWriter | ProcessWriter:
        """The queue of this tracker's store writes (one per tracker): a worker process
        (:class:`harness.tracking.worker.ProcessWriter`, forked on first use) or, with
        ``HARNESS_STORE_WRITER=thread`` or without ``fork``, a thread of this process."""
        if self._writer is None:
            if use_process_writer():
                client = self._store()  # the worker's client names the same stores, resolved here
                self._writer = ProcessWriter(str(client.tracking_uri), getattr(client, "_registry_uri", None))
            else:
                self._writer = StoreWriter(self._store(), log_inputs=lambda run_id, datasets: retry_duplicate_insert(
                    lambda: self._store().log_inputs(run_id, datasets=datasets)),
                    log_batch=functools.partial(log_batch_one_session, self._store()), linger_s=LINGER_S)
        return self._writer

    @property
    def store_uri(self) -> str:
        """The tracking URI of this tracker's store (no store call)."""
        return str(self._store().tracking_uri or "")

    def logged_tag(self, key: str) -> str | None:
        """The value this tracker set for the run's tag ``key`` (None if it set none): no store read."""
        return self._tags.get(key)

    def _experiment(self) -> tuple[str, dict[str, str]]:
        """The id and tags of :attr:`experiment_name`, created (with no tags) when it does not exist."""
        client = self._store()
        experiment = client.get_experiment_by_name(self.experiment_name)
        if experiment is not None:
            return experiment.experiment_id, dict(experiment.tags or {})
        try:
            return client.create_experiment(self.experiment_name), {}
        except Exception:  # created meanwhile by a concurrent process
            experiment = client.get_experiment_by_name(self.experiment_name)
            if experiment is None:
                raise
            return experiment.experiment_id, dict(experiment.tags or {})

    def __enter__(self) -> MlflowTracker:
        from mlflow.utils.mlflow_tags import MLFLOW_LOGGED_ARTIFACTS, MLFLOW_PARENT_RUN_ID, MLFLOW_RUN_NAME

        from harness.tracking.reaper import liveness_tags

        client = self._store()
        env_run = os.environ.get("MLFLOW_RUN_ID")
        tags = {**self.tags, **liveness_tags()}  # pid, host, heartbeat: a run whose process dies can be reaped
        if self.parent_run_id:
            experiment_id = client.get_run(self.parent_run_id).info.experiment_id
            tags[MLFLOW_PARENT_RUN_ID] = self.parent_run_id
        elif env_run:
            self.run_id = env_run
            client.update_run(env_run, status="RUNNING", name=self.run_name)
            run = client.get_run(env_run)  # what `mlflow run` logged: its params and tags
            self.run_info = run.info
            self._params = dict(run.data.params)
            self._tables = LoggedTables(run.data.tags.get(MLFLOW_LOGGED_ARTIFACTS))
            self._start_writer()
            self.set_tags(tags)
            self._start_heartbeat()
            return self
        else:
            experiment_id, experiment_tags = self._experiment()
            # the runs table's "verdict" view (harness.tracking.views), from the tags just read
            set_verdict_view(client, experiment_id, experiment_tags)
        if self.run_name:
            tags[MLFLOW_RUN_NAME] = self.run_name
        # MLflow's context tags, as the fluent start_run would add them: source, user, git commit
        from mlflow.tracking.context.registry import resolve_tags

        resolved = resolve_tags(tags)
        run = client.create_run(experiment_id, tags=resolved, run_name=self.run_name)
        self.run_id = run.info.run_id
        self.run_info = run.info
        self._tags.update({k: str(v) for k, v in resolved.items()})
        self._start_writer()
        self._start_heartbeat()
        return self

    def _start_writer(self) -> None:
        """Fork the writer process now, so its start-up overlaps the run on another core.  After the run's own
        store calls at start, not before them: the child's set-up (imports checked, a new connection pool) then
        does not take turns with them for the CPU, and the parent's memory written by them is not copied for a
        child that already exists (copy-on-write; issue 18)."""
        writer = self.writer
        if isinstance(writer, ProcessWriter):
            writer.start()

    def _start_heartbeat(self) -> None:
        from harness.tracking.reaper import Heartbeat

        self._heartbeat = Heartbeat(self.set_tags).start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        if exc_type is None:
            # the writer ends the run after its last write (no store call of its own at the run's very end); a
            # failed write makes the flush raise, and the run is then marked FAILED here
            self.writer.submit_call(_terminate, str(self.run_id), "FINISHED")
            try:
                self.flush()
            except BaseException:
                self._store().set_terminated(self.run_id, "FAILED")
                raise
            return
        interrupted = issubclass(exc_type, (KeyboardInterrupt, SystemExit))
        status = "KILLED" if interrupted else "FAILED"
        if exc is not None and self.run_id:
            mark_ended_run(exc, self.run_id)
        try:
            text = redact_text("".join(traceback.format_exception(exc_type, exc, tb)))  # no URL credentials
            self.log_text(text, ERROR_TEXT)
            self.set_tags({"run.outcome": status.lower(),
                           "run.error": redact_text(str(exc) or exc_type.__name__)[:MAX_PARAM_CHARS]})
            try:
                self.flush()  # what was logged before the failure stays, queued writes included
            except Exception:  # the run's own exception is the one to report
                pass
        finally:
            self._rename_now(status.lower())  # "failed · <name>", "killed · <name>"
            self._store().set_terminated(self.run_id, status)

    @property
    def experiment_id(self) -> str | None:
        """The id of this run's experiment (None before the run is opened); no store call."""
        return str(self.run_info.experiment_id) if self.run_info is not None else None

    @property
    def holdout_experiment_id(self) -> str | None:
        """The id of the experiment holding the holdout evaluation runs and traces of this run's experiment (None
        before the run is opened or when no holdout was ever written there), after every queued write ran; two
        store reads (the CLI's summary asks once, after the run)."""
        if self.run_info is None:
            return None
        if self._writer is not None:
            self._writer.wait()
        client = self._store()
        name = client.get_experiment(self.run_info.experiment_id).name + HOLDOUT_EXPERIMENT_SUFFIX
        found = client.get_experiment_by_name(name)
        return str(found.experiment_id) if found is not None else None

    @property
    def holdout_run_ids(self) -> dict[str, str]:
        """``{variant: evaluation run id}`` of this run's holdout evaluation runs (its tags
        ``holdout.<variant>.run_id``; empty before the run is opened or when it has none), after every queued write
        ran; one store read."""
        if self.run_info is None:
            return {}
        if self._writer is not None:
            self._writer.wait()
        tags = self._store().get_run(str(self.run_id)).data.tags
        return {key.split(".")[1]: value for key, value in tags.items()
                if key.startswith("holdout.") and key.endswith(".run_id") and key.count(".") == 2}

    def _base_name(self) -> str:
        """The name the run started with (``run_name``, else the one MLflow or ``mlflow run`` gave it)."""
        return self.run_name or (self.run_info.run_name if self.run_info is not None else "") or ""

    def name_verdict(self, headline: str) -> None:
        """Lead the run's name with ``headline`` (its verdict, e.g. ``improved``) and keep the name it started with
        after it (:func:`harness.analysis.describe.verdict_run_name`): the runs table shows about 22 characters of a
        name, and no other column by default.  Queued after the writes before it; called again, the last headline
        wins (the name is always built from the starting name).

        Written as the tag ``mlflow.runName`` in the run's next ``log_batch``, which renames the run as
        ``MlflowClient.update_run`` would (MLflow's stores set the run's name with that tag), without a write and a
        transaction of its own (issue 18)."""
        from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

        from harness.analysis.describe import verdict_run_name

        self.set_tags({MLFLOW_RUN_NAME: verdict_run_name(headline, self._base_name())})

    def _rename_now(self, outcome: str) -> None:
        """(Run end) name the run ``"<outcome> · <starting name>"`` at once; best effort, since the run's own
        exception is the one to report."""
        from harness.analysis.describe import verdict_run_name

        try:
            name = verdict_run_name(outcome, self._base_name())
            self._store().update_run(str(self.run_id), name=name)
            self._tags["mlflow.runName"] = name
        except Exception:  # the name is a UI convenience
            pass

    def defer(self, write: Callable[[], Any]) -> None:
        """Run ``write`` (a picklable function of no arguments writing to this tracker's store: module-level, or a
        ``functools.partial`` of one) in this tracker's writer, after the writes queued before it, so the run goes
        on meanwhile; :meth:`flush` (called when the run ends) waits for it and raises its exception."""
        self.writer.submit_call(_call_write, write)

    def flush(self) -> None:
        """Wait for every queued write, then stop the writer and drop the staged file copies (the writer deletes
        them after their uploads, so the run does not spend its own time on it; if the writer failed, the run
        deletes what is left).

        Raises:
            Exception: the first exception a queued write raised (after all of them ran).
        """
        stage, self._stage = self._stage, None
        try:
            if stage is not None:
                self.writer.submit_call(_remove_stage, stage.path, report=False)
            if self._writer is not None:
                self._writer.close()
        except BaseException:
            if stage is not None:
                stage.remove()
            raise
        if stage is not None:
            stage.forget()

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log params; a value longer than MAX_PARAM_CHARS goes to ``params/<key>.txt`` instead.

        Under ``mlflow run`` the project's parameters are already logged (shell-quoted: ``''`` for an
        empty value); a key logged with the same value is left alone, and a key whose earlier value
        differs (``20.0`` vs ``20``) is logged as ``harness.<key>``, since MLflow forbids changing a param.
        """
        from mlflow.entities import Param

        batch: dict[str, Param] = {}
        for key, value in params.items():
            text = "" if value is None else str(value)
            if len(text) > MAX_PARAM_CHARS:
                self.log_text(text, f"params/{key}.txt")
                text = f"(long value: artifact params/{key}.txt)"
            if key in self._params:
                if self._params[key] in (text, shlex.quote(text)):
                    continue
                key = f"harness.{key}"
            self._params[key] = text
            batch[key] = Param(key, text)
        self.writer.log_batch(str(self.run_id), params=batch)

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log finite metrics (NaN values are skipped: MLflow would plot them as gaps anyway); GEPA logs progress
        every iteration, and consecutive calls reach the store as one batch."""
        self._log_metrics_to(str(self.run_id), metrics, step)

    def _log_metrics_to(self, run_id: str, metrics: Mapping[str, float], step: int | None = None) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self.writer.log_batch(run_id, metrics=[Metric(k, float(v), now, step or 0)
                                               for k, v in metrics.items() if v == v])

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Set tags on the run."""
        from mlflow.entities import RunTag

        values = {k: str(v) for k, v in tags.items()}
        self._tags.update(values)
        self.writer.log_batch(str(self.run_id), tags={k: RunTag(k, v) for k, v in values.items()})

    def log_text(self, text: str, artifact_file: str) -> None:
        """Log ``text`` as an artifact file."""
        self.writer.submit_call(_log_text, self.run_id, text, artifact_file)

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Log JSON-serialisable ``data`` as an artifact file."""
        self.log_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), artifact_file)

    def log_table(self, frame: pd.DataFrame, artifact_file: str) -> None:
        """Log ``frame`` as an MLflow table (the file and the ``mlflow.loggedArtifacts`` tag that
        ``MlflowClient.log_table`` writes, :mod:`harness.tracking.tables`), read by ``mlflow.load_table`` and the
        UI's evaluation/table views; logged again under the same path, it is appended to.

        Raises:
            ValueError: ``artifact_file`` does not end in ``.json``.
        """
        from mlflow.utils.mlflow_tags import MLFLOW_LOGGED_ARTIFACTS

        table, tag = self._tables.add_frame(frame, artifact_file)
        self.writer.submit_call(_log_table, self.run_id, table, artifact_file)  # JSON-encoded by the writer
        self.set_tags({MLFLOW_LOGGED_ARTIFACTS: tag})

    def _staged(self, path: Path) -> Path:
        """A copy of the file or folder ``path`` that stays until :meth:`flush` (the original may change or go
        before the writer thread uploads it)."""
        if self._stage is None:
            self._stage = _Stage()
        target = Path(tempfile.mkdtemp(dir=self._stage.path)) / path.name
        if path.is_dir():
            shutil.copytree(path, target)
        else:
            shutil.copy2(path, target)
        return target

    def log_artifacts(self, directory: Path, artifact_path: str) -> None:
        """Log every file in ``directory`` under ``artifact_path`` (as they are now).

        Raises:
            OSError: ``directory`` cannot be read.
        """
        self.writer.submit_call(_log_artifacts, self.run_id, str(self._staged(Path(directory))), artifact_path)

    def log_file(self, path: Path, artifact_path: str) -> None:
        """Log one local file under ``artifact_path`` (as it is now).

        Raises:
            OSError: ``path`` cannot be read.
        """
        self.writer.submit_call(_log_artifact, self.run_id, str(self._staged(Path(path))), artifact_path)

    def log_dataset(self, frame: pd.DataFrame, name: str, context: str, digest: str,
                    source: str | None = None) -> None:
        """Log ``frame`` as an MLflow dataset input with ``context`` (trainset / valset / holdout); ``source``
        (a task file's path) becomes the dataset's source.  Consecutive datasets reach the store in one
        ``log_inputs``; the dataset is built by the writer (:func:`harness.tracking.datasets.dataset_input`, in the
        worker process when there is one)."""
        self.writer.log_dataset(str(self.run_id), frame, name, context, digest, source)

    def register_skill_version(self, skill: Any, evolved_text: str, fitness: str, verdict: str,
                               delta: float | None, *, task_model: str = "",
                               dataset_digest: str = "") -> int | None:
        """Register ``evolved_text`` in MLflow's prompt registry as the next version of the skill's prompt
        (the baseline is version 1), tagged with this run, the fitness, the verdict, the holdout delta, the task
        model and the dataset digest (:func:`harness.tracking.prompts.register_evolved`: an identical text
        reuses its version; the ``verified`` alias moves only on an ``improved`` verdict of a real model).
        It runs in the writer thread, after the writes queued before it, and waits for its result.

        Returns the version, or None when the registry already holds a different baseline for this skill
        name (then nothing is registered and the tag ``registry.note`` says why).
        """
        version, note = self.writer.call_with(_register, skill, evolved_text, self.run_id or "", fitness, verdict,
                                              delta, task_model, dataset_digest)
        if version is None:
            self.set_tags({"registry.note": note[:MAX_PARAM_CHARS]})
            return None
        self.set_tags({"registry.version": str(version)})
        return version

    def evaluate_holdout(self, program: SkillProgram, tasks: Sequence[Task], graders: Sequence[Grader],
                         variant: str, *, num_threads: int = 1,
                         on_done: Callable[[], None] | None = None) -> list[HoldoutRow]:
        """Answer and grade the holdout in-process (:func:`harness.tracking.holdout_traces.answer_and_grade`) and
        return its rows at once; the writer thread then writes one trace per task with the task LM's call and
        every grader's assessment, as ``mlflow.genai.evaluate`` would write them, at a fraction of its SQL writes
        (BENCHMARKS.md, issue 18), into an evaluation run of their own, one per variant.

        That run is named ``"<variant> · <run name>"``, lives in the experiment ``<this run's experiment>/holdout``
        (so the variants are separate evaluation runs that MLflow's "Compare to" view puts side by side per task,
        and this experiment's runs table holds only the harness's runs), is tagged ``holdout.evaluation_of`` = this
        run, ``variant``, a description (the evolved run's links its comparison to the baseline run, per task:
        :func:`harness.tracking.views.compare_view_path`), ``mlflow.runType = genai_evaluate`` and
        ``holdout.<variant>.eval_id``,
        holds the metrics ``<grader>/mean`` (over scored tasks), ``<grader>/scored`` and ``<grader>/unscored``,
        and ends FINISHED once its traces are written (FAILED if a write failed, which :meth:`flush` raises);
        this run gets the tag ``holdout.<variant>.run_id``.

        Raises:
            ValueError: duplicate grader names, no graders, an empty variant or ``num_threads < 1``.
        """
        from harness.tracking.genai_eval import check_holdout_arguments
        from harness.tracking.holdout_traces import answer_and_grade, record_rows
        from harness.tracking.scorers import grader_scorer

        check_holdout_arguments("evaluate_holdout", graders, variant, num_threads)
        scorers = [grader_scorer(g, aggregations=[], timeout=0) for g in graders]
        records = answer_and_grade(program, tasks, scorers, num_threads=num_threads, on_done=on_done)
        rows = record_rows(records, tasks, graders, variant) if tasks else []
        metrics = _evaluation_metrics(rows)  # now: the caller may extend the list it gets back
        # the experiment of this run's own name, unless the run came from elsewhere (child run, `mlflow run`): then
        # the writer reads the run's experiment
        experiment = None if (self.parent_run_id or os.environ.get("MLFLOW_RUN_ID") or self.run_info is None) \
            else self.experiment_name
        run_name = self.run_name or (self.run_info.run_name if self.run_info else "") or str(self.run_id)
        self.writer.submit_call(_write_evaluation, str(self.run_id), experiment, run_name, variant, records, metrics,
                                [g.name for g in graders])
        return rows


class _Stage:
    """A temporary folder of file copies queued for upload (:meth:`MlflowTracker._staged`): the writer deletes it
    after the uploads (:func:`_remove_stage`); until :meth:`forget`, it is also deleted when this object is
    collected or at the interpreter's exit, as a ``tempfile.TemporaryDirectory`` would be."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="harness-mlflow-stage-")
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.path, True)

    def remove(self) -> None:
        """Delete the folder now, here (whatever of it is left)."""
        self._finalizer()

    def forget(self) -> None:
        """Leave the folder to the writer, which deleted it (nothing is deleted here later)."""
        self._finalizer.detach()


# ------------------------------------------------------------------------------------------------ the writes
# Module-level functions ``fn(client, *args)`` the writer runs (in its worker process: they are sent pickled).


def _call_write(client: Any, write: Callable[[], Any]) -> Any:
    """A deferred write (:meth:`MlflowTracker.defer`), which names its store itself."""
    return write()


@artifact_only
def _log_text(client: Any, run_id: str, text: str, artifact_file: str) -> None:
    client.log_text(run_id, text, artifact_file)


@artifact_only
def _log_table(client: Any, run_id: str, table: pd.DataFrame, artifact_file: str) -> None:
    client.log_text(run_id, table_json(table), artifact_file)


@artifact_only
def _log_artifacts(client: Any, run_id: str, directory: str, artifact_path: str) -> None:
    client.log_artifacts(run_id, directory, artifact_path=artifact_path)


@artifact_only
def _log_artifact(client: Any, run_id: str, path: str, artifact_path: str) -> None:
    client.log_artifact(run_id, path, artifact_path=artifact_path)


@artifact_only
def _remove_stage(client: Any, path: str) -> None:
    """Delete the staged copies at ``path`` once the uploads queued before this have read them (in the writer, off
    the run's thread); a copy that cannot be deleted is left (it is a temporary file)."""
    shutil.rmtree(path, ignore_errors=True)


def _register(client: Any, skill: Any, evolved_text: str, run_id: str, fitness: str, verdict: str,
              delta: float | None, task_model: str, dataset_digest: str) -> tuple[int | None, str]:
    """(version, "") of :func:`harness.tracking.prompts.register_evolved`, or (None, why) on a baseline mismatch."""
    from harness.tracking.prompts import BaselineMismatchError, register_evolved

    try:
        # parallel child runs race on the prompt's aliases; register_evolved is idempotent per run and text
        return retry_duplicate_insert(lambda: register_evolved(
            skill, evolved_text, run_id, fitness, verdict, delta, client=client, task_model=task_model,
            dataset_digest=dataset_digest)), ""
    except BaselineMismatchError as exc:
        return None, str(exc)


def _terminate(client: Any, run_id: str, status: str) -> None:
    client.set_terminated(run_id, status)


def _write_evaluation(client: Any, run_id: str, experiment: str | None, run_name: str, variant: str,
                      records: Sequence[Any], metrics: list[Any], graders: Sequence[str]) -> None:
    """The evaluation run of ``variant`` of run ``run_id`` with its traces, metrics and tags, the run's tag
    ``holdout.<variant>.run_id`` and the holdout experiment's traces view over ``graders`` (grader names;
    :func:`harness.tracking.views.set_trace_view`); see :meth:`MlflowTracker.evaluate_holdout`.  ``experiment``:
    the name of the run's experiment (None: read from the run)."""
    from mlflow.entities import RunTag

    from harness.tracking.holdout_traces import trace_records

    if _write_evaluation_at_once(client, run_id, experiment, run_name, variant, records, metrics, graders):
        return
    eval_run, experiment_id, experiment_tags = _evaluation_run(client, run_id, experiment, run_name, variant)
    set_trace_view(client, experiment_id, graders, experiment_tags)
    try:
        tags = trace_records(client, records, variant, eval_run, experiment_id, run_type_unset=True) \
            if records else {}
        baseline = _baseline_evaluation_run(client, run_id) if variant == "evolved" else None
        if baseline:
            tags[TAG_DESCRIPTION] = _evaluation_description(variant, run_id, run_name) + (
                f"\n[Baseline vs evolved, per task]({compare_view_path(experiment_id, eval_run, baseline)}): "
                "this run's traces beside the baseline run's, with every grader's score.\n")
        log_batch_one_session(client, eval_run, metrics=metrics, tags=[RunTag(k, v) for k, v in tags.items()])
    except BaseException:
        client.set_terminated(eval_run, "FAILED")
        raise
    client.set_terminated(eval_run, "FINISHED")
    log_batch_one_session(client, run_id, tags=[RunTag(f"holdout.{variant}.run_id", eval_run)])


def _write_evaluation_at_once(client: Any, run_id: str, experiment: str | None, run_name: str, variant: str,
                              records: Sequence[Any], metrics: list[Any], graders: Sequence[str]) -> bool:
    """:func:`_write_evaluation` with every row of the evaluation run in one SQL transaction (issue 18: the run,
    its traces, spans and links, its metrics and tags, its end, and the tag naming it on run ``run_id``; it was
    five), the store's own writers making the rows (:func:`harness.tracking.trace_batch.one_transaction`).  The
    reads come first: the experiments, the baseline evaluation run, and the holdout experiment's traces view (its
    tag written, in a transaction of its own, only when it changes).  Returns False, having written nothing of
    the evaluation run, when the store is not a SQL store with MLflow's private writers or the transaction failed
    (it is rolled back whole): :func:`_write_evaluation` then writes it with one call per step."""
    from mlflow.entities import RunStatus, RunTag
    from mlflow.utils.mlflow_tags import MLFLOW_USER

    from harness.tracking.holdout_traces import build_traces
    from harness.tracking.trace_batch import _by_location, one_transaction, sql_store

    store = sql_store(client)
    if store is None:
        return False
    try:
        experiment_id, experiment_tags = _holdout_experiment(client, run_id, experiment)
        set_trace_view(client, experiment_id, graders, experiment_tags)
        baseline = _baseline_evaluation_run(client, run_id) if variant == "evolved" else None
        name, tags = _evaluation_tags(run_id, run_name, variant)
        with one_transaction(store, {experiment_id: store.get_experiment(experiment_id)}) as transaction:
            # what MlflowClient.create_run hands the store (its user: the MLflow user tag, else "unknown")
            run = transaction.store.create_run(experiment_id=experiment_id, user_id=tags.get(MLFLOW_USER, "unknown"),
                                               start_time=int(time.time() * 1000),
                                               tags=[RunTag(k, v) for k, v in tags.items()], run_name=name)
            transaction.flush()  # the run's rows, which the traces' links and the batch refer to
            eval_run = str(run.info.run_id)
            infos, spans, run_tags = build_traces(records, variant, eval_run, experiment_id, run_type_unset=True) \
                if records else ([], [], {})
            if infos:
                transaction.write_traces(infos, _by_location(infos, spans), eval_run)
            if baseline:
                run_tags[TAG_DESCRIPTION] = _evaluation_description(variant, run_id, run_name) + (
                    f"\n[Baseline vs evolved, per task]({compare_view_path(experiment_id, eval_run, baseline)}): "
                    "this run's traces beside the baseline run's, with every grader's score.\n")
            transaction.store.log_batch(eval_run, metrics=list(metrics), params=[],
                                        tags=[RunTag(k, v) for k, v in run_tags.items()])
            transaction.store.update_run_info(eval_run, RunStatus.from_string("FINISHED"),
                                              int(time.time() * 1000), None)
            transaction.store.log_batch(run_id, metrics=[], params=[],
                                        tags=[RunTag(f"holdout.{variant}.run_id", eval_run)])
        return True
    except Exception as exc:  # rolled back whole: the step-by-step writes write it, or report why not
        import logging

        logging.getLogger(__name__).debug("one-transaction evaluation run failed (%s); writing it step by step", exc)
        return False


def _holdout_experiment(client: Any, run_id: str, experiment: str | None) -> tuple[str, dict[str, str]]:
    """The id and tags of ``<experiment>/holdout`` (created when missing; ``experiment`` None: the name of run
    ``run_id``'s experiment, read)."""
    if experiment is None:
        experiment = client.get_experiment(client.get_run(run_id).info.experiment_id).name
    holdout = MlflowTracker(experiment + HOLDOUT_EXPERIMENT_SUFFIX, tracking_uri=client.tracking_uri)
    holdout._client = client
    return holdout._experiment()


def _evaluation_tags(run_id: str, run_name: str, variant: str) -> tuple[str, dict[str, str]]:
    """The name and the starting tags of the evaluation run of ``variant`` of run ``run_id`` named ``run_name``."""
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

    # the evaluation runs table shows ~10 characters of a name: the variant and the arm (``verifier s0``) first
    name = f"{variant} · {run_name}"
    return name, {MLFLOW_RUN_NAME: name, TAG_EVALUATION_OF: run_id, "variant": variant,
                  TAG_DESCRIPTION: _evaluation_description(variant, run_id, run_name)}


def _evaluation_run(client: Any, run_id: str, experiment: str | None, run_name: str,
                    variant: str) -> tuple[str, str, dict[str, str]]:
    """Create the (running) evaluation run of ``variant`` in ``<experiment>/holdout``; returns (its id, its
    experiment's id, that experiment's tags as read before the run was created)."""
    holdout_experiment, holdout_tags = _holdout_experiment(client, run_id, experiment)
    name, tags = _evaluation_tags(run_id, run_name, variant)
    run = client.create_run(holdout_experiment, tags=tags, run_name=name)
    return str(run.info.run_id), holdout_experiment, holdout_tags


def _evaluation_description(variant: str, run_id: str, run_name: str) -> str:
    """The description (markdown) of the evaluation run of ``variant`` of run ``run_id`` named ``run_name``."""
    return (f"Holdout of the **{variant}** skill of run `{run_id}` ({run_name}): one trace per task with every "
            "grader's assessment. Compare it to the sibling evaluation run of the other variant (Evaluation runs → "
            "Compare to).\n")


def _baseline_evaluation_run(client: Any, run_id: str) -> str | None:
    """The id of the baseline evaluation run of run ``run_id`` (its tag ``holdout.baseline.run_id``, else its
    parent's: a side-by-side child shares its parent's baseline), or None; one or two store reads."""
    tags = client.get_run(run_id).data.tags
    found = tags.get("holdout.baseline.run_id")
    parent = tags.get("mlflow.parentRunId")
    if not found and parent:
        found = client.get_run(parent).data.tags.get("holdout.baseline.run_id")
    return found or None


def _evaluation_metrics(rows: Sequence[HoldoutRow]) -> list[Any]:
    """``<grader>/mean`` (over scored tasks; NaN, so left out, when none), ``<grader>/scored`` and
    ``<grader>/unscored`` of one variant's rows, as ``mlflow.entities.Metric`` objects."""
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    metrics: dict[str, float] = {}
    for grader in dict.fromkeys(r.grader for r in rows):
        scored = [r.composite for r in rows if r.grader == grader and r.composite == r.composite]
        total = sum(1 for r in rows if r.grader == grader)
        metrics[f"{grader}/mean"] = sum(scored) / len(scored) if scored else float("nan")
        metrics[f"{grader}/scored"] = float(len(scored))
        metrics[f"{grader}/unscored"] = float(total - len(scored))
    return [Metric(k, v, now, 0) for k, v in metrics.items() if v == v]
