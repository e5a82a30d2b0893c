"""Graders as MLflow scorers: values, rationales, assessment errors, and a standalone mlflow.genai.evaluate."""

from __future__ import annotations

import math
from pathlib import Path

import dspy
import pytest
from mlflow.entities import Feedback

from harness.engine.graders import KeywordGrader
from harness.tracking.scorers import (
    GRADER_ERROR_CODE,
    UNSCORED_ERROR_CODE,
    arxiv_verifier_scorer,
    grader_scorer,
    output_text,
    task_from_row,
)
from verifiers import Grade, Task, get_verifier


def _task(task_id: str) -> Task:
    return next(t for t in get_verifier("arxiv").tasks() if t.task_id == task_id)


class NeverGrades:
    """A grader that can never grade (like a judge whose reply cannot be parsed)."""

    name = "judge"

    def grade(self, task: Task, output: str) -> Grade | None:
        return None


def test_verifier_scorer_correct_output_scores_one_with_feedback_as_rationale() -> None:
    task = _task("1706.03762/id")
    fb = arxiv_verifier_scorer().run(inputs={"question": task.question}, outputs="The answer is 1706.03762.")
    expected = get_verifier("arxiv").score(task.question, "The answer is 1706.03762.")
    assert isinstance(fb, Feedback)
    assert fb.name == "verifier"
    assert fb.value == 1.0
    assert fb.rationale == expected.feedback
    assert fb.error is None
    assert {k: float(v) for k, v in fb.metadata.items() if k != "grader"} == {
        "correctness": 1.0, "well_formed": 1.0, "conciseness": 1.0}
    assert fb.source.source_type == "CODE"


def test_verifier_scorer_hedged_wrong_and_unknown() -> None:
    scorer = arxiv_verifier_scorer()
    task = _task("1706.03762/id")
    hedged = scorer.run(inputs={"question": task.question}, outputs={"answer": "Either 1706.03762 or 1706.03799."})
    assert hedged.value == pytest.approx(0.75)
    assert float(hedged.metadata["correctness"]) == 0.5
    assert "commit to one" in hedged.rationale
    wrong = scorer.run(inputs={"question": task.question}, outputs="1706.03799")
    assert wrong.value == pytest.approx(0.5)
    unknown = scorer.run(inputs={"question": "What is the airspeed of an unladen swallow?"}, outputs="11 m/s")
    assert unknown.value == 0.0
    assert "no ground truth" in unknown.rationale


def test_keyword_scorer_follows_the_keyword_formula() -> None:
    scorer = grader_scorer(KeywordGrader())
    exp = {"expected_behavior": "alpha beta gamma delta"}
    fb = scorer.run(inputs={"question": "q"}, outputs="Alpha beta zeta", expectations=exp)
    assert fb.name == "keyword"
    assert fb.value == pytest.approx(0.3 + 0.7 * 0.5)
    assert float(fb.metadata["correctness"]) == 0.5
    assert fb.rationale == "score 0.65"
    empty = scorer.run(inputs={"question": "q"}, outputs="", expectations=exp)
    assert empty.value == 0.0 and empty.rationale == "score 0.00"
    # a failed prediction (outputs None) is graded as the empty output
    assert scorer.run(inputs={"question": "q"}, outputs=None, expectations=exp).value == 0.0


def test_sub_scores_round_trip_exactly_through_metadata_strings() -> None:
    fb = grader_scorer(KeywordGrader()).run(inputs={"question": "q"}, outputs="a b c",
                                            expectations={"expected_behavior": "a b c d e f g"})
    grade = KeywordGrader().grade(Task("", "", "q", "a b c d e f g", "", ""), "a b c")
    assert fb.value == grade.composite
    assert float(fb.metadata["correctness"]) == grade.correctness


def test_unscored_grade_is_an_assessment_error_not_a_number() -> None:
    fb = grader_scorer(NeverGrades()).run(inputs={"question": "q"}, outputs="anything")
    assert fb.value is None
    assert fb.error is not None and fb.error.error_code == UNSCORED_ERROR_CODE
    assert fb.error.error_message == "unscored by judge"  # the feedback harness.engine.holdout.grade writes
    assert fb.source.source_type == "LLM_JUDGE"


