"""The one shape every optimizer has, and what it produces.

In DSPy's manner an optimizer takes its settings in the constructor and does the work in ``compile``; here
``compile`` evolves a skill body under a fitness metric and fills an :class:`OptimizationResult` in place, so a
run that stops part-way still holds its progress.  The engine talks to optimizers only through
:class:`Optimizer`; the registry (:mod:`harness.engine.registry`) maps names to implementations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from verifiers import Task

if TYPE_CHECKING:
    import dspy

    from harness.engine.graders import FitnessMetric


@dataclass(frozen=True)
class ProgressPoint:
    """Best validation score after one GEPA iteration.

    Attributes:
        iteration: GEPA iteration number (0 = the seed candidate's valset evaluation).
        metric_calls: metric calls used so far.
        best_val_score: best average valset score of any candidate so far, in [0, 1].
        num_candidates: candidates in the pool so far.
    """

    iteration: int
    metric_calls: int
    best_val_score: float
    num_candidates: int


@dataclass
class OptimizationResult:
    """What an optimizer run produced.

    Attributes:
        instructions: the best candidate's instruction text (the evolved skill body).
        progress: one :class:`ProgressPoint` per iteration.
        candidates: one dict per candidate: ``index``, ``val_score``, ``parents``, ``instructions``.
        proposals: proposal steps run; ``unusable_proposals`` of them gave no usable new text (empty or
            identical to the parent); ``accepted`` / ``rejected`` candidates after minibatch evaluation.
        metric_calls: metric calls spent.
        errors: error messages GEPA reported during optimisation.
    """

    instructions: str
    progress: list[ProgressPoint] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    proposals: int = 0
    unusable_proposals: int = 0
    accepted: int = 0
    rejected: int = 0
    metric_calls: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class OptimizerSettings:
    """Settings shared by every optimizer.

    Attributes:
        budget: metric calls the optimizer may spend (GEPA's ``max_metric_calls``; MIPROv2 maps it to trials).
        seed: seed of the optimizer's own randomness.
        reflection_lm: the reflection / prompt-proposal LM (None: GEPA needs a custom proposer, MIPROv2 uses the
            task LM).
        instruction_proposer: a custom GEPA ``ProposalFn`` (the ``feedback`` proposer) or None; MIPROv2 refuses one.
        num_threads: parallel evaluations.
        reflection_minibatch_size: examples per GEPA reflection step.
    """

    budget: int
    seed: int
    reflection_lm: dspy.LM | None = None
    instruction_proposer: Any = None
    num_threads: int = 1
    reflection_minibatch_size: int = 3


class Optimizer(Protocol):
    """An optimizer of skill bodies: constructed with :class:`OptimizerSettings`, run by ``compile``."""

    name: str

    def compile(self, baseline_body: str, metric: FitnessMetric, trainset: Sequence[Task], valset: Sequence[Task],
                result: OptimizationResult,
                on_point: Callable[[ProgressPoint], None] | None = None) -> OptimizationResult:
        """Evolve ``baseline_body``; fill and return ``result`` (``result.instructions`` = the best body).

        Raises:
            Exception: whatever the optimizer or the LMs raise; nothing is swallowed.
        """
        ...
