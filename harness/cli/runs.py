"""``harness runs reap``: mark runs whose process is gone (SIGKILL, out of memory, a crash) as KILLED."""

from __future__ import annotations

import click

from harness.cli.common import guarded


@click.group("runs")
def runs_command() -> None:
    """Housekeeping of the runs in the tracking store."""


@runs_command.command("reap")
@click.option("--stale-after", type=float, default=None,
              help="Seconds without a heartbeat after which another host's RUNNING run is presumed gone "
                   "(default 300).")
def reap_command(stale_after: float | None) -> None:
    """Mark RUNNING runs whose process is gone as KILLED, with the reason (never a live process's run, never
    another host's run with a fresh heartbeat). Every command that opens the store does this too."""

    def work() -> None:
        from harness.tracking.reaper import STALE_AFTER_S, reap_orphans
        from harness.tracking.store import check_tracking_store

        uri = check_tracking_store(reap=False)
        reaped = reap_orphans(uri, stale_after_s=STALE_AFTER_S if stale_after is None else stale_after)
        for item in reaped:
            click.echo(f"run {item.run_id} (experiment {item.experiment_id}) marked KILLED: {item.reason}")
        click.echo(f"{len(reaped)} orphaned run(s) marked KILLED in {uri}")

    guarded(work)
