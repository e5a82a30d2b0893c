"""Saved views of MLflow's runs table and traces table, stored on the experiments the harness writes (issue 16).

MLflow 3.17's UI keeps named views of a table as experiment tags whose value is a JSON envelope
``{"name": ..., "createdAt": <ms>, "updatedAt": <ms>, "state": "<the table's state as a JSON string>"}``
(module ``53787`` of its JS bundle: ``state`` may also be ``"deflate;" + base64``; the harness writes plain JSON):

* runs table: tag ``mlflow.sharedViewState.<key>``, listed by name in the runs page's "Views" menu and opened by
  ``#/experiments/<id>/runs?viewStateShareKey=<key>``; the state is the runs table's UI state (``selectedColumns``
  as MLflow's canonical column keys ``<type>.`<name>```, type ``attributes``, ``tags``, ``metrics`` or
  ``params``; ``orderByKey``, ``orderByAsc``);
* traces table (the "v4" table of the Traces tab): tag ``mlflow.tracesV4ViewState.<key>``, listed in the Traces
  tab's saved-views menu and opened by ``#/experiments/<id>/traces?traceViewShareKey=<key>``; the state is
  ``{"single": {"cols": "<comma list of column ids>", "startTimeLabel": ...}, "multi": {}, "assessmentColumns":
  {<assessment name>: true}, "customColumns": {"tag:<key>": true}}``, column ids ``trace_id``, ``trace_name``,
  ``start_time``, ``input``, ``output``, ``duration``, ``state``, ``tokens``, ``tags``, ... and
  ``assessment:<name>`` (the order of ``cols`` is the column order).

The harness writes one runs view, :data:`VIEW_KEY`, on every experiment it starts a run in, and one traces view
(same key) on every holdout experiment it writes traces into, so the verdict and the graders' scores are one
menu pick (or one link) away.  Both are best effort: a store refusing the tag logs a warning and the run goes on.

The "Compare to" view (an evaluation run's traces beside another's, per task) reads neither tag: it is the
run page's Traces tab, module ``7349`` of the bundle, whose columns come from ``useTableColumns`` (``K0``) with
no saved view; its ``selectedColumns`` URL parameter is honoured only when a feature flag (``33706``'s ``D3``)
is on, which the open-source build hard-codes off, and a user's own column choice lives in the browser's
``localStorage`` (``genaiTracesUIState-columns-<experiment>-<run>_v1``).  What the harness controls is the
traces' content (holdout traces carry no expectation assessments, so the graders' columns show: see
:func:`harness.tracking.holdout_traces.task_tags`) and the link: :func:`compare_view_path` opens the comparison on
the evolved evaluation run's own page (``compareToRunUuid`` is a plain URL parameter there), about 450 px wider
than the Evaluation runs page, whose run list takes the left of the screen.
"""

from __future__ import annotations

import base64
import json
import logging
import time
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

_logger = logging.getLogger(__name__)

#: the share key of both views: ``?viewStateShareKey=harness-verdict``, ``?traceViewShareKey=harness-verdict``
VIEW_KEY = "harness-verdict"
#: the experiment tag MLflow's UI reads the runs view from
VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
#: the runs view's name in the runs page's "Views" menu
VIEW_NAME = "Verdict (harness)"
#: the runs view's columns: the description, the verifier's headline metrics, the verdict and the task model (the UI
#: puts metrics before tags whatever the order here)
VERDICT_COLUMNS: tuple[str, ...] = (
    "attributes.`Description`", "metrics.`verdict/score`", "metrics.`verifier/baseline`", "metrics.`verifier/evolved`",
    "metrics.`verifier/delta`", "metrics.`verifier/flipped_up`", "metrics.`verifier/flipped_down`", "tags.`verdict`",
    "tags.`task_model`")
