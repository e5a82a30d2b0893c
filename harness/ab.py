"""A/B runs (``harness ab``): a hand-written candidate SKILL.md against the baseline, no optimizer.

Both versions answer the same tasks (the holdout, or every task of the dataset) with the same task LM, every
grader the skill has grades both, and the run logs what an evolution run logs after its optimisation: the paired
statistics, the verdict, the claim report, the per-task table, the traces and the plots.  The candidate is the
``evolved`` variant of the per-task table (so statistics, plots and the export read it unchanged); the run is
tagged ``run.kind = ab`` and its claim report says which file the candidate was, so it is never mistaken for an
evolution run.  Nothing is registered in the prompt registry.

Several candidates (:func:`ab_many`) share one parent run, whose baseline answers are produced and graded once;
each candidate is a child run, and the parent ranks them by the verifier's paired delta.

The pieces are :mod:`harness.run`'s: :func:`~harness.run.prepared` (whatever task source the run resolves),
:func:`~harness.run.check_models_answer`, :func:`~harness.models.roles.build_models`,
:func:`~harness.run.log_setup`, :func:`~harness.run.grade_variant` and :func:`~harness.analysis.assess.assess`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import dspy
import pandas as pd

from harness import artifacts
from harness.analysis.assess import Assessment, assess
from harness.analysis.describe import ab_parent_description, verdicts_headline
from harness.analysis.plot_jobs import PlotJobs
from harness.claims import log_glance, log_skill_previews
from harness.config import AB_SPLIT_CHOICES, ConfigError, EvolveConfig
from harness.engine import holdout as evaluate
from harness.engine.graders import Grader
from harness.engine.program import stock_instructions
from harness.engine.registry import holdout_graders
from harness.models.roles import Models, build_models
from harness.reporting import Reporter
from harness.run import Setup, check_models_answer, grade_variant, holdout_plots, log_setup, plot_cache_dir, prepared
from harness.skills.candidates import Candidate, load_candidate, same_frontmatter
from harness.skills.files import Skill, SkillError, find_skill, load_skill
from harness.skills.gates import GateResult
from harness.tracking.tracker import MlflowTracker, Tracker

#: the ``run.kind`` tag of every A/B run (parent and children)
AB_KIND = "ab"
#: what the fitness and optimizer tags of an A/B run say: no optimisation ran
NO_OPTIMISATION = "none"
#: graders whose deltas the parent puts beside the verifier's, in column order
OTHER_GRADERS: tuple[str, ...] = ("keyword", "judge")
PRIMARY = "verifier"
_PASSED = GateResult(passed=True, reasons=())


@dataclass(frozen=True)
class AbPlan:
    """What an A/B run compares, checked before any run exists: the baseline and the candidates."""

    baseline: Skill
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class AbResult:
    """One candidate's outcome (one run)."""

    candidate: Candidate
    run_id: str | None
    metrics: dict[str, float]
    rows: list[evaluate.HoldoutRow]
    assessment: Assessment
    tasks: int
    wall_time_s: float

    def delta(self, grader: str) -> float:
        """The mean paired delta (candidate − baseline) of ``grader``; NaN when it did not grade."""
        return float(self.metrics.get(f"holdout.{grader}.delta", math.nan))

    @property
    def verdict(self) -> str:
        """The run's verdict (the verifier's)."""
        return self.assessment.verdict.verdict


def check_split(split: str) -> str:
    """``split`` if it is one of :data:`~harness.config.AB_SPLIT_CHOICES`.

    Raises:
        ConfigError: naming the value and the choices.
    """
    if split not in AB_SPLIT_CHOICES:
        raise ConfigError(f"invalid split={split!r}: expected one of {', '.join(AB_SPLIT_CHOICES)}")
    return split


