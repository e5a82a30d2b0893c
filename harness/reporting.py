"""What the sequencing layer needs to tell a user about a run in progress: a protocol, so ``run``, ``compare`` and
``dryrun`` report without importing the console (the CLI's :class:`harness.cli.console.Reporter` implements it,
and :class:`SilentReporter` reports nothing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol


class Reporter(Protocol):
    """Progress and messages of one run (the console prints them to stderr)."""

    def phase(self, message: str) -> None:
        """A new stage of the run begins."""

    def note(self, message: str) -> None:
        """A detail worth a line."""

    def warn(self, message: str) -> None:
        """Something the user should know (also under ``--quiet``)."""

    def progress(self, description: str, total: int) -> AbstractContextManager[Callable[[], None]]:
        """A block that does ``total`` steps; yields a callable to call after each step."""


class SilentReporter:
    """A :class:`Reporter` that reports nothing (library use, tests)."""

    def phase(self, message: str) -> None:
        """Discard."""

    def note(self, message: str) -> None:
        """Discard."""

    def warn(self, message: str) -> None:
        """Discard."""

    @contextmanager
    def progress(self, description: str, total: int) -> Iterator[Callable[[], None]]:
        """Yield a no-op step callback."""
        yield lambda: None
