"""Evolution runs, end to end: skill -> dataset -> optimizer -> gates -> holdout grades -> verdict -> tracker.

Each step is a function of its own module; this module only sequences them and hands results to a
:class:`~harness.tracking.tracker.Tracker` and a :class:`~harness.reporting.Reporter`.  The stages are separate so a
side-by-side experiment (:mod:`harness.compare`) can share the setup, the models and the baseline's
holdout grades between its child runs:

* :func:`prepare` — the skill, its verifier and the dataset splits (no LM, no tracking);
* :func:`build_models` — the task, reflection and judge LMs, counted per role;
* :func:`grade_baseline` — the baseline's holdout outputs, produced once and graded by every grader;
* :func:`evolve_run` — one optimisation under one fitness, logged into one run;
* :func:`evolve` — a single run: all of the above.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dspy
import pandas as pd

from harness import artifacts
from harness.analysis.assess import Assessment, assess
from harness.config import EvolveConfig
from harness.engine import holdout as evaluate
from harness.engine.faults import check_lm_faults
from harness.engine.graders import FitnessMetric, Grader
from harness.engine.optimizer import OptimizationResult, OptimizerSettings, ProgressPoint
from harness.engine.program import SkillProgram, stock_instructions
from harness.engine.proposers import FeedbackProposer
from harness.engine.registry import build_grader, build_optimizer, holdout_graders, resolve_fitness
from harness.engine.sources import dataset_verifier
from harness.models.roles import Models, build_models, model_specs
from harness.reporting import Reporter
from harness.skills.diff import evolved_skill_text, unified_diff
from harness.skills.files import Skill, check_output_outside, find_skill, parse_skill
from harness.skills.gates import MAX_GROWTH, GateResult, check_evolved
from harness.tracking.params import run_params
from harness.tracking.tracker import NullTracker, Tracker
from verifiers import Splits, Verifier

#: attribute of an exception that ended a run early: the run folder left on disk (named by the CLI)
KEPT_FOLDER_ATTR = "harness_kept_folder"
#: the grader whose delta is the headline (tags of registered skill versions)
PRIMARY_GRADER = "verifier"


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
    optimizer: str = "gepa"
    seed: int = 0


@dataclass(frozen=True)
class Setup:
    """What every run of one experiment shares: the skill, its verifier, the splits, a local folder."""

    skill: Skill
    verifier: Verifier
    splits: Splits
    workdir: Path


def prepare(config: EvolveConfig) -> Setup:
    """Find the skill, its verifier and build the splits (saved as JSONL in the run folder).

    Raises:
        harness.skills.files.SkillError, UnknownVerifierError, verifiers.DatasetError: bad input.
    """
    skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
    if config.output_dir:  # never beside the user's SKILL.md (the CLI refuses it earlier, as a usage error)
        check_output_outside(config.output_dir, [skill.path.parent, *filter(None, [config.skills_dir])])
    verifier = dataset_verifier(skill.name)
    splits = verifier.build_dataset(config.num_cases, config.seed)
    workdir = Path(config.output_dir) if config.output_dir else Path(tempfile.mkdtemp(prefix="harness-run-"))
    splits.save_jsonl(workdir / "dataset")
    return Setup(skill, verifier, splits, workdir)


@contextmanager
def prepared(config: EvolveConfig) -> Iterator[Setup]:
    """:func:`prepare` for a run: when the block ends normally, a temporary run folder (no ``output_dir``) is
    removed, its files being logged as artifacts by then.  After an error the folder stays, so the
    dataset and the child logs an error message names are still there; the exception carries its path as
    :data:`KEPT_FOLDER_ATTR`.

    Raises:
        as :func:`prepare`.
    """
    setup = prepare(config)
    try:
        yield setup
    except BaseException as exc:  # the folder stays: the CLI names it (KEPT_FOLDER_ATTR)
        if not getattr(exc, KEPT_FOLDER_ATTR, ""):
            setattr(exc, KEPT_FOLDER_ATTR, str(setup.workdir))
        raise
    if not config.output_dir:
        shutil.rmtree(setup.workdir, ignore_errors=True)


def check_models_answer(config: EvolveConfig, *, judge: bool, tracker: Tracker) -> None:
    """Preflight: every model of the run has its key and answers one call, before any optimisation.

    Raises:
        harness.models.lm.ModelError: naming the model and the missing variable or unreachable address.
    """
    from harness.models.preflight import check_models

    reports = check_models(model_specs(config, judge=judge))
    tracker.log_dict({role: asdict(report) for role, report in reports.items()}, artifacts.PREFLIGHT)


def splits_frame(splits: Splits) -> dict[str, pd.DataFrame]:
    """One DataFrame per split (columns of :class:`verifiers.Task`; IDs and years stay strings)."""
    return {name: pd.DataFrame([t.to_dict() for t in tasks], dtype="string") for name, tasks in splits.items()}


def log_setup(setup: Setup, config: EvolveConfig, fitness: str, tracker: Tracker) -> None:
    """Tags, params, the dataset (artifacts and MLflow dataset inputs) and the baseline skill text."""
    tracker.set_tags({"skill": setup.skill.name, "fitness": fitness, "optimizer": config.optimizer,
                      "proposer": config.resolved_proposer(), "task_model": config.task_model})
    tracker.log_params(run_params(config, setup.skill, setup.splits, fitness))
    tracker.log_artifacts(setup.workdir / "dataset", "dataset")
    digest = setup.splits.digest()
    for name, frame in splits_frame(setup.splits).items():
        tracker.log_dataset(frame, name=f"{setup.skill.name}-{name}", context=name, digest=digest)
    tracker.log_text(setup.skill.as_file(setup.skill.text), artifacts.BASELINE_SKILL)  # bytes as in the file (BOM)


def grade_variant(body: str, variant: str, setup: Setup, graders: list[Grader], num_threads: int,
                  reporter: Reporter, tracker: Tracker | None = None) -> list[evaluate.HoldoutRow]:
    """Answer every holdout task with skill ``body`` (the task LM from DSPy's context) and grade the answers.

    The ``tracker`` evaluates (:meth:`~harness.tracking.tracker.Tracker.evaluate_holdout`): an MLflow tracker
    runs it through ``mlflow.genai.evaluate``, each task a trace of its run holding the task LM's call and every
    grader's assessment, the rows read back from those assessments (one grading, two views); without one (no
    tracking store) it runs in-process.
    """
    program = SkillProgram(body)
    tracker = tracker if tracker is not None else NullTracker()
    with reporter.progress(f"holdout · {variant}", len(setup.splits.holdout)) as advance:
        return tracker.evaluate_holdout(program, setup.splits.holdout, graders, variant, num_threads=num_threads,
                                        on_done=advance)


def grade_baseline(setup: Setup, models: Models, config: EvolveConfig, reporter: Reporter,
                   tracker: Tracker | None = None) -> list[evaluate.HoldoutRow]:
    """The baseline's holdout rows: produced once, graded by every grader (shared by all runs of an experiment);
    with a ``tracker`` its traces belong to that tracker's run."""
    graders = holdout_graders(setup.verifier, setup.skill.text, models.judge)
    with dspy.context(lm=models.task):
        return grade_variant(setup.skill.body, "baseline", setup, graders, config.num_threads, reporter, tracker)


