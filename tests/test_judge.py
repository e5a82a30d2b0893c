"""The LLM judge: strict reply parsing, one cached judgement per (task, output), unscored never invented."""

from __future__ import annotations

import threading

import dspy
import pytest
from dspy.utils.exceptions import LMError

from harness.engine.graders import FitnessMetric, task_to_example
from harness.engine.judge import (
    JUDGE_INSTRUCTIONS,
    JudgeGrader,
    Judgement,
    judge_feedback,
    judge_request,
    parse_judgement,
)
from harness.models.lm import ModelSpec, build_lm
from verifiers import COMPOSITE_WEIGHTS, Task, Unscored, get_verifier

SKILL = "Answer the question that was asked, in one short sentence."

WELL_FORMED = "correctness: 0.8\nprocedure: 1\nconciseness: 0.6\nfeedback: Right title, a little wordy."


def _task(kind: str = "year") -> Task:
    return next(t for t in get_verifier("arxiv").tasks() if t.kind == kind)


def _judge(model: str = "test/judge") -> tuple[JudgeGrader, dspy.LM]:
    lm = build_lm(ModelSpec(model, cache=False))
    return JudgeGrader(lm, SKILL), lm


# ------------------------------------------------------------------------------------------------
# parse_judgement
# ------------------------------------------------------------------------------------------------


def test_parse_well_formed_lines() -> None:
    grade, reason = parse_judgement(WELL_FORMED)
    assert reason == ""
    assert grade is not None
    assert (grade.correctness, grade.well_formed, grade.conciseness) == (0.8, 1.0, 0.6)
    assert grade.feedback == "judge: correctness 0.80, procedure 1.00, conciseness 0.60. Right title, a little wordy."


def test_parse_composite_uses_verifier_weights() -> None:
    grade, _ = parse_judgement(WELL_FORMED)
    assert grade is not None
    assert COMPOSITE_WEIGHTS == (0.5, 0.3, 0.2)
    assert grade.composite == pytest.approx(0.5 * 0.8 + 0.3 * 1.0 + 0.2 * 0.6)
    only_procedure, _ = parse_judgement("correctness: 0\nprocedure: 1\nconciseness: 0\nfeedback: x")
    assert only_procedure is not None and only_procedure.composite == pytest.approx(0.3)


def test_parse_json() -> None:
    reply = 'Here you go: {"correctness": 1, "procedure": "0.5", "conciseness": 0.25, "feedback": "ok"} bye'
    grade, reason = parse_judgement(reply)
    assert grade is not None, reason
    assert (grade.correctness, grade.well_formed, grade.conciseness) == (1.0, 0.5, 0.25)
    assert grade.feedback.endswith("ok")


def test_parse_ignores_chatter_and_markdown_around_lines() -> None:
    reply = ("Sure! Here is my judgement of the output.\n\n"
             "**Correctness**: 1\n- Procedure: 0.5\nCONCISENESS = 0.75.\nFeedback: Correct and short.\n\n"
             "Let me know if you need anything else.")
    grade, reason = parse_judgement(reply)
    assert grade is not None, reason
    assert (grade.correctness, grade.well_formed, grade.conciseness) == (1.0, 0.5, 0.75)
    assert grade.feedback.endswith("Correct and short.")


@pytest.mark.parametrize("reply, scores, feedback", [
    ("0 1 1 wrong year; the rubric expects 2017", (0.0, 1.0, 1.0), "wrong year; the rubric expects 2017"),
    ("Grade:\n1, 0.5, 0.25 - right title, a little long.\nThanks!", (1.0, 0.5, 0.25), "right title, a little long."),
    ("1 1 1", (1.0, 1.0, 1.0), ""),
    ("**1 0 0.5** off-topic", (1.0, 0.0, 0.5), "off-topic"),
])
def test_parse_terse_line(reply: str, scores: tuple[float, float, float], feedback: str) -> None:
    grade, reason = parse_judgement(reply)
    assert grade is not None, reason
    assert (grade.correctness, grade.well_formed, grade.conciseness) == scores
    assert grade.feedback == judge_feedback(*scores, feedback)


@pytest.mark.parametrize("reply, reason_part", [
    ("1 1 7 fine", "conciseness value '7' is outside [0, 1]"),
    ("2017 was the year", "missing keys"),
    ("1 1 fine", "missing keys"),
    ("correctness: 1\n1 1 1 fine", "missing keys: procedure, conciseness"),  # named keys win over a terse line
])
def test_parse_terse_line_malformed_is_unscored(reply: str, reason_part: str) -> None:
    grade, reason = parse_judgement(reply)
    assert grade is None and reason_part in reason


def test_parse_fraction_is_documented_as_ratio() -> None:
    grade, _ = parse_judgement("correctness: 8/10\nprocedure: 1/1\nconciseness: 3/4\nfeedback: fine")
    assert grade is not None
    assert (grade.correctness, grade.well_formed, grade.conciseness) == (0.8, 1.0, 0.75)


