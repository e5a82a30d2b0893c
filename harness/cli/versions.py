"""``harness versions``: the registered versions of a skill with their verdicts (MLflow prompt registry)."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

import click

from harness.cli.common import UsageError

if TYPE_CHECKING:
    import pandas as pd


def _display_rows(frame: pd.DataFrame) -> list[list[str]]:
    out = []
    for row in frame.itertuples(index=False):
        delta = "" if math.isnan(row.holdout_delta) else f"{row.holdout_delta:+.3f}"
        out.append([str(row.version), row.variant or "-", row.verdict or "-", delta or "-", row.fitness or "-",
                    row.task_model or "-", row.run_id or "-", row.created.strftime("%Y-%m-%d %H:%M:%S"),
                    row.sha256[:12] or "-", row.aliases or "-"])
    return out


_HEADERS = ["version", "variant", "verdict", "holdout_delta", "fitness", "task_model", "run_id", "created (UTC)",
            "sha256", "aliases"]


_SHORT_COLUMNS = frozenset({"version", "variant", "verdict", "holdout_delta", "fitness", "task_model"})


def _plain_table(rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_HEADERS)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


@click.command("versions")
@click.option("--skill", default="arxiv", show_default=True, help="Skill name (as given to 'harness evolve').")
@click.option("--format", "fmt", type=click.Choice(["auto", "plain", "rich"]), default="auto", show_default=True,
              help="Table style; auto = rich on a terminal, plain text columns otherwise.")
def versions_command(skill: str, fmt: str) -> None:
    """List the registered versions of a skill with their verdicts (MLflow prompt registry)."""
    from harness.tracking.prompts import PromptRegistryError, list_versions

    try:
        name, frame = list_versions(skill)
    except PromptRegistryError as exc:
        raise UsageError(str(exc)) from None
    if frame.empty:
        click.echo(f"no versions of skill {skill!r} are registered (prompt {name}); "
                   "an evolved skill is registered when it passes the gates")
        return
    rows = _display_rows(frame)
    if fmt == "plain" or (fmt == "auto" and not sys.stdout.isatty()):
        click.echo(f"skill {skill} - prompt {name} - {len(rows)} version(s)")
        click.echo(_plain_table(rows))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"skill {skill} · prompt {name}")
    shown = [i for i, header in enumerate(_HEADERS) if header != "sha256"]  # the plain format has it
    for i in shown:  # short cells never wrap; run ids, dates and aliases fold on a narrow terminal
        table.add_column(_HEADERS[i], no_wrap=_HEADERS[i] in _SHORT_COLUMNS, overflow="fold")
    for row in rows:
        table.add_row(*(row[i] for i in shown))
    Console().print(table)