def load_plan(config: EvolveConfig, candidates: Sequence[Path], against: Path | None = None) -> AbPlan:
    """Find the skill, load the baseline (``against`` or the skill's own file) and check every candidate.

    Every candidate is checked before any error is raised, so one message lists every refused file.

    Raises:
        SkillError: the skill is not found; a file is missing, unreadable or not a SKILL.md; no candidate.
        CandidateError: the ``against`` file or a candidate has other frontmatter than the skill (with the
            diff), or a candidate fails the gates.
    """
    if not candidates:
        raise SkillError("no candidate: pass --candidate FILE or --candidates DIR")
    skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
    baseline = skill
    if against is not None:
        baseline = load_skill(Path(against))
        same_frontmatter(skill, baseline, "--against file")
    loaded: list[Candidate] = []
    refused: list[SkillError] = []
    stock = stock_instructions()
    for path in candidates:
        try:
            loaded.append(load_candidate(path, baseline, stock_instructions=stock))
        except SkillError as exc:
            refused.append(exc)
    if refused:
        raise type(refused[0])("\n".join(str(exc) for exc in refused))
    return AbPlan(baseline, tuple(loaded))


def graded_tasks(setup: Setup, split: str) -> Setup:
    """``setup`` whose holdout is what ``split`` answers: the holdout itself, or every task of the dataset."""
    if check_split(split) == "holdout":
        return setup
    every = (*setup.splits.trainset, *setup.splits.valset, *setup.splits.holdout)
    return replace(setup, splits=replace(setup.splits, trainset=(), valset=(), holdout=every))


def _tag(tracker: Tracker, plan: AbPlan, split: str, **extra: str) -> None:
    """The tags that say an A/B run is not an evolution run (they replace log_setup's fitness/optimizer tags)."""
    tracker.set_tags({artifacts.TAG_RUN_KIND: AB_KIND, "fitness": NO_OPTIMISATION, "optimizer": NO_OPTIMISATION,
                      "proposer": NO_OPTIMISATION, "ab.split": split, "ab.baseline_path": str(plan.baseline.path),
                      **extra})


def _judge_wanted(config: EvolveConfig) -> bool:
    return bool(config.judge_model.strip())


def _start(setup: Setup, config: EvolveConfig, plan: AbPlan, split: str, tracker: Tracker, reporter: Reporter,
           **tags: str) -> tuple[Setup, Models, list[Grader], list[evaluate.HoldoutRow]]:
    """Log the setup and the A/B tags (and ``tags``) into ``tracker``'s run, build the models, and answer and
    grade the baseline once."""
    log_setup(setup, config, NO_OPTIMISATION, tracker)
    _tag(tracker, plan, split, **tags)
    check_models_answer(config, judge=_judge_wanted(config), tracker=tracker)
    models = build_models(config, judge=_judge_wanted(config))
    graders = holdout_graders(setup.verifier, plan.baseline.text, models.judge)
    graded = graded_tasks(setup, split)
    reporter.phase(f"baseline {plan.baseline.path} on the {split} ({len(graded.splits.holdout)} tasks)")
    with dspy.context(lm=models.task):
        rows = grade_variant(plan.baseline.body, "baseline", graded, graders, config.num_threads, reporter, tracker)
    return graded, models, graders, rows


def _note(plan: AbPlan, candidate: Candidate, split: str, tasks: int) -> str:
    return (f"> **A/B comparison (`harness ab`), not an evolution run**: no optimizer ran. \"Evolved\" below and "
            f"in the per-task table is the hand-written candidate `{candidate.skill.path}`; the baseline is "
            f"`{plan.baseline.path}`. Both answered the same {tasks} tasks ({split}).\n\n")


