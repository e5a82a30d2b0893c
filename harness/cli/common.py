"""What every command shares: the one-line usage error, whole-number options, signal handling and the guard
that turns user errors into exit code 2 and interrupts into 130/143.

Domain errors become one-line ``click`` errors with exit code 2 here and nowhere else; the library raises.

Signals during a run (:class:`Interrupts`): the *first* SIGINT (Ctrl-C), SIGTERM or SIGHUP (terminal closed) is
raised where the program is (``KeyboardInterrupt``, or :class:`Terminated` for SIGTERM/SIGHUP), so the run ends
as KILLED in MLflow with what it had logged and the message names it; the exit code is 128 + the signal (130,
143, 129).  From then on further signals are ignored, so a second Ctrl-C (or a SIGTERM after a Ctrl-C) cannot
interrupt the clean-up that records the run, nor the exit; a *third* ends the process at once (exit 128 + the
signal; the run may then stay RUNNING until the next command or ``harness runs reap`` marks it KILLED).
"""

from __future__ import annotations

import atexit
import decimal
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
    from verifiers.pybugfix import SandboxUnavailableError
    from verifiers.taskfile import TaskFileError

    return (ConfigError, SkillError, DatasetError, UnknownVerifierError, ModelError, TrackingError, TaskFileError,
            SandboxUnavailableError)


class WholeNumber(click.ParamType):
    """An integer that also accepts MLflow's float spelling of one (``60.0``): MLproject has no int type."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        """Exact: parsed as a decimal, never through a float (``99999999999999999999`` stays that number)."""
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            number = decimal.Decimal(str(value).strip())
        except (TypeError, ValueError, decimal.InvalidOperation):
            self.fail(f"{value!r} is not a whole number", param, ctx)
        if not number.is_finite() or number != number.to_integral_value():
            self.fail(f"{value!r} is not a whole number", param, ctx)
        return int(number)


WHOLE = WholeNumber()


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is, so a run ends as KILLED exactly as on Ctrl-C
    (exit code 128 + ``signum``: 143, 129)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"received signal {signal.Signals(signum).name}")
        self.signum = signum


#: the signals a run handles: Ctrl-C, termination, the terminal closing
HANDLED_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: signals after which the process ends at once, whatever it is doing
FORCE_AFTER = 3


class Interrupts:
    """The handler of :data:`HANDLED_SIGNALS` during a command (module docstring): raise on the first signal,
    ignore the second, end the process on the third.  The same handler object keeps its count even when a
    library (DSPy's parallel executor) saves and restores it around a block."""

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def install(self) -> Interrupts:
        """Install for every handled signal (main thread only); returns self."""
        for sig in HANDLED_SIGNALS:
            self._previous[sig] = signal.signal(sig, self.handle)
        return self

    def restore(self) -> None:
        """Put the previous handlers back (after a command that was not interrupted)."""
        for sig, handler in self._previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)

    def ignore_late_signals(self) -> None:
        """At interpreter exit after an interrupt, ignore the handled signals from then on (an ``atexit`` hook).

        Python's finalisation puts back the default action of every signal whose handler Python set, but not of
        ignored ones (CPython ``_PySignal_Fini``), so a second Ctrl-C landing in the last moments of a quick
        clean-up would end the process by the signal (exit -2) instead of 130.  Does nothing when no signal
        was received."""
        if self.received:
            for sig in HANDLED_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)

    @property
    def first(self) -> int | None:
        """The first signal received, or None."""
        return self.received[0] if self.received else None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if len(self.received) >= FORCE_AFTER:
            os.write(2, f"\nreceived {signal.Signals(signum).name} again: exiting now without clean-up\n".encode())
            os._exit(128 + signum)
        if len(self.received) > 1:
            return  # the clean-up of the first one is running: let it finish
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)


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
            if os.environ.get("MLFLOW_RUN_ID"):  # under `mlflow run -P ...`: the Projects run keeps the reason
                from harness.tracking.store import record_usage_error

                record_usage_error(os.environ["MLFLOW_RUN_ID"], exc.format_message())
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)


def kept_folder(exc: BaseException) -> str:
    """The run folder an interrupted or failed run left on disk (``harness.run.KEPT_FOLDER_ATTR``), or ``""``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:  # a second exception may carry the first as context
        seen.add(id(current))
        folder = getattr(current, "harness_kept_folder", "")
        if folder:
            return str(folder)
        current = current.__context__
    return ""


def which_runs(exc: BaseException) -> str:
    """``the MLflow run <id>`` (``... <child> (parent <id>)`` for a child run) of the runs ``exc`` ended;
    ``""`` when it ended none."""
    from harness.tracking.tracker import ended_runs

    ids: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and not ids:  # or the exception it interrupted
        seen.add(id(current))
        ids = ended_runs(current)
        current = current.__context__
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
    interrupts = Interrupts().install()
    atexit.register(interrupts.ignore_late_signals)  # after the hooks the command registers (atexit is LIFO)
    quiet_library_logs()
    interrupted = False
    try:
        if cache_dir is not None:
            os.environ["DSPY_CACHEDIR"] = str(configure_cache(cache_dir))
        work()
    except errors as exc:
        raise UsageError(redact_text(str(exc))) from None
    except KeyboardInterrupt as exc:
        interrupted = True  # later signals stay ignored through the exit (Interrupts)
        signum = interrupts.first or (exc.signum if isinstance(exc, Terminated) else signal.SIGINT)
        runs = which_runs(exc)
        name = signal.Signals(signum).name
        line = (f"interrupted by {name}: {runs} ended as KILLED with what it had logged" if runs
                else f"interrupted by {name} before an MLflow run was started")
        kept = kept_folder(exc)
        if kept:
            line += f"; its files are kept in {kept}"
        click.echo(line, err=True)
        sys.exit(128 + signum)  # the shell's codes for the signals: 130, 143, 129
    except Exception as exc:  # a fault inside the run: the run is FAILED and keeps the traceback as error.txt
        message = redact_text(" ".join(str(exc).split()))[:400] or type(exc).__name__
        runs = which_runs(exc)
        where = (f"{runs} is marked FAILED; the full traceback is its error.txt artifact" if runs
                 else "no MLflow run was started; HARNESS_TRACEBACK=1 shows the traceback")
        if kept_folder(exc):
            where += f"; its files are kept in {kept_folder(exc)}"
        click.echo(f"Error: the run failed: {type(exc).__name__}: {message} ({where})", err=True)
        if os.environ.get("HARNESS_TRACEBACK"):
            raise
        sys.exit(1)
    finally:  # after a run that was not interrupted, signals are plain termination again
        if not interrupted:
            interrupts.restore()
            atexit.unregister(interrupts.ignore_late_signals)



def quiet_library_logs() -> None:
    """DSPy logs every proposed instruction text at INFO; the console shows our own progress instead."""
    import logging

    for name in ("dspy", "gepa", "LiteLLM", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)