def _progress_logger(tracker: Tracker, optimizer: str) -> Any:
    def log_point(point: ProgressPoint) -> None:
        tracker.log_metrics({f"{optimizer}.best_val_score": point.best_val_score,
                             f"{optimizer}.num_candidates": point.num_candidates,
                             f"{optimizer}.metric_calls": point.metric_calls}, step=point.iteration)
    return log_point


def _optimizer_settings(config: EvolveConfig, metric: FitnessMetric, skill: Skill,
                        models: Models) -> OptimizerSettings:
    instruction_proposer = None
    if config.optimizer == "gepa" and config.resolved_proposer() == "feedback":
        cap = int(len(skill.text) * (1 + MAX_GROWTH)) - len(skill.frontmatter_text) - 1

        def score_fn(inputs: Any, outputs: Any) -> tuple[float, str]:
            return metric.score_and_feedback(dspy.Example(**dict(inputs)), outputs)

        instruction_proposer = FeedbackProposer(score_fn, max_chars=cap)
    return OptimizerSettings(budget=config.budget, seed=config.seed, reflection_lm=models.reflection,
                        instruction_proposer=instruction_proposer, num_threads=config.num_threads)


def _optimize(config: EvolveConfig, setup: Setup, metric: FitnessMetric, models: Models, tracker: Tracker,
              reporter: Reporter) -> OptimizationResult:
    skill, splits = setup.skill, setup.splits
    settings = _optimizer_settings(config, metric, skill, models)
    result = OptimizationResult(instructions=skill.body)
    name = config.optimizer
    optimizer = build_optimizer(name, settings)
    reporter.phase(f"optimising with {name} (max {config.budget} metric calls)")
    try:
        optimizer.compile(skill.body, metric, splits.trainset, splits.valset, result,
                          on_point=_progress_logger(tracker, name))
    finally:
        tracker.log_metrics({f"{name}.proposals": result.proposals,
                             f"{name}.unusable_proposals": result.unusable_proposals,
                             f"{name}.accepted": result.accepted, f"{name}.rejected": result.rejected,
                             f"{name}.metric_calls_total": result.metric_calls,
                             "fitness.unscored": metric.unscored, **models.usage.metrics()})
    if result.unusable_proposals:
        reporter.warn(f"{result.unusable_proposals} of {result.proposals} proposal steps gave no usable candidate")
    tracker.log_dict({"candidates": [{k: v for k, v in c.items() if k != "instructions"}
                                     for c in result.candidates]}, f"{name}/candidates.json")
    if result.candidates:
        tracker.log_table(pd.DataFrame(result.candidates), f"{name}/candidates_table.json")
    return result