def candidate_run(graded: Setup, config: EvolveConfig, plan: AbPlan, candidate: Candidate, models: Models,
                  graders: list[Grader], baseline_rows: list[evaluate.HoldoutRow], split: str, tracker: Tracker,
                  reporter: Reporter) -> AbResult:
    """Answer and grade ``candidate`` and log its comparison with ``baseline_rows`` into ``tracker``'s run.

    Raises:
        Exception: LM failures (the tracker marks the run FAILED); nothing is swallowed.
    """
    started = time.perf_counter()
    tasks = len(graded.splits.holdout)
    reporter.phase(f"candidate {candidate.name}: {candidate.skill.path}")
    _tag(tracker, plan, split, **{"ab.candidate": candidate.name, "ab.candidate_path": str(candidate.skill.path),
                                  artifacts.TAG_GATES: "passed"})
    tracker.log_params({"ab.candidate_path": str(candidate.skill.path), "ab.candidate_sha256": candidate.skill.sha256,
                        "ab.split": split, "ab.tasks": tasks})
    try:
        with dspy.context(lm=models.task):
            rows = baseline_rows + grade_variant(candidate.skill.body, "evolved", graded, graders,
                                                 config.num_threads, reporter, tracker)
    finally:
        tracker.log_dict({"errors": models.usage.errors()}, artifacts.LM_ERRORS)
    tracker.log_text(candidate.skill.text, artifacts.CANDIDATE_SKILL)
    log_skill_previews(plan.baseline.text, candidate.skill.text, artifacts.CANDIDATE_SKILL_PREVIEW, tracker)
    holdout = pd.DataFrame([r.to_dict() for r in rows])
    tracker.log_table(holdout, artifacts.HOLDOUT_TABLE)
    holdout.to_csv(graded.workdir / f"holdout_table.ab.{candidate.name}.csv", index=False)
    jobs = PlotJobs(cache=plot_cache_dir())  # drawn in the background meanwhile (or copied), as an evolution run's are
    holdout_plots(jobs, holdout, graded.workdir / f"plots-ab-{candidate.name}")
    claim = assess(rows, _PASSED, skill=plan.baseline.name, fitness=NO_OPTIMISATION, run_id=tracker.run_id,
                   alpha=config.alpha, seed=config.seed)
    metrics = evaluate.summarize(rows)
    wall = time.perf_counter() - started
    metrics.update({**models.usage.metrics(), **claim.metrics(), "wall_time_s": wall})
    metrics.update(log_glance(claim, rows, metrics, tasks, tracker, lead=f"A/B comparison (no optimizer) of the "
                              f"candidate `{candidate.skill.path.name}` against the baseline:"))
    tracker.log_text(_note(plan, candidate, split, tasks) + claim.report, artifacts.CLAIM_REPORT)
    for path in jobs.results():
        tracker.log_file(path, artifacts.PLOTS_DIR)
    return AbResult(candidate, tracker.run_id, metrics, rows, claim, tasks, wall)


def ab(config: EvolveConfig, plan: AbPlan, split: str, tracker: Tracker, reporter: Reporter) -> AbResult:
    """One candidate against the baseline, logged into ``tracker``'s run (already entered).

    Raises:
        ConfigError: an unknown ``split``; as :func:`harness.run.prepare` for the task source; LM failures.
    """
    check_split(split)
    if len(plan.candidates) != 1:
        raise ConfigError(f"ab() compares one candidate, got {len(plan.candidates)}; use ab_many()")
    with prepared(config) as prepared_setup:
        setup = replace(prepared_setup, skill=plan.baseline)
        graded, models, graders, baseline = _start(setup, config, plan, split, tracker, reporter)
        return candidate_run(graded, config, plan, plan.candidates[0], models, graders, baseline, split, tracker,
                             reporter)


