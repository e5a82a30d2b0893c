"""Every MLflow call of the harness lives here; the engine hands this module its results.

A run is opened with :class:`MlflowTracker` as a context manager.  Under ``mlflow run`` the run that
MLflow Projects created (``MLFLOW_RUN_ID``) is resumed; otherwise a new run is started in the
experiment named after the skill.  Leaving the context ends the run as FINISHED, as KILLED on an
interrupt (Ctrl-C, SIGTERM) or as FAILED on an exception, whose text is logged as ``error.txt`` first;
whatever was logged before stays.

:class:`NullTracker` has the same methods and logs nothing, so the engine runs without a store.
"""

from __future__ import annotations

import json
import os
import shlex
import traceback
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

import pandas as pd

#: params longer than this go to artifacts instead (MLflow's own limit is 6,000 characters)
MAX_PARAM_CHARS = 500


class Tracker(Protocol):
    """What the engine needs from a tracking back-end."""

    run_id: str | None

    def log_params(self, params: Mapping[str, Any]) -> None: ...
    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None: ...
    def set_tags(self, tags: Mapping[str, str]) -> None: ...
    def log_text(self, text: str, artifact_file: str) -> None: ...
    def log_dict(self, data: Any, artifact_file: str) -> None: ...
    def log_table(self, frame: pd.DataFrame, artifact_file: str) -> None: ...
    def log_artifacts(self, directory: Path, artifact_path: str) -> None: ...
    def log_dataset(self, frame: pd.DataFrame, name: str, context: str, digest: str) -> None: ...


class NullTracker:
    """A :class:`Tracker` that records nothing (for tests and dry runs)."""

    run_id: str | None = None

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Discard."""

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Discard."""

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Discard."""

    def log_text(self, text: str, artifact_file: str) -> None:
        """Discard."""

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Discard."""

    def log_table(self, frame: pd.DataFrame, artifact_file: str) -> None:
        """Discard."""

    def log_artifacts(self, directory: Path, artifact_path: str) -> None:
        """Discard."""

    def log_dataset(self, frame: pd.DataFrame, name: str, context: str, digest: str) -> None:
        """Discard."""


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
    saved = {k: os.environ.get(k) for k in probe_env}
    os.environ.update(probe_env)
    try:
        mlflow.MlflowClient(tracking_uri=uri).search_experiments(max_results=1)
    except Exception as exc:  # any client failure means the store is unusable
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TrackingError(f"tracking store {uri} cannot be used: {first[:300]}. "
                            "Set MLFLOW_TRACKING_URI to a reachable server or a writable sqlite:/// path") from None
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return uri


class MlflowTracker:
    """Open (or resume) one MLflow run; see the module docstring for the status rules.

    Args:
        experiment_name: used when no run was created for us by ``mlflow run``.
        run_name: display name of a new run.
        tags: tags set on the run at start.
    """

    def __init__(self, experiment_name: str, run_name: str | None = None,
                 tags: Mapping[str, str] | None = None) -> None:
        self.experiment_name = experiment_name
        self.run_name = run_name
        self.tags = dict(tags or {})
        self.run_id: str | None = None

    def __enter__(self) -> MlflowTracker:
        import mlflow

        if os.environ.get("MLFLOW_RUN_ID"):
            run = mlflow.start_run(run_id=os.environ["MLFLOW_RUN_ID"])
        else:
            mlflow.set_experiment(self.experiment_name)
            run = mlflow.start_run(run_name=self.run_name)
        self.run_id = run.info.run_id
        if self.tags:
            mlflow.set_tags(self.tags)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        import mlflow

        if exc_type is None:
            mlflow.end_run("FINISHED")
            return
        interrupted = issubclass(exc_type, (KeyboardInterrupt, SystemExit))
        status = "KILLED" if interrupted else "FAILED"
        try:
            text = "".join(traceback.format_exception(exc_type, exc, tb))
            mlflow.log_text(text, "error.txt")
            mlflow.set_tags({"run.outcome": status.lower(),
                             "run.error": (str(exc) or exc_type.__name__)[:MAX_PARAM_CHARS]})
        finally:
            mlflow.end_run(status)

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log params; a value longer than MAX_PARAM_CHARS goes to ``params/<key>.txt`` instead.

        Under ``mlflow run`` the project's parameters are already logged (shell-quoted: ``''`` for an
        empty value); a key logged with the same value is left alone, and a key whose earlier value
        differs (``20.0`` vs ``20``) is logged as ``harness.<key>``, since MLflow forbids changing a param.
        """
        import mlflow

        existing = mlflow.get_run(self.run_id).data.params if self.run_id else {}
        short: dict[str, str] = {}
        for key, value in params.items():
            text = "" if value is None else str(value)
            if len(text) > MAX_PARAM_CHARS:
                mlflow.log_text(text, f"params/{key}.txt")
                text = f"(long value: artifact params/{key}.txt)"
            if key in existing:
                if existing[key] in (text, shlex.quote(text)):
                    continue
                key = f"harness.{key}"
            short[key] = text
        mlflow.log_params(short)

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Log finite metrics (NaN values are skipped: MLflow would plot them as gaps anyway)."""
        import mlflow

        finite = {k: float(v) for k, v in metrics.items() if v == v}
        if finite:
            mlflow.log_metrics(finite, step=step)

    def set_tags(self, tags: Mapping[str, str]) -> None:
        """Set tags on the run."""
        import mlflow

        mlflow.set_tags(dict(tags))

    def log_text(self, text: str, artifact_file: str) -> None:
        """Log ``text`` as an artifact file."""
        import mlflow

        mlflow.log_text(text, artifact_file)

    def log_dict(self, data: Any, artifact_file: str) -> None:
        """Log JSON-serialisable ``data`` as an artifact file."""
        import mlflow

        mlflow.log_text(json.dumps(data, indent=2, ensure_ascii=False, default=str), artifact_file)

    def log_table(self, frame: pd.DataFrame, artifact_file: str) -> None:
        """Log ``frame`` with ``mlflow.log_table`` (shown in the UI's evaluation/table views)."""
        import mlflow

        mlflow.log_table(data=frame, artifact_file=artifact_file)

    def log_artifacts(self, directory: Path, artifact_path: str) -> None:
        """Log every file in ``directory`` under ``artifact_path``."""
        import mlflow

        mlflow.log_artifacts(str(directory), artifact_path=artifact_path)

    def log_dataset(self, frame: pd.DataFrame, name: str, context: str, digest: str) -> None:
        """Log ``frame`` as an MLflow dataset input with ``context`` (trainset / valset / holdout)."""
        import mlflow

        dataset = mlflow.data.from_pandas(frame, name=name, digest=digest)
        mlflow.log_input(dataset, context=context)
