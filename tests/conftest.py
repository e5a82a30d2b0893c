"""Shared fixtures: every test gets its own MLflow store and DSPy cache, and no network."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def mlflow_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh sqlite tracking store in ``tmp_path``; yields its URI."""
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv("MLFLOW_RUN_ID", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    mlflow.set_tracking_uri(uri)
    yield uri
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


@pytest.fixture(autouse=True)
def fresh_dspy_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point DSPy's disk cache at ``tmp_path`` so tests never share cached LM replies."""
    import dspy

    cache_dir = tmp_path / "dspy_cache"
    monkeypatch.setenv("DSPY_CACHEDIR", str(cache_dir))
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=False, disk_cache_dir=str(cache_dir))
    yield cache_dir
    dspy.configure(lm=None)
