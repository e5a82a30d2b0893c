"""A saved runs-table view with the verdict columns, stored on the experiment (issue 16).

MLflow's runs table shows Source, Models and Dataset by default; a run's verdict, description and headline
metrics are hidden until the user configures columns.  The UI's "share view" feature stores a view as the
experiment tag ``mlflow.sharedViewState.<key>`` (JSON of the runs table's UI state) and opens it from the URL
``#/experiments/<id>/runs?viewStateShareKey=<key>`` (MLflow 3.x, ``useSharedExperimentViewState``).  The harness
writes one such view, :data:`VIEW_KEY`, on every experiment it starts a run in, so that link shows the verdict
first.  Column keys are MLflow's canonical ones: ``<type>.`<name>```, type ``attributes``, ``tags``, ``metrics``
or ``params``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

_logger = logging.getLogger(__name__)

#: the share key of the verdict view: ``?viewStateShareKey=harness-verdict``
VIEW_KEY = "harness-verdict"
#: the experiment tag MLflow's UI reads a shared view from
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
#: the view's columns: the description, the verifier's headline metrics, the verdict and the task model (the UI
#: puts metrics before tags whatever the order here)
VERDICT_COLUMNS: tuple[str, ...] = (
    "attributes.`Description`", "metrics.`verdict/score`", "metrics.`verifier/baseline`", "metrics.`verifier/evolved`",
    "metrics.`verifier/delta`", "metrics.`verifier/flipped_up`", "metrics.`verifier/flipped_down`", "tags.`verdict`",
    "tags.`task_model`")


def verdict_view_state() -> dict[str, Any]:
    """The runs table's UI state of the verdict view: :data:`VERDICT_COLUMNS` selected, newest runs first (MLflow
    fills in every key not given with its default)."""
    return {"selectedColumns": list(VERDICT_COLUMNS), "orderByKey": "attributes.start_time", "orderByAsc": False}


def verdict_view_path(experiment_id: str) -> str:
    """The UI path (after the server's address) of an experiment's verdict view:
    ``"#/experiments/<id>/runs?viewStateShareKey=harness-verdict"``."""
    return f"#/experiments/{experiment_id}/runs?viewStateShareKey={VIEW_KEY}"


def set_verdict_view(client: Any, experiment_id: str, tags: Mapping[str, str] | None = None) -> None:
    """Store the verdict view on the experiment (tag :data:`VIEW_TAG`) unless it is already there.

    ``tags``: the experiment's tags when the caller has just read them (saves a store round trip at run start);
    None = read them here.  Best effort: the view is a UI convenience, so a store that refuses the tag is logged
    as a warning and the run goes on.
    """
    value = json.dumps(verdict_view_state(), separators=(",", ":"))
    try:
        if tags is None:
            tags = client.get_experiment(experiment_id).tags or {}
        if tags.get(VIEW_TAG) != value:
            client.set_experiment_tag(experiment_id, VIEW_TAG, value)
    except Exception as exc:  # a UI convenience never fails a run
        _logger.warning("could not store the verdict view on experiment %s: %s", experiment_id, exc)


__all__ = ["VERDICT_COLUMNS", "VIEW_KEY", "VIEW_TAG", "set_verdict_view", "verdict_view_path", "verdict_view_state"]
