"""One evolution run, end to end: skill -> dataset -> optimizer -> gates -> holdout grades -> tracker.

Each step is a function of its own module; this module only sequences them and hands results to a
:class:`~harness.tracking.Tracker` and a :class:`~harness.console.Reporter`.
"""

from __future__ import annotations

import difflib
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dspy
import pandas as pd

from harness import evaluate
from harness.assess import CLAIM_ARTIFACT, Assessment, assess
from harness.config import EvolveConfig
from harness.console import Reporter
from harness.fitness import FitnessMetric, Grader, KeywordGrader, VerifierGrader
from harness.gates import GateResult, check_evolved
from harness.lm import ModelSpec, build_lm
from harness.optimize import GepaSettings, OptimizationResult, ProgressPoint, run_gepa
from harness.program import SkillProgram, stock_instructions
from harness.proposers import FeedbackProposer
from harness.skills import Skill, find_skill
from harness.tracking import Tracker
from harness.usage import UsageCounter
from verifiers import Splits, UnknownVerifierError, Verifier, available_verifiers, get_verifier, has_verifier


@dataclass
class RunResult:
    """What a finished run reports back (also printed as the console summary)."""

    run_id: str | None
    skill: Skill
    fitness: str
    splits: Splits
    optimization: OptimizationResult
    gate: GateResult
    evolved_text: str
    metrics: dict[str, float]
    rows: list[evaluate.HoldoutRow] = field(default_factory=list)
    wall_time_s: float = 0.0
    assessment: Assessment | None = None


def resolve_fitness(fitness: str, skill_name: str) -> str:
    """The fitness actually used: ``auto`` -> ``verifier`` if one is registered for the skill, else ``keyword``.

    Raises:
        ValueError: an unknown fitness, or ``verifier`` for a skill with no registered verifier.
    """
    if fitness == "auto":
        return "verifier" if has_verifier(skill_name) else "keyword"
    if fitness == "verifier" and not has_verifier(skill_name):
        get_verifier(skill_name)  # raises UnknownVerifierError with the list of registered verifiers
    return fitness


def dataset_verifier(skill_name: str) -> Verifier:
    """The verifier whose tasks make the dataset for ``skill_name``.

    Raises:
        UnknownVerifierError: no verifier is registered for the skill (tasks come from verifiers).
    """
    if not has_verifier(skill_name):
        raise UnknownVerifierError(
            f"no dataset for skill {skill_name!r}: tasks come from a registered verifier and none is registered "
            f"for it (registered: {', '.join(available_verifiers())}); register one with "
            f"@register_verifier({skill_name!r}) or the entry point group skill_evolution_harness.verifiers")
    return get_verifier(skill_name)


def build_grader(fitness: str, verifier: Verifier) -> Grader:
    """The grader that drives optimisation for ``fitness`` (``keyword`` or ``verifier``).

    Raises:
        ValueError: a fitness without a grader here.
    """
    if fitness == "verifier":
        return VerifierGrader(verifier)
    if fitness == "keyword":
        return KeywordGrader()
    raise ValueError(f"fitness {fitness!r} has no grader in this build; use keyword, verifier or auto")


def splits_frame(splits: Splits) -> dict[str, pd.DataFrame]:
    """One DataFrame per split (columns of :class:`verifiers.Task`; IDs and years stay strings)."""
    return {name: pd.DataFrame([t.to_dict() for t in tasks], dtype="string") for name, tasks in splits.items()}


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff of two skill texts (``a/<name>`` -> ``b/<name>``)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def _params(config: EvolveConfig, skill: Skill, fitness: str, proposer: str, splits: Splits) -> dict[str, Any]:
    params: dict[str, Any] = {k: v for k, v in asdict(config).items() if k != "dry_run"}
    params["num_cases"] = config.num_cases or 0  # as the CLI option says it: 0 = all
    params.update({
        "fitness_resolved": fitness, "proposer_resolved": proposer, "skill_path": str(skill.path),
        "skill_name": skill.name, "baseline_sha256": skill.sha256, "dataset_digest": splits.digest(),
        **{f"split.{name}": size for name, size in splits.sizes.items()},
    })
    return params


