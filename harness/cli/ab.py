"""``harness ab``: compare a hand-written candidate SKILL.md (or a folder of them) with the baseline, no optimizer."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.cli.common import UsageError, guarded
from harness.cli.options import make_config, preflight, run_options, with_task_max_tokens
from harness.config import AB_SPLIT_CHOICES

if TYPE_CHECKING:
    from harness.ab import AbPlan, AbResult
    from harness.cli.console import Reporter

#: options of evolve/compare that mean nothing without an optimizer
#: options of an evolution run that an A/B comparison has no use for (no optimizer; no no-skill control)
NOT_FOR_AB: tuple[str, ...] = ("fitness", "optimizer", "budget", "reflection_model", "proposer", "control",
                               "no_control")


@click.command("ab")
@run_options("auto", "", exclude=NOT_FOR_AB)
@click.option("--candidate", default="", help="The candidate SKILL.md (any file name; same frontmatter as the "
              "baseline).")
@click.option("--candidates", default="", help="A folder of candidates (every *.md in it and every */SKILL.md): "
              "one parent run, one child per candidate, ranked by the verifier's delta.")
@click.option("--against", default="", help="Compare with this SKILL.md instead of the skill's own file.")
@click.option("--split", type=click.Choice(AB_SPLIT_CHOICES), default="holdout", show_default=True,
              help="Answer the holdout, or every task of the dataset.")
def ab_command(quiet: bool, num_cases: int, candidate: str, candidates: str, against: str, split: str,
               **options: Any) -> None:
    """Compare two skill versions on the same tasks: paired statistics, verdict and claim report, no optimizer."""
    if bool(candidate.strip()) == bool(candidates.strip()):
        raise UsageError("pass exactly one of --candidate FILE and --candidates DIR")
    config = make_config(num_cases, {**options, "fitness": "auto"})

    def work() -> None:
        from harness.ab import ab, ab_many, load_plan, run_name
        from harness.cli.console import Reporter
        from harness.cli.summary import view_links
        from harness.skills.candidates import candidate_files
        from harness.tracking.store import check_tracking_store
        from harness.tracking.tracker import MlflowTracker

        run_config = with_task_max_tokens(config, preflight(config))
        paths = candidate_files(Path(candidates)) if candidates.strip() else [Path(candidate)]
        plan = load_plan(run_config, paths, Path(against) if against.strip() else None)
        if run_config.dry_run:
            from harness.ab import dry_run_rows

            Reporter().summary("dry run: what harness ab would do", dry_run_rows(run_config, plan, split),
                               {"dry run": "all checks passed; no MLflow run was created"})
            return
        check_tracking_store()
        reporter = Reporter(quiet=quiet)
        name = plan.baseline.name
        if candidates.strip():
            parent_name = f"{name}-ab-{Path(candidates).name}"
            with reporter.library_output(), \
                    MlflowTracker(run_config.experiment_name(), run_name=parent_name) as parent:
                results = ab_many(run_config, plan, split, parent, reporter)
            summarize_many(parent.run_id, plan, results, reporter, view_links(parent))
            return
        child_name = run_name(name, plan.candidates[0].name)
        with reporter.library_output(), \
                MlflowTracker(run_config.experiment_name(), run_name=child_name) as tracker:
            result = ab(run_config, plan, split, tracker, reporter)
        summarize_one(plan, result, split, reporter, view_links(tracker))

    guarded(work, config.cache_dir)


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None or value != value:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def summarize_one(plan: AbPlan, result: AbResult, split: str, reporter: Reporter,
                  links: Mapping[str, str] | None = None) -> None:
    """The closing table of a single A/B run: per grader baseline -> candidate (Δ), the verdict, the run id."""
    m = result.metrics
    rows = [("baseline", str(plan.baseline.path)), ("candidate", str(result.candidate.skill.path)),
            ("tasks", f"{result.tasks} ({split})")]
    for grader in ("verifier", "keyword", "judge"):
        if f"holdout.{grader}.baseline" not in m:
            continue
        rows.append((f"{grader} composite", f"{_fmt(m[f'holdout.{grader}.baseline'])} → "
                     f"{_fmt(m.get(f'holdout.{grader}.evolved'))}  (Δ {_fmt(result.delta(grader), True)})"))
        unscored = [int(m.get(f"holdout.{grader}.{v}.unscored", 0)) for v in ("baseline", "evolved")]
        if any(unscored):
            rows.append((f"{grader} unscored", f"{unscored[0]} baseline, {unscored[1]} candidate"))
    verdict = result.assessment.verdict
    rows.append(("verdict", f"{verdict.verdict}: {verdict.reason}"))
    rows.extend(("disagreement", d) for d in verdict.disagreements)
    rows += [("LM calls", str(int(m.get("lm_calls.total", 0)))), ("wall time", f"{result.wall_time_s:.1f} s")]
    reporter.summary("harness ab: candidate vs baseline (no optimizer)", rows,
                     {"run id": str(result.run_id), **(links or {})})


def summarize_many(parent_run_id: str | None, plan: AbPlan, results: list[AbResult], reporter: Reporter,
                   links: Mapping[str, str] | None = None) -> None:
    """The closing table of a multi-candidate A/B run: the ranking, the disagreements, the parent run id."""
    from harness.ab import disagreements, ranked

    rows = []
    for rank, r in enumerate(ranked(results), start=1):
        deltas = ", ".join(f"{g} Δ {_fmt(r.delta(g), True)}" for g in ("verifier", "keyword", "judge"))
        rows.append((f"{rank}. {r.candidate.name}", f"{deltas} · verdict {r.verdict} · run {r.run_id}"))
    rows.extend(("disagreement", line) for line in disagreements(results))
    reporter.summary(f"harness ab: {len(results)} candidates vs {plan.baseline.path}, ranked by the verifier", rows,
                     {"parent run id": str(parent_run_id), **(links or {})})
