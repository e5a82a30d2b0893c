"""Fitness signals as graders, and the adapter that turns a grader into a DSPy metric.

A grader maps ``(task, output)`` to a :class:`verifiers.Grade`, or to :class:`verifiers.Unscored` with the reason
when it could not grade (``None`` is read as unscored without a reason).  :func:`unscored_feedback` is the one
spelling of the text an unscored grade records.
The engine depends only on the :class:`Grader` protocol; concrete verifiers come from the registry.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import dspy

from verifiers import Grade, Task, Unscored, Verifier


@runtime_checkable
class Grader(Protocol):
    """Grades one output of one task.

    ``grade`` returns a :class:`Grade` whose ``composite`` is the fitness score in [0, 1], or an
    :class:`~verifiers.Unscored` with its reason when no grade can be made (the caller records it as unscored,
    never as a number).
    """

    name: str

    def grade(self, task: Task, output: str) -> Grade | Unscored:
        """Grade ``output`` for ``task``."""
        ...


def unscored_feedback(grader: str, reason: str = "") -> str:
    """The feedback of an unscored grade: ``"unscored by <grader>"``, then ``": <reason>"`` when there is one."""
    return f"unscored by {grader}" + (f": {reason}" if reason else "")


def split_grade(result: Grade | Unscored | None) -> tuple[Grade | None, str]:
    """``(grade, "")`` for a grade; ``(None, reason)`` for an :class:`~verifiers.Unscored` (or ``None``)."""
    if isinstance(result, Grade):
        return result, ""
    return None, result.reason if isinstance(result, Unscored) else ""


class KeywordGrader:
    """The legacy keyword-overlap heuristic, kept unchanged as the control.

    Lower-case both texts and split on whitespace; ``overlap = |rubric words ∩ output words| / |rubric
    words|``; ``score = 0.3 + 0.7 * overlap``; an empty output scores 0.  Its feedback is only its score,
    which is all it gives an optimizer today.  Grade fields: correctness = overlap, well_formed = 1 for a
    non-empty output, conciseness = well_formed, composite = score.
    """

    name = "keyword"

    def grade(self, task: Task, output: str) -> Grade:
        """Score ``output`` against ``task.expected_behavior`` (the rubric)."""
        out_words = set(output.lower().split())
        if not out_words:
            return Grade(0.0, 0.0, 0.0, 0.0, "score 0.00")
        rubric = set(task.expected_behavior.lower().split())
        overlap = len(rubric & out_words) / len(rubric) if rubric else 0.0
        score = 0.3 + 0.7 * overlap
        return Grade(overlap, 1.0, 1.0, score, f"score {score:.2f}")


class VerifierGrader:
    """Adapts a :class:`verifiers.Verifier` to the :class:`Grader` protocol (``verifier.score``)."""

    name = "verifier"

    def __init__(self, verifier: Verifier) -> None:
        self.verifier = verifier

    def grade(self, task: Task, output: str) -> Grade | Unscored:
        """The verifier's grade of ``output`` for the task whose question is ``task.question``; unscored for a
        task the verifier says it cannot grade (a task-file task without checks: ``verifier.gradable``)."""
        gradable = getattr(self.verifier, "gradable", None)
        if gradable is not None and not gradable(task.question):
            return Unscored(f"task {task.task_id!r} has no checks, so the verifier cannot grade it")
        return self.verifier.score(task.question, output)


def task_to_example(task: Task) -> dspy.Example:
    """A ``dspy.Example`` with ``question`` as its only input and the task's fields alongside."""
    return dspy.Example(question=task.question, task_id=task.task_id, kind=task.kind,
                        expected_behavior=task.expected_behavior, expected=task.answer,
                        group=task.group).with_inputs("question")


def example_to_task(example: Any) -> Task:
    """Inverse of :func:`task_to_example`; missing fields become empty strings (an unknown task)."""
    def get(key: str) -> str:
        value = example.get(key) if hasattr(example, "get") else getattr(example, key, None)
        return "" if value is None else str(value)

    return Task(task_id=get("task_id"), kind=get("kind"), question=get("question"),
                expected_behavior=get("expected_behavior"), answer=get("expected"), group=get("group"))


def prediction_text(pred: Any) -> str:
    """The answer text of a prediction (``pred.answer``), ``""`` when absent."""
    value = pred.get("answer") if hasattr(pred, "get") else getattr(pred, "answer", None)
    return "" if value is None else str(value)


class FitnessMetric:
    """A DSPy metric built from a :class:`Grader`, for every calling convention DSPy uses.

    * ``metric(gold, pred)`` and ``metric(gold, pred, trace)`` return the score as a float in [0, 1];
    * ``metric(gold, pred, trace, pred_name, pred_trace)`` (GEPA's feedback convention) returns
      ``dspy.Prediction(score=float, feedback=str)``.

    An ungradeable output (the grader returned :class:`~verifiers.Unscored`) scores 0.0 for the optimizer, with feedback
    saying it was unscored, and is counted in ``unscored``; ``grades`` counts every grading (the optimizer's
    metric calls and a proposer's own gradings).
    """

    def __init__(self, grader: Grader) -> None:
        self.grader = grader
        self.unscored = 0
        self.grades = 0

    def score_and_feedback(self, gold: Any, pred: Any) -> tuple[float, str]:
        """``(score, feedback)`` of one prediction."""
        self.grades += 1
        grade, reason = split_grade(self.grader.grade(example_to_task(gold), prediction_text(pred)))
        if grade is None:
            self.unscored += 1
            return 0.0, unscored_feedback(self.grader.name, reason)
        return grade.composite, grade.feedback

    def __call__(self, gold: Any, pred: Any, trace: Any = None, pred_name: str | None = None,
                 pred_trace: Any = None) -> float | dspy.Prediction:
        score, feedback = self.score_and_feedback(gold, pred)
        if pred_name is None and pred_trace is None:
            return score
        return dspy.Prediction(score=score, feedback=feedback)
