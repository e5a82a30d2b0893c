"""Runs whose process died without a word (SIGKILL, the out-of-memory killer, a crash of the interpreter).

No handler runs for those, so a run could stay RUNNING for ever.  Every run the harness opens therefore carries
who runs it and a sign of life:

* ``run.pid``: the process id; ``run.host``: the host name (``socket.gethostname()``);
* ``run.heartbeat``: Unix time in seconds, rewritten every :data:`HEARTBEAT_S` seconds by a daemon thread
  (:class:`Heartbeat`) while the run is open.

:func:`reap_orphans` (run by every command that opens the store, and by ``harness runs reap``) marks a RUNNING
run KILLED, with the tags ``run.outcome=killed`` and ``run.error`` giving the reason, when

* it was started on **this host** and its process no longer exists (``os.kill(pid, 0)`` fails with
  ``ProcessLookupError``), or
* it was started on **another host** and its heartbeat is older than :data:`STALE_AFTER_S` (that host's
  processes cannot be seen from here).

A live process on this host is never touched (whatever its heartbeat), nor is another host's run with a fresh
heartbeat, nor a run without ``run.pid`` (not started by the harness, e.g. a Projects run before it began).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

#: run tags written by :class:`Heartbeat`
PID_TAG = "run.pid"
HOST_TAG = "run.host"
HEARTBEAT_TAG = "run.heartbeat"
#: seconds between two heartbeats (``HARNESS_HEARTBEAT_S`` overrides it, e.g. in tests)
HEARTBEAT_S = 30.0
#: a heartbeat older than this (seconds) means another host's run is gone
STALE_AFTER_S = 10 * HEARTBEAT_S


def heartbeat_interval() -> float:
    """:data:`HEARTBEAT_S`, or ``$HARNESS_HEARTBEAT_S`` when set to a positive number."""
    try:
        value = float(os.environ.get("HARNESS_HEARTBEAT_S", ""))
    except ValueError:
        return HEARTBEAT_S
    return value if value > 0 else HEARTBEAT_S


def liveness_tags(now: float | None = None) -> dict[str, str]:
    """The pid, host and heartbeat tags of this process, now."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname(),
            HEARTBEAT_TAG: f"{time.time() if now is None else now:.0f}"}


class Heartbeat:
    """A daemon thread rewriting ``run.heartbeat`` on one run every ``interval_s`` seconds until :meth:`stop`.

    Args:
        beat: called with the tags to write (e.g. ``lambda tags: tracker.set_tags(tags)``); a failing write is
            skipped (the next beat tries again).
        interval_s: seconds between beats (default :func:`heartbeat_interval`).
    """

    def __init__(self, beat: Any, interval_s: float | None = None) -> None:
        self._beat = beat
        self.interval_s = interval_s or heartbeat_interval()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="harness-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        """Start beating; returns self."""
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self._beat({HEARTBEAT_TAG: f"{time.time():.0f}"})
            except Exception:  # a store hiccup: the next beat tries again
                continue

    def stop(self) -> None:
        """Stop beating (waits at most one second for the thread)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (another user's process counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class Reaped:
    """One run marked KILLED by :func:`reap_orphans`."""

    run_id: str
    experiment_id: str
    reason: str


def orphan_reason(tags: dict[str, str], host: str, now: float, stale_after_s: float = STALE_AFTER_S) -> str | None:
    """Why a RUNNING run with these tags is orphaned (module docstring), or None when it is not (or not ours)."""
    try:
        pid = int(tags.get(PID_TAG, ""))
    except ValueError:
        return None
    run_host = tags.get(HOST_TAG, "")
    try:
        beat = float(tags.get(HEARTBEAT_TAG, ""))
    except ValueError:
        beat = float("nan")
    age = now - beat if beat == beat else float("inf")
    if run_host == host:
        if process_alive(pid):
            return None
        return (f"its process {pid} on {host} is gone (killed by SIGKILL or out of memory, or crashed) without "
                f"ending the run; last heartbeat {age:.0f} s ago")
    if age > stale_after_s:
        return (f"its process {pid} on {run_host or 'an unknown host'} sent no heartbeat for {age:.0f} s "
                f"(more than {stale_after_s:.0f} s); the process is presumed gone")
    return None


def reap_orphans(tracking_uri: str | None = None, *, host: str | None = None, now: float | None = None,
                 stale_after_s: float = STALE_AFTER_S) -> list[Reaped]:
    """Mark every orphaned RUNNING run of the store KILLED with its reason (module docstring); returns them.

    A run that cannot be updated (e.g. deleted meanwhile) is skipped.
    """
    import mlflow
    from mlflow.entities import ViewType

    from harness.artifacts import ERROR_TEXT

    client = mlflow.MlflowClient(tracking_uri=tracking_uri)
    host = host or socket.gethostname()
    now = time.time() if now is None else now
    experiment_ids = [e.experiment_id for e in client.search_experiments(view_type=ViewType.ACTIVE_ONLY)]
    reaped: list[Reaped] = []
    if not experiment_ids:
        return reaped
    runs = client.search_runs(experiment_ids, filter_string="attributes.status = 'RUNNING'",
                              run_view_type=ViewType.ACTIVE_ONLY, max_results=5000)
    for run in runs:
        reason = orphan_reason(dict(run.data.tags), host, now, stale_after_s)
        if reason is None:
            continue
        message = f"the run was reaped: {reason}"
        try:
            client.log_text(run.info.run_id, message + "\n", ERROR_TEXT)
            client.set_tag(run.info.run_id, "run.outcome", "killed")
            client.set_tag(run.info.run_id, "run.error", message[:500])
            client.set_terminated(run.info.run_id, "KILLED")
        except Exception:
            continue
        reaped.append(Reaped(run.info.run_id, run.info.experiment_id, reason))
    return reaped
