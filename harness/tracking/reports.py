"""Reading what a run logged, for the run report (:mod:`harness.analysis.report`), and the links to a run.

* :func:`read_report_input` — one run (or the latest top-level run of an experiment) as a
  :class:`~harness.analysis.report.ReportInput`: params (unquoted), metrics, tags, the per-task holdout table
  (a side-by-side parent: its shared baseline table), the skill texts, the gate checks, the links, the child
  runs, and the grader agreement pooled over every run of the experiment.
* :func:`run_links` — the run's UI page (an http(s) store) and ``runs:/`` URIs of its main artifacts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness import artifacts
from harness.analysis.agreement import Agreement, agreements, pooled_rows
from harness.analysis.report import ReportInput
from harness.messages import first_line
from harness.tracking.envvars import temporary_env

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Run

#: artifacts linked from a report, by label: of a single (or child) run, and of a side-by-side parent
LINKED_ARTIFACTS: dict[str, str] = {"report": artifacts.RUN_REPORT, "claim report": artifacts.CLAIM_REPORT,
                                    "holdout table": artifacts.HOLDOUT_TABLE,
                                    "evolved skill": artifacts.EVOLVED_SKILL, "skill diff": artifacts.SKILL_DIFF}
PARENT_ARTIFACTS: dict[str, str] = {"report": artifacts.RUN_REPORT, "arms table": artifacts.ARMS_TABLE,
                                    "cross-grading matrix": artifacts.XGRADE_MATRIX,
                                    "shared baseline and control table": artifacts.BASELINE_TABLE}
_PARENT_TAG = "mlflow.parentRunId"
#: the tag marking a side-by-side parent run (value ``side-by-side``)
_KIND_TAG = "experiment.kind"


class ReportError(ValueError):
    """The report cannot be made as asked (the message names the input and the fix)."""


def _links(tracking_uri: str, run_id: str, experiment_id: str, artifact_uri: str,
           kind: str | None) -> dict[str, str]:
    """The links of run ``run_id``; ``kind``: its ``experiment.kind`` tag (a side-by-side parent links its own
    artifacts)."""
    links: dict[str, str] = {}
    if tracking_uri.startswith(("http://", "https://")):
        links["run"] = f"{tracking_uri.rstrip('/')}/#/experiments/{experiment_id}/runs/{run_id}"
    else:
        links["run"] = f"runs:/{run_id} (store {tracking_uri})"
    linked = PARENT_ARTIFACTS if kind == "side-by-side" else LINKED_ARTIFACTS
    links.update({label: f"runs:/{run_id}/{path}" for label, path in linked.items()})
    links["artifact root"] = str(artifact_uri)
    return links


def _run_links(client: MlflowClient, run: Run) -> dict[str, str]:
    return _links(str(client.tracking_uri or ""), run.info.run_id, run.info.experiment_id, run.info.artifact_uri,
                  run.data.tags.get(_KIND_TAG))


def run_links(tracker: Any) -> dict[str, str]:
    """Links of the run an :class:`~harness.tracking.tracker.MlflowTracker` logs into, from what the tracker
    knows (no store read, so the run need not wait for its queued writes); ``{}`` for any other tracker (no
    store) or before the run exists."""
    from harness.tracking.tracker import MlflowTracker

    if not isinstance(tracker, MlflowTracker) or not tracker.run_id or tracker.run_info is None:
        return {}
    info = tracker.run_info
    return _links(tracker.store_uri, str(tracker.run_id), str(info.experiment_id),
                  str(info.artifact_uri), tracker.logged_tag(_KIND_TAG))


def _artifact_bytes(run_id: str, path: str, tracking_uri: str | None) -> bytes | None:
    import mlflow

    with tempfile.TemporaryDirectory(prefix="harness-report-") as tmp, \
            temporary_env({"MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false"}):  # stderr stays for our own lines
        try:
            local = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=path, dst_path=tmp,
                                                        tracking_uri=tracking_uri)
        except Exception:  # absent and unreachable look alike across artifact stores; absent is common
            return None
        return Path(local).read_bytes()


def _artifact_text(run_id: str, path: str, tracking_uri: str | None) -> str:
    raw = _artifact_bytes(run_id, path, tracking_uri)
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


def _table(run_id: str, path: str, tracking_uri: str | None) -> pd.DataFrame:
    raw = _artifact_bytes(run_id, path, tracking_uri)
    if raw is None:
        return pd.DataFrame()
    try:
        payload = json.loads(raw)
        frame = pd.DataFrame(payload["data"], columns=payload["columns"])
    except (ValueError, KeyError, TypeError):
        return pd.DataFrame()
    for column in ("task_id", "kind", "paper_id", "variant", "grader"):
        if column in frame.columns:
            frame[column] = frame[column].astype(str)
    return frame


def _gates(run_id: str, tracking_uri: str | None) -> list[dict[str, str]] | None:
    text = _artifact_text(run_id, artifacts.GATES_JSON, tracking_uri)
    if not text:
        return None
    try:
        return [dict(g) for g in json.loads(text)["gates"]]
    except (ValueError, KeyError, TypeError):
        return None


def _pick_run(client: MlflowClient, experiment_id: str, run_id: str | None) -> Run:
    from mlflow.exceptions import MlflowException

    if run_id:
        try:
            run = client.get_run(run_id)
        except MlflowException:
            raise ReportError(f"run {run_id!r} not found in tracking store {client.tracking_uri}; check --run") \
                from None
        if str(run.info.experiment_id) != str(experiment_id):
            raise ReportError(f"run {run_id} is not in the experiment given (--experiment); it is in experiment "
                              f"{run.info.experiment_id}")
        return run
    runs = client.search_runs([experiment_id], order_by=["attributes.start_time DESC"], max_results=200)
    top = [r for r in runs if _PARENT_TAG not in r.data.tags]
    if not top:
        raise ReportError("the experiment has no top-level run yet; run `harness evolve` first, or pass --run")
    return top[0]


def _experiment_agreement(client: MlflowClient, experiment_id: str, tracking_uri: str | None) -> dict[str, Agreement]:
    from harness.tracking.export import holdout_table, notes_not_logged

    with notes_not_logged():
        table = holdout_table(experiment=experiment_id, tracking_uri=tracking_uri)
    if table.empty:
        return {}
    parents = {r.info.run_id: r.data.tags.get(_PARENT_TAG, r.info.run_id)
               for r in client.search_runs([experiment_id], max_results=10_000)}
    runs = [(str(run_id), parents.get(str(run_id), str(run_id)), part)
            for run_id, part in table.groupby("run_id", sort=False, observed=True)]
    return agreements(pooled_rows(runs))


def _input(client: MlflowClient, run: Run, experiment: str, tracking_uri: str | None,
           with_rows: bool = True) -> ReportInput:
    from harness.tracking.export import unquote_param

    run_id = run.info.run_id
    rows = _table(run_id, artifacts.HOLDOUT_TABLE, tracking_uri) if with_rows else pd.DataFrame()
    if with_rows and rows.empty:
        rows = _table(run_id, artifacts.BASELINE_TABLE, tracking_uri)  # a side-by-side parent
    def text(path: str) -> str:
        return _artifact_text(run_id, path, tracking_uri) if with_rows else ""

    return ReportInput(run_id=run_id, experiment=experiment,
                       params={k: unquote_param(v) for k, v in run.data.params.items()},
                       metrics=dict(run.data.metrics), tags=dict(run.data.tags), rows=rows,
                       baseline_skill=text(artifacts.BASELINE_SKILL), evolved_skill=text(artifacts.EVOLVED_SKILL),
                       diff=text(artifacts.SKILL_DIFF), gates=_gates(run_id, tracking_uri) if with_rows else None,
                       links=_run_links(client, run), run_name=run.info.run_name or "", status=run.info.status)


def read_report_input(experiment: str, run_id: str | None = None, tracking_uri: str | None = None) -> ReportInput:
    """What the report of ``run_id`` (default: the latest top-level run of ``experiment``) needs.

    Raises:
        ReportError: an unknown experiment or run, a run of another experiment, an empty experiment, or a store
            that cannot be queried (the message names the input).
    """
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    from harness.tracking.export import _resolve_experiment

    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        experiment_id = _resolve_experiment(client, experiment)
        run = _pick_run(client, experiment_id, run_id)
        inp = _input(client, run, experiment, tracking_uri)
        children = client.search_runs([experiment_id], filter_string=f"tags.`{_PARENT_TAG}` = '{run.info.run_id}'",
                                      order_by=["attributes.start_time ASC"], max_results=1000)
        inp.children = [_input(client, c, experiment, tracking_uri, with_rows=False) for c in children]
        inp.experiment_agreement = _experiment_agreement(client, experiment_id, tracking_uri)
        inp.agreement_scope = f"every run of experiment {experiment}"
    except ReportError:
        raise
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    except MlflowException as exc:
        raise ReportError(f"tracking store query failed: {first_line(exc, 300)}") from None
    return inp