#: the experiment tag MLflow's Traces tab reads the traces view from
TRACE_VIEW_TAG = f"mlflow.tracesV4ViewState.{VIEW_KEY}"
#: the traces view's name in the Traces tab's saved-views menu
TRACE_VIEW_NAME = "Variant and grades (harness)"
#: the trace tag naming a holdout trace's variant (``baseline`` / ``evolved``), a column of the traces view
VARIANT_TAG = "variant"
#: the envelope prefix of a compressed state (pako's zlib ``deflate``, base64)
_DEFLATE = "deflate;"


def verdict_view_state() -> dict[str, Any]:
    """The runs table's UI state of the verdict view: :data:`VERDICT_COLUMNS` selected, newest runs first (MLflow
    fills in every key not given with its default)."""
    return {"selectedColumns": list(VERDICT_COLUMNS), "orderByKey": "attributes.start_time", "orderByAsc": False}


def trace_view_state(graders: Sequence[str]) -> dict[str, Any]:
    """The traces table's state of the traces view: the trace name (``holdout.<variant>``) and one score column per
    grader first, then the question, the answer, the time and the state; the ``variant`` tag as a column; traces of
    any age (``startTimeLabel`` ``ALL``: the UI's default shows the last 7 days only)."""
    names = list(dict.fromkeys(graders))
    cols = ["trace_name", *(f"assessment:{g}" for g in names), "input", "output", "start_time", "duration", "state"]
    return {"single": {"cols": ",".join(cols), "startTimeLabel": "ALL"}, "multi": {},
            "assessmentColumns": {g: True for g in names}, "customColumns": {f"tag:{VARIANT_TAG}": True}}


def verdict_view_path(experiment_id: str) -> str:
    """The UI path (after the server's address) of an experiment's runs view:
    ``"#/experiments/<id>/runs?viewStateShareKey=harness-verdict"``."""
    return f"#/experiments/{experiment_id}/runs?viewStateShareKey={VIEW_KEY}"


def trace_view_path(experiment_id: str) -> str:
    """The UI path of an experiment's traces view: ``"#/experiments/<id>/traces?traceViewShareKey=harness-verdict"``."""
    return f"#/experiments/{experiment_id}/traces?traceViewShareKey={VIEW_KEY}"


def compare_view_path(holdout_experiment_id: str, evolved_run_id: str, baseline_run_id: str) -> str:
    """The UI path of the evolved evaluation run's traces compared to the baseline one's, per task:
    ``"#/experiments/<id>/runs/<evolved>/traces?compareToRunUuid=<baseline>"`` (the run page's Traces tab; see
    the module docstring for why not the Evaluation runs page)."""
    return f"#/experiments/{holdout_experiment_id}/runs/{evolved_run_id}/traces?compareToRunUuid={baseline_run_id}"


def ui_base(tracking_uri: str | None) -> str:
    """The UI address of a tracking server ``tracking_uri`` (``http(s)://...`` without its trailing ``/``; the
    server serves the UI too), or ``""`` for any other store (a ``sqlite:`` file or a folder has no UI)."""
    base = (tracking_uri or "").rstrip("/")
    return base if base.lower().startswith(("http://", "https://")) else ""