def _log_dataset(tracker: Tracker, splits: Splits, skill_name: str, workdir: Path) -> None:
    digest = splits.digest()
    tracker.log_artifacts(workdir / "dataset", "dataset")
    for name, frame in splits_frame(splits).items():
        tracker.log_dataset(frame, name=f"{skill_name}-{name}", context=name, digest=digest)


def _progress_logger(tracker: Tracker) -> Any:
    def log_point(point: ProgressPoint) -> None:
        tracker.log_metrics({"gepa.best_val_score": point.best_val_score,
                             "gepa.num_candidates": point.num_candidates,
                             "gepa.metric_calls": point.metric_calls}, step=point.iteration)
    return log_point


def _optimizer_settings(config: EvolveConfig, proposer: str, metric: FitnessMetric, skill: Skill,
                        usage: UsageCounter) -> GepaSettings:
    reflection_lm = None
    instruction_proposer = None
    if proposer == "llm":
        reflection_lm = build_lm(ModelSpec(config.reflection_model, config.api_base, temperature=1.0,
                                           max_tokens=2048, seed=config.seed))
        usage.attach(reflection_lm, "reflection")
    else:
        from harness.gates import MAX_GROWTH

        frontmatter_chars = len(skill.frontmatter_text)
        cap = int(len(skill.text) * (1 + MAX_GROWTH)) - frontmatter_chars - 1

        def score_fn(inputs: Any, outputs: Any) -> tuple[float, str]:
            return metric.score_and_feedback(dspy.Example(**dict(inputs)), outputs)

        instruction_proposer = FeedbackProposer(score_fn, max_chars=cap)
    return GepaSettings(budget=config.budget, seed=config.seed, reflection_lm=reflection_lm,
                        instruction_proposer=instruction_proposer, num_threads=config.num_threads)


def evolve(config: EvolveConfig, tracker: Tracker, reporter: Reporter) -> RunResult:
    """Run one evolution with ``config``, logging to ``tracker`` as it goes.

    Raises:
        harness.skills.SkillError, verifiers.DatasetError, verifiers.UnknownVerifierError, ValueError,
        harness.lm.ModelError: bad input, before any LM call.
        Exception: LM or optimizer failures (the tracker marks the run FAILED).
    """
    started = time.perf_counter()
    skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
    fitness = resolve_fitness(config.fitness, skill.name)
    verifier = dataset_verifier(skill.name)
    proposer = config.resolved_proposer()
    splits = verifier.build_dataset(config.num_cases, config.seed)
    reporter.phase(f"skill {skill.name} from {skill.path} · fitness {fitness} · optimizer {config.optimizer} "
                   f"({proposer} proposer) · budget {config.budget}")
    reporter.note(f"dataset {splits.digest()}: " + ", ".join(f"{k} {v}" for k, v in splits.sizes.items()))

    workdir = Path(config.output_dir) if config.output_dir else Path(tempfile.mkdtemp(prefix="harness-run-"))
    splits.save_jsonl(workdir / "dataset")
    tracker.set_tags({"skill": skill.name, "fitness": fitness, "optimizer": config.optimizer,
                      "proposer": proposer, "task_model": config.task_model})
    tracker.log_params(_params(config, skill, fitness, proposer, splits))
    _log_dataset(tracker, splits, skill.name, workdir)
    tracker.log_text(skill.text, "skill/baseline/SKILL.md")

    usage = UsageCounter()
    task_lm = build_lm(ModelSpec(config.task_model, config.api_base, max_tokens=config.max_tokens,
                                 seed=config.seed))
    usage.attach(task_lm, "task")
    with dspy.context(lm=task_lm):
        metric = FitnessMetric(build_grader(fitness, verifier))
        settings = _optimizer_settings(config, proposer, metric, skill, usage)
        result = _optimize(config, skill, metric, splits, settings, usage, tracker, reporter)
        evolved_text, gate = _apply_gates(skill, result, tracker, reporter)
        (workdir / "SKILL.evolved.md").write_text(evolved_text, encoding="utf-8")
        graders: list[Grader] = [VerifierGrader(verifier), KeywordGrader()]
        rows = _grade_holdout(skill, evolved_text, splits, graders, config.num_threads, reporter)
    holdout = pd.DataFrame([r.to_dict() for r in rows])
    tracker.log_table(holdout, "holdout/holdout_table.json")
    holdout.to_csv(workdir / "holdout_table.csv", index=False)
    claim = assess(rows, gate, skill=skill.name, fitness=fitness, run_id=tracker.run_id, alpha=config.alpha,
                   seed=config.seed)
    metrics = evaluate.summarize(rows)
    wall = time.perf_counter() - started
    metrics.update({**usage.metrics(), **claim.metrics(), "wall_time_s": wall,
                    "gepa.metric_calls_total": result.metric_calls})
    tracker.log_metrics(metrics)
    tracker.set_tags(claim.verdict.to_tags())
    tracker.log_text(claim.report, CLAIM_ARTIFACT)
    return RunResult(tracker.run_id, skill, fitness, splits, result, gate, evolved_text, metrics, rows, wall,
                     claim)