def _apply_gates(skill: Skill, result: OptimizationResult, tracker: Tracker,
                 reporter: Reporter) -> tuple[str, GateResult]:
    """The evolved file text if it passes the gates, else the baseline's (the candidate kept as rejected)."""
    evolved_text = evolved_skill_text(skill, result.instructions)
    gate = check_evolved(skill, evolved_text, stock_instructions=stock_instructions())
    if not gate.passed:
        reporter.warn("evolved skill rejected by the gates: " + "; ".join(gate.reasons) + " — baseline kept")
        tracker.log_text(skill.as_file(evolved_text), artifacts.REJECTED_SKILL)
        tracker.log_text("\n".join(gate.reasons) + "\n", artifacts.REJECTED_REASONS)
        evolved_text = skill.text
    tracker.set_tags({"gates": "passed" if gate.passed else "rejected"})
    tracker.log_text(skill.as_file(evolved_text), artifacts.EVOLVED_SKILL)
    tracker.log_text(unified_diff(skill.text, evolved_text, "SKILL.md") or "(no change)\n", artifacts.SKILL_DIFF)
    return evolved_text, gate


def _log_plots(holdout: pd.DataFrame, result: OptimizationResult, folder: Path, optimizer: str,
               tracker: Tracker) -> None:
    """Per-task holdout chart (per grader) and the optimisation curve, as PNG artifacts under ``plots/``."""
    from harness.analysis.plots import holdout_per_task_png, optimisation_curve_png

    for grader in sorted(set(holdout.grader)):
        tracker.log_file(holdout_per_task_png(holdout, folder / f"holdout_{grader}.png", grader=grader), "plots")
    if result.progress:
        points = [(p.iteration, p.best_val_score) for p in result.progress]
        tracker.log_file(optimisation_curve_png(points, folder / "optimisation_curve.png",
                                                title=f"{optimizer}: best validation score"), "plots")


def evolve_run(setup: Setup, config: EvolveConfig, fitness: str, models: Models, tracker: Tracker,
               reporter: Reporter, baseline_rows: list[evaluate.HoldoutRow] | None = None) -> RunResult:
    """One optimisation under ``fitness``, graded on the holdout and logged into ``tracker``'s run.

    Args:
        baseline_rows: the baseline's graded holdout rows when an experiment shares them; None = grade
            the baseline here.

    Raises:
        Exception: LM or optimizer failures (the tracker marks the run FAILED); nothing is swallowed.
    """
    try:
        return _evolve_run(setup, config, fitness, models, tracker, reporter, baseline_rows)
    finally:
        tracker.log_dict({"errors": models.usage.errors()}, artifacts.LM_ERRORS)


