"""Side-by-side experiments: one parent run, one child run per fitness × optimizer × seed, cross-graded.

All children share the dataset, the splits, the budget, the models and the baseline: the baseline's holdout
outputs are produced and graded once, in the parent, and handed to every child.  Every child grades its
evolved skill with every grader, so the parent can log the cross-grading matrix: rows = the fitness (and
optimizer) that drove the optimisation, columns = the grader, cells = holdout delta (evolved − baseline).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from harness.config import ConfigError, EvolveConfig
from harness.console import Reporter
from harness.fitness import FITNESS_CHOICES
from harness.run import (
    RunResult,
    build_models,
    evolve_run,
    grade_baseline,
    log_setup,
    prepare,
    resolve_fitness,
)
from harness.stats import SeedSpread, pairs_from_rows, pooled_verdict
from harness.tracking import MlflowTracker, Tracker

#: the fitness signals of ``fitness=all``, in matrix row order
ALL_FITNESS: tuple[str, ...] = ("keyword", "judge", "verifier")
GRADERS: tuple[str, ...] = ("verifier", "keyword", "judge")


@dataclass(frozen=True)
class Arm:
    """One child run of an experiment: the fitness and optimizer that drive it, and its seed."""

    fitness: str
    optimizer: str
    seed: int

    @property
    def label(self) -> str:
        """Matrix row label: ``<fitness>`` or ``<fitness>/<optimizer>`` when several optimizers are compared."""
        return self.fitness if self.optimizer == "gepa" else f"{self.fitness}/{self.optimizer}"


def parse_list(value: str, choices: Sequence[str], name: str, all_value: Sequence[str]) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]``; ``"all"`` -> ``all_value``.

    Raises:
        ConfigError: an empty list or an unknown item (naming the setting and the choices).
    """
    items = list(all_value) if value.strip() == "all" else [v.strip() for v in value.split(",") if v.strip()]
    unknown = [v for v in items if v not in choices]
    if not items or unknown:
        raise ConfigError(f"invalid {name}={value!r}: expected 'all' or a comma list of {', '.join(choices)}")
    return list(dict.fromkeys(items))


def plan_arms(fitnesses: Sequence[str], optimizers: Sequence[str], seeds: int, base_seed: int,
              skill_name: str) -> list[Arm]:
    """Every fitness × optimizer × seed combination; seeds are ``base_seed .. base_seed + seeds - 1``.

    Raises:
        ConfigError: fewer than one seed.
        UnknownVerifierError: ``verifier`` for a skill without one.
    """
    if seeds < 1:
        raise ConfigError(f"invalid seeds={seeds}: expected at least 1")
    resolved = list(dict.fromkeys(resolve_fitness(f, skill_name) for f in fitnesses))
    return [Arm(f, o, base_seed + i) for f in resolved for o in optimizers for i in range(seeds)]


def xgrade_matrix(results: Sequence[tuple[Arm, RunResult]]) -> pd.DataFrame:
    """Rows = arm label (fitness[/optimizer]), columns = grader, cells = holdout delta, averaged over seeds."""
    records = []
    for arm, result in results:
        for grader in GRADERS:
            delta = result.metrics.get(f"holdout.{grader}.delta")
            if delta is not None:
                records.append({"optimized_by": arm.label, "graded_by": grader, "delta": delta})
    if not records:
        return pd.DataFrame()
    frame = pd.DataFrame(records).pivot_table(index="optimized_by", columns="graded_by", values="delta",
                                              aggfunc="mean")
    rows = [r for r in dict.fromkeys(a.label for a, _ in results) if r in frame.index]
    cols = [c for c in GRADERS if c in frame.columns]
    return frame.loc[rows, cols]


def summary_lines(matrix: pd.DataFrame) -> list[str]:
    """One line per arm: what its own grader and the verifier say, e.g. ``keyword-optimised: keyword +0.12,
    verifier −0.08``."""
    lines = []
    for label, row in matrix.iterrows():
        fitness = str(label).split("/")[0]
        parts = [f"{g} {row[g]:+.3f}" for g in dict.fromkeys([fitness, "verifier"]) if g in row and row[g] == row[g]]
        lines.append(f"{label}-optimised: " + ", ".join(parts))
    return lines


