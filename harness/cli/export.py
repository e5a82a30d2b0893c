"""``harness export``: runs' holdout grades (or a run summary) to CSV or Parquet."""

from __future__ import annotations

import click

from harness.cli.common import UsageError


@click.command("export")
@click.option("--experiment", default=None, help="Experiment name (or id), e.g. skills/arxiv.")
@click.option("--run-id", "run_ids", multiple=True, help="A run to export; repeat for several.")
@click.option("--parent-run-id", default=None, help="Export the child runs of this (side-by-side) parent run.")
@click.option("--out", required=True, type=click.Path(dir_okay=False),
              help="Output file: .csv, .parquet or .pq (parent folders are created).")
@click.option("--tracking-uri", default=None, help="Tracking store; default: MLFLOW_TRACKING_URI / MLflow's default.")
@click.option("--summary", is_flag=True, help="Write one row per run (params, metrics, tags) instead of the "
              "per-task holdout table.")
def export_command(experiment: str | None, run_ids: tuple[str, ...], parent_run_id: str | None, out: str,
                   tracking_uri: str | None, summary: bool) -> None:
    """Export runs' holdout grades (or a run summary) to CSV or Parquet."""
    from harness.tracking.export import ExportError, export

    try:
        frame, path = export(out, experiment=experiment, run_ids=run_ids, parent_run_id=parent_run_id,
                             tracking_uri=tracking_uri, summary=summary)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    for note in frame.attrs.get("notes", []):
        click.echo(f"note: {note}", err=True)
    if summary:
        click.echo(f"{len(frame)} rows (one per run) -> {path}")
        return
    skipped = len(frame.attrs.get("skipped_run_ids", []))
    runs = frame.attrs.get("run_count", 0)
    click.echo(f"{len(frame)} rows from {runs} run(s) ({skipped} skipped without a holdout table) -> {path}")