def ui_links(tracking_uri: str, experiment_id: str | None, holdout_experiment_id: str | None = None,
             holdout_runs: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{label: URL}`` of the views in the MLflow UI of a tracking server ``tracking_uri`` (``http(s)://...``, the
    server serves the UI too): the runs view of ``experiment_id``, the traces view of ``holdout_experiment_id``
    and, when ``holdout_runs`` (``{variant: evaluation run id}``) holds both ``baseline`` and ``evolved``, their
    comparison (:func:`compare_view_path`); empty for any other store (a ``sqlite:`` file or a folder has no UI
    address) or no experiment."""
    base = ui_base(tracking_uri)
    if not base or not experiment_id:
        return {}
    links = {"verdict view": f"{base}/{verdict_view_path(experiment_id)}"}
    if holdout_experiment_id:
        links["holdout traces view"] = f"{base}/{trace_view_path(holdout_experiment_id)}"
        runs = holdout_runs or {}
        if runs.get("evolved") and runs.get("baseline"):
            links["baseline vs evolved per task"] = (
                f"{base}/{compare_view_path(holdout_experiment_id, runs['evolved'], runs['baseline'])}")
    return links


def view_envelope(name: str, state: Mapping[str, Any], created_ms: int, updated_ms: int | None = None) -> str:
    """The experiment tag value of a saved view (see the module docstring): ``state`` as compact JSON inside
    ``{"name", "createdAt", "updatedAt", "state"}``."""
    return json.dumps({"name": name, "createdAt": created_ms, "updatedAt": created_ms if updated_ms is None
                       else updated_ms, "state": json.dumps(state, separators=(",", ":"))}, separators=(",", ":"))


def read_envelope(value: str | None) -> tuple[str, dict[str, Any], int] | None:
    """``(name, state, createdAt)`` of a saved view's tag value, or None when it is missing or no envelope (e.g. a
    bare state, as the harness stored the runs view before)."""
    try:
        data = json.loads(value or "")
        state = data["state"]
        if state.startswith(_DEFLATE):
            state = zlib.decompress(base64.b64decode(state[len(_DEFLATE):])).decode("utf-8")
        decoded = json.loads(state)
        return (str(data["name"]), decoded, int(data["createdAt"])) if isinstance(decoded, dict) else None
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error):
        return None


def _store_view(client: Any, experiment_id: str, tag: str, name: str, state: Mapping[str, Any],
                tags: Mapping[str, str] | None, what: str) -> None:
    """Set ``tag`` to the view ``name``/``state`` unless it holds that view already (its creation time is kept)."""
    try:
        if tags is None:
            tags = client.get_experiment(experiment_id).tags or {}
        stored = read_envelope(tags.get(tag))
        if stored is not None and stored[:2] == (name, dict(state)):
            return
        now = int(time.time() * 1000)
        created = stored[2] if stored is not None else now
        client.set_experiment_tag(experiment_id, tag, view_envelope(name, state, created, now))
    except Exception as exc:  # a UI convenience never fails a run
        _logger.warning("could not store the %s on experiment %s: %s", what, experiment_id, exc)


def set_verdict_view(client: Any, experiment_id: str, tags: Mapping[str, str] | None = None) -> None:
    """Store the runs view (:data:`VIEW_TAG`, named :data:`VIEW_NAME`) on the experiment unless it is there already.

    ``tags``: the experiment's tags when the caller has just read them (saves a store round trip at run start);
    None = read them here.  Best effort: a store that refuses the tag is logged as a warning and the run goes on.
    """
    _store_view(client, experiment_id, VIEW_TAG, VIEW_NAME, verdict_view_state(), tags, "verdict view")


def set_trace_view(client: Any, experiment_id: str, graders: Sequence[str],
                   tags: Mapping[str, str] | None = None) -> None:
    """Store the traces view (:data:`TRACE_VIEW_TAG`, named :data:`TRACE_VIEW_NAME`) on the experiment holding
    holdout traces graded by ``graders``; the graders of the view already stored stay in it (runs with other
    graders share the experiment).  ``tags`` and errors as :func:`set_verdict_view`."""
    try:
        if tags is None:
            tags = client.get_experiment(experiment_id).tags or {}
    except Exception as exc:  # a UI convenience never fails a run
        _logger.warning("could not store the traces view on experiment %s: %s", experiment_id, exc)
        return
    stored = read_envelope(tags.get(TRACE_VIEW_TAG))
    known = list((stored[1].get("assessmentColumns") or {}) if stored is not None else {})
    state = trace_view_state([*known, *graders])
    _store_view(client, experiment_id, TRACE_VIEW_TAG, TRACE_VIEW_NAME, state, tags, "traces view")


__all__ = ["TRACE_VIEW_NAME", "TRACE_VIEW_TAG", "VARIANT_TAG", "VERDICT_COLUMNS", "VIEW_KEY", "VIEW_NAME", "VIEW_TAG",
           "compare_view_path", "read_envelope", "set_trace_view", "set_verdict_view", "trace_view_path",
           "trace_view_state", "ui_base", "ui_links", "verdict_view_path", "verdict_view_state", "view_envelope"]
