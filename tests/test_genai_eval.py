"""Holdout evaluation through mlflow.genai.evaluate and through the in-process batch writer
(harness.tracking.holdout_traces.batch_holdout, what the tracker uses): same rows as generate + grade, traces in
the run.  Every test runs on both writers (the ``holdout`` fixture), so they are held to the same facts."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dspy
import pytest
from helpers import build_judge

from harness.engine.graders import KeywordGrader, VerifierGrader
from harness.engine.holdout import HoldoutRow, generate, grade
from harness.engine.program import SkillProgram
from harness.models.lm import ModelSpec, build_lm
from harness.tracking.genai_eval import TAG_ERROR, genai_holdout, rows_from_traces
from harness.tracking.holdout_traces import batch_holdout, task_tags
from verifiers import Grade, Task, get_verifier

TASK_IDS = ("1706.03762/id", "1412.6980/year", "1810.04805/title", "1512.03385/author")


@pytest.fixture
def tasks() -> list[Task]:
    pool = {t.task_id: t for t in get_verifier("arxiv").tasks()}
    return [pool[i] for i in TASK_IDS]


@pytest.fixture(params=[genai_holdout, batch_holdout], ids=["genai_evaluate", "batch"])
def holdout(request: pytest.FixtureRequest) -> Callable[..., list[HoldoutRow]]:
    """The holdout writer under test (same signature)."""
    return request.param


@pytest.fixture
def experiment(mlflow_store: str, tmp_path: Path) -> str:
    """An experiment whose artifacts stay in tmp_path; returns its id."""
    import mlflow

    experiment_id = mlflow.create_experiment("holdout", artifact_location=(tmp_path / "artifacts").as_uri())
    mlflow.set_experiment(experiment_id=experiment_id)
    return experiment_id


def _same(rows: Sequence[HoldoutRow], expected: Sequence[HoldoutRow]) -> None:
    assert len(rows) == len(expected)
    for got, want in zip(rows, expected, strict=True):
        for key, value in want.to_dict().items():
            other = got.to_dict()[key]
            if isinstance(value, float) and math.isnan(value):
                assert isinstance(other, float) and math.isnan(other), (key, got, want)
            else:
                assert other == value, (key, got, want)


class Picky:
    """Grades like the keyword grader, but cannot grade year tasks (an unscored grade)."""

    name = "picky"

    def grade(self, task: Task, output: str) -> Grade | None:
        return None if task.kind == "year" else KeywordGrader().grade(task, output)


class Flaky(SkillProgram):
    """A program whose LM call fails on one question."""

    def __init__(self, instructions: str, fail_on: str) -> None:
        super().__init__(instructions)
        self.fail_on = fail_on

    def forward(self, question: str) -> dspy.Prediction:
        if question == self.fail_on:
            raise RuntimeError("context window exceeded")
        return super().forward(question)


def test_rows_equal_generate_and_grade_and_traces_hold_every_assessment(experiment: str, tasks: list[Task],
                                                                          holdout: Callable[..., Any]) -> None:
    import mlflow

    verifier = get_verifier("arxiv")
    graders = [VerifierGrader(verifier), KeywordGrader(), build_judge("skill", "test/judge")]
    variants = {"baseline": SkillProgram("Answer the question."),
                "evolved": SkillProgram("Answer the question with the value only.")}
    with mlflow.start_run() as run:
        run_id = run.info.run_id
        rows: list[HoldoutRow] = []
        done = []
        with dspy.context(lm=build_lm(ModelSpec("test/oracle"))):  # thread-local LM reaches MLflow's workers
            for variant, program in variants.items():
                rows += holdout(program, tasks, graders, variant, run_id, num_threads=2,
                                      on_done=lambda: done.append(1))
            expected = [r for variant, program in variants.items()
                        for r in grade(generate(program, tasks), graders, variant)]
    _same(rows, expected)
    assert len(done) == 2 * len(tasks)
    assert {r.composite for r in rows if r.grader == "verifier"} == {1.0}

    # no orphan run: everything is in the one run
    assert len(mlflow.search_runs(experiment_ids=[experiment])) == 1
    assert mlflow.get_run(run_id).info.status == "FINISHED"
    traces = mlflow.search_traces(locations=[experiment], run_id=run_id, return_type="list")
    assert len(traces) == 2 * len(tasks)
    for variant in variants:
        tagged = mlflow.search_traces(locations=[experiment], run_id=run_id, return_type="list",
                                      filter_string=f"tags.variant = '{variant}'")
        assert sorted(t.info.tags["task_id"] for t in tagged) == sorted(TASK_IDS)
    trace = mlflow.get_trace(traces[0].info.trace_id)
    names = [s.name for s in trace.data.spans]
    assert names[0] == f"holdout.{trace.info.tags['variant']}"
    assert any(n.endswith("LM.__call__") for n in names)  # the task LM's call (an LM subclass) is in the trace
    feedback = {a.name: a for a in trace.info.assessments if a.feedback is not None}
    assert set(feedback) == {"verifier", "keyword", "judge"}
    row = next(r for r in rows if r.task_id == trace.info.tags["task_id"] and r.variant == trace.info.tags["variant"]
               and r.grader == "judge")
    assert feedback["judge"].value == row.composite and feedback["judge"].rationale == row.feedback
    expectations = {a.name for a in trace.info.assessments if a.expectation is not None}
    task = next(t for t in tasks if t.task_id == trace.info.tags["task_id"])
    if holdout is batch_holdout:  # the task's fields are tags: expectations would hide the graders in "Compare to"
        assert expectations == set()
        assert task_tags(task) == {"task.kind": task.kind, "task.answer": task.answer,
                                   "task.expected_behavior": task.expected_behavior, "task.group": task.group}
        assert {k: v for k, v in trace.info.tags.items() if k.startswith("task.")} == task_tags(task)
    else:  # mlflow.genai.evaluate stores the data's expectations, which its scorers read
        assert expectations >= {"task_id", "answer"}

    # the same rows again, read from the stored traces of one evaluation (found by its id, a run tag)
    eval_id = mlflow.get_run(run_id).data.tags["holdout.evolved.eval_id"]
    frame = mlflow.search_traces(locations=[experiment], run_id=run_id,
                                 filter_string=f"tags.`holdout.eval_id` = '{eval_id}'")
    _same(rows_from_traces(frame, tasks, graders, "evolved", run_id), [r for r in rows if r.variant == "evolved"])


def test_failures_and_unscored_grades_match_grade_and_a_resumed_run_keeps_its_status(
        experiment: str, tasks: list[Task], holdout: Callable[..., Any]) -> None:
    import mlflow

    client = mlflow.MlflowClient()
    run_id = client.create_run(experiment).info.run_id  # running, but not active in this thread
    graders = [VerifierGrader(get_verifier("arxiv")), Picky(), build_judge("skill", "test/judge-garbage")]
    program = Flaky("Answer.", fail_on=tasks[0].question)
    with dspy.context(lm=build_lm(ModelSpec("test/wrong"))):
        rows = holdout(program, tasks, graders, "evolved", run_id)
        expected = grade(generate(program, tasks), graders, "evolved")
    _same(rows, expected)
    failed = [r for r in rows if r.task_id == tasks[0].task_id]
    assert all(r.error == "RuntimeError: context window exceeded" and r.output == "" for r in failed)
    assert all(r.feedback.startswith("unscored by judge: ") for r in rows if r.grader == "judge")
    assert [r.feedback for r in rows if r.grader == "picky" and r.kind == "year"] == ["unscored by picky"]
    assert any(r.grader == "picky" and math.isnan(r.composite) for r in rows)
    assert client.get_run(run_id).info.status == "RUNNING"
    assert mlflow.active_run() is None
    assert len(mlflow.search_runs(experiment_ids=[experiment])) == 1
    failed_trace = mlflow.search_traces(locations=[experiment], run_id=run_id, return_type="list",
                                        filter_string=f"tags.task_id = '{tasks[0].task_id}'")[0]
    assert failed_trace.info.state == "ERROR"
    assert failed_trace.info.tags[TAG_ERROR] == "RuntimeError: context window exceeded"


def test_grader_exceptions_are_unscored_with_the_reason_like_grade(experiment: str, tasks: list[Task],
                                                                   holdout: Callable[..., Any]) -> None:
    import mlflow

    class Broken:
        name = "judge"

        def grade(self, task: Task, output: str) -> Grade | None:
            raise TimeoutError("judge timed out")

    other = mlflow.MlflowClient().create_run(experiment).info.run_id
    with mlflow.start_run() as active, dspy.context(lm=build_lm(ModelSpec("test/oracle"))):
        rows = holdout(SkillProgram("Answer."), tasks[:2], [Broken()], "baseline", other)
        assert mlflow.active_run().info.run_id == active.info.run_id  # the other run was resumed nested, then left
    assert [r.feedback for r in rows] == ["unscored by judge: TimeoutError: judge timed out"] * 2
    assert len(rows) == 2 and all(math.isnan(r.composite) for r in rows)
    assert len(mlflow.search_traces(locations=[experiment], run_id=other, return_type="list")) == 2
    assert mlflow.search_traces(locations=[experiment], run_id=active.info.run_id, return_type="list") == []
    trace = mlflow.search_traces(locations=[experiment], run_id=other, return_type="list")[0]
    (judged,) = [a for a in trace.info.assessments if a.name == "judge"]
    assert judged.value is None and judged.error.error_message == "TimeoutError: judge timed out"


def test_arguments_are_checked(holdout: Callable[..., Any]) -> None:
    program = SkillProgram("Answer.")
    with pytest.raises(ValueError, match="distinct"):
        holdout(program, [], [KeywordGrader(), KeywordGrader()], "baseline")
    with pytest.raises(ValueError, match="variant"):
        holdout(program, [], [KeywordGrader()], "")
    with pytest.raises(ValueError, match="num_threads"):
        holdout(program, [], [KeywordGrader()], "baseline", num_threads=0)
    assert holdout(program, [], [KeywordGrader()], "baseline") == []
