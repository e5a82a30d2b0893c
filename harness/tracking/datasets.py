"""A run's dataset input (an MLflow dataset built from a split's frame), made where the store writes run.

``mlflow.data.from_pandas`` infers the frame's schema and profile and ``_to_mlflow_entity`` JSON-encodes them: about
8 ms of CPU per split in the run (issue 18).  :func:`dataset_input` is a module-level function of picklable
arguments, so :class:`harness.tracking.worker.ProcessWriter` builds the input in its worker process instead.
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def dataset_input(frame: pd.DataFrame, name: str, context: str, digest: str, source: str | None = None) -> Any:
    """``frame`` as an ``mlflow.entities.DatasetInput`` named ``name`` with digest ``digest``, tagged with its
    ``context`` (``mlflow.data.context``: trainset / valset / holdout); ``source`` (a task file's path) becomes the
    dataset's source (None: MLflow's default)."""
    import mlflow
    from mlflow.entities import DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    dataset = mlflow.data.from_pandas(frame, source=source, name=name, digest=digest)
    return DatasetInput(dataset._to_mlflow_entity(), tags=[InputTag(MLFLOW_DATASET_CONTEXT, context)])


__all__ = ["dataset_input"]
