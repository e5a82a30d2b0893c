"""``harness evolve``: one evolution run (several fitness signals: a side-by-side experiment)."""

from __future__ import annotations

from typing import Any

import click

from harness.cli.common import UsageError, guarded
from harness.cli.compare import run_compare
from harness.cli.options import make_config, preflight, print_plan, run_options, with_task_max_tokens
from harness.config import FITNESS_CHOICES


@click.command()
@run_options(
    "verifier",
    "Fitness that drives the optimizer: keyword, judge, verifier, auto, or 'all' / a comma "
    "list for a side-by-side experiment.",
)
def evolve(quiet: bool, num_cases: int, fitness: str, **options: Any) -> None:
    """Evolve one skill and log the run to MLflow (several fitness signals: a side-by-side experiment)."""
    if fitness == "all" or "," in fitness:
        run_compare(quiet, num_cases, fitness, options.get("optimizer", "gepa"), 1, options)
        return
    if fitness not in FITNESS_CHOICES:
        raise UsageError(f"invalid fitness={fitness!r}: expected one of {', '.join(FITNESS_CHOICES)}, or 'all'")
    config = make_config(num_cases, {**options, "fitness": fitness})

    def work() -> None:
        from harness.analysis.describe import run_name
        from harness.cli.console import Reporter
        from harness.cli.summary import summarize_run, view_links
        from harness.run import evolve as run_evolve
        from harness.tracking.store import check_tracking_store
        from harness.tracking.tracker import MlflowTracker

        run_config = with_task_max_tokens(config, preflight(config))
        if config.dry_run:
            print_plan(run_config, [config.fitness])
            return
        check_tracking_store()
        reporter = Reporter(quiet=quiet)
        name = run_name(config.skill, config.fitness, config.task_model, config.seed, config.optimizer)
        with reporter.library_output(), MlflowTracker(config.experiment_name(), run_name=name) as tracker:
            result = run_evolve(run_config, tracker, reporter)
        summarize_run(result, reporter, view_links(tracker))

    guarded(work, config.cache_dir)