def ab_many(config: EvolveConfig, plan: AbPlan, split: str, parent: MlflowTracker,
            reporter: Reporter) -> list[AbResult]:
    """Every candidate as a child run of ``parent`` (already entered), sharing the baseline's answers and grades;
    the parent logs the ranking (:func:`ranking`) and the disagreements (:func:`disagreements`).

    Raises:
        as :func:`ab`; a failing child fails the parent.
    """
    check_split(split)
    with prepared(config) as prepared_setup:
        setup = replace(prepared_setup, skill=plan.baseline)
        graded, models, graders, baseline = _start(setup, config, plan, split, parent, reporter,
                                                   **{"ab.candidates": str(len(plan.candidates))})
        parent.log_table(pd.DataFrame([r.to_dict() for r in baseline]), artifacts.BASELINE_TABLE)
        assert parent.run_id is not None
        results = []
        for candidate in plan.candidates:
            with MlflowTracker(config.experiment_name(), run_name=run_name(plan.baseline.name, candidate.name),
                               parent_run_id=parent.run_id) as child:
                log_setup(setup, config, NO_OPTIMISATION, child)
                results.append(candidate_run(graded, config, plan, candidate, models, graders, baseline, split,
                                             child, reporter))
        frame = ranking(results)
        lines = summary_text(plan, results, split).splitlines()
        parent.log_table(frame, artifacts.AB_RANKING)
        parent.log_text("\n".join(lines) + "\n", artifacts.AB_SUMMARY)
        found = disagreements(results)
        parent.set_tags({"ab.summary": " | ".join(f"{r.candidate.name} verifier {r.delta(PRIMARY):+.3f}"
                                                  for r in ranked(results))[:500]})
        if found:
            parent.set_tags({"ab.disagreements": " | ".join(found)[:500]})
        parent.set_tags({artifacts.TAG_VERDICT: " · ".join(f"{r.candidate.name}: {r.verdict}"
                                                           for r in ranked(results))[:500],
                         artifacts.TAG_DESCRIPTION: ab_parent_description(
                             frame, baseline=str(plan.baseline.path), split=split, task_model=config.task_model,
                             disagreements=len(found))})
        parent.name_verdict(verdicts_headline([r.verdict for r in results]))
        parent.log_metrics({**models.usage.metrics(),
                            **{f"ab.{r.candidate.name}.{g}.delta": r.delta(g) for r in results
                               for g in (PRIMARY, *OTHER_GRADERS)}})
        for line in found:
            reporter.warn(line)
        return results


def dry_run_rows(config: EvolveConfig, plan: AbPlan, split: str) -> list[tuple[str, str]]:
    """The dry run: build and save the dataset, check every model answers and the store works; ``(what, value)``
    rows of what the A/B run would do.  No MLflow run is created.

    Raises:
        as :func:`harness.run.prepare`; harness.models.lm.ModelError; harness.tracking.store.TrackingError.
    """
    from harness.models.preflight import check_models
    from harness.models.roles import model_specs
    from harness.tracking.store import check_tracking_store

    setup = graded_tasks(_with_baseline(config, plan), split)
    specs = {role: spec for role, spec in model_specs(config, judge=_judge_wanted(config)).items() if spec}
    reports = check_models(specs)
    uri = check_tracking_store()
    tasks = len(setup.splits.holdout)
    calls = tasks * (1 + len(plan.candidates))
    return [("baseline", f"{plan.baseline.path} (sha256 {plan.baseline.sha256[:12]})"),
            *[(f"candidate {c.name}", f"{c.skill.path}: gates passed") for c in plan.candidates],
            ("tasks", f"{tasks} ({split}; dataset {setup.splits.digest()}, saved to {setup.workdir / 'dataset'})"),
            *[(f"{role} model", f"{spec.model} — answered in {reports[role].latency_s:.2f} s")
              for role, spec in specs.items()],
            ("tracking store", uri),
            ("expected LM calls", f"task {calls}" + (f", judge {calls}" if "judge" in specs else "")
             + " (fewer with a warm DSPy cache)")]


def _with_baseline(config: EvolveConfig, plan: AbPlan) -> Setup:
    from harness.run import prepare

    return replace(prepare(config), skill=plan.baseline)


def run_name(skill: str, candidate: str) -> str:
    """``<skill>-ab-<candidate>``: the name of a candidate's run."""
    return f"{skill}-ab-{candidate}"