def seed_spreads(results: Sequence[tuple[Arm, RunResult]], alpha: float) -> dict[str, SeedSpread]:
    """Per arm label with two or more seeds: the verifier's spread across seeds and pooled verdict."""
    by_label: dict[str, list[RunResult]] = {}
    for arm, result in results:
        by_label.setdefault(arm.label, []).append(result)
    spreads = {}
    for label, runs in by_label.items():
        if len(runs) < 2:
            continue
        samples = [pairs_from_rows(r.rows, "verifier") for r in runs]
        spreads[label] = pooled_verdict(samples, alpha=alpha)[1]
    return spreads


def _log_parent(tracker: Tracker, matrix: pd.DataFrame, lines: list[str], spreads: dict[str, SeedSpread],
                workdir: Path) -> None:
    from harness.plots import xgrade_heatmap_png

    if not matrix.empty:
        tracker.log_table(matrix.reset_index(), "xgrade/matrix.json")
        tracker.log_metrics({f"xgrade.{row}.{col}.delta".replace("/", "."): float(value)
                             for row, series in matrix.iterrows() for col, value in series.items()
                             if value == value})
        png = xgrade_heatmap_png(matrix, workdir / "xgrade_heatmap.png")
        _log_file(tracker, png, "xgrade")
    for label, spread in spreads.items():
        tracker.log_metrics({f"seeds.{label.replace('/', '.')}.{k}": v for k, v in spread.to_metrics("").items()})
    text = "\n".join(lines) + "\n"
    tracker.log_text(text, "xgrade/summary.txt")
    tracker.set_tags({"xgrade.summary": " | ".join(lines)[:500]})


def _log_file(tracker: Tracker, path: Path, artifact_path: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="harness-artifact-"))
    (folder / path.name).write_bytes(path.read_bytes())
    tracker.log_artifacts(folder, artifact_path)


def compare(config: EvolveConfig, fitnesses: Sequence[str], optimizers: Sequence[str], seeds: int,
            parent: MlflowTracker, reporter: Reporter) -> list[tuple[Arm, RunResult]]:
    """Run every arm as a child of ``parent`` (already entered) and log the cross-grading into the parent.

    Raises:
        as :func:`harness.run.evolve`; a failing child fails the experiment (and its own run is FAILED).
    """
    setup = prepare(config)
    arms = plan_arms(fitnesses, optimizers, seeds, config.seed, setup.skill.name)
    reporter.phase(f"side-by-side: {len(arms)} child runs ("
                   + ", ".join(f"{a.label} seed {a.seed}" for a in arms) + ")")
    log_setup(setup, config, ",".join(dict.fromkeys(a.fitness for a in arms)), parent)
    parent.set_tags({"experiment.kind": "side-by-side", "experiment.arms": str(len(arms))})
    models = build_models(config, judge=True)
    reporter.phase("baseline holdout (produced once, shared by every child)")
    baseline = grade_baseline(setup, models, config, reporter)
    parent.log_table(pd.DataFrame([r.to_dict() for r in baseline]), "holdout/baseline_table.json")
    results: list[tuple[Arm, RunResult]] = []
    for arm in arms:
        child_config = replace(config, fitness=arm.fitness, optimizer=arm.optimizer, seed=arm.seed)
        reporter.phase(f"child: {arm.label} (seed {arm.seed})")
        with MlflowTracker(config.experiment_name(), run_name=f"{setup.skill.name}-{arm.label}-s{arm.seed}",
                           parent_run_id=parent.run_id) as child:
            result = evolve_run(setup, child_config, arm.fitness, models, child, reporter, baseline_rows=baseline)
        results.append((arm, result))
    matrix = xgrade_matrix(results)
    lines = summary_lines(matrix)
    _log_parent(parent, matrix, lines, seed_spreads(results, config.alpha), setup.workdir)
    parent.log_metrics(models.usage.metrics())
    for line in lines:
        reporter.note(line)
    return results


__all__ = ["ALL_FITNESS", "Arm", "FITNESS_CHOICES", "compare", "parse_list", "plan_arms", "xgrade_matrix"]
