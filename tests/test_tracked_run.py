"""What issue 18's speed-ups must keep: every plot logged, one trace per holdout task with the task LM's call and
every grader's assessment, the holdout's thread count, a cached rerun with no LM call, and the judge's unscored
count in the summary.  Behaviour only: speed is measured by experiments/bench/bench.py, never here."""

from __future__ import annotations

import threading
from pathlib import Path

import dspy
import mlflow
import pytest

from harness.analysis.describe import verdict_run_name
from harness.cli.console import Reporter
from harness.cli.summary import summary_rows
from harness.config import EvolveConfig
from harness.engine.graders import KeywordGrader, VerifierGrader
from harness.engine.program import SkillProgram
from harness.models.lm import ModelSpec, build_lm, configure_cache
from harness.models.testing import ScriptedEngine
from harness.run import evolve
from harness.tracking.holdout_traces import LM_SPAN_NAME, batch_holdout
from harness.tracking.tracker import MlflowTracker
from harness.tracking.views import (
    TRACE_VIEW_NAME,
    TRACE_VIEW_TAG,
    compare_view_path,
    read_envelope,
    trace_view_state,
)
from verifiers import get_verifier

QUIET = Reporter(quiet=True)


def _config(tmp_path: Path, **kw: object) -> EvolveConfig:
    base: dict[str, object] = dict(task_model="test/lessons", num_cases=20, budget=30, seed=0,
                                   output_dir=str(tmp_path / "out"))
    base.update(kw)
    return EvolveConfig(**base)  # type: ignore[arg-type]


@pytest.fixture
def own_cache(tmp_path: Path):  # noqa: ANN201 - a generator fixture
    saved = dspy.cache
    yield configure_cache(tmp_path / "dspy-cache")
    dspy.cache = saved


def test_tracked_run_logs_every_plot_and_one_trace_per_task_with_every_assessment(mlflow_store: str,
                                                                                  tmp_path: Path) -> None:
    config = _config(tmp_path)
    with MlflowTracker(config.experiment_name()) as tracker:
        result = evolve(config, tracker, QUIET)
    client = mlflow.MlflowClient()
    graders = sorted({r.grader for r in result.rows})
    plots = {Path(a.path).name for a in client.list_artifacts(result.run_id, "plots")}
    assert plots == {f"holdout_{g}.png" for g in graders} | {"optimisation_curve.png"}
    for name in plots:
        png = mlflow.artifacts.download_artifacts(f"runs:/{result.run_id}/plots/{name}", dst_path=str(tmp_path))
        assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    variants = sorted({r.variant for r in result.rows})  # baseline, evolved and the no-skill control
    run_tags = client.get_run(result.run_id).data.tags
    traces = []
    for variant in variants:  # each variant's traces live in its own evaluation run
        eval_run = client.get_run(run_tags[f"holdout.{variant}.run_id"])
        traces += mlflow.search_traces(locations=[eval_run.info.experiment_id], run_id=eval_run.info.run_id,
                                       return_type="list")
    ids = tracker.holdout_run_ids
    assert ids == {v: run_tags[f"holdout.{v}.run_id"] for v in variants}
    # the evolved evaluation run's description links its comparison to the baseline one, per task
    compare = compare_view_path(eval_run.info.experiment_id, ids["evolved"], ids["baseline"])
    assert f"]({compare})" in client.get_run(ids["evolved"]).data.tags["mlflow.note.content"]
    assert "compareToRunUuid" not in client.get_run(ids["baseline"]).data.tags["mlflow.note.content"]
    holdout = result.splits.holdout
    assert len(traces) == len(variants) * len(holdout)  # written by the writer thread, in the store at run end
    by_key = {(t.info.tags["variant"], t.info.tags["task_id"]): t for t in traces}
    assert set(by_key) == {(v, t.task_id) for v in variants for t in holdout}
    for row in result.rows:
        trace = mlflow.get_trace(by_key[(row.variant, row.task_id)].info.trace_id)
        assert [s.name for s in trace.data.spans].count(LM_SPAN_NAME) == 1  # the task LM's call
        feedback = {a.name: a for a in trace.info.assessments if a.feedback is not None}
        assert set(feedback) == set(graders)
        assert feedback[row.grader].value == row.composite and feedback[row.grader].rationale == row.feedback
        assert trace.data.spans[0].outputs == row.output
        # the task's fields are trace tags, not expectations (which would hide the graders' "Compare to" columns)
        assert not [a for a in trace.info.assessments if a.expectation is not None]
        task = next(t for t in holdout if t.task_id == row.task_id)
        assert trace.info.tags["task.answer"] == task.answer and trace.info.tags["task.kind"] == task.kind
        # the Traces tab shows the response preview by default: it names the variant; the answer stays bare
        assert trace.info.response_preview == f"[{row.variant}] {row.output}"[:1000]
    # MLflow's "Compare to" view pairs two evaluation runs' traces by request preview: one per task in all variants
    previews = {t.info.tags["task_id"]: {x.info.request_preview for x in traces
                                         if x.info.tags["task_id"] == t.info.tags["task_id"]} for t in traces}
    assert all(len(p) == 1 for p in previews.values())
    # the holdout experiment's saved traces view: trace name, every grader's score, the variant tag
    holdout_experiment = client.get_experiment(eval_run.info.experiment_id)
    name, state, _ = read_envelope(holdout_experiment.tags[TRACE_VIEW_TAG]) or ("", {}, 0)
    assert name == TRACE_VIEW_NAME and state == trace_view_state(list(dict.fromkeys(r.grader for r in result.rows)))
    # the run's name leads with its verdict, then the name it started with (MLflow's generated one here)
    run = client.get_run(result.run_id)
    expected = verdict_run_name(result.assessment.verdict.verdict, tracker.run_info.run_name)
    assert run.info.run_name == run.data.tags["mlflow.runName"] == expected
    assert expected.startswith(result.assessment.verdict.verdict + " · ")


