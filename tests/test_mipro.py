"""MIPROv2 on the skill program with offline LMs: budget mapping, adoption of a proposal, 0-1 scale,
metric-call counting, no demos, and failures that propagate.

The task LM is ``test/lessons`` (right only under a lessons section) and the prompt model ``test/proposer``
(proposes the current body plus a lessons section), so "the proposal wins" is a mechanical check that
the wiring adopts the best candidate, not a finding about MIPROv2 or any real model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dspy
import pytest
from dspy.utils.exceptions import LMError

from harness.engine.graders import FitnessMetric, VerifierGrader
from harness.engine.miprov2 import eval_metric_calls, plan_miprov2, run_miprov2
from harness.engine.optimizer import OptimizationResult, OptimizerSettings, ProgressPoint
from harness.engine.program import SkillProgram
from harness.engine.proposers import LESSONS_HEADING
from harness.models.lm import ModelSpec, build_lm
from harness.models.testing import PROPOSER_SENTENCE, ScriptedEngine
from verifiers import Grade, Splits, Task, get_verifier

BODY = "# arXiv lookup\n\nAnswer the question about the arXiv paper."
BUDGET = 30  # with |train| 6, |val| 3: 6 trials, 4 candidates (see test_plan_examples)


@pytest.fixture(scope="module")
def splits() -> Splits:
    return get_verifier("arxiv").build_dataset(12, 0)  # 6 train / 3 val / 3 holdout


class CountingGrader(VerifierGrader):
    """The arXiv verifier grader, counting calls; raises on call number ``fail_on`` (1-based) if given."""

    def __init__(self, fail_on: int | None = None) -> None:
        super().__init__(get_verifier("arxiv"))
        self.calls = 0
        self.fail_on = fail_on

    def grade(self, task: Task, output: str) -> Grade:
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("grader broke on purpose")
        return super().grade(task, output)


class FailingEngine(ScriptedEngine):
    """A scripted engine that raises for requests matching ``when(system, user)``."""

    def __init__(self, name: str, when: Callable[[str, str], bool]) -> None:
        super().__init__(name)
        self.when = when

    def answer(self, system: str, user: str) -> str:
        if self.when(system, user):
            raise RuntimeError("scripted LM failure")
        return super().answer(system, user)


def scripted_lm(engine: ScriptedEngine) -> dspy.LM:
    return dspy.LM(f"test/{engine.name}", engine=engine, temperature=0.0, max_tokens=256, cache=False,
                   num_retries=0)


def run(splits: Splits, grader: VerifierGrader | None = None, budget: int = BUDGET, task_lm: Any = None,
        prompt_lm: Any = None, on_point: Callable[[ProgressPoint], None] | None = None,
        valset: list[Task] | None = None) -> OptimizationResult:
    metric = FitnessMetric(grader or CountingGrader())
    settings = OptimizerSettings(budget=budget, seed=0,
                            reflection_lm=prompt_lm or build_lm(ModelSpec("test/proposer", temperature=1.0)))
    result = OptimizationResult(instructions=BODY)
    with dspy.context(lm=task_lm or build_lm(ModelSpec("test/lessons"))):
        return run_miprov2(BODY, metric, splits.trainset, valset or splits.valset, settings, result,
                           on_point=on_point)


def val_average(body: str, valset: tuple[Task, ...]) -> float:
    """The metric's 0-1 average of ``body`` on ``valset`` under ``test/lessons``, computed independently."""
    metric = FitnessMetric(VerifierGrader(get_verifier("arxiv")))
    program = SkillProgram(body)
    with dspy.context(lm=build_lm(ModelSpec("test/lessons", cache=False))):
        scores = [metric(dspy.Example(question=t.question, expected=t.answer), program(question=t.question))
                  for t in valset]
    return sum(scores) / len(scores)


# --- budget mapping ---------------------------------------------------------------------------------


def test_plan_examples() -> None:
    small = plan_miprov2(30, trainset_size=6, valset_size=3)
    assert (small.num_trials, small.num_candidates, small.minibatch) == (6, 4, False)
    assert small.metric_calls == 30 and small.eval_calls == 3 * 7 and small.bootstrap_calls == 3 * 3
    default = plan_miprov2(60, trainset_size=36, valset_size=16)  # the CLI default budget on the whole pool
    assert (default.num_trials, default.num_candidates) == (2, 2) and default.metric_calls <= 60


