"""Side-by-side experiments: one parent run, one child run per fitness × optimizer × seed, cross-graded.

All children share the dataset, the splits, the budget, the models and the baseline: the baseline's holdout
outputs are produced and graded once, in the parent, and handed to every child.  Every child grades its
evolved skill with every grader, so the parent can log the cross-grading matrix: rows = the fitness (and
optimizer) that drove the optimisation, columns = the grader, cells = holdout delta (evolved − baseline).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from harness import artifacts
from harness.analysis import describe
from harness.analysis.claim import seeds_report
from harness.analysis.stats import SeedSpread, pairs_from_rows, pooled_verdict
from harness.claims import log_experiment_evidence, log_parent_report
from harness.config import ConfigError, EvolveConfig
from harness.engine.holdout import HoldoutRow
from harness.engine.registry import resolve_fitness
from harness.engine.sources import TaskSource, task_max_tokens
from harness.models.roles import Models, build_models
from harness.reporting import Reporter
from harness.run import RunResult, Setup, check_models_answer, evolve_run, grade_shared, log_setup, prepared
from harness.tracking.params import run_params
from harness.tracking.tracker import MlflowTracker, Tracker

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
              source: TaskSource | str) -> list[Arm]:
    """Every fitness × optimizer × seed combination; seeds are ``base_seed .. base_seed + seeds - 1``;
    ``source`` (the task source, or a skill name) resolves ``auto`` (:func:`resolve_fitness`).

    Raises:
        ConfigError: fewer than one seed.
        UnknownVerifierError, verifiers.taskfile.TaskFileError: ``verifier`` the tasks cannot support.
    """
    if seeds < 1:
        raise ConfigError(f"invalid seeds={seeds}: expected at least 1")
    resolved = list(dict.fromkeys(resolve_fitness(f, source) for f in fitnesses))
    return [Arm(f, o, base_seed + i) for f in resolved for o in optimizers for i in range(seeds)]


def xgrade_matrix(results: Sequence[ArmResult], metric: str = "holdout.{grader}.delta",
                  aggfunc: Any = "mean") -> pd.DataFrame:
    """Rows = arm label (fitness[/optimizer]), columns = grader, cells = holdout delta, averaged over seeds.

    ``metric`` (a name pattern with ``{grader}``) and ``aggfunc`` pick another per-child metric and how seeds
    combine, e.g. ``"stats.{grader}.n_pairs"`` (scored pairs) for the heatmap's n."""
    records = []
    for res in results:
        for grader in GRADERS:
            value = res.metrics.get(metric.format(grader=grader))
            if value is not None:
                records.append({"optimized_by": res.arm.label, "graded_by": grader, "delta": value})
    if not records:
        return pd.DataFrame()
    frame = pd.DataFrame(records).pivot_table(index="optimized_by", columns="graded_by", values="delta",
                                              aggfunc=aggfunc, dropna=False)
    rows = [r for r in dict.fromkeys(res.arm.label for res in results) if r in frame.index]
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


def seed_spreads(results: Sequence[ArmResult], alpha: float) -> dict[str, SeedSpread]:
    """Per arm label with two or more seeds: the verifier's spread across seeds and pooled verdict."""
    by_label: dict[str, list[ArmResult]] = {}
    for res in results:
        by_label.setdefault(res.arm.label, []).append(res)
    spreads = {}
    for label, runs in by_label.items():
        if len(runs) < 2:
            continue
        samples = [pairs_from_rows(r.rows, "verifier") for r in runs]
        spreads[label] = pooled_verdict(samples, alpha=alpha)[1]
    return spreads


def _same_nonzero(values: pd.Series) -> float:
    """+1 / -1 when every seed's verdict score is that, else 0 (a significance mark needs every seed)."""
    vals = set(values.dropna())
    return vals.pop() if len(vals) == 1 else 0.0


