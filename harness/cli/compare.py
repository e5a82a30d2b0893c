"""``harness compare``: a side-by-side experiment, and the hidden ``child`` command its parallel children run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from harness.cli.common import WHOLE, UsageError, guarded
from harness.cli.options import make_config, preflight, print_plan, run_options, with_task_max_tokens
from harness.config import FITNESS_CHOICES, OPTIMIZER_CHOICES, ConfigError


@click.command()
@run_options(
    "all", "Fitness signals to compare: 'all' (keyword, judge, verifier) or a comma list.", exclude=("optimizer",)
)
@click.option("--optimizers", default="gepa", show_default=True, help="Comma list of optimizers to compare.")
@click.option(
    "--seeds",
    type=WHOLE,
    default=1,
    show_default=True,
    help="Repeat each optimisation with this many seeds (child runs) on the same splits.",
)
@click.option(
    "--parallel",
    type=WHOLE,
    default=1,
    show_default=True,
    help="Child runs at once, each in its own process (1 = one after another in this process).",
)
def compare(
    quiet: bool, num_cases: int, fitness: str, optimizers: str, seeds: int, parallel: int, **options: Any
) -> None:
    """Side-by-side: one parent run, one child per fitness × optimizer × seed, every child cross-graded."""
    run_compare(quiet, num_cases, fitness, optimizers, seeds, options, parallel)


@click.command(hidden=True)
@click.argument("spec", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def child(spec: Path) -> None:
    """Run one child of a side-by-side experiment from the parent's spec file (internal)."""
    from harness.cli.console import Reporter
    from harness.compare import run_child

    guarded(lambda: run_child(spec, Reporter(quiet=True)), cache_dir="")


def run_compare(
    quiet: bool, num_cases: int, fitness: str, optimizers: str, seeds: int, options: dict[str, Any], parallel: int = 1
) -> None:
    from harness.compare import ALL_FITNESS, parse_list

    try:
        fitnesses = parse_list(fitness, FITNESS_CHOICES, "fitness", ALL_FITNESS)
        optimizer_list = parse_list(optimizers, OPTIMIZER_CHOICES, "optimizers", OPTIMIZER_CHOICES)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    options = {**options, "optimizer": optimizer_list[0]}  # children set their own
    config = make_config(num_cases, {**options, "fitness": fitnesses[0]})

    def work() -> None:
        from harness.analysis.describe import arm_label, parent_run_name
        from harness.cli.console import Reporter
        from harness.cli.summary import summarize_compare, view_links
        from harness.compare import compare as run_compare
        from harness.compare import plan_arms, seed_spreads
        from harness.tracking.store import check_tracking_store
        from harness.tracking.tracker import MlflowTracker

        sources = [preflight(replace(config, fitness=f)) for f in fitnesses]
        plan_arms(fitnesses, optimizer_list, seeds, config.seed, sources[0])
        run_config = with_task_max_tokens(config, sources[0])
        if config.dry_run:
            print_plan(run_config, fitnesses, optimizer_list, seeds)
            return
        check_tracking_store()
        reporter = Reporter(quiet=quiet)
        name = parent_run_name(config.skill, [arm_label(f, o) for f in fitnesses for o in optimizer_list],
                               config.task_model, seeds)
        with reporter.library_output(), MlflowTracker(config.experiment_name(), run_name=name) as parent:
            results = run_compare(run_config, fitnesses, optimizer_list, seeds, parent, reporter, parallel=parallel)
        summarize_compare(parent.run_id, results, reporter, seed_spreads(results, config.alpha), view_links(parent))

    guarded(work, config.cache_dir)