@pytest.mark.parametrize("error, outcome", [(RuntimeError("boom"), "failed"), (KeyboardInterrupt(), "killed")])
def test_a_run_that_ends_early_is_named_by_its_outcome(mlflow_store: str, error: BaseException,
                                                       outcome: str) -> None:
    with pytest.raises(type(error)), MlflowTracker("skills/early", run_name="verifier s0 · arxiv · x") as tracker:
        tracker.name_verdict("improved")  # a verdict logged before the failure does not name a failed run
        raise error
    run = mlflow.MlflowClient().get_run(str(tracker.run_id))
    assert run.info.run_name == f"{outcome} · verifier s0 · arxiv · x"
    assert run.info.status == ("FAILED" if outcome == "failed" else "KILLED")


class Gate:
    """A program that answers only once ``parties`` calls are inside it at the same time (a barrier), so it
    finishes only if the holdout really runs that many tasks at once."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=60)
        self.threads: set[int] = set()
        self.program = SkillProgram("Answer the question.")

    def __call__(self, question: str) -> dspy.Prediction:
        self.threads.add(threading.get_ident())
        self.barrier.wait()  # BrokenBarrierError (a failed task) when fewer threads run at once
        return self.program(question=question)


def test_holdout_runs_num_threads_tasks_at_once_inside_a_tracked_run(mlflow_store: str) -> None:
    tasks = get_verifier("arxiv").build_dataset(None, 0).holdout[:8]
    gate = Gate(4)
    experiment_id = mlflow.create_experiment("threads")  # explicit: another test may have set an experiment
    with mlflow.start_run(experiment_id=experiment_id) as run, dspy.context(lm=build_lm(ModelSpec("test/oracle"))):
        rows = batch_holdout(gate, tasks, [VerifierGrader(get_verifier("arxiv"))], "baseline",  # type: ignore[arg-type]
                             run.info.run_id, num_threads=4)
    assert [r.error for r in rows] == [""] * len(tasks)  # no task broke the barrier
    assert len(gate.threads) == 4
    assert all(r.composite == 1.0 for r in rows)


def test_a_cached_rerun_makes_no_lm_call(mlflow_store: str, tmp_path: Path, own_cache: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]
    original = ScriptedEngine.complete

    def counted(self: ScriptedEngine, request: object) -> object:
        calls[0] += 1
        return original(self, request)

    monkeypatch.setattr(ScriptedEngine, "complete", counted)
    config = _config(tmp_path, task_model="test/sleepy-1")
    runs = []
    for attempt in ("first", "rerun"):
        configure_cache(own_cache)  # a new memory cache over the same disk cache, as a new process has
        before = calls[0]
        with MlflowTracker(config.experiment_name(), run_name=attempt) as tracker:
            runs.append(evolve(config, tracker, QUIET))
        runs[-1].metrics["engine_calls"] = calls[0] - before
    first, rerun = runs
    assert first.metrics["engine_calls"] > 0 and first.metrics["lm_calls.task.uncached"] > 0
    assert rerun.metrics["engine_calls"] == 0 and rerun.metrics["lm_calls.task.uncached"] == 0
    assert rerun.metrics["lm_calls.task"] == first.metrics["lm_calls.task"]  # same calls, all from the cache
    assert [r.output for r in rerun.rows] == [r.output for r in first.rows]


def test_summary_says_how_many_judge_grades_were_unscored(mlflow_store: str, tmp_path: Path) -> None:
    config = _config(tmp_path, fitness="judge", judge_model="test/judge-garbage", task_model="test/oracle",
                     budget=12)
    with MlflowTracker(config.experiment_name()) as tracker:
        result = evolve(config, tracker, QUIET)
    rows = dict(summary_rows(result))
    tasks = len(result.splits.holdout)
    grades = int(result.metrics["fitness.grades"])
    assert grades >= result.optimization.metric_calls > 0
    assert result.metrics["fitness.unscored"] == grades  # every judge reply unparseable
    assert rows["judge unscored"].startswith(f"holdout {tasks}/{tasks} baseline, {tasks}/{tasks} evolved; "
                                             f"fitness {grades}/{grades} grades")
    assert KeywordGrader().name in {r.grader for r in result.rows}


def test_the_verdict_renames_the_run_in_a_batch_not_with_a_call_of_its_own(mlflow_store: str,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: ``name_verdict`` is the tag ``mlflow.runName`` in the run's next ``log_batch`` (which MLflow's
    store turns into the run's name), not an ``update_run`` of its own."""
    from harness.tracking.worker import WRITER_ENV

    monkeypatch.setenv(WRITER_ENV, "thread")

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("update_run called")

    monkeypatch.setattr(mlflow.MlflowClient, "update_run", refused)
    with MlflowTracker("skills/verdict", run_name="verifier s0 · arxiv") as tracker:
        tracker.name_verdict("improved")
        tracker.set_tags({"after": "the verdict"})
    run = mlflow.MlflowClient().get_run(str(tracker.run_id))
    assert run.info.run_name == run.data.tags["mlflow.runName"] == "improved · verifier s0 · arxiv"
    assert run.info.status == "FINISHED" and run.data.tags["after"] == "the verdict"
    assert tracker.logged_tag("mlflow.runName") == "improved · verifier s0 · arxiv"


