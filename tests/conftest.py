"""Shared fixtures: every test gets its own MLflow store and DSPy cache, and no network."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


@pytest.fixture(scope="session")
def _migrated_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty sqlite store with MLflow's tables created once (migrations take seconds per database)."""
    import mlflow

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    mlflow.MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def mlflow_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _migrated_store: Path) -> Iterator[str]:
    """A fresh sqlite tracking store in ``tmp_path`` (a copy of the migrated template); yields its URI."""
    import mlflow

    shutil.copy(_migrated_store, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)
    mlflow.set_tracking_uri(uri)
    yield uri
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)
    os.environ.pop("MLFLOW_EXPERIMENT_ID", None)  # mlflow.set_experiment() sets it; keep tests apart


@pytest.fixture
def break_optimizer(monkeypatch: pytest.MonkeyPatch) -> Callable[[BaseException], None]:
    """``break_optimizer(exc)`` makes the gepa optimizer raise ``exc``: a fault (or, with ``KeyboardInterrupt``,
    an interrupt) in the middle of a run, after the dataset and the baseline were logged."""
    import harness.engine.registry as registry_module

    def install(exc: BaseException) -> None:
        def raise_it(*args: object, **kwargs: object) -> None:
            raise exc

        broken = SimpleNamespace(name="gepa", compile=raise_it)
        monkeypatch.setitem(registry_module.OPTIMIZERS, "gepa", lambda settings: broken)

    return install


@pytest.fixture(scope="session", autouse=True)
def fresh_dspy_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Point DSPy's disk cache at a session temp folder, never the user's ~/.dspy_cache.

    Session-scoped because building a cache costs about a second; tests whose outcome depends on the
    cache (call counts, noisy LMs) build their LMs with ``cache=False`` or configure a cache of their own.
    """
    import dspy

    cache_dir = tmp_path_factory.mktemp("dspy_cache")
    os.environ["DSPY_CACHEDIR"] = str(cache_dir)
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(cache_dir))
    yield cache_dir
