"""Every MLflow call of the project: the Tracker protocol and MlflowTracker, the prompt registry, GenAI scorers
and evaluation, and the export to pandas.  Nothing outside this package imports ``mlflow``."""

from harness.tracking.store import TrackingError, check_tracking_store, retry_duplicate_insert
from harness.tracking.tracker import MlflowTracker, NullTracker, Tracker, ended_runs

__all__ = ["MlflowTracker", "NullTracker", "Tracker", "TrackingError", "check_tracking_store", "ended_runs",
           "retry_duplicate_insert"]
