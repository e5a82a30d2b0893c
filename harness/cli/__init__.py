"""The ``harness`` command line: a click group with one module per command; the only code that prints or exits.

``harness --help`` imports neither DSPy, pandas nor MLflow: each command imports the library when it runs.
"""

from __future__ import annotations

import click

from harness.cli.ab import ab_command
from harness.cli.common import OneLineErrors, UsageError
from harness.cli.compare import child, compare
from harness.cli.evolve import evolve
from harness.cli.export import export_command
from harness.cli.report import report_command
from harness.cli.runs import runs_command
from harness.cli.tasks import tasks_group
from harness.cli.versions import versions_command

__all__ = ["UsageError", "main"]


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="skill-evolution-harness")
def main() -> None:
    """Evolve SKILL.md files with DSPy optimizers and grade them objectively, tracked in MLflow."""


for _command in (evolve, compare, ab_command, child, export_command, report_command, versions_command,
                 tasks_group, runs_command):
    main.add_command(_command)