@pytest.mark.parametrize("reply, reason_part", [
    ("correctness: 1\nconciseness: 1\nfeedback: good", "missing key: procedure"),
    ("correctness: 1\nprocedure: 1\nconciseness: 1", "missing key: feedback"),
    ('{"correctness": 1, "feedback": "good"}', "missing keys: procedure, conciseness"),
    ("correctness: 1.5\nprocedure: 1\nconciseness: 1\nfeedback: good", "outside [0, 1]"),
    ("correctness: 8\nprocedure: 1\nconciseness: 1\nfeedback: good", "outside [0, 1]"),
    ("correctness: 12/10\nprocedure: 1\nconciseness: 1\nfeedback: good", "outside [0, 1]"),
    ('{"correctness": -0.1, "procedure": 1, "conciseness": 1, "feedback": ""}', "outside [0, 1]"),
    ("correctness: high\nprocedure: 1\nconciseness: 1\nfeedback: good", "not a number"),
    ("correctness: 1 out of 10\nprocedure: 1\nconciseness: 1\nfeedback: good", "not a number"),
    ("correctness: 80%\nprocedure: 1\nconciseness: 1\nfeedback: good", "not a number"),
    ('{"correctness": true, "procedure": 1, "conciseness": 1, "feedback": ""}', "not a number"),
    ("correctness: 1\ncorrectness: 0\nprocedure: 1\nconciseness: 1\nfeedback: good", "conflicting"),
    ("", "empty"),
    ("   \n ", "empty"),
    ("The output looks great, I would give it a nine.", "missing keys"),
])
def test_parse_malformed_is_unscored(reply: str, reason_part: str) -> None:
    grade, reason = parse_judgement(reply)
    assert grade is None
    assert reason_part in reason


# ------------------------------------------------------------------------------------------------
# JudgeGrader with the scripted test/judge model
# ------------------------------------------------------------------------------------------------


def test_request_holds_skill_question_rubric_and_output() -> None:
    task = _task("title")
    request = judge_request(SKILL, task, "my output")
    for part in (SKILL, task.question, task.expected_behavior, "my output"):
        assert part in request
    assert "correctness:" in JUDGE_INSTRUCTIONS and "feedback:" in JUDGE_INSTRUCTIONS


def test_correct_output_scores_one_and_wrong_scores_zero() -> None:
    judge, _ = _judge()
    task = _task("year")
    right = judge.grade(task, f"It was submitted in {task.answer}.")
    wrong = judge.grade(task, "It was submitted in 1999.")
    assert right is not None and wrong is not None
    assert right.correctness == 1.0 and wrong.correctness == 0.0
    assert right.composite > wrong.composite
    assert judge.name == "judge" and judge.unscored == 0


def test_grade_twice_makes_one_lm_call_and_keeps_score_and_feedback_together() -> None:
    judge, lm = _judge()
    task = _task("author")
    output = f"The first author is {task.answer}."
    first = judge.grade(task, output)
    second = judge.grade(task, output)
    assert len(lm.history) == 1 and lm.engine.calls == 1
    assert first is second

    metric = FitnessMetric(judge)
    result = metric(task_to_example(task), dspy.Prediction(answer=output), None, "respond", None)
    assert len(lm.history) == 1
    assert isinstance(result, dspy.Prediction)
    cached = judge.judgement(task, output)
    assert isinstance(cached, Judgement) and cached.grade is not None and cached.error == ""
    assert result.score == cached.grade.composite
    assert result.feedback == cached.grade.feedback
    assert result.feedback.startswith("judge: correctness 1.00, procedure 1.00, conciseness 1.00.")
    assert task.answer in result.feedback


def test_different_outputs_are_judged_separately() -> None:
    judge, lm = _judge()
    task = _task("id")
    judge.grade(task, task.answer)
    judge.grade(task, "9912.00001")
    assert lm.engine.calls == 2


def test_garbage_reply_is_unscored_not_invented() -> None:
    judge, lm = _judge("test/judge-garbage")
    task = _task("title")
    unscored = judge.grade(task, task.answer)
    assert isinstance(unscored, Unscored)  # the grader returns its reason, as inspect_ai's unscored Score
    assert judge.unscored == 1
    (task_id, reason, excerpt), = judge.unscored_examples
    assert unscored.reason == reason
    assert task_id == task.task_id and "missing" in reason and excerpt
    assert judge.judgement(task, task.answer).raw_reply.startswith(excerpt)

    metric = FitnessMetric(judge)
    result = metric(task_to_example(task), dspy.Prediction(answer=task.answer), None, "respond", None)
    assert result.score == 0.0
    assert "unscored" in result.feedback
    assert metric.unscored == 1
    assert judge.unscored == 1 and lm.engine.calls == 1


def test_lm_errors_propagate_and_are_not_cached() -> None:
    class Boom(RuntimeError):
        pass

    class FailingEngine:
        calls = 0

        def complete(self, request: object) -> object:
            FailingEngine.calls += 1
            raise Boom("network down")

    lm = dspy.LM("test/failing", engine=FailingEngine(), cache=False, num_retries=0)
    judge = JudgeGrader(lm, SKILL)
    task = _task("year")
    for _ in range(2):
        with pytest.raises(LMError) as info:
            judge.grade(task, "2017")
        assert isinstance(info.value.__cause__, Boom)
    assert FailingEngine.calls == 2 and judge.unscored == 0


def test_eight_threads_on_one_pair_make_one_lm_call() -> None:
    judge, lm = _judge()
    lm.engine.delay_s = 0.05  # widen the race window
    task = _task("title")
    output = f"The title is {task.answer}."
    barrier = threading.Barrier(8)
    grades: list[object] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            barrier.wait()
            grades.append(judge.grade(task, output))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert lm.engine.calls == 1
    assert len(grades) == 8 and all(g is grades[0] for g in grades) and grades[0] is not None
