"""What every command shares: the one-line usage error, whole-number options, signal handling and the guard
that turns user errors into exit code 2 and interrupts into 130/143.

Domain errors become one-line ``click`` errors with exit code 2 here and nowhere else; the library raises.
During a run SIGTERM is turned into :class:`Terminated` (a ``KeyboardInterrupt``) so an interrupted run ends as
KILLED in MLflow; the exit code is 130 after Ctrl-C and 143 after SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType
from typing import Any

import click

from harness.config import ConfigError, apply_environment_defaults, ensure_writable_folder
from harness.messages import redact_text


class UsageError(click.ClickException):
    """A user-fixable error: printed as one line, exit code 2."""

    exit_code = 2

    def format_message(self) -> str:
        return self.message

    def show(self, file: Any = None) -> None:
        click.echo(f"Error: {self.format_message()}", err=True)


def user_errors() -> tuple[type[BaseException], ...]:
    from harness.models.lm import ModelError
    from harness.skills.files import SkillError
    from harness.tracking.store import TrackingError
    from verifiers import DatasetError, UnknownVerifierError

    return (ConfigError, SkillError, DatasetError, UnknownVerifierError, ModelError, TrackingError)


class WholeNumber(click.ParamType):
    """An integer that also accepts MLflow's float spelling of one (``60.0``): MLproject has no int type."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a whole number", param, ctx)
        if not number.is_integer():
            self.fail(f"{value!r} is not a whole number", param, ctx)
        return int(number)


WHOLE = WholeNumber()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so a run ends as KILLED exactly as on Ctrl-C (exit code 143)."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"received signal {signal.Signals(signum).name}")


def check_output_dir(path: str) -> None:
    if not path:
        return
    try:
        ensure_writable_folder(path)
    except OSError as exc:
        raise UsageError(f"output folder {path} is not writable ({exc.strerror}); pass another --output-dir") from None


class OneLineErrors(click.Group):
    """A click group whose usage errors are one line (``Error: ...``) with exit code 2, no usage dump."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        apply_environment_defaults()  # before any command imports LiteLLM or MLflow
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)


def which_runs(exc: BaseException) -> str:
    """``the MLflow run <id>`` (``... <child> (parent <id>)`` for a child run) of the runs ``exc`` ended;
    ``""`` when it ended none."""
    from harness.tracking.tracker import ended_runs

    ids = ended_runs(exc)
    if not ids:
        return ""
    return f"the MLflow run {ids[0]}" + (f" (parent {', '.join(ids[1:])})" if len(ids) > 1 else "")


def guarded(work: Any, cache_dir: str | None = None) -> None:
    """Run ``work()`` with user errors as one-line exit-2 errors and SIGTERM/Ctrl-C as an interrupt.

    ``cache_dir`` (when not None) turns DSPy's cache on there first; the resolved folder goes into
    ``DSPY_CACHEDIR`` so child processes share it and the run records it.
    """
    from harness.models.lm import configure_cache

    errors = user_errors()
    previous_handler = signal.signal(signal.SIGTERM, _raise_terminated)
    quiet_library_logs()
    try:
        if cache_dir is not None:
            os.environ["DSPY_CACHEDIR"] = str(configure_cache(cache_dir))
        work()
    except errors as exc:
        raise UsageError(redact_text(str(exc))) from None
    except KeyboardInterrupt as exc:
        runs = which_runs(exc)
        click.echo(f"interrupted: {runs} ended as KILLED with what it had logged" if runs
                   else "interrupted before an MLflow run was started", err=True)
        sys.exit(128 + signal.SIGTERM if isinstance(exc, Terminated) else 130)  # the shell's codes for the signals
    except Exception as exc:  # a fault inside the run: the run is FAILED and keeps the traceback as error.txt
        message = redact_text(" ".join(str(exc).split()))[:400] or type(exc).__name__
        runs = which_runs(exc)
        where = (f"{runs} is marked FAILED; the full traceback is its error.txt artifact" if runs
                 else "no MLflow run was started; HARNESS_TRACEBACK=1 shows the traceback")
        click.echo(f"Error: the run failed: {type(exc).__name__}: {message} ({where})", err=True)
        if os.environ.get("HARNESS_TRACEBACK"):
            raise
        sys.exit(1)
    finally:  # after the run, SIGTERM is plain termination again (no KeyboardInterrupt during shutdown)
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous_handler is None else previous_handler)



def quiet_library_logs() -> None:
    """DSPy logs every proposed instruction text at INFO; the console shows our own progress instead."""
    import logging

    for name in ("dspy", "gepa", "LiteLLM", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)