class WriteTransactions:
    """Counts the committed transactions that wrote a row (INSERT, UPDATE or DELETE) on any SQLAlchemy engine of
    this process while entered."""

    def __init__(self) -> None:
        self.count = 0
        self._writing: set[int] = set()

    def _statement(self, conn: object, cursor: object, statement: str, *args: object) -> None:
        if statement.lstrip().split(None, 1)[0].upper() in ("INSERT", "UPDATE", "DELETE"):
            self._writing.add(id(conn))

    def _commit(self, conn: object) -> None:
        if id(conn) in self._writing:
            self._writing.discard(id(conn))
            self.count += 1

    def _rollback(self, conn: object) -> None:
        self._writing.discard(id(conn))

    def __enter__(self) -> WriteTransactions:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        event.listen(Engine, "before_cursor_execute", self._statement)
        event.listen(Engine, "commit", self._commit)
        event.listen(Engine, "rollback", self._rollback)
        return self

    def __exit__(self, *exc: object) -> None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        event.remove(Engine, "before_cursor_execute", self._statement)
        event.remove(Engine, "commit", self._commit)
        event.remove(Engine, "rollback", self._rollback)


def _evaluation_facts(client: mlflow.MlflowClient, run_id: str) -> dict[str, object]:
    """What a run's holdout evaluation runs hold (name, status, user, tags, metrics; per trace its task, state,
    tags, metadata, assessments and span names), every id replaced by a name, so two runs compare equal."""
    run_tags = client.get_run(run_id).data.tags
    ids = {run_id: "<run>"}
    facts: dict[str, object] = {k: v for k, v in run_tags.items() if k.startswith("holdout.")}
    for variant in ("baseline", "evolved"):
        eval_run = client.get_run(run_tags[f"holdout.{variant}.run_id"])
        ids[eval_run.info.run_id] = f"<{variant} run>"
        ids[eval_run.data.tags[f"holdout.{variant}.eval_id"]] = f"<{variant} eval>"
        ids[f"experiments/{eval_run.info.experiment_id}/"] = "experiments/<holdout>/"  # in the comparison link

    def named(value: object) -> object:
        text = str(value)
        for found, name in ids.items():
            text = text.replace(found, name)
        return text

    facts = {k: named(v) for k, v in facts.items()}
    for variant in ("baseline", "evolved"):
        eval_run = client.get_run(run_tags[f"holdout.{variant}.run_id"])
        traces = mlflow.search_traces(locations=[eval_run.info.experiment_id], run_id=eval_run.info.run_id,
                                      return_type="list")
        facts[variant] = {
            "run": (eval_run.info.run_name, eval_run.info.status, eval_run.info.user_id),
            "tags": {k: named(v) for k, v in eval_run.data.tags.items()},
            "metrics": eval_run.data.metrics,
            "traces": sorted((t.info.tags["task_id"], str(t.info.state),
                              sorted((k, named(v)) for k, v in t.info.tags.items()
                                     if k not in ("mlflow.artifactLocation",)),
                              sorted((k, named(v)) for k, v in t.info.trace_metadata.items()
                                     if k != "mlflow.trace.sizeBytes"),
                              sorted((a.name, a.value, a.rationale) for a in t.info.assessments),
                              [s.name for s in mlflow.get_trace(t.info.trace_id).data.spans]) for t in traces)}
    return facts