def ranked(results: Sequence[AbResult]) -> list[AbResult]:
    """``results`` by the verifier's paired delta, best first (no verifier delta: last, in input order)."""
    def key(r: AbResult) -> tuple[int, float]:
        d = r.delta(PRIMARY)
        return (1, 0.0) if math.isnan(d) else (0, -d)

    return sorted(results, key=key)


def ranking(results: Sequence[AbResult]) -> pd.DataFrame:
    """One row per candidate, best verifier delta first: rank, candidate, the verifier's delta and verdict, the
    keyword and judge deltas and verdicts, the tasks answered and the child run id."""
    records = []
    for rank, r in enumerate(ranked(results), start=1):
        per = r.assessment.verdict.per_grader
        record: dict[str, object] = {"rank": rank, "candidate": r.candidate.name,
                                     "verifier_delta": r.delta(PRIMARY), "verdict": r.verdict}
        for g in OTHER_GRADERS:
            record[f"{g}_delta"] = r.delta(g)
            record[f"{g}_verdict"] = per.get(g, "n/a")
        records.append({**record, "tasks": r.tasks, "path": str(r.candidate.skill.path), "run_id": r.run_id})
    return pd.DataFrame(records)


def direction(delta: float) -> str:
    """``improved`` / ``regressed`` / ``unchanged`` by the sign of a mean delta (``n/a`` for NaN)."""
    if math.isnan(delta):
        return "n/a"
    return "improved" if delta > 0 else "regressed" if delta < 0 else "unchanged"


def disagreements(results: Sequence[AbResult]) -> list[str]:
    """Lines for each candidate that keyword or judge grading rates up while the verifier does not, or down while
    the verifier rates it up, e.g. ``hedge: keyword says improved (Δ +0.041), verifier says regressed
    (Δ -0.062); paired verdicts: keyword inconclusive, verifier inconclusive``.

    The words follow the sign of the mean paired delta; the paired verdicts (significance at the run's alpha)
    are given beside them, so a disagreement of directions is not read as a significant one.
    """
    lines = []
    for r in ranked(results):
        v = r.delta(PRIMARY)
        if math.isnan(v):
            continue
        for g in OTHER_GRADERS:
            d = r.delta(g)
            if math.isnan(d) or not ((d > 0 and v <= 0) or (d < 0 and v > 0)):
                continue
            per = r.assessment.verdict.per_grader
            lines.append(f"{r.candidate.name}: {g} says {direction(d)} (Δ {d:+.3f}), {PRIMARY} says {direction(v)} "
                         f"(Δ {v:+.3f}); paired verdicts: {g} {per.get(g, 'n/a')}, {PRIMARY} {r.verdict}")
    return lines


def _fmt(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:+.3f}"


def summary_text(plan: AbPlan, results: Sequence[AbResult], split: str) -> str:
    """The parent's plain-text summary: the ranking table, then the disagreements."""
    tasks = results[0].tasks if results else 0
    head = ["rank", "candidate", "verifier Δ", *(f"{g} Δ" for g in OTHER_GRADERS), "verdict"]
    rows = [[str(i), r.candidate.name, _fmt(r.delta(PRIMARY)), *(_fmt(r.delta(g)) for g in OTHER_GRADERS),
             r.verdict] for i, r in enumerate(ranked(results), start=1)]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
    table = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [head, *rows]]
    found = disagreements(results)
    out = [f"harness ab: {len(results)} candidates against {plan.baseline.path} on the {split} ({tasks} tasks), "
           f"ranked by the verifier's paired delta (candidate - baseline)", "", *table, ""]
    out.append("Disagreements (by the sign of the mean delta):" if found else
               "Disagreements: none (keyword and judge deltas point the verifier's way for every candidate).")
    out += [f"- {line}" for line in found]
    return "\n".join(out) + "\n"


__all__ = ["AB_KIND", "AbPlan", "AbResult", "ab", "ab_many", "candidate_run", "disagreements", "dry_run_rows",
           "graded_tasks", "load_plan", "ranked", "ranking", "run_name", "summary_text"]