@pytest.mark.parametrize("budget", [35, 60, 100, 250, 1000, 10_000])
@pytest.mark.parametrize("train,val", [(6, 3), (36, 16), (100, 60)])
def test_plan_fits_the_budget_and_mipro_rules(budget: int, train: int, val: int) -> None:
    try:
        plan = plan_miprov2(budget, train, val)
    except ValueError as exc:
        assert "below the smallest MIPROv2 run" in str(exc)
        return
    assert plan.metric_calls <= budget
    assert 2 <= plan.num_candidates <= 18 and 1 <= plan.num_trials <= 27
    assert plan.minibatch == (val > 50)
    assert plan.minibatch_size <= val
    bigger = plan_miprov2(budget * 2, train, val)
    assert bigger.num_trials >= plan.num_trials and bigger.num_candidates >= plan.num_candidates


def test_plan_refuses_too_small_a_budget_and_empty_splits() -> None:
    with pytest.raises(ValueError, match="below the smallest MIPROv2 run"):
        plan_miprov2(34, 36, 16)  # 3 bootstrap + 16 baseline + 16 for one trial = 35
    with pytest.raises(ValueError, match="non-empty"):
        plan_miprov2(100, 6, 0)


def test_eval_metric_calls_minibatch_schedule() -> None:
    # MIPROv2 trial numbers 2..6 are minibatches, 6 is followed by a full eval (7), 8 is the last minibatch and
    # is followed by the final full eval: 1 baseline + 6 minibatches + 2 full evaluations
    assert eval_metric_calls(6, 51, True, 35, 5) == 51 + 6 * 35 + 2 * 51
    assert eval_metric_calls(4, 10, False, 10, 5) == 10 * 5


# --- runs -------------------------------------------------------------------------------------------


def test_mipro_adopts_the_better_proposal_on_the_0_1_scale(splits: Splits) -> None:
    grader = CountingGrader()
    points: list[ProgressPoint] = []
    result = run(splits, grader, on_point=points.append)

    # instructions changed, to the proposer's text (the skill body plus a lessons section)
    assert result.instructions != BODY
    assert result.instructions.startswith(BODY)
    assert LESSONS_HEADING in result.instructions and PROPOSER_SENTENCE in result.instructions

    # candidates table: MIPROv2 index 0 is the unchanged body; scores on the 0-1 scale, equal to the metric's
    # valset average computed independently (MIPROv2's own scores are rounded percentages)
    by_index = {c["index"]: c for c in result.candidates}
    assert by_index[0]["instructions"] == BODY
    assert by_index[0]["val_score"] == pytest.approx(val_average(BODY, splits.valset))
    best = max(result.candidates, key=lambda c: c["val_score"])
    assert best["instructions"] == result.instructions
    assert best["val_score"] == pytest.approx(val_average(result.instructions, splits.valset))
    assert best["val_score"] == pytest.approx(1.0) and by_index[0]["val_score"] < 1.0
    assert all(0.0 <= c["val_score"] <= 1.0 and c["parents"] == [] for c in result.candidates)
    assert set(result.candidates[0]) == {"index", "val_score", "parents", "instructions"}
    assert result.proposals == 3 and result.unusable_proposals == 0

    # progress: one point per MIPROv2 trial, iteration 0 = the unchanged body, best score on the 0-1 scale
    plan = plan_miprov2(BUDGET, len(splits.trainset), len(splits.valset))
    assert points == result.progress
    assert [p.iteration for p in result.progress] == list(range(plan.num_trials + 1))
    assert result.progress[0].best_val_score == pytest.approx(by_index[0]["val_score"])
    assert result.progress[0].num_candidates == 1
    assert all(0.0 <= p.best_val_score <= 1.0 for p in result.progress)
    assert [p.best_val_score for p in result.progress] == sorted(p.best_val_score for p in result.progress)
    assert result.progress[-1].best_val_score == pytest.approx(best["val_score"])
    assert result.progress[-1].num_candidates == len(result.candidates)

    # metric calls: counted by wrapping the metric, the same count the grader saw, within the plan
    assert result.metric_calls == grader.calls == result.progress[-1].metric_calls
    calls = [p.metric_calls for p in result.progress]
    assert all(b - a == len(splits.valset) for a, b in zip(calls, calls[1:], strict=False))
    assert calls[-1] - (calls[0] - len(splits.valset)) == plan.eval_calls  # evaluations exactly as planned
    assert result.metric_calls <= plan.metric_calls <= BUDGET


def test_minibatch_trials_do_not_count_as_valset_scores(splits: Splits) -> None:
    valset = list(splits.valset) * 17  # 51 tasks: above MIPROv2's minibatch threshold
    plan = plan_miprov2(200, len(splits.trainset), len(valset))
    assert plan.minibatch and plan.minibatch_size == 35
    result = run(splits, budget=200, valset=valset)
    assert PROPOSER_SENTENCE in result.instructions
    calls = [p.metric_calls for p in result.progress]
    assert calls[-1] - (calls[0] - len(valset)) == plan.eval_calls
    steps = {b - a for a, b in zip(calls, calls[1:], strict=False)}
    assert steps <= {35, len(valset)} and 35 in steps
    for before, point in zip(result.progress, result.progress[1:], strict=False):
        if point.metric_calls - before.metric_calls == 35:  # a minibatch trial leaves the valset best alone
            assert point.best_val_score == before.best_val_score
    assert all(0.0 <= c["val_score"] <= 1.0 for c in result.candidates)


