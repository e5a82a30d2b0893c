"""Settings of one evolution run, checked before anything runs."""

from __future__ import annotations

from dataclasses import dataclass

from harness.fitness import FITNESS_CHOICES
from harness.optimize import OPTIMIZER_CHOICES
from harness.proposers import PROPOSER_CHOICES, resolve_proposer

#: default GEPA budget (metric calls): sized so the README's first command ends in under 10 minutes on
#: 2 cores with the embedded model (see README, "What the first command does")
DEFAULT_BUDGET = 60


class ConfigError(ValueError):
    """A setting is invalid; the message names the setting, the value and what to pass instead."""


@dataclass(frozen=True)
class EvolveConfig:
    """Every option of ``harness evolve`` (each maps 1:1 to an MLproject parameter).

    Attributes:
        skill: skill name (folder name or frontmatter ``name``).
        fitness: keyword | judge | verifier | auto.
        optimizer: gepa.
        budget: GEPA ``max_metric_calls`` (>= 1).
        num_cases: tasks in the dataset (None = the verifier's whole pool).
        seed: seed for the dataset split, GEPA and the LMs.
        task_model / reflection_model: DSPy/LiteLLM model strings or ``embedded``; an empty
            reflection model means none (then ``proposer=auto`` picks the offline ``feedback`` proposer).
        judge_model: the LLM judge's model (fitness=judge, and the judge column of side-by-side experiments).
        api_base: OpenAI-compatible endpoint for non-embedded models.
        skills_dir: where to look for skills first (else $HERMES_AGENT_REPO/skills, then bundled).
        proposer: auto | llm | feedback.
        num_threads: worker threads for evaluation.
        max_tokens: completion cap of the task LM.
        output_dir: local folder for the run's files (dataset, evolved skill, tables); empty = temporary.
        experiment: MLflow experiment for runs not started by ``mlflow run`` (empty = ``skills/<skill>``).
        alpha: significance level of the paired tests behind the verdict.
        cache_dir: DSPy's response cache folder (empty = ``$DSPY_CACHEDIR`` or ``~/.dspy_cache``); a rerun with
            the same models and seed is answered from it.
    """

    skill: str = "arxiv"
    fitness: str = "verifier"
    optimizer: str = "gepa"
    budget: int = DEFAULT_BUDGET
    num_cases: int | None = None
    seed: int = 0
    task_model: str = "embedded"
    reflection_model: str = ""
    judge_model: str = "embedded"
    api_base: str = ""
    skills_dir: str = ""
    proposer: str = "auto"
    num_threads: int = 1
    max_tokens: int = 128
    output_dir: str = ""
    experiment: str = ""
    alpha: float = 0.05
    cache_dir: str = ""
    dry_run: bool = False

    def __post_init__(self) -> None:
        checks = [
            (self.fitness in FITNESS_CHOICES, "fitness", self.fitness, f"one of {', '.join(FITNESS_CHOICES)}"),
            (self.optimizer in OPTIMIZER_CHOICES, "optimizer", self.optimizer,
             f"one of {', '.join(OPTIMIZER_CHOICES)}"),
            (self.proposer in PROPOSER_CHOICES, "proposer", self.proposer, f"one of {', '.join(PROPOSER_CHOICES)}"),
            (self.budget >= 1, "budget", self.budget, "a number of metric calls of at least 1"),
            (self.num_cases is None or self.num_cases >= 3, "num_cases", self.num_cases, "at least 3 (or 0 for all)"),
            (self.num_threads >= 1, "num_threads", self.num_threads, "at least 1"),
            (self.max_tokens >= 1, "max_tokens", self.max_tokens, "at least 1"),
            (0.0 < self.alpha < 0.5, "alpha", self.alpha, "a significance level between 0 and 0.5"),
            (bool(self.task_model.strip()), "task_model", self.task_model, "a model string or 'embedded'"),
        ]
        for ok, name, value, expected in checks:
            if not ok:
                raise ConfigError(f"invalid {name}={value!r}: expected {expected}")
        try:
            self.resolved_proposer()
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def resolved_proposer(self) -> str:
        """``auto`` resolved against the reflection model (see :func:`harness.proposers.resolve_proposer`)."""
        return resolve_proposer(self.proposer, self.reflection_model.strip() or None)

    def experiment_name(self) -> str:
        """MLflow experiment for this run: ``experiment`` or ``skills/<skill>``."""
        return self.experiment or f"skills/{self.skill}"
