"""``python -m verifiers.arxiv``: the grading demo and the live fact check (the only code here that prints).

``--demo`` prints how sample answers are graded; ``--validate`` checks the facts against the arXiv API
(exit 1: unreachable, 2: mismatch).
"""

from __future__ import annotations

import click

from verifiers.arxiv.demo import DEMO_HEADERS, demo_rows, demo_table
from verifiers.arxiv.live import API_TIMEOUT_S, API_URL_ENV, ARXIV_API_URL, ArxivApiError, validate
from verifiers.arxiv.papers import PAPERS
from verifiers.base import Grade

#: Console width of the demo table when stdout is not a terminal.
DEMO_WIDTH = 160


def print_demo(rows: list[tuple[str, str, Grade]], title: str = "arXiv verifier: how answers are graded") -> None:
    """Print the demo score table (a ``rich`` table when rich is importable, else plain text)."""
    cells = demo_table(rows)
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        for row in (DEMO_HEADERS, *cells):
            click.echo(" | ".join(row))
        return
    console = Console()
    if not console.is_terminal:  # piped output: do not squeeze the feedback column into 80 columns
        console = Console(width=DEMO_WIDTH)
    table = Table(title=title, show_lines=True)
    for header in DEMO_HEADERS:
        table.add_column(header, no_wrap=header != "feedback", overflow="fold")
    for row in cells:
        table.add_row(*row)
    console.print(table)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--demo", is_flag=True,
              help="Print how correct, hedged, wrong, evasive and verbose answers score.")
@click.option("--validate", "run_validate", is_flag=True,
              help="Re-check the 17 facts against the live arXiv API (exit 1: unreachable, 2: mismatch).")
@click.option("--api-url", default=ARXIV_API_URL, envvar=API_URL_ENV, show_default=True,
              help=f"arXiv API query endpoint (env {API_URL_ENV}).")
@click.option("--timeout", default=API_TIMEOUT_S, show_default=True, type=float, help="API timeout, seconds.")
@click.pass_context
def main(ctx: click.Context, demo: bool, run_validate: bool, api_url: str, timeout: float) -> None:
    """The arXiv verifier: grading demo and live fact check."""
    if not (demo or run_validate):
        raise click.UsageError("pass --demo and/or --validate")
    if demo:
        print_demo(demo_rows())
    if run_validate:
        ctx.exit(_run_validate(api_url, timeout))


def _run_validate(api_url: str, timeout: float) -> int:
    try:
        problems = validate(PAPERS, api_url, timeout)
    except ArxivApiError as exc:
        click.echo(str(exc), err=True)
        return 1
    for problem in problems:
        click.echo(f"MISMATCH {problem}")
    if problems:
        click.echo(f"{len(problems)} mismatch(es) against the arXiv API", err=True)
        return 2
    click.echo(f"all {len(PAPERS)} papers match the arXiv API ({api_url})")
    return 0


if __name__ == "__main__":
    main()
