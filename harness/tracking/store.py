"""The tracking store itself: probing it once, quickly, and retrying the duplicate inserts of concurrent writers."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from harness.messages import first_line
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


def check_tracking_store(tracking_uri: str | None = None) -> str:
    """Resolve and probe the tracking store; returns its URI.

    Raises:
        TrackingError: when the store cannot be reached or read.
    """
    import mlflow

    uri = tracking_uri or mlflow.get_tracking_uri()
    # probe once, quickly: MLflow's default HTTP policy retries for minutes before giving up
    probe_env = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}
    try:
        with temporary_env(probe_env):
            mlflow.MlflowClient(tracking_uri=uri).search_experiments(max_results=1)
    except Exception as exc:  # any client failure means the store is unusable
        raise TrackingError(f"tracking store {uri} cannot be used: {first_line(exc, 600)}. "
                            "Set MLFLOW_TRACKING_URI to a reachable server or a writable sqlite:/// path") from None
    return uri
