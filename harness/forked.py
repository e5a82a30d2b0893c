"""Helpers for the harness's forked worker processes (the store writer, the plot renderer); standard library only.

A worker forked from a run must not act on the signals a terminal sends the whole process group (Ctrl-C's
SIGINT, SIGHUP when the terminal closes): the run decides what happens, and the worker finishes what it was sent.
SIGTERM, sent to one process, keeps its default action, so ``Process.terminate`` (multiprocessing's clean-up of
daemon workers at exit) still ends a worker.  A worker also notices when the run is gone, and hands its exceptions
back in a form that survives pickling.  A worker that has handed back everything it was asked for is reaped
later (:func:`reap_later`): the run does not wait for its exit.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import traceback
from typing import Any

#: the signals a terminal sends the run's whole process group: its workers ignore them
WORKER_IGNORED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGHUP")
                               if hasattr(signal, name))


class WorkerError(RuntimeError):
    """A worker process failed with an exception that cannot be sent back as it is (its type, text and the
    worker's traceback are in the message), or ended without answering."""


def can_fork() -> bool:
    """Whether worker processes are forked here: ``fork`` is a start method of this platform, and it is not macOS
    (where Python itself refuses to fork by default: system libraries there may crash in a forked child)."""
    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def ignore_run_signals() -> None:
    """(Worker) ignore SIGINT and SIGHUP, which the run handles."""
    for sig in WORKER_IGNORED_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def freeze_inherited_objects() -> None:
    """(Worker, first thing after the fork) put every object inherited from the run into the garbage collector's
    permanent generation (``gc.freeze``), so the worker's collections only walk the objects it made itself.

    Why (issue 18): a forked worker inherits the run's collector counts, and its own allocations (SQLAlchemy's
    ORM in the store writer) then set off a full collection there, which walked the run's whole heap (DSPy,
    MLflow, pandas): 0.45-0.56 s of CPU in a zero-latency run, and as many page copies, since marking
    an object writes to a page shared with the run.  ``gc.freeze`` only moves list heads; objects inherited and
    freed by reference counting are still freed.  Source: the ``gc.freeze`` documentation (a forked child must
    ensure "that GC collections in child processes won't touch the gc_refs counter of long-lived objects
    originating in the parent process"; it freezes in the parent before the fork, which would also stop the run's
    own collections from freeing those objects' cycles, so the worker freezes its copy instead)."""
    gc.freeze()


def portable(exc: BaseException, where: str) -> BaseException:
    """``exc`` if it survives a pickle round trip, else a :class:`WorkerError` naming it and ``where`` it
    happened (e.g. ``"the plot process"``)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any pickling failure: send the text instead
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return WorkerError(f"{type(exc).__name__}: {exc}\n(in {where})\n{text}")


class ParentWatch:
    """(Worker) whether the process that forked this one is still its parent (a dead parent's children are
    re-parented)."""

    def __init__(self) -> None:
        self._parent = os.getppid()

    def gone(self) -> bool:
        """True once the parent has died."""
        return os.getppid() != self._parent


def reap_later(process: Any) -> threading.Thread:
    """Join the ``multiprocessing.Process`` ``process`` in a daemon thread, and return that thread.

    For a worker that has answered everything it was sent (its writes committed, its plots handed back) and is
    only exiting: the exit of a forked child (its finalizers, the kernel freeing the address space it shares with
    the run copy-on-write) took tens of milliseconds of the run's end when the run joined it (issue 18).  The
    thread keeps the child from lingering as a zombie; at the interpreter's exit ``multiprocessing`` itself ends
    and joins any daemon worker still exiting, which loses nothing (it has nothing left to do).
    """
    reaper = threading.Thread(target=process.join, name=f"harness-reap-{process.name}", daemon=True)
    reaper.start()
    return reaper


__all__ = ["WORKER_IGNORED_SIGNALS", "ParentWatch", "WorkerError", "can_fork", "freeze_inherited_objects",
           "ignore_run_signals", "portable", "reap_later"]
