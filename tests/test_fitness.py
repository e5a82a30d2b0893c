"""Keyword formula, verifier grader and the metric adapter's three calling conventions."""

from __future__ import annotations

import dspy
import pytest

from harness.engine.graders import FitnessMetric, KeywordGrader, VerifierGrader, example_to_task, task_to_example
from verifiers import Grade, Task, get_verifier

RUBRIC = Task("t/1", "id", "Q?", "states the id 1706.03762 and nothing else", "1706.03762", "1706.03762")


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("", 0.0),                                            # empty output scores 0
        ("   ", 0.0),                                         # whitespace only is empty
        ("banana", 0.3),                                      # no overlap: 0.3 + 0.7*0
        ("states the id", 0.3 + 0.7 * 3 / 7),                 # 3 of 7 rubric words
        ("STATES the ID 1706.03762", 0.3 + 0.7 * 4 / 7),      # lower-cased before comparing
        ("states the id 1706.03762 and nothing else", 1.0),   # full overlap
        ("the the the", 0.3 + 0.7 * 1 / 7),                   # a repeated word counts once
    ],
)
def test_keyword_formula(output: str, expected: float) -> None:
    grade = KeywordGrader().grade(RUBRIC, output)
    assert grade.composite == pytest.approx(expected)
    assert grade.feedback == f"score {expected:.2f}"


def test_keyword_splits_on_whitespace_only() -> None:
    # punctuation is part of a word in the legacy heuristic: "id," is not "id"
    assert KeywordGrader().grade(RUBRIC, "id,").composite == pytest.approx(0.3)


def _arxiv_task(kind: str = "id") -> Task:
    return next(t for t in get_verifier("arxiv").tasks() if t.kind == kind)


def test_metric_float_conventions() -> None:
    task = _arxiv_task("id")
    metric = FitnessMetric(VerifierGrader(get_verifier("arxiv")))
    gold = task_to_example(task)
    right = dspy.Prediction(answer=f"The ID is {task.answer}.")
    wrong = dspy.Prediction(answer="The ID is 9901.00001.")
    assert metric(gold, right) == pytest.approx(1.0)
    assert metric(gold, right, None) == pytest.approx(1.0)
    assert metric(gold, wrong, None) == pytest.approx(0.5)
    assert isinstance(metric(gold, wrong), float)


def test_metric_gepa_convention_returns_score_and_feedback() -> None:
    task = _arxiv_task("id")
    metric = FitnessMetric(VerifierGrader(get_verifier("arxiv")))
    out = metric(task_to_example(task), dspy.Prediction(answer="9901.00001"), None, "respond", [])
    assert isinstance(out, dspy.Prediction)
    assert out.score == pytest.approx(0.5)
    assert task.answer in out.feedback and "9901.00001" in out.feedback


def test_metric_unknown_task_scores_zero_with_feedback() -> None:
    metric = FitnessMetric(VerifierGrader(get_verifier("arxiv")))
    gold = dspy.Example(question="What is the capital of France?").with_inputs("question")
    out = metric(gold, dspy.Prediction(answer="Paris"), None, "respond", None)
    assert out.score == 0.0
    assert "no ground truth" in out.feedback.lower()


class _Unscoring:
    name = "judge"

    def grade(self, task: Task, output: str) -> Grade | None:
        return None


def test_metric_unscored_is_counted_not_invented() -> None:
    metric = FitnessMetric(_Unscoring())
    out = metric(task_to_example(RUBRIC), dspy.Prediction(answer="x"), None, "respond", None)
    assert out.score == 0.0 and "unscored" in out.feedback
    assert metric.unscored == 1


def test_example_round_trip() -> None:
    task = _arxiv_task("year")
    assert example_to_task(task_to_example(task)) == task
