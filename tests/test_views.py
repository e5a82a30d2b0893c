"""The runs table's verdict view (issue 16): a shared view state MLflow's UI opens with
``?viewStateShareKey=harness-verdict``, stored on every experiment the harness starts a run in."""

from __future__ import annotations

import json
import logging

import mlflow
import pytest

from harness.tracking.tracker import MlflowTracker
from harness.tracking.views import (
    VIEW_KEY,
    VIEW_TAG,
    set_verdict_view,
    verdict_view_path,
    verdict_view_state,
)


def test_the_view_selects_the_description_verdict_and_headline_columns() -> None:
    state = verdict_view_state()
    columns = state["selectedColumns"]
    # MLflow's canonical column keys: <type>.`<name>` (the Description attribute is the mlflow.note.content tag)
    assert columns[0] == "attributes.`Description`"
    assert {"tags.`verdict`", "metrics.`verdict/score`", "metrics.`verifier/delta`", "metrics.`verifier/baseline`",
            "metrics.`verifier/evolved`", "metrics.`verifier/flipped_up`", "tags.`task_model`"} <= set(columns)
    assert (state["orderByKey"], state["orderByAsc"]) == ("attributes.start_time", False)
    assert VIEW_TAG == "mlflow.sharedViewState." + VIEW_KEY
    assert verdict_view_path("7") == "#/experiments/7/runs?viewStateShareKey=harness-verdict"


def test_every_experiment_with_a_harness_run_holds_the_view(mlflow_store: str) -> None:
    with MlflowTracker("skills/views") as parent:
        with MlflowTracker("skills/views", parent_run_id=parent.run_id):
            pass
    experiment = mlflow.MlflowClient().get_experiment_by_name("skills/views")
    assert json.loads(experiment.tags[VIEW_TAG]) == verdict_view_state()


def test_a_store_refusing_the_tag_does_not_fail_the_run(caplog: pytest.LogCaptureFixture) -> None:
    class Refusing:
        def get_experiment(self, experiment_id: str) -> object:
            raise RuntimeError("read-only store")

    with caplog.at_level(logging.WARNING, logger="harness.tracking.views"):
        set_verdict_view(Refusing(), "3")
    assert "could not store the verdict view on experiment 3: read-only store" in caplog.text