def test_attached_demos_raise(splits: Splits, monkeypatch: pytest.MonkeyPatch) -> None:
    original = dspy.MIPROv2._optimize_prompt_parameters

    def with_a_demo(self: Any, *args: Any, **kwargs: Any) -> Any:
        program = original(self, *args, **kwargs)
        program.respond.demos = [dspy.Example(question="q", answer="a")]
        return program

    monkeypatch.setattr(dspy.MIPROv2, "_optimize_prompt_parameters", with_a_demo)
    with pytest.raises(RuntimeError, match="few-shot demos"):
        run(splits)


def test_a_metric_failure_propagates(splits: Splits) -> None:
    # one failure on the 5th call: MIPROv2 alone would log it and go on (it tolerates up to max_errors)
    grader = CountingGrader(fail_on=5)
    with pytest.raises(RuntimeError, match="grader broke on purpose"):
        run(splits, grader)
    plan = plan_miprov2(BUDGET, len(splits.trainset), len(splits.valset))
    assert grader.calls < plan.metric_calls  # stopped at the next phase boundary, not after every trial


def test_a_prompt_model_failure_mipro_would_swallow_propagates(splits: Splits) -> None:
    # MIPROv2 alone catches a failed dataset summary and proposes without it
    engine = FailingEngine("proposer", lambda system, user: "`observations`" in system)
    with pytest.raises(LMError, match="scripted LM failure"):
        run(splits, prompt_lm=scripted_lm(engine))


def test_unparseable_proposals_are_unusable_and_the_run_goes_on(splits: Splits) -> None:
    # a prompt model that ignores DSPy's format (the embedded 135M model's usual reply): every proposal step
    # fails to parse; MIPROv2 alone would raise AdapterParseError out of compile
    grader = CountingGrader()
    result = run(splits, grader, prompt_lm=build_lm(ModelSpec("test/proposer-garbage", cache=False)))
    plan = plan_miprov2(BUDGET, len(splits.trainset), len(splits.valset))
    assert result.proposals == plan.num_candidates - 1 == 3
    assert result.unusable_proposals == result.proposals  # every step unparseable, so none usable
    assert result.instructions == BODY  # only the unchanged skill was left to choose
    assert [c["instructions"] for c in result.candidates] == [BODY]
    assert len(result.progress) == plan.num_trials + 1  # every trial still ran
    assert result.metric_calls == grader.calls > 0


def test_a_task_model_failure_propagates(splits: Splits) -> None:
    # MIPROv2 alone skips a failed bootstrap example and scores a failed evaluation example 0
    target = splits.valset[0].question
    engine = FailingEngine("lessons", lambda system, user: user == target)
    with pytest.raises(LMError, match="scripted LM failure"):
        run(splits, task_lm=scripted_lm(engine))


def test_refuses_a_gepa_proposer_and_a_tiny_budget_before_any_call(splits: Splits) -> None:
    grader = CountingGrader()
    settings = OptimizerSettings(budget=BUDGET, seed=0, instruction_proposer=object())
    with pytest.raises(ValueError, match="instruction_proposer"):
        run_miprov2(BODY, FitnessMetric(grader), splits.trainset, splits.valset, settings,
                    OptimizationResult(instructions=BODY))
    with pytest.raises(ValueError, match="below the smallest MIPROv2 run"):
        run(splits, grader, budget=5)
    assert grader.calls == 0


def test_proposer_lm_fills_chat_adapter_fields_and_echoes_anything_else() -> None:
    class Propose(dspy.Signature):
        """Write a better instruction."""

        basic_instruction: str = dspy.InputField()
        tip: str = dspy.InputField()
        proposed_instruction: str = dspy.OutputField()
        rationale: str = dspy.OutputField()

    lm = build_lm(ModelSpec("test/proposer", cache=False))
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
        out = dspy.Predict(Propose)(basic_instruction="Line one.\n\nLine two.", tip="Be brief.")
    assert out.proposed_instruction == f"Line one.\n\nLine two.\n\n{LESSONS_HEADING}\n- {PROPOSER_SENTENCE}"
    assert out.rationale and PROPOSER_SENTENCE not in out.rationale
    assert ScriptedEngine("proposer").answer("plain system text", "plain question?") == "plain question?"