def test_an_evaluation_run_is_one_transaction_with_the_rows_of_the_step_by_step_writes(
        mlflow_store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18: a variant's evaluation run, its traces, metrics, tags, end and the tag naming it on the run are
    written in one transaction; a store without MLflow's private writers gets the same facts step by step."""
    from harness.tracking import trace_batch
    from harness.tracking.worker import WRITER_ENV

    monkeypatch.setenv(WRITER_ENV, "thread")  # the writes in this process, where they are counted
    tasks = get_verifier("arxiv").build_dataset(None, 0).holdout[:4]
    graders = [VerifierGrader(get_verifier("arxiv")), KeywordGrader()]
    facts, transactions = {}, {}
    for path in ("one transaction", "step by step"):
        if path == "step by step":
            monkeypatch.setattr(trace_batch, "sql_store", lambda client: None)
        with MlflowTracker(f"holdout-{path}", run_name="arm") as tracker, \
                dspy.context(lm=build_lm(ModelSpec("test/oracle"))):
            for variant in ("baseline", "evolved"):
                with WriteTransactions() as counted:
                    tracker.evaluate_holdout(SkillProgram("Answer the question."), tasks, graders, variant)
                    tracker.client  # noqa: B018 - waits for the writer
                transactions[(path, variant)] = counted.count
        facts[path] = _evaluation_facts(mlflow.MlflowClient(), str(tracker.run_id))
    # the first variant also creates the holdout experiment and stores its traces view
    assert transactions[("one transaction", "evolved")] == 1 < transactions[("step by step", "evolved")]
    assert transactions[("one transaction", "baseline")] < transactions[("step by step", "baseline")]
    assert facts["one transaction"] == facts["step by step"]
    assert len(facts["one transaction"]["evolved"]["traces"]) == len(tasks)  # type: ignore[index]