def _log_parent(tracker: Tracker, results: Sequence[ArmResult], matrix: pd.DataFrame, lines: list[str],
                spreads: dict[str, SeedSpread], workdir: Path, holdout_size: int) -> None:
    from harness.analysis.plots import xgrade_heatmap_png

    if not matrix.empty:
        tracker.log_table(matrix.reset_index(), artifacts.XGRADE_MATRIX)
        tracker.log_metrics({f"xgrade.{row}.{col}.delta".replace("/", "."): float(value)
                             for row, series in matrix.iterrows() for col, value in series.items()
                             if value == value})
        counts = xgrade_matrix(results, "stats.{grader}.n_pairs", "min")
        marks = xgrade_matrix(results, "{grader}/verdict", _same_nonzero)
        tracker.log_file(xgrade_heatmap_png(matrix, workdir / "xgrade_heatmap.png", counts=counts,
                                            total=holdout_size, marks=marks), "xgrade")
    seed_rows = []
    for label, spread in spreads.items():
        key = label.replace("/", ".")
        tracker.log_metrics({f"seeds/{key}/verdict": describe.verdict_score(spread.verdict),
                             f"seeds/{key}/mean_delta": spread.mean_delta})
        tracker.set_tags({f"verdict.seeds.{label}": spread.verdict})
        seed_rows.append({"arm": label, "verdict": spread.verdict, "reason": spread.reason,
                          **spread.to_metrics("")})
    if spreads:
        tracker.log_text(seeds_report(spreads), artifacts.SEEDS_REPORT)
        tracker.log_table(pd.DataFrame(seed_rows), artifacts.SEEDS_TABLE)
    text = "\n".join(lines) + "\n"
    tracker.log_text(text, artifacts.XGRADE_SUMMARY)
    tracker.set_tags({"xgrade.summary": " | ".join(lines)[:500]})


@dataclass(frozen=True)
class ArmResult:
    """What the parent needs from one child run (also its JSON hand-over from a child process)."""

    arm: Arm
    run_id: str | None
    metrics: dict[str, float]
    rows: list[HoldoutRow]
    verdict: str

    @classmethod
    def from_run(cls, arm: Arm, result: RunResult) -> ArmResult:
        """From an in-process :class:`harness.run.RunResult`."""
        verdict = result.assessment.verdict.verdict if result.assessment else "n/a"
        return cls(arm, result.run_id, dict(result.metrics), list(result.rows), verdict)

    def to_json(self) -> str:
        """JSON text (NaN kept as NaN, which Python's json reads back)."""
        return json.dumps({"arm": asdict(self.arm), "run_id": self.run_id, "metrics": self.metrics,
                           "rows": [r.to_dict() for r in self.rows], "verdict": self.verdict})

    @classmethod
    def from_json(cls, text: str) -> ArmResult:
        """Inverse of :meth:`to_json`."""
        data = json.loads(text)
        return cls(Arm(**data["arm"]), data["run_id"], data["metrics"], [HoldoutRow(**r) for r in data["rows"]],
                   data["verdict"])


@dataclass(frozen=True)
class ChildSpec:
    """Everything a child process needs to run one arm (written as JSON by the parent)."""

    config: dict[str, Any]
    arm: dict[str, Any]
    parent_run_id: str
    baseline_rows: str
    result_path: str

    def write(self, path: Path) -> Path:
        """Write the spec as JSON to ``path``."""
        path.write_text(json.dumps(asdict(self)), encoding="utf-8")
        return path


def _child_config(config: EvolveConfig, arm: Arm) -> EvolveConfig:
    return replace(config, fitness=arm.fitness, optimizer=arm.optimizer, seed=arm.seed)


def _run_arm(setup: Setup, config: EvolveConfig, arm: Arm, models: Models, parent_run_id: str,
             baseline: list[HoldoutRow], reporter: Reporter) -> ArmResult:
    name = describe.run_name(setup.skill.name, arm.fitness, config.task_model, arm.seed, arm.optimizer)
    with MlflowTracker(config.experiment_name(), run_name=name, parent_run_id=parent_run_id) as child:
        result = evolve_run(setup, _child_config(config, arm), arm.fitness, models, child, reporter,
                            baseline_rows=baseline)
    return ArmResult.from_run(arm, result)