def test_a_grader_that_raises_gives_an_assessment_error_naming_the_exception() -> None:
    class Broken:
        name = "judge"

        def grade(self, task: Task, output: str) -> Grade | None:
            raise ConnectionError("judge endpoint unreachable")

    fb = grader_scorer(Broken()).run(inputs={"question": "q"}, outputs="x")
    assert fb.value is None
    assert fb.error.error_code == GRADER_ERROR_CODE
    assert fb.error.error_message == "ConnectionError: judge endpoint unreachable"
    assert "ConnectionError" in fb.error.stack_trace


def test_judge_scorer_with_offline_test_judges() -> None:
    from helpers import build_judge

    task = _task("1706.03762/year")
    row = {"inputs": {"question": task.question},
           "expectations": {"task_id": task.task_id, "expected_behavior": task.expected_behavior}}
    good = grader_scorer(build_judge("skill", "test/judge")).run(outputs="2017", **row)
    assert good.value == pytest.approx(1.0) and good.rationale.startswith("judge: correctness 1.00")
    garbage = grader_scorer(build_judge("skill", "test/judge-garbage")).run(outputs="2017", **row)
    assert garbage.value is None and garbage.error.error_code == UNSCORED_ERROR_CODE
    assert garbage.error.error_message.startswith("unscored by judge: ")  # with the judge's parse failure


def test_rows_rebuild_tasks_and_outputs() -> None:
    task = task_from_row({"question": "Q"}, {"task_id": "t", "expected": "42", "kind": "year", "group": 7})
    assert task == Task("t", "year", "Q", "", "42", "7")
    assert task_from_row({"question": "Q"}, None) == Task("", "", "Q", "", "", "")
    with pytest.raises(ValueError, match="question"):
        task_from_row({"query": "Q"}, None)
    assert output_text(dspy.Prediction(answer="x")) == "x"
    assert output_text({"answer": None}) == ""
    with pytest.raises(TypeError, match="answer"):
        output_text({"text": "x"})
    # a malformed row is a scorer error, recorded by MLflow, never a number
    with pytest.raises(TypeError):
        arxiv_verifier_scorer()(inputs={"question": "q"}, outputs=3)


def test_standalone_genai_evaluate_with_the_arxiv_verifier_scorer(mlflow_store: str, tmp_path: Path) -> None:
    import mlflow

    cases = [(_task("1706.03762/id"), "The answer is 1706.03762.", 1.0),
             (_task("1706.03762/id"), "Either 1706.03762 or 1706.03799.", 0.75),
             (_task("1412.6980/year"), "It was 1999.", 0.5)]
    unknown_question = "Which paper introduced the Flux Capacitor?"
    answers = {f"{t.question}#{i}": out for i, (t, out, _) in enumerate(cases)}
    data = [{"inputs": {"question": t.question, "case": i}} for i, (t, _, _) in enumerate(cases)]
    data.append({"inputs": {"question": unknown_question, "case": 3}})

    def predict_fn(question: str, case: int) -> dict[str, str]:
        return {"answer": answers.get(f"{question}#{case}", "no idea")}

    mlflow.set_experiment(experiment_id=mlflow.create_experiment(
        "standalone", artifact_location=(tmp_path / "artifacts").as_uri()))
    result = mlflow.genai.evaluate(data=data, predict_fn=predict_fn,
                                   scorers=[arxiv_verifier_scorer(), grader_scorer(NeverGrades())])
    frame = result.result_df
    values = {int(r["request"]["case"]): r["verifier/value"] for r in frame.to_dict(orient="records")}
    assert values == {0: 1.0, 1: pytest.approx(0.75), 2: pytest.approx(0.5), 3: 0.0}
    rationales = {int(r["request"]["case"]): r["verifier/rationale"] for r in frame.to_dict(orient="records")}
    assert "no ground truth" in rationales[3]
    assert all(v is None or (isinstance(v, float) and math.isnan(v)) for v in frame["judge/value"])
    assert result.metrics["verifier/mean"] == pytest.approx((1.0 + 0.75 + 0.5 + 0.0) / 4)
    assert "judge/mean" not in result.metrics
