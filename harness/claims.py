"""Logging a run's evidence beside its verdict (sequencing only; the analysis is :mod:`harness.analysis`):
what the MLflow UI shows at a glance (description, headline metrics, per-task pivot, previews), the no-skill
control, grader agreement, cost per verified improvement, and the run report (``report.md``).

:func:`log_run_evidence` and :func:`log_run_report` are called by :func:`harness.run.evolve_run`;
:func:`log_experiment_evidence` by :func:`harness.compare.compare` for the parent of a side-by-side experiment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from harness import artifacts
from harness.analysis import describe
from harness.analysis.agreement import agreement_frame_rows, agreements, pooled_rows
from harness.analysis.assess import Assessment
from harness.analysis.cost import arm_cost_row
from harness.analysis.evidence import RunEvidence, run_evidence
from harness.analysis.plot_jobs import PlotJobs, render
from harness.analysis.report import ReportInput, build_report, gate_records
from harness.analysis.stats import PairedStats
from harness.engine.holdout import HoldoutRow
from harness.skills.diff import unified_diff
from harness.skills.gates import GateResult
from harness.tracking.reports import run_links
from harness.tracking.tracker import Tracker

AGREEMENT_TABLE = artifacts.AGREEMENT_TABLE
AGREEMENT_PLOT_DIR = artifacts.AGREEMENT_DIR
ARMS_TABLE = artifacts.ARMS_TABLE
GATES_JSON = artifacts.GATES_JSON
RUN_REPORT = artifacts.RUN_REPORT


def log_glance(claim: Assessment, rows: Sequence[HoldoutRow], metrics: Mapping[str, float], holdout_size: int,
               tracker: Tracker, *, lead: str = "") -> dict[str, float]:
    """Log what the MLflow UI shows of a run at a glance, and return its headline metrics.

    In order: the headline metrics (:func:`~harness.analysis.describe.headline_metrics`, first so they lead the
    run page's metric list), ``metrics`` without the long tail (:func:`~harness.analysis.describe.is_tail_metric`),
    the statistics table ``stats/statistics.json``, the per-task pivot ``holdout/per_task.json``, the verdict
    tags with the description (``mlflow.note.content``; ``lead`` opens its first line), and the run's name led by
    the verdict (:meth:`~harness.tracking.tracker.Tracker.name_verdict`).
    """
    primary = describe.PRIMARY
    headline = describe.headline_metrics(claim.stats, claim.verdict, primary)
    tracker.log_metrics(headline)
    tracker.log_metrics({k: v for k, v in metrics.items() if not describe.is_tail_metric(k)})
    tracker.log_table(describe.statistics_table(claim.stats, claim.verdict, metrics), artifacts.STATS_TABLE)
    tracker.log_table(describe.per_task_pivot(rows, primary), artifacts.PER_TASK_TABLE)
    tracker.set_tags({**claim.verdict.to_tags(), artifacts.TAG_DESCRIPTION: describe.run_description(
        claim.verdict, claim.stats, holdout_size, primary, lead=lead)})
    tracker.name_verdict(claim.verdict.verdict)
    return headline


def log_skill_previews(baseline_text: str, evolved_text: str, evolved_preview: str, tracker: Tracker) -> str:
    """Log ``skill/diff.patch`` and the previewable copies the artifact viewer renders: ``skill/diff.md`` and the
    two SKILL.md files as markdown (``skill/baseline/preview.md`` and ``evolved_preview``); returns the diff
    (``""`` when the texts are equal)."""
    tracker.log_text(describe.skill_preview_markdown(baseline_text, artifacts.BASELINE_SKILL),
                     artifacts.BASELINE_SKILL_PREVIEW)
    source = evolved_preview.rsplit("/", 1)[0] + "/SKILL.md"
    tracker.log_text(describe.skill_preview_markdown(evolved_text, source), evolved_preview)
    diff = unified_diff(baseline_text, evolved_text, "SKILL.md")
    tracker.log_text(diff or "(no change)\n", artifacts.SKILL_DIFF)
    tracker.log_text(describe.diff_markdown(diff, artifacts.SKILL_DIFF), artifacts.SKILL_DIFF_PREVIEW)
    return diff


def log_gates(gate: GateResult, tracker: Tracker) -> None:
    """The per-gate statuses (passed / failed / not run) as ``skill/gates.json``."""
    tracker.log_dict({"gates": gate_records(gate.checks)}, GATES_JSON)


def _log_agreement(found: Mapping[str, Any], folder: Path, tracker: Tracker, table: pd.DataFrame,
                   jobs: PlotJobs | None = None) -> None:
    """The agreement table, and its plot: drawn now, or by ``jobs`` (then the caller logs it with their results)."""
    if not found:
        return
    tracker.log_table(table, AGREEMENT_TABLE)
    args = ("agreement_png", {g: a.confusion() for g, a in found.items()}, folder / "agreement.png")
    if jobs is not None:
        jobs.submit(render, *args, artifact_path=AGREEMENT_PLOT_DIR)
    else:
        tracker.log_file(render(*args), AGREEMENT_PLOT_DIR)


def log_run_evidence(rows: Sequence[HoldoutRow], spent: Mapping[str, float], stats: Mapping[str, PairedStats], *,
                     alpha: float, seed: int, folder: Path, tracker: Tracker,
                     jobs: PlotJobs | None = None) -> RunEvidence:
    """Compute the run's :class:`RunEvidence`, log its metrics, tags, agreement table and plot; return it
    (the caller appends :meth:`RunEvidence.markdown` to the claim report).  ``jobs``: draw the plot there (the
    caller logs what :meth:`PlotJobs.placed` returns); None: drawn and logged now."""
    evidence = run_evidence(rows, spent, stats, alpha=alpha, seed=seed)
    tracker.log_metrics(evidence.metrics())
    tracker.set_tags(evidence.tags())
    _log_agreement(evidence.agreement, folder, tracker, evidence.agreement_table(), jobs)
    return evidence


def log_run_report(*, experiment: str, params: Mapping[str, Any], metrics: Mapping[str, float],
                   tags: Mapping[str, str], rows: Sequence[HoldoutRow], baseline_skill: str, evolved_skill: str,
                   diff: str, gate: GateResult, tracker: Tracker) -> str:
    """Build the run report (:func:`harness.analysis.report.build_report`, markdown) from what the run has in
    memory and log it as ``report.md``; returns the text."""
    inp = ReportInput(run_id=tracker.run_id, experiment=experiment, params={k: str(v) for k, v in params.items()},
                      metrics=dict(metrics), tags=dict(tags), rows=pd.DataFrame([r.to_dict() for r in rows]),
                      baseline_skill=baseline_skill, evolved_skill=evolved_skill, diff=diff,
                      gates=gate_records(gate.checks), links=run_links(tracker))
    text = build_report(inp, "md")
    tracker.log_text(text, RUN_REPORT)
    return text


def log_experiment_evidence(results: Sequence[Any], shared_rows: Sequence[HoldoutRow], folder: Path,
                            tracker: Tracker) -> pd.DataFrame:
    """For a side-by-side parent: the arms table with cost columns (``xgrade/arms_table.json``) and the grader
    agreement pooled over every child (metrics ``agreement.*``, table and plot); returns the arms table.

    Args:
        results: the :class:`harness.compare.ArmResult` of every child.
        shared_rows: the baseline and control rows the parent graded once.
    """
    records = []
    for res in results:
        records.append({"arm": res.arm.label, "seed": res.arm.seed, "run_id": res.run_id, "verdict": res.verdict,
                        "verifier_delta": res.metrics.get("holdout.verifier.delta", float("nan")),
                        **arm_cost_row(res.metrics)})
    arms = pd.DataFrame(records)
    if not arms.empty:
        tracker.log_table(arms, ARMS_TABLE)
    pooled = pooled_rows([("shared", "parent", shared_rows)]
                         + [(f"{r.arm.label}/s{r.arm.seed}", "parent", r.rows) for r in results])
    found = agreements(pooled)
    metrics: dict[str, float] = {}
    for a in found.values():
        metrics.update(a.to_metrics("agreement.pooled"))
    tracker.log_metrics(metrics)
    tracker.set_tags({f"agreement.pooled.{g}": a.sentence()[:500] for g, a in found.items()})
    _log_agreement(found, folder, tracker, pd.DataFrame(agreement_frame_rows(found)))
    return arms


def log_parent_report(*, experiment: str, params: Mapping[str, Any], metrics: Mapping[str, float],
                      tags: Mapping[str, str], shared_rows: Sequence[HoldoutRow], results: Sequence[Any],
                      tracker: Tracker) -> str:
    """The side-by-side parent's ``report.md``: setup, the arms with their cost, the control, pooled agreement."""
    pooled = pooled_rows([("shared", "parent", shared_rows)]
                         + [(f"{r.arm.label}/s{r.arm.seed}", "parent", r.rows) for r in results])
    children = [ReportInput(run_id=r.run_id, experiment=experiment,
                            params={"optimizer": r.arm.optimizer, "seed": str(r.arm.seed)}, metrics=dict(r.metrics),
                            tags={"fitness": r.arm.fitness, "verdict": r.verdict}, rows=pd.DataFrame())
                for r in results]
    inp = ReportInput(run_id=tracker.run_id, experiment=experiment, params={k: str(v) for k, v in params.items()},
                      metrics=dict(metrics), tags=dict(tags), rows=pd.DataFrame([r.to_dict() for r in shared_rows]),
                      links=run_links(tracker), children=children, experiment_agreement=agreements(pooled),
                      agreement_scope=f"the {len(results)} arms of this experiment")
    text = build_report(inp, "md")
    tracker.log_text(text, RUN_REPORT)
    return text


__all__ = ["RUN_REPORT", "log_experiment_evidence", "log_gates", "log_glance", "log_parent_report", "log_run_evidence",
           "log_run_report", "log_skill_previews"]