def run_child(spec_path: Path, reporter: Reporter) -> ArmResult:
    """Run one arm in this process from a :class:`ChildSpec` file; writes and returns its :class:`ArmResult`.

    The splits are rebuilt from the experiment's config (deterministic for its seed) and the baseline rows are
    read from the parent's file, so a child never re-grades the baseline.
    """
    spec = ChildSpec(**json.loads(spec_path.read_text(encoding="utf-8")))
    config = EvolveConfig(**spec.config)
    arm = Arm(**spec.arm)
    with prepared(config) as setup:
        baseline = [HoldoutRow(**json.loads(line))
                    for line in Path(spec.baseline_rows).read_text(encoding="utf-8").splitlines() if line]
        models = build_models(_child_config(config, arm), judge=True)
        result = _run_arm(setup, config, arm, models, spec.parent_run_id, baseline, reporter)
    Path(spec.result_path).write_text(result.to_json(), encoding="utf-8")
    return result


def _run_processes(arms: Sequence[Arm], config: EvolveConfig, parent_run_id: str, baseline: list[HoldoutRow],
                   workdir: Path, parallel: int, reporter: Reporter) -> list[ArmResult]:
    """Each arm in its own ``harness child`` process, ``parallel`` at a time; the parent's run id is not
    passed through the environment, so no child can log into the parent."""
    folder = workdir / "children"
    folder.mkdir(parents=True, exist_ok=True)
    baseline_path = folder / "baseline_rows.jsonl"
    baseline_path.write_text("".join(json.dumps(r.to_dict()) + "\n" for r in baseline), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID")}

    def launch(index: int, arm: Arm) -> ArmResult:
        base = folder / f"arm{index}"
        spec = ChildSpec(asdict(config), asdict(arm), parent_run_id, str(baseline_path), f"{base}.result.json")
        with open(f"{base}.log", "w", encoding="utf-8") as log:
            proc = subprocess.run([sys.executable, "-m", "harness.cli", "child", str(spec.write(Path(f"{base}.json")))],
                                  env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
        if proc.returncode != 0:
            tail = Path(f"{base}.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()[-3:]
            raise ChildRunError(f"child run {arm.label} (seed {arm.seed}) failed with exit code {proc.returncode}: "
                                + " / ".join(tail) + f" (log: {base}.log)")
        reporter.note(f"child {arm.label} (seed {arm.seed}) finished")
        return ArmResult.from_json(Path(spec.result_path).read_text(encoding="utf-8"))

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(launch, range(len(arms)), arms))


def arm_summaries(results: Sequence[ArmResult]) -> list[describe.ArmSummary]:
    """The children as :func:`harness.analysis.describe.parent_description` reads them."""
    return [describe.ArmSummary(r.arm.label, r.arm.seed, r.run_id, r.verdict, r.metrics) for r in results]


def _describe_parent(parent: Tracker, results: Sequence[ArmResult], spreads: dict[str, SeedSpread],
                     matrix: pd.DataFrame, setup: Setup, config: EvolveConfig, seeds: int) -> None:
    """The parent's verdict (per arm), headline metrics, description and claim report (for any number of seeds)."""
    arms = arm_summaries(results)
    verdicts = describe.arm_verdicts(arms, spreads)
    baseline = results[0].metrics.get("verifier/baseline") if results else None
    parent.log_metrics({**{f"verdict/{label.replace('/', '.')}": describe.verdict_score(v)
                           for label, v in verdicts.items()},
                        **({"verifier/baseline": baseline} if baseline is not None else {})})
    text = describe.parent_description(arms, spreads, task_model=config.task_model, seeds=seeds,
                                       holdout_size=len(setup.splits.holdout))
    parent.set_tags({artifacts.TAG_VERDICT: describe.experiment_verdict(arms, spreads),
                     artifacts.TAG_DESCRIPTION: text})
    parent.name_verdict(describe.verdicts_headline(list(verdicts.values())))
    parent.log_text(describe.experiment_report(arms, spreads, matrix, skill=setup.skill.name,
                                               task_model=config.task_model, seeds=seeds), artifacts.CLAIM_REPORT)


class ChildRunError(RuntimeError):
    """A child process of a side-by-side experiment failed (message names the arm and its log)."""


def compare(config: EvolveConfig, fitnesses: Sequence[str], optimizers: Sequence[str], seeds: int,
            parent: MlflowTracker, reporter: Reporter, parallel: int = 1) -> list[ArmResult]:
    """Run every arm as a child of ``parent`` (already entered) and log the cross-grading into the parent.

    Args:
        parallel: 1 = children one after another in this process (sharing the loaded models); N > 1 = each
            child in its own process, N at a time.

    Raises:
        as :func:`harness.run.evolve`; a failing child fails the experiment (and its own run is FAILED).
    """
    if parallel < 1:
        raise ConfigError(f"invalid parallel={parallel}: expected at least 1")
    with prepared(config) as setup:
        return _compare(setup, config, fitnesses, optimizers, seeds, parent, reporter, parallel)


def _compare(setup: Setup, config: EvolveConfig, fitnesses: Sequence[str], optimizers: Sequence[str], seeds: int,
             parent: MlflowTracker, reporter: Reporter, parallel: int) -> list[ArmResult]:
    config = replace(config, max_tokens=task_max_tokens(config.max_tokens, setup.verifier))
    arms = plan_arms(fitnesses, optimizers, seeds, config.seed, setup.source or setup.skill.name)
    reporter.phase(f"side-by-side: {len(arms)} child runs ("
                   + ", ".join(f"{a.label} seed {a.seed}" for a in arms) + f"), {parallel} at a time")
    fitness_list = ",".join(dict.fromkeys(a.fitness for a in arms))
    # the parent's params say what it compared (not the first child's fitness and optimizer)
    log_setup(setup, config, fitness_list, parent, {"fitness": fitness_list, "optimizer": ",".join(optimizers)})
    parent.log_params({"seeds": seeds, "optimizers": ",".join(optimizers), "parallel": parallel,
                       "arms": len(arms)})
    parent.set_tags({"experiment.kind": "side-by-side", "experiment.arms": str(len(arms))})
    check_models_answer(config, judge=True, tracker=parent)
    models = build_models(config, judge=True)
    reporter.phase("baseline holdout" + (" and no-skill control" if config.control else "")
                   + " (produced once, shared by every child)")
    baseline = grade_shared(setup, models, config, reporter, parent)
    parent.log_table(pd.DataFrame([r.to_dict() for r in baseline]), artifacts.BASELINE_TABLE)
    assert parent.run_id is not None
    if parallel == 1:
        results = []
        for arm in arms:
            reporter.phase(f"child: {arm.label} (seed {arm.seed})")
            results.append(_run_arm(setup, config, arm, models, parent.run_id, baseline, reporter))
    else:
        results = _run_processes(arms, config, parent.run_id, baseline, setup.workdir, parallel, reporter)
    matrix = xgrade_matrix(results)
    lines = summary_lines(matrix)
    spreads = seed_spreads(results, config.alpha)
    _log_parent(parent, results, matrix, lines, spreads, setup.workdir, len(setup.splits.holdout))
    _describe_parent(parent, results, spreads, matrix, setup, config, seeds)
    parent.log_metrics(models.usage.metrics())
    log_experiment_evidence(results, baseline, setup.workdir, parent)
    log_parent_report(experiment=config.experiment_name(), params=run_params(config, setup.skill, setup.splits,
                                                                             ",".join(a.fitness for a in arms)),
                      metrics=models.usage.metrics(), tags={"skill": setup.skill.name}, shared_rows=baseline,
                      results=results, tracker=parent)
    for line in lines:
        reporter.note(line)
    return results


__all__ = ["ALL_FITNESS", "Arm", "ArmResult", "ChildRunError", "compare", "parse_list", "plan_arms", "run_child",
           "xgrade_matrix"]
