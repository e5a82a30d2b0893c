"""``--dry-run``: check everything a run needs and say what it would do, without running it.

Loads the skill, builds and saves the dataset, resolves every model and checks it answers one call, checks
the tracking store, and returns the plan: sizes, budget, models and the LM calls to expect.  It creates no
MLflow run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.config import EvolveConfig
from harness.engine.registry import resolve_fitness
from harness.models.roles import model_specs
from harness.run import prepare

#: GEPA's default reflection minibatch (dspy.GEPA(reflection_minibatch_size=3))
MINIBATCH = 3


@dataclass(frozen=True)
class Plan:
    """What a run would do: ``rows`` of (what, value) to print, and the expected LM calls per role."""

    rows: list[tuple[str, str]]
    expected_calls: dict[str, int]


def expected_calls(config: EvolveConfig, holdout: int, valset: int, arms: int, judge: bool) -> dict[str, int]:
    """Upper estimates of LM calls by role for ``arms`` optimisations sharing one baseline.

    Task LM: per arm the metric-call budget (every metric call is one program call) plus GEPA's overshoot
    of at most ``2 × MINIBATCH + valset`` (GEPA checks the budget before an iteration, which evaluates two
    minibatches and, for a better candidate, the whole valset; MIPROv2's plan stays within the budget),
    then the holdout once per arm plus the shared baseline's.  Reflection: at most one proposal per GEPA
    iteration, and an iteration spends at least ``2 × MINIBATCH`` metric calls.  Judge: one call per holdout
    output, plus one per metric call where the judge is the fitness (cached per output).  The no-skill control
    (``config.control``) answers the holdout once per experiment, shared like the baseline: ``holdout`` more task
    calls, and as many judge calls when there is a judge.
    """
    per_arm = config.budget + 2 * MINIBATCH + valset
    shared = 2 if config.control else 1  # the baseline's holdout, and the control's
    calls = {"task": arms * (per_arm + holdout) + shared * holdout}
    if config.resolved_proposer() == "llm":
        calls["reflection"] = arms * max(1, config.budget // (2 * MINIBATCH))
    if judge:
        calls["judge"] = (arms + shared) * holdout + (per_arm if config.fitness == "judge" else 0)
    return calls


def plan(config: EvolveConfig, fitnesses: Sequence[str], optimizers: Sequence[str] = ("gepa",),
         seeds: int = 1) -> Plan:
    """Check the skill, dataset, models and store; return what the run would do.

    Raises:
        harness.skills.files.SkillError, verifiers.DatasetError, verifiers.UnknownVerifierError,
        harness.models.lm.ModelError, harness.tracking.tracker.TrackingError: whatever would stop the real run.
    """
    from harness.models.preflight import check_models
    from harness.tracking.store import check_tracking_store

    setup = prepare(config)
    resolved = [resolve_fitness(f, setup.source or setup.skill.name) for f in fitnesses]
    judge = "judge" in resolved or len(resolved) * len(optimizers) * seeds > 1
    specs = {role: spec for role, spec in model_specs(config, judge=judge).items() if spec is not None}
    reports = check_models(specs)
    uri = check_tracking_store()
    arms = len(resolved) * len(optimizers) * seeds
    calls = expected_calls(config, len(setup.splits.holdout), len(setup.splits.valset), arms, judge)
    rows = [
        ("skill", f"{setup.skill.name} ({setup.skill.path}, sha256 {setup.skill.sha256[:12]})"),
        *([("tasks", setup.source.describe())] if setup.source else []),
        ("fitness", ", ".join(resolved)),
        ("optimizer", ", ".join(optimizers) + f" ({config.resolved_proposer()} proposer)"),
        ("child runs", f"{arms} ({seeds} seed(s))" if arms > 1 else "none (a single run)"),
        ("dataset", f"{setup.splits.digest()}: " + ", ".join(f"{k} {v}" for k, v in setup.splits.sizes.items())
         + f", saved to {setup.workdir / 'dataset'}"),
        ("budget", f"{config.budget} metric calls per optimisation"),
        ("no-skill control", "on: the holdout is also answered once with no skill" if config.control else "off"),
        *[(f"{role} model", f"{spec.model}" + (f" at {spec.api_base}" if spec.api_base else "")
           + f" — answered in {reports[role].latency_s:.2f} s") for role, spec in specs.items()],
        ("tracking store", uri),
        ("expected LM calls", ", ".join(f"{role} ≤ {n}" for role, n in calls.items())
         + " (fewer with a warm DSPy cache)"),
    ]
    return Plan(rows, calls)
