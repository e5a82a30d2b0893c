"""``harness report``: a run's self-contained report (markdown for a pull request, or one HTML file)."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.common import UsageError


@click.command("report")
@click.option("--experiment", required=True, help="Experiment name (or id), e.g. skills/arxiv.")
@click.option("--run", "run_id", default=None, help="The run to report on; default: the experiment's latest "
              "top-level run (a single run or a side-by-side parent).")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The file to write (parent folders are created).")
@click.option("--format", "fmt", type=click.Choice(["md", "html"]), default="md", show_default=True,
              help="md: markdown fit for a pull request; html: one file with the figures inline.")
@click.option("--tracking-uri", default=None, help="Tracking store; default: MLFLOW_TRACKING_URI / MLflow's default.")
def report_command(experiment: str, run_id: str | None, out: Path, fmt: str, tracking_uri: str | None) -> None:
    """Write the report of a run: setup, scores per split, verdict, control, agreement, cost, gates, diff."""
    from harness.analysis.report import build_report
    from harness.tracking.reports import ReportError, read_report_input
    from harness.tracking.store import TrackingError, check_tracking_store

    try:
        check_tracking_store(tracking_uri)
        inp = read_report_input(experiment, run_id, tracking_uri)
    except (ReportError, TrackingError) as exc:
        raise UsageError(str(exc)) from None
    text = build_report(inp, fmt)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}; pass another --out") from None
    click.echo(f"report of run {inp.run_id} ({fmt}) -> {out}")
