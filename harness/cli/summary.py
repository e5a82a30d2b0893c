"""The closing console summary of a run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.analysis.cost import arm_cost_row
from harness.cli.console import Reporter
from harness.run import RunResult


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None or value != value:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def judge_unscored(result: RunResult) -> str:
    """How many of the judge's grades were unscored (an unparseable reply): on the holdout per variant, and of
    the fitness grades (the optimiser's metric calls and the proposer's gradings; metrics ``fitness.unscored``
    of ``fitness.grades``) when the judge was the fitness."""
    m = result.metrics
    tasks = len(result.splits.holdout)
    base, evo = (int(m.get(f"holdout.judge.{v}.unscored", 0)) for v in ("baseline", "evolved"))
    text = f"holdout {base}/{tasks} baseline, {evo}/{tasks} evolved"
    if result.fitness == "judge":
        text += f"; fitness {int(m.get('fitness.unscored', 0))}/{int(m.get('fitness.grades', 0))} grades"
    return text + " (unscored grades are left out of the means and score 0 for the optimiser)"


def summary_rows(result: RunResult) -> list[tuple[str, str]]:
    """``(label, value)`` rows: holdout score per grader (baseline -> evolved, delta), calls and time."""
    m = result.metrics
    rows: list[tuple[str, str]] = [("skill", f"{result.skill.name} ({result.skill.path})"),
                                   ("fitness", result.fitness + (f" (auto: {result.fitness_note})"
                                                                 if result.fitness_note else "")),
                                   *([("tasks", result.tasks)] if result.tasks else []),
                                   ("holdout tasks", str(len(result.splits.holdout)))]
    for grader in ("verifier", "keyword", "judge"):
        base, evo = m.get(f"holdout.{grader}.baseline"), m.get(f"holdout.{grader}.evolved")
        if base is None:
            continue
        delta = _fmt(m.get(f"holdout.{grader}.delta"), True)
        none = m.get(f"holdout.{grader}.none")
        rows.append((f"{grader} composite", f"{_fmt(base)} → {_fmt(evo)}  (Δ {delta})"
                     + (f"; no skill {_fmt(none)}" if none is not None else "")))
        rows.append((f"{grader} correct share",
                     f"{_fmt(m.get(f'holdout.{grader}.baseline.correct_share'))} → "
                     f"{_fmt(m.get(f'holdout.{grader}.evolved.correct_share'))}"))
        unscored = [int(m.get(f"holdout.{grader}.{v}.unscored", 0)) for v in ("baseline", "evolved")]
        if grader == "judge":
            rows.append(("judge unscored", judge_unscored(result)))
        elif any(unscored):
            rows.append((f"{grader} unscored", f"{unscored[0]} baseline, {unscored[1]} evolved (left out of the "
                                               "means; see the holdout table's feedback)"))
    opt = result.optimization
    rows.append((result.optimizer, f"{len(opt.candidates)} candidates, {opt.metric_calls} metric calls, "
                         f"{opt.unusable_proposals}/{opt.proposals} unusable proposals"))
    unchanged = result.gate.passed and result.evolved_text == result.skill.text
    rows.append(("gates", "no change" if unchanged else "passed" if result.gate.passed
                 else "rejected: " + "; ".join(result.gate.reasons)))
    if result.assessment is not None:
        verdict = result.assessment.verdict
        rows.append(("verdict", f"{verdict.verdict}: {verdict.reason}"))
        rows.extend(("disagreement", d) for d in verdict.disagreements)
    if result.evidence is not None:
        rows.extend(result.evidence.summary_rows())
    rows.append(("LM calls", f"{int(m.get('lm_calls.total', 0))}"))
    rows.extend(lm_error_rows(m))
    rows.append(("wall time", f"{result.wall_time_s:.1f} s"))
    return rows


def lm_error_rows(metrics: dict[str, float]) -> list[tuple[str, str]]:
    """A ``("LM errors", ...)`` row when any LM call failed (per role), else none."""
    if not metrics.get("lm_errors.total"):
        return []
    roles = sorted(k.removeprefix("lm_errors.") for k in metrics
                   if k.startswith("lm_errors.") and k != "lm_errors.total")
    parts = [f"{role} {int(metrics[f'lm_errors.{role}'])}" for role in roles if metrics.get(f"lm_errors.{role}")]
    return [("LM errors", f"{int(metrics['lm_errors.total'])} failed calls ({', '.join(parts)}); failed holdout "
                          "pairs are left out of the tests; see lm_errors.json")]


def view_links(tracker: Any) -> dict[str, str]:
    """The footer lines linking to the harness's saved views in the MLflow UI when ``tracker`` (an
    :class:`~harness.tracking.tracker.MlflowTracker` whose run has ended) logged to a tracking server
    (``http(s)://``): ``verdict view`` (its experiment's runs), ``holdout traces view`` and, for a run with
    holdout evaluation runs, ``baseline vs evolved per task`` (:func:`harness.tracking.views.ui_links`); empty for
    a local store."""
    from harness.tracking.views import ui_base, ui_links

    if not ui_base(tracker.store_uri):
        return {}  # no UI address: spare the store reads
    holdout = tracker.holdout_experiment_id
    return ui_links(tracker.store_uri, tracker.experiment_id, holdout, tracker.holdout_run_ids if holdout else None)


def summarize_run(result: RunResult, reporter: Reporter, links: Mapping[str, str] | None = None) -> None:
    """Print the summary table, the run id and ``links`` (:func:`view_links`)."""
    reporter.summary("skill evolution run", summary_rows(result), {"run id": str(result.run_id), **(links or {})})


def summarize_compare(parent_run_id: str | None, results: list, reporter: Reporter,
                      spreads: Mapping[str, Any] | None = None, links: Mapping[str, str] | None = None) -> None:
    """Per child: fitness, seed, verifier delta and verdict; per arm with several seeds its pooled verdict
    (``spreads``: :func:`harness.compare.seed_spreads`); then the parent run id and ``links`` (:func:`view_links`)."""
    rows = []
    for res in results:
        deltas = ", ".join(f"{g} {_fmt(res.metrics.get(f'holdout.{g}.delta'), True)}"
                           for g in ("verifier", "keyword", "judge") if f"holdout.{g}.delta" in res.metrics)
        judged = ""
        if "holdout.judge.evolved.unscored" in res.metrics:
            unscored = sum(int(res.metrics.get(k, 0)) for k in ("holdout.judge.baseline.unscored",
                                                                 "holdout.judge.evolved.unscored", "fitness.unscored"))
            judged = f" · judge unscored {unscored}"
        cost = arm_cost_row(res.metrics)
        rows.append((f"{res.arm.label} (seed {res.arm.seed})", f"{deltas}{judged} · verdict {res.verdict} · "
                     f"{cost['tokens']:,.0f} tokens, {cost['verified']} · run {res.run_id}"))
    for label, spread in (spreads or {}).items():
        rows.append((f"{label} across {spread.n_seeds} seeds", f"{spread.verdict}: {spread.reason}"))
        rows.extend((f"{res.arm.label} (seed {res.arm.seed}) {k}", v) for k, v in lm_error_rows(res.metrics))
    reporter.summary("side-by-side experiment", rows, {"parent run id": str(parent_run_id), **(links or {})})
