"""The saved views of MLflow's runs table and traces table (issue 16): named views stored as experiment tags in
the envelope MLflow 3.17's UI reads (``{"name", "createdAt", "updatedAt", "state"}``), listed in the runs page's
"Views" menu and the Traces tab's saved-views menu, opened by ``?viewStateShareKey=`` / ``?traceViewShareKey=``."""

from __future__ import annotations

import base64
import json
import logging
import zlib

import mlflow
import pytest

from harness.tracking.tracker import MlflowTracker
from harness.tracking.views import (
    TRACE_VIEW_NAME,
    TRACE_VIEW_TAG,
    VIEW_KEY,
    VIEW_NAME,
    VIEW_TAG,
    compare_view_path,
    read_envelope,
    set_trace_view,
    set_verdict_view,
    trace_view_path,
    trace_view_state,
    ui_base,
    ui_links,
    verdict_view_path,
    verdict_view_state,
    view_envelope,
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


def test_the_trace_view_state_is_the_traces_v4_table_state() -> None:
    # the exact JSON the Traces tab of MLflow 3.17 reads: cols (column ids, in order), assessment and tag columns
    state = trace_view_state(["verifier", "keyword", "judge", "verifier"])
    assert json.dumps(state, separators=(",", ":")) == (
        '{"single":{"cols":"trace_name,assessment:verifier,assessment:keyword,assessment:judge,input,output,'
        'start_time,duration,state","startTimeLabel":"ALL"},"multi":{},'
        '"assessmentColumns":{"verifier":true,"keyword":true,"judge":true},"customColumns":{"tag:variant":true}}')
    assert TRACE_VIEW_TAG == "mlflow.tracesV4ViewState.harness-verdict"
    assert trace_view_path("8") == "#/experiments/8/traces?traceViewShareKey=harness-verdict"


def test_the_envelope_is_what_the_ui_parses() -> None:
    value = view_envelope("Verdict (harness)", {"a": [1]}, 1000, 2000)
    assert json.loads(value) == {"name": "Verdict (harness)", "createdAt": 1000, "updatedAt": 2000,
                                 "state": '{"a":[1]}'}
    assert read_envelope(value) == ("Verdict (harness)", {"a": [1]}, 1000)
    # a view the UI saved compressed: "deflate;" + base64 of zlib's deflate (pako's default format)
    packed = "deflate;" + base64.b64encode(zlib.compress(b'{"b":2}')).decode()
    assert read_envelope(json.dumps({"name": "n", "createdAt": 5, "state": packed})) == ("n", {"b": 2}, 5)
    # a bare state (as the harness stored the runs view before) or garbage is no envelope
    assert read_envelope(json.dumps(verdict_view_state())) is None
    assert read_envelope("not json") is None and read_envelope(None) is None


def test_links_are_printed_for_a_tracking_server_only() -> None:
    assert ui_links("http://127.0.0.1:5000/", "3", "4") == {
        "verdict view": "http://127.0.0.1:5000/#/experiments/3/runs?viewStateShareKey=harness-verdict",
        "holdout traces view": "http://127.0.0.1:5000/#/experiments/4/traces?traceViewShareKey=harness-verdict"}
    assert list(ui_links("https://mlflow.example.org", "3")) == ["verdict view"]
    assert ui_links("sqlite:///mlflow.db", "3", "4") == {} and ui_links("/tmp/mlruns", "3") == {}
    assert ui_links("http://host:5000", None) == {}


def test_the_compare_link_opens_the_evolved_evaluation_run_compared_to_the_baseline() -> None:
    # the run page's Traces tab reads compareToRunUuid from the URL (MLflow 3.17, bundle module 8539)
    assert compare_view_path("4", "ev1", "ba1") == "#/experiments/4/runs/ev1/traces?compareToRunUuid=ba1"
    runs = {"baseline": "ba1", "evolved": "ev1", "none": "no1"}
    links = ui_links("http://127.0.0.1:5000/", "3", "4", runs)
    assert links["baseline vs evolved per task"] == \
        "http://127.0.0.1:5000/#/experiments/4/runs/ev1/traces?compareToRunUuid=ba1"
    assert list(links) == ["verdict view", "holdout traces view", "baseline vs evolved per task"]
    # no link without both variants (a parent run, a run whose holdout failed) or without the holdout experiment
    assert "baseline vs evolved per task" not in ui_links("http://h", "3", "4", {"evolved": "ev1"})
    assert "baseline vs evolved per task" not in ui_links("http://h", "3", None, runs)
    assert ui_base("https://mlflow.example.org/") == "https://mlflow.example.org"
    assert ui_base("sqlite:///mlflow.db") == ui_base(None) == ""


def test_every_experiment_with_a_harness_run_holds_the_view(mlflow_store: str) -> None:
    with MlflowTracker("skills/views") as parent:
        with MlflowTracker("skills/views", parent_run_id=parent.run_id):
            pass
    experiment = mlflow.MlflowClient().get_experiment_by_name("skills/views")
    name, state, created = read_envelope(experiment.tags[VIEW_TAG]) or ("", {}, 0)
    assert (name, state) == (VIEW_NAME, verdict_view_state()) and created > 0


def test_a_stored_view_is_left_alone_and_an_old_bare_state_is_replaced(mlflow_store: str) -> None:
    client = mlflow.MlflowClient()
    eid = client.create_experiment("skills/views-old")
    client.set_experiment_tag(eid, VIEW_TAG, json.dumps(verdict_view_state()))  # the format before
    set_verdict_view(client, eid)
    first = client.get_experiment(eid).tags[VIEW_TAG]
    assert read_envelope(first) is not None
    set_verdict_view(client, eid)
    assert client.get_experiment(eid).tags[VIEW_TAG] == first  # unchanged: no rewrite at every run start


def test_the_trace_view_keeps_the_graders_of_earlier_runs(mlflow_store: str) -> None:
    client = mlflow.MlflowClient()
    eid = client.create_experiment("skills/views/holdout")
    set_trace_view(client, eid, ["verifier"])
    set_trace_view(client, eid, ["verifier", "judge"])
    name, state, _ = read_envelope(client.get_experiment(eid).tags[TRACE_VIEW_TAG]) or ("", {}, 0)
    assert name == TRACE_VIEW_NAME and state == trace_view_state(["verifier", "judge"])


def test_a_store_refusing_the_tag_does_not_fail_the_run(caplog: pytest.LogCaptureFixture) -> None:
    class Refusing:
        def get_experiment(self, experiment_id: str) -> object:
            raise RuntimeError("read-only store")

    with caplog.at_level(logging.WARNING, logger="harness.tracking.views"):
        set_verdict_view(Refusing(), "3")
        set_trace_view(Refusing(), "4", ["verifier"])
    assert "could not store the verdict view on experiment 3: read-only store" in caplog.text
    assert "could not store the traces view on experiment 4: read-only store" in caplog.text
