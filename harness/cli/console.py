"""Console output with rich: phase lines and progress bars on stderr, the closing summary on stdout."""

from __future__ import annotations

import io
import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


class Reporter:
    """Prints what a run is doing; writes to stderr so stdout stays parseable.

    Args:
        quiet: print only the summary (and warnings); see :meth:`library_output`.
    """

    def __init__(self, quiet: bool = False, console: Console | None = None, out: Console | None = None) -> None:
        # bound to the streams of now, so :meth:`library_output` can move other output without moving ours
        self.console = console or Console(file=sys.stderr)
        self.out = out or Console(file=sys.stdout)
        self.quiet = quiet

    def phase(self, message: str) -> None:
        """One line saying what starts now."""
        if not self.quiet:
            self.console.print(f"[bold cyan]▶[/] {message}")

    def note(self, message: str) -> None:
        """A line of secondary information."""
        if not self.quiet:
            self.console.print(f"  {message}")

    def warn(self, message: str) -> None:
        """A line the user should not miss."""
        self.console.print(f"[bold yellow]![/] {message}")

    @contextmanager
    def library_output(self) -> Iterator[None]:
        """Around a run: keep stdout for the summary.

        Libraries print progress to stdout (DSPy's evaluation bars) and stderr (GEPA's bar, MLflow's
        evaluation banner).  Inside this block what they write to ``sys.stdout`` goes to stderr, so stdout
        holds only :meth:`summary`; when quiet, both streams go to :data:`os.devnull` instead, and logged
        warnings (WARNING and above, from the harness, DSPy, GEPA, LiteLLM and MLflow: e.g. a truncated LM
        reply, a scorer that failed on every task) are written to the real stderr, MLflow's INFO lines not.
        This reporter's own lines keep the real streams.  When stderr is not a terminal (redirected to a file or
        a pipe), library output goes through :class:`PlainLines`: no ANSI codes, and of a progress bar's
        carriage-return redraws only its last state.
        """
        saved_out, saved_err = sys.stdout, sys.stderr
        shown: Any = saved_err if _is_terminal(saved_err) else PlainLines(saved_err)
        with open(os.devnull, "w", encoding="utf-8") as sink:
            sys.stdout = sink if self.quiet else shown
            sys.stderr = sink if self.quiet else shown
            try:
                with _warnings_to(saved_err) if self.quiet else nullcontext():
                    yield
            finally:
                sys.stdout, sys.stderr = saved_out, saved_err
                if shown is not saved_err:
                    shown.close()

    @contextmanager
    def progress(self, description: str, total: int) -> Iterator[Any]:
        """A progress bar; yields a function to call once per finished item."""
        if self.quiet:
            yield lambda: None
            return
        bar = Progress(TextColumn("  {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                       console=self.console, transient=False)
        with bar:
            task = bar.add_task(description, total=total)
            yield lambda: bar.advance(task)

    def summary(self, title: str, rows: list[tuple[str, str]], footer: Mapping[str, str]) -> None:
        """A two-column table, then ``key: value`` footer lines, on stdout (progress goes to stderr)."""
        table = Table(title=title, show_header=False)
        table.add_column("what", style="bold")
        table.add_column("value")
        for key, value in rows:
            table.add_row(key, value)
        self.out.print(table)
        for key, value in footer.items():
            self.out.print(f"{key}: {value}", soft_wrap=True)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


#: CSI / OSC escape sequences (colours, cursor moves, hyperlinks)
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


class PlainLines(io.TextIOBase):
    """A text stream for a non-terminal: writes whole lines to ``target`` without ANSI escape codes, and drops
    the part of a line that a carriage return redraws (a progress bar's updates), so each bar leaves only its
    final state.  ``\\r\\n`` counts as a newline.  A partial last line is written on :meth:`close`."""

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target
        self._line = ""

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", None) or "utf-8"

    def fileno(self) -> int:
        return int(self.target.fileno())

    def write(self, text: str) -> int:
        clean = _ANSI.sub("", text).replace("\r\n", "\n")
        *done, self._line = (self._line + clean).split("\n")
        lines = [part.rsplit("\r", 1)[-1] for part in done]
        if lines:
            self.target.write("".join(line + "\n" for line in lines))
        if "\r" in self._line:  # a redraw: keep only what comes after the last carriage return
            self._line = self._line.rsplit("\r", 1)[-1]
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        if not self.closed and self._line.strip():
            self.target.write(self._line + "\n")
            self._line = ""
        if not self.closed:
            self.target.flush()
        super().close()


#: loggers that do not propagate to the root logger and print through their own handlers (on ``sys.stderr``)
_OWN_HANDLER_LOGGERS = ("mlflow", "dspy")


class _OneLineFormatter(logging.Formatter):
    """Under ``--quiet``: a record's first line only, never a traceback (a handled LM fault is counted in
    ``lm_errors.*`` and listed in the run's ``lm_errors.json``; an unhandled one is the run's ``error.txt``)."""

    def format(self, record: logging.LogRecord) -> str:
        line = (record.getMessage().strip().splitlines() or [""])[0]
        if len(line) > 300:
            line = line[:299] + "…"
        return f"{record.levelname} {record.name}: {line}"


@contextmanager
def _warnings_to(stream: Any) -> Iterator[None]:
    """Within the block, log records of WARNING and above go to ``stream`` as ``WARNING name: message``,
    from the root logger (everything that propagates) and from :data:`_OWN_HANDLER_LOGGERS`, whose own
    handlers write to ``sys.stderr`` (hidden by the caller)."""
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_OneLineFormatter("%(levelname)s %(name)s: %(message)s"))
    own = [lg for lg in map(logging.getLogger, _OWN_HANDLER_LOGGERS) if not lg.propagate]  # as set up on import
    loggers = [logging.getLogger(), *own]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        if lg.name in _OWN_HANDLER_LOGGERS:
            lg.setLevel(max(lg.getEffectiveLevel(), logging.WARNING))
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)
