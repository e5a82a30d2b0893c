"""Evolution runs, end to end: skill -> dataset -> optimizer -> gates -> holdout grades -> verdict -> tracker.

Each step is a function of its own module; this module only sequences them and hands results to a
:class:`~harness.tracking.tracker.Tracker` and a :class:`~harness.reporting.Reporter`.  The stages are separate so a
side-by-side experiment (:mod:`harness.compare`) can share the setup, the models and the baseline's
holdout grades between its child runs:

* :func:`prepare` — the skill, its verifier and the dataset splits (no LM, no tracking);
* :func:`build_models` — the task, reflection and judge LMs, counted per role;
* :func:`grade_baseline` — the baseline's holdout outputs, produced once and graded by every grader;
* :func:`grade_shared` — the baseline's and the no-skill control's rows (shared by an experiment's runs);
* :func:`evolve_run` — one optimisation under one fitness, logged into one run;
* :func:`evolve` — a single run: all of the above.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import dspy
import pandas as pd

from harness import artifacts
from harness.analysis import describe
from harness.analysis.assess import Assessment, assess
from harness.analysis.cost import usage_since
from harness.analysis.evidence import RunEvidence, val_scores
from harness.analysis.plot_jobs import PLOT_CACHE_FOLDER, PlotJobs, render
from harness.claims import log_gates, log_glance, log_run_evidence, log_run_report, log_skill_previews
from harness.config import EvolveConfig
from harness.engine import holdout as evaluate
from harness.engine.faults import check_lm_faults
from harness.engine.graders import FitnessMetric, Grader
from harness.engine.optimizer import OptimizationResult, OptimizerSettings, ProgressPoint
from harness.engine.program import CONTROL_INSTRUCTIONS, SkillProgram, stock_instructions
from harness.engine.proposers import FeedbackProposer
from harness.engine.registry import auto_fitness_note, build_grader, build_optimizer, holdout_graders, resolve_fitness
from harness.engine.sources import TaskSource, resolve_source, task_max_tokens
from harness.models.lm import response_cache_dir
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
    #: where the tasks came from (:meth:`TaskSource.describe`) and why ``auto`` chose the fitness ("" if not auto)
    tasks: str = ""
    fitness_note: str = ""
    evidence: RunEvidence | None = None


@dataclass(frozen=True)
class Setup:
    """What every run of one experiment shares: the skill, its verifier, the splits, a local folder, and where
    the tasks came from (``source``; None only for a Setup built by hand around a verifier)."""

    skill: Skill
    verifier: Verifier
    splits: Splits
    workdir: Path
    source: TaskSource | None = None


def prepare(config: EvolveConfig) -> Setup:
    """Find the skill and its task source (:func:`harness.engine.sources.resolve_source`: ``config.tasks``, the
    skill's ``evals/`` file, else its registered verifier) and build the splits (saved as JSONL in the run folder).

    Raises:
        harness.skills.files.SkillError, UnknownVerifierError, verifiers.DatasetError,
        verifiers.taskfile.TaskFileError, verifiers.pybugfix.SandboxUnavailableError: bad input.
    """
    skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
    if config.output_dir:  # never beside the user's SKILL.md (the CLI refuses it earlier, as a usage error)
        check_output_outside(config.output_dir, [skill.path.parent, *filter(None, [config.skills_dir])])
    source = resolve_source(skill.name, skill.path.parent, config.tasks, config.sandbox)
    verifier = source.verifier
    splits = verifier.build_dataset(config.num_cases, config.seed)
    workdir = Path(config.output_dir) if config.output_dir else Path(tempfile.mkdtemp(prefix="harness-run-"))
    splits.save_jsonl(workdir / "dataset")
    return Setup(skill, verifier, splits, workdir, source)


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


def log_setup(setup: Setup, config: EvolveConfig, fitness: str, tracker: Tracker,
              overrides: dict[str, Any] | None = None) -> None:
    """Tags, params, the dataset (artifacts and MLflow dataset inputs) and the baseline skill text.

    ``overrides`` replace params (and the tags of the same name), e.g. a side-by-side parent's ``fitness`` and
    ``optimizer``, which list every arm instead of the config's first one."""
    overrides = overrides or {}
    tags = {"skill": setup.skill.name, "fitness": fitness, "optimizer": config.optimizer,
            "proposer": config.resolved_proposer(), "task_model": config.task_model}
    tracker.set_tags({**tags, **{k: str(v) for k, v in overrides.items() if k in tags}})
    tracker.log_params({**run_params(config, setup.skill, setup.splits, fitness), **overrides})
    source = setup.source
    if source is not None:
        tracker.log_params(source.params())
        tracker.set_tags({"tasks.source": source.kind, **({"fitness.auto": note} if (
            note := auto_fitness_note(config.fitness, source)) else {})})
    if hasattr(type(setup.verifier), "sandbox_kind"):  # probes bubblewrap once (python-bugfix)
        kind = setup.verifier.sandbox_kind  # type: ignore[attr-defined]
        tracker.set_tags({"sandbox": kind})
        tracker.log_params({"sandbox_resolved": kind})
    tracker.log_artifacts(setup.workdir / "dataset", "dataset")
    digest = setup.splits.digest()
    for name, frame in splits_frame(setup.splits).items():
        tracker.log_dataset(frame, name=f"{setup.skill.name}-{name}", context=name, digest=digest,
                            source=source.dataset_source() if source is not None else None)
    tracker.log_text(setup.skill.as_file(setup.skill.text), artifacts.BASELINE_SKILL)  # bytes as in the file (BOM)


def grade_variant(body: str, variant: str, setup: Setup, graders: list[Grader], num_threads: int,
                  reporter: Reporter, tracker: Tracker | None = None) -> list[evaluate.HoldoutRow]:
    """Answer every holdout task with skill ``body`` (the task LM from DSPy's context) and grade the answers.

    The ``tracker`` evaluates (:meth:`~harness.tracking.tracker.Tracker.evaluate_holdout`): an MLflow tracker
    answers and grades in-process and writes each task as a trace of its run holding the task LM's call and every
    grader's assessment (one batch per variant), the rows read back from those assessments (one grading, two
    views); without one (no tracking store) it runs in-process.
    """
    program = SkillProgram(body)
    tracker = tracker if tracker is not None else NullTracker()
    num_threads = evaluate.holdout_threads(num_threads, setup.verifier)
    with reporter.progress(f"holdout · {variant}", len(setup.splits.holdout)) as advance:
        rows = tracker.evaluate_holdout(program, setup.splits.holdout, graders, variant, num_threads=num_threads,
                                        on_done=advance)
    for grader in graders:
        graded = [r for r in rows if r.grader == grader.name]
        unscored = sum(1 for r in graded if r.composite != r.composite)
        if unscored:
            reporter.note(describe.unscored_note(grader.name, variant, unscored, len(graded)))
    return rows


def grade_baseline(setup: Setup, models: Models, config: EvolveConfig, reporter: Reporter,
                   tracker: Tracker | None = None) -> list[evaluate.HoldoutRow]:
    """The baseline's holdout rows: produced once, graded by every grader (shared by all runs of an experiment);
    with a ``tracker`` its traces belong to that tracker's run."""
    graders = holdout_graders(setup.verifier, setup.skill.text, models.judge)
    with dspy.context(lm=models.task):
        return grade_variant(setup.skill.body, "baseline", setup, graders, config.num_threads, reporter, tracker)


def grade_shared(setup: Setup, models: Models, config: EvolveConfig, reporter: Reporter,
                 tracker: Tracker | None = None) -> list[evaluate.HoldoutRow]:
    """The rows every run of an experiment shares: the baseline's and, unless ``config.control`` is off, the
    no-skill control's (variant ``none``: :data:`~harness.engine.program.CONTROL_INSTRUCTIONS`, no skill body)."""
    rows = grade_baseline(setup, models, config, reporter, tracker)
    if config.control:
        graders = holdout_graders(setup.verifier, setup.skill.text, models.judge)
        with dspy.context(lm=models.task):
            rows += grade_variant(CONTROL_INSTRUCTIONS, "none", setup, graders, config.num_threads, reporter, tracker)
    return rows


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
    unchanged = gate.passed and evolved_text == skill.text
    # an unchanged skill passed no gate worth the name: say "no change", not "passed"
    tracker.set_tags({"gates": "no change" if unchanged else "passed" if gate.passed else "rejected"})
    log_gates(gate, tracker)
    tracker.log_text(skill.as_file(evolved_text), artifacts.EVOLVED_SKILL)
    log_skill_previews(skill.text, evolved_text, artifacts.EVOLVED_SKILL_PREVIEW, tracker)
    return evolved_text, gate


def plot_cache_dir() -> Path | None:
    """Where a run keeps the plots it drew for a rerun to copy (:class:`harness.analysis.plot_jobs.PlotCache`):
    ``harness-plots`` in DSPy's response cache folder, so that the rerun that makes no LM call draws no plot
    either, and clearing that cache clears both; None when the response cache is not on disk."""
    folder = response_cache_dir()
    return folder / PLOT_CACHE_FOLDER if folder is not None else None


def _curve_plot(jobs: PlotJobs, result: OptimizationResult, folder: Path, optimizer: str) -> None:
    """Start drawing the optimisation curve (when there is progress) in the background."""
    if result.progress:
        points = [(p.iteration, p.best_val_score) for p in result.progress]
        jobs.submit(render, "optimisation_curve_png", points, folder / "optimisation_curve.png",
                    title=f"{optimizer} optimisation")


def holdout_plots(jobs: PlotJobs, holdout: pd.DataFrame, folder: Path) -> None:
    """Start drawing the per-task holdout chart of every grader in the background."""
    for grader in sorted(set(holdout.grader)):
        jobs.submit(render, "holdout_per_task_png", holdout, folder / f"holdout_{grader}.png", grader=grader)


def _log_labels(setup: Setup, rows: list[evaluate.HoldoutRow], folder: Path, tracker: Tracker) -> None:
    """Choice / tool_call tasks: per variant a confusion matrix (table + heatmap), and McNemar per label."""
    from harness.analysis.confusion import label_analysis

    analysis = label_analysis(setup.verifier, setup.splits.holdout, rows, folder)
    if analysis is None:
        return
    for artifact_file, frame in analysis.tables.items():
        tracker.log_table(frame, artifact_file)
    for png in analysis.plots:
        tracker.log_file(png, "plots")


def evolve_run(setup: Setup, config: EvolveConfig, fitness: str, models: Models, tracker: Tracker,
               reporter: Reporter, baseline_rows: list[evaluate.HoldoutRow] | None = None) -> RunResult:
    """One optimisation under ``fitness``, graded on the holdout and logged into ``tracker``'s run.

    Args:
        baseline_rows: the baseline's (and the no-skill control's) graded holdout rows when an experiment
            shares them (:func:`grade_shared`); None = grade them here.

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
    jobs, plots_dir = PlotJobs(cache=plot_cache_dir()), setup.workdir / f"plots-{fitness}"
    usage_before = models.usage.metrics()  # an experiment's arms share one counter: count this run's own spend
    log_setup(setup, config, fitness, tracker)
    if baseline_rows is None:
        baseline_rows = grade_shared(setup, models, config, reporter, tracker)
    with dspy.context(lm=models.task):
        metric = FitnessMetric(build_grader(fitness, setup.verifier, setup.skill.text, models.judge))
        result = _optimize(config, setup, metric, models, tracker, reporter)
        # an LM failing most calls fails the run here, before the holdout
        check_lm_faults(usage_since(models.usage.metrics(), usage_before))
        evolved_text, gate = _apply_gates(setup.skill, result, tracker, reporter)
        _curve_plot(jobs, result, plots_dir, config.optimizer)
        evolved_body = parse_skill(evolved_text, setup.skill.path).body
        graders = holdout_graders(setup.verifier, setup.skill.text, models.judge)
        rows = baseline_rows + grade_variant(evolved_body, "evolved", setup, graders, config.num_threads, reporter,
                                             tracker)
    (setup.workdir / f"SKILL.evolved.{fitness}.md").write_bytes(setup.skill.as_file(evolved_text).encode("utf-8"))
    holdout = pd.DataFrame([r.to_dict() for r in rows])
    tracker.log_table(holdout, artifacts.HOLDOUT_TABLE)
    holdout.to_csv(setup.workdir / f"holdout_table.{fitness}.csv", index=False)
    spent_so_far = usage_since(models.usage.metrics(), usage_before)
    tracker.log_metrics(spent_so_far)
    check_lm_faults(spent_so_far, rows)  # FAILED with the reason rather than a verdict resting on faults
    holdout_plots(jobs, holdout, plots_dir)
    _log_labels(setup, rows, setup.workdir / f"labels-{fitness}", tracker)
    unchanged = gate.passed and evolved_text == setup.skill.text
    claim = assess(rows, gate, skill=setup.skill.name, fitness=fitness, run_id=tracker.run_id, alpha=config.alpha,
                   seed=config.seed, unchanged=unchanged)
    metrics = evaluate.summarize(rows)
    wall = time.perf_counter() - started
    spent = usage_since(models.usage.metrics(), usage_before)
    metrics.update({**spent, **claim.metrics(), "wall_time_s": wall,
                    "fitness.unscored": metric.unscored, "fitness.grades": metric.grades,
                    **val_scores(result.candidates, setup.skill.body, evolved_body, fitness)})
    metrics.update(log_glance(claim, rows, metrics, len(setup.splits.holdout), tracker))
    evidence = log_run_evidence(rows, spent, claim.stats, alpha=config.alpha, seed=config.seed,
                                folder=plots_dir, tracker=tracker, jobs=jobs)
    metrics.update(evidence.metrics())
    tracker.log_text(claim.report + "\n" + evidence.markdown(), artifacts.CLAIM_REPORT)
    gates_tag = "no change" if unchanged else "passed" if gate.passed else "rejected"
    log_run_report(experiment=config.experiment_name(), params=run_params(config, setup.skill, setup.splits, fitness),
                   metrics=metrics, tags={"skill": setup.skill.name, "fitness": fitness, "gates": gates_tag,
                                          **claim.verdict.to_tags()},
                   rows=rows, baseline_skill=setup.skill.text, evolved_skill=evolved_text,
                   diff=unified_diff(setup.skill.text, evolved_text, "SKILL.md"), gate=gate, tracker=tracker)
    if gate.passed and not unchanged:  # an unchanged skill is not a new version
        tracker.register_skill_version(setup.skill, evolved_text, fitness, claim.verdict.verdict,
                                       metrics.get(f"holdout.{PRIMARY_GRADER}.delta"), task_model=config.task_model,
                                       dataset_digest=setup.splits.digest())
    for path, artifact_path in jobs.placed():  # drawn by the plot process meanwhile (harness.analysis.plot_jobs)
        tracker.log_file(path, artifact_path)
    source = setup.source
    return RunResult(tracker.run_id, setup.skill, fitness, setup.splits, result, gate, evolved_text, metrics, rows,
                     wall, claim, config.optimizer, config.seed, source.describe() if source else "",
                     auto_fitness_note(config.fitness, source) if source else "", evidence)


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
    config = replace(config, max_tokens=task_max_tokens(config.max_tokens, setup.verifier))
    source = setup.source if setup.source is not None else setup.skill.name
    fitness = resolve_fitness(config.fitness, source)
    if setup.source is not None:
        reporter.note(f"tasks from {setup.source.describe()}")
        if note := auto_fitness_note(config.fitness, setup.source):
            reporter.note(f"fitness auto -> {note}")
    reporter.phase(f"skill {setup.skill.name} from {setup.skill.path} · fitness {fitness} · optimizer "
                   f"{config.optimizer} ({config.resolved_proposer()} proposer) · budget {config.budget}")
    reporter.note(f"dataset {setup.splits.digest()}: "
                  + ", ".join(f"{k} {v}" for k, v in setup.splits.sizes.items()))
    check_models_answer(config, judge=fitness == "judge", tracker=tracker)
    models = build_models(config, judge=fitness == "judge")
    return evolve_run(setup, config, fitness, models, tracker, reporter)
