"""Run an optimizer over a :class:`~harness.engine.program.SkillProgram` and read the evolved text back.

GEPA is DSPy's ``dspy.GEPA`` (``compile(student, trainset=..., valset=...)``); per-iteration progress
comes from gepa's callback protocol (``gepa.core.callbacks.GEPACallback``), passed through
``gepa_kwargs``.  No silent fallback: an optimizer failure propagates to the caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import dspy

from harness.engine.graders import FitnessMetric, task_to_example
from harness.engine.optimizer import OptimizationResult, OptimizerSettings, ProgressPoint
from harness.engine.program import SkillProgram
from verifiers import Task


class ProgressRecorder:
    """gepa callback that records progress into an :class:`OptimizationResult` and forwards each point.

    Args:
        result: filled in place (so a partially finished run still has its progress).
        on_point: called with each new :class:`ProgressPoint` (e.g. to log it to MLflow at once).
    """

    def __init__(self, result: OptimizationResult, on_point: Callable[[ProgressPoint], None] | None = None):
        self.result = result
        self.on_point = on_point
        self._lock = threading.Lock()
        self._parent: dict[str, str] = {}

    def on_proposal_start(self, event: dict[str, Any]) -> None:
        self._parent = dict(event["parent_candidate"])

    def on_proposal_end(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.result.proposals += 1
            new = event.get("new_instructions") or {}
            usable = any(text.strip() and text != self._parent.get(name) for name, text in new.items())
            if not usable:
                self.result.unusable_proposals += 1

    def on_candidate_accepted(self, event: dict[str, Any]) -> None:
        self.result.accepted += 1

    def on_candidate_rejected(self, event: dict[str, Any]) -> None:
        self.result.rejected += 1

    def on_error(self, event: dict[str, Any]) -> None:
        self.result.errors.append(f"iteration {event.get('iteration')}: {event.get('exception')!r}")

    def on_valset_evaluated(self, event: dict[str, Any]) -> None:
        if event.get("iteration") == 0 and not self.result.progress:
            score = float(event["average_score"])
            point = ProgressPoint(iteration=0, metric_calls=int(event.get("num_examples_evaluated", 0)),
                                  best_val_score=score, num_candidates=1)
            self.result.progress.append(point)
            if self.on_point is not None:
                self.on_point(point)

    def on_iteration_end(self, event: dict[str, Any]) -> None:
        self._record(event["iteration"], event["state"])

    def on_optimization_end(self, event: dict[str, Any]) -> None:
        state = event["final_state"]
        self.result.metric_calls = int(state.total_num_evals)
        self._record(event["total_iterations"], state, final=True)

    def _record(self, iteration: int, state: Any, final: bool = False) -> None:
        scores = list(state.program_full_scores_val_set)
        if not scores:
            return
        point = ProgressPoint(iteration=int(iteration), metric_calls=int(state.total_num_evals),
                              best_val_score=float(max(scores)), num_candidates=len(scores))
        with self._lock:
            if final and self.result.progress and self.result.progress[-1].metric_calls == point.metric_calls:
                return
            self.result.progress.append(point)
        if self.on_point is not None:
            self.on_point(point)

    def record_candidates(self, state: Any, component: str) -> None:
        """Fill ``result.candidates`` from a final gepa state."""
        self.result.candidates = [
            {"index": i, "val_score": float(score), "parents": [p for p in parents if p is not None],
             "instructions": candidate.get(component, "")}
            for i, (candidate, score, parents) in enumerate(
                zip(state.program_candidates, state.program_full_scores_val_set, state.parent_program_for_candidate,
                    strict=False))
        ]


def run_gepa(baseline_body: str, metric: FitnessMetric, trainset: Sequence[Task], valset: Sequence[Task],
             settings: OptimizerSettings, result: OptimizationResult,
             on_point: Callable[[ProgressPoint], None] | None = None) -> OptimizationResult:
    """Evolve ``baseline_body`` with ``dspy.GEPA``; fills and returns ``result``.

    Raises:
        ValueError: a budget below 1.
        Exception: whatever GEPA or the LMs raise; nothing is swallowed.
    """
    if settings.budget < 1:
        raise ValueError(f"budget must be at least 1 metric call, got {settings.budget}")
    recorder = ProgressRecorder(result, on_point)
    state_holder: dict[str, Any] = {}

    class _KeepState:
        def on_optimization_end(self, event: dict[str, Any]) -> None:
            state_holder["state"] = event["final_state"]

    optimizer = dspy.GEPA(
        metric=metric, max_metric_calls=settings.budget, reflection_lm=settings.reflection_lm,
        instruction_proposer=settings.instruction_proposer, num_threads=settings.num_threads,
        reflection_minibatch_size=settings.reflection_minibatch_size, seed=settings.seed, use_merge=False,
        track_stats=False, use_mlflow=False, gepa_kwargs={"callbacks": [recorder, _KeepState()]},
    )
    student = SkillProgram(baseline_body)
    evolved = optimizer.compile(student, trainset=[task_to_example(t) for t in trainset],
                                valset=[task_to_example(t) for t in valset])
    if "state" in state_holder:
        recorder.record_candidates(state_holder["state"], "respond")
    result.instructions = evolved.instructions
    return result


class GepaOptimizer:
    """``dspy.GEPA`` behind the :class:`~harness.engine.optimizer.Optimizer` protocol (see :func:`run_gepa`)."""

    name = "gepa"

    def __init__(self, settings: OptimizerSettings) -> None:
        if settings.budget < 1:
            raise ValueError(f"budget must be at least 1 metric call, got {settings.budget}")
        self.settings = settings

    def compile(self, baseline_body: str, metric: FitnessMetric, trainset: Sequence[Task], valset: Sequence[Task],
                result: OptimizationResult,
                on_point: Callable[[ProgressPoint], None] | None = None) -> OptimizationResult:
        """Evolve ``baseline_body``; fills and returns ``result`` (see :func:`run_gepa`)."""
        return run_gepa(baseline_body, metric, trainset, valset, self.settings, result, on_point)