def _optimize(config: EvolveConfig, skill: Skill, metric: FitnessMetric, splits: Splits, settings: GepaSettings,
              usage: UsageCounter, tracker: Tracker, reporter: Reporter) -> OptimizationResult:
    result = OptimizationResult(instructions=skill.body)
    reporter.phase(f"optimising with GEPA (max {config.budget} metric calls)")
    try:
        run_gepa(skill.body, metric, splits.trainset, splits.valset, settings, result,
                 on_point=_progress_logger(tracker))
    finally:
        tracker.log_metrics({"gepa.proposals": result.proposals,
                             "gepa.unusable_proposals": result.unusable_proposals,
                             "gepa.accepted": result.accepted, "gepa.rejected": result.rejected,
                             **usage.metrics()})
    if result.unusable_proposals:
        reporter.warn(f"{result.unusable_proposals} of {result.proposals} proposal steps gave no usable candidate")
    tracker.log_dict({"candidates": [{k: v for k, v in c.items() if k != "instructions"}
                                     for c in result.candidates]}, "gepa/candidates.json")
    if result.candidates:
        tracker.log_table(pd.DataFrame(result.candidates), "gepa/candidates_table.json")
    return result


def _apply_gates(skill: Skill, result: OptimizationResult, tracker: Tracker,
                 reporter: Reporter) -> tuple[str, GateResult]:
    """The evolved file text if it passes the gates, else the baseline's (the candidate kept as rejected)."""
    evolved_text = skill.with_body(result.instructions)
    gate = check_evolved(skill, evolved_text, stock_instructions=stock_instructions())
    if not gate.passed:
        reporter.warn("evolved skill rejected by the gates: " + "; ".join(gate.reasons) + " — baseline kept")
        tracker.log_text(evolved_text, "skill/rejected/SKILL.md")
        tracker.log_text("\n".join(gate.reasons) + "\n", "skill/rejected/reasons.txt")
        evolved_text = skill.text
    tracker.set_tags({"gates": "passed" if gate.passed else "rejected"})
    tracker.log_text(evolved_text, "skill/evolved/SKILL.md")
    tracker.log_text(unified_diff(skill.text, evolved_text, "SKILL.md") or "(no change)\n", "skill/diff.patch")
    return evolved_text, gate


def _grade_holdout(skill: Skill, evolved_text: str, splits: Splits, graders: list[Grader], num_threads: int,
                   reporter: Reporter) -> list[evaluate.HoldoutRow]:
    from harness.skills import parse_skill

    variants = {"baseline": skill.body, "evolved": parse_skill(evolved_text, skill.path).body}
    rows: list[evaluate.HoldoutRow] = []
    for variant, body in variants.items():
        with reporter.progress(f"holdout · {variant}", len(splits.holdout)) as advance:
            outputs = evaluate.generate(SkillProgram(body), splits.holdout, num_threads, on_done=advance)
        rows.extend(evaluate.grade(outputs, graders, variant))
    return rows