def _evolve_run(setup: Setup, config: EvolveConfig, fitness: str, models: Models, tracker: Tracker,
                reporter: Reporter, baseline_rows: list[evaluate.HoldoutRow] | None) -> RunResult:
    started = time.perf_counter()
    log_setup(setup, config, fitness, tracker)
    if baseline_rows is None:
        baseline_rows = grade_baseline(setup, models, config, reporter, tracker)
    with dspy.context(lm=models.task):
        metric = FitnessMetric(build_grader(fitness, setup.verifier, setup.skill.text, models.judge))
        result = _optimize(config, setup, metric, models, tracker, reporter)
        check_lm_faults(models.usage.metrics())  # an LM failing most calls fails the run here, before the holdout
        evolved_text, gate = _apply_gates(setup.skill, result, tracker, reporter)
        evolved_body = parse_skill(evolved_text, setup.skill.path).body
        graders = holdout_graders(setup.verifier, setup.skill.text, models.judge)
        rows = baseline_rows + grade_variant(evolved_body, "evolved", setup, graders, config.num_threads, reporter,
                                             tracker)
    (setup.workdir / f"SKILL.evolved.{fitness}.md").write_bytes(setup.skill.as_file(evolved_text).encode("utf-8"))
    holdout = pd.DataFrame([r.to_dict() for r in rows])
    tracker.log_table(holdout, artifacts.HOLDOUT_TABLE)
    holdout.to_csv(setup.workdir / f"holdout_table.{fitness}.csv", index=False)
    tracker.log_metrics(models.usage.metrics())
    check_lm_faults(models.usage.metrics(), rows)  # FAILED with the reason rather than a verdict resting on faults
    _log_plots(holdout, result, setup.workdir / f"plots-{fitness}", config.optimizer, tracker)
    claim = assess(rows, gate, skill=setup.skill.name, fitness=fitness, run_id=tracker.run_id, alpha=config.alpha,
                   seed=config.seed)
    metrics = evaluate.summarize(rows)
    wall = time.perf_counter() - started
    metrics.update({**models.usage.metrics(), **claim.metrics(), "wall_time_s": wall})
    tracker.log_metrics(metrics)
    tracker.set_tags(claim.verdict.to_tags())
    tracker.log_text(claim.report, artifacts.CLAIM_REPORT)
    if gate.passed and evolved_text != setup.skill.text:  # an unchanged skill is not a new version
        tracker.register_skill_version(setup.skill, evolved_text, fitness, claim.verdict.verdict,
                                       metrics.get(f"holdout.{PRIMARY_GRADER}.delta"))
    return RunResult(tracker.run_id, setup.skill, fitness, setup.splits, result, gate, evolved_text, metrics, rows,
                     wall, claim, config.optimizer, config.seed)


def evolve(config: EvolveConfig, tracker: Tracker, reporter: Reporter) -> RunResult:
    """A single evolution run with ``config``, logged to ``tracker`` as it goes.

    The holdout is graded by the verifier and the keyword heuristic, and by the judge when the judge is the
    fitness.

    Raises:
        harness.skills.files.SkillError, verifiers.DatasetError, UnknownVerifierError, ValueError,
        harness.models.lm.ModelError: bad input, before any LM call.
        Exception: LM or optimizer failures (the tracker marks the run FAILED).
    """
    with prepared(config) as setup:
        return _evolve(setup, config, tracker, reporter)


def _evolve(setup: Setup, config: EvolveConfig, tracker: Tracker, reporter: Reporter) -> RunResult:
    fitness = resolve_fitness(config.fitness, setup.skill.name)
    reporter.phase(f"skill {setup.skill.name} from {setup.skill.path} · fitness {fitness} · optimizer "
                   f"{config.optimizer} ({config.resolved_proposer()} proposer) · budget {config.budget}")
    reporter.note(f"dataset {setup.splits.digest()}: "
                  + ", ".join(f"{k} {v}" for k, v in setup.splits.sizes.items()))
    check_models_answer(config, judge=fitness == "judge", tracker=tracker)
    models = build_models(config, judge=fitness == "judge")
    return evolve_run(setup, config, fitness, models, tracker, reporter)
