"""The tracking store itself: probing it once, quickly (and with a write), initialising a new SQLite store under a
file lock, and retrying the duplicate inserts of concurrent writers."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from harness.messages import first_line, redact_text
from harness.tracking.envvars import temporary_env

T = TypeVar("T")


_DUPLICATE_MARKERS = ("UniqueViolation", "UNIQUE constraint failed", "IntegrityError", "Duplicate entry")


def retry_duplicate_insert(call: Callable[[], T], attempts: int = 3) -> T:
    """Run ``call`` and retry it when the store refused a duplicate insert.

    MLflow's store creates rows on first use with a get-then-insert that is not atomic (a dataset logged into
    one experiment, a prompt alias moved by several runs): when several processes do it at once, all but one
    fail with a unique-key violation, after which the row exists and the same call succeeds.  Only that error
    is retried, and only around calls that are safe to repeat.
    """
    for attempt in range(attempts):
        try:
            return call()
        except Exception as exc:
            if attempt == attempts - 1 or not any(m in str(exc) for m in _DUPLICATE_MARKERS):
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


class TrackingError(RuntimeError):
    """The tracking store cannot be used (message names the URI and the fix)."""


#: prefix of the experiment tag the store probe writes and deletes again (on the Default experiment, id "0";
#: the key ends in the process id and a random suffix)
PROBE_TAG = "harness.store_probe"
#: experiment the probe writes to: MLflow's Default experiment, which every store has
PROBE_EXPERIMENT_ID = "0"
#: seconds a process waits for another one initialising the same new SQLite store
STORE_LOCK_TIMEOUT_S = 300.0


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///path`` URI (None for any other store, or an in-memory database)."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri.removeprefix("sqlite:///").split("?", 1)[0]
    if not path or path == ":memory:":
        return None
    return Path(path.removeprefix("file:"))


@contextlib.contextmanager
def store_lock(uri: str, timeout_s: float = STORE_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive ``fcntl.flock`` on ``<db>.lock`` beside a SQLite store's file (no-op for other stores).

    MLflow creates and migrates a new SQLite database on first use with alembic, which is not safe when several
    processes do it at once (issue 20: eight processes on a new ``mlflow.db`` left it broken for every later
    command, "table _alembic_tmp_latest_metrics already exists").  Under this lock one process initialises it;
    the others then find the tables made.

    Raises:
        TrackingError: the lock file cannot be created, or another process held the lock for ``timeout_s``.
    """
    path = sqlite_path(uri)
    if path is None:
        yield
        return
    lock_path = path.with_name(path.name + ".lock")
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_path, "a+")  # noqa: SIM115  (held for the block)
    except OSError as exc:
        raise TrackingError(f"tracking store {uri}: cannot create its lock file {lock_path} "
                            f"({exc.strerror or exc}); use a writable folder for the sqlite file") from None
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TrackingError(f"tracking store {uri}: another process held {lock_path} for "
                                        f"{timeout_s:g} s; is a harness command stuck?") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


def _probe(uri: str) -> None:
    """Read and write the store: list one experiment, then set and delete an experiment tag."""
    import mlflow

    client = mlflow.MlflowClient(tracking_uri=uri)
    client.search_experiments(max_results=1)
    # a key of this process's own: concurrent probes never insert the same row (a unique-key violation on
    # PostgreSQL when 8 runs start at once)
    key = f"{PROBE_TAG}.{os.getpid()}.{uuid.uuid4().hex[:12]}"
    client.set_experiment_tag(PROBE_EXPERIMENT_ID, key, f"{os.getpid()}@{time.time():.0f}")
    client.delete_experiment_tag(PROBE_EXPERIMENT_ID, key)


def check_tracking_store(tracking_uri: str | None = None, *, reap: bool = True) -> str:
    """Resolve and probe the tracking store, then mark runs whose process is gone as KILLED; returns its URI.

    The probe reads and *writes* (sets and deletes the experiment tag :data:`PROBE_TAG` on the Default
    experiment), so a read-only store fails here rather than mid-run.  A new SQLite store is created under
    :func:`store_lock`.  With ``reap``, orphaned runs are then marked KILLED
    (:func:`harness.tracking.reaper.reap_orphans`).

    Raises:
        TrackingError: when the store cannot be reached, read or written.
    """
    import mlflow

    uri = tracking_uri or mlflow.get_tracking_uri()
    # probe once, quickly: MLflow's default HTTP policy retries for minutes before giving up
    probe_env = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}
    try:
        with temporary_env(probe_env), store_lock(uri):
            _probe(uri)
    except TrackingError:
        raise
    except Exception as exc:  # any client failure means the store is unusable
        raise TrackingError(f"tracking store {redact_text(uri)} cannot be used: "
                            f"{redact_text(first_line(exc, 600))}. Set MLFLOW_TRACKING_URI to a reachable "
                            "server or a writable sqlite:/// path") from None
    if reap:
        from harness.tracking.reaper import reap_orphans

        with temporary_env(probe_env):
            reap_orphans(uri)
    return uri


def record_usage_error(run_id: str, message: str) -> None:
    """Record a usage error on the run ``mlflow run`` created (``MLFLOW_RUN_ID``) before the harness opened it:
    tags ``run.outcome=failed`` and ``run.error``, the artifact ``error.txt``, status FAILED.  Best effort: a
    store that cannot be written leaves the run as MLflow Projects ends it.
    """
    import mlflow

    from harness.artifacts import ERROR_TEXT

    text = redact_text(message)
    try:
        with temporary_env({"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}):
            client = mlflow.MlflowClient()
            client.log_text(run_id, f"usage error (exit code 2): {text}\n", ERROR_TEXT)
            client.set_tag(run_id, "run.outcome", "failed")
            client.set_tag(run_id, "run.error", text[:500])
            client.set_terminated(run_id, "FAILED")
    except Exception:  # noqa: S110  (the one-line error is printed either way)
        pass
