"""The closing console summary of a run."""

from __future__ import annotations

from harness.cli.console import Reporter
from harness.run import RunResult


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None or value != value:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def summary_rows(result: RunResult) -> list[tuple[str, str]]:
    """``(label, value)`` rows: holdout score per grader (baseline -> evolved, delta), calls and time."""
    m = result.metrics
    rows: list[tuple[str, str]] = [("skill", f"{result.skill.name} ({result.skill.path})"),
                                   ("fitness", result.fitness),
                                   ("holdout tasks", str(len(result.splits.holdout)))]
    for grader in ("verifier", "keyword", "judge"):
        base, evo = m.get(f"holdout.{grader}.baseline"), m.get(f"holdout.{grader}.evolved")
        if base is None:
            continue
        delta = _fmt(m.get(f"holdout.{grader}.delta"), True)
        rows.append((f"{grader} composite", f"{_fmt(base)} → {_fmt(evo)}  (Δ {delta})"))
        rows.append((f"{grader} correct share",
                     f"{_fmt(m.get(f'holdout.{grader}.baseline.correct_share'))} → "
                     f"{_fmt(m.get(f'holdout.{grader}.evolved.correct_share'))}"))
        unscored = [int(m.get(f"holdout.{grader}.{v}.unscored", 0)) for v in ("baseline", "evolved")]
        if any(unscored):
            rows.append((f"{grader} unscored", f"{unscored[0]} baseline, {unscored[1]} evolved (left out of the "
                                               "means; see the holdout table's feedback)"))
    opt = result.optimization
    rows.append((result.optimizer, f"{len(opt.candidates)} candidates, {opt.metric_calls} metric calls, "
                         f"{opt.unusable_proposals}/{opt.proposals} unusable proposals"))
    rows.append(("gates", "passed" if result.gate.passed else "rejected: " + "; ".join(result.gate.reasons)))
    if result.assessment is not None:
        verdict = result.assessment.verdict
        rows.append(("verdict", f"{verdict.verdict}: {verdict.reason}"))
        rows.extend(("disagreement", d) for d in verdict.disagreements)
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


def summarize_run(result: RunResult, reporter: Reporter) -> None:
    """Print the summary table and the run id."""
    reporter.summary("skill evolution run", summary_rows(result), {"run id": str(result.run_id)})


def summarize_compare(parent_run_id: str | None, results: list, reporter: Reporter) -> None:
    """Per child: fitness, seed, verifier delta and verdict; then the parent run id."""
    rows = []
    for res in results:
        deltas = ", ".join(f"{g} {_fmt(res.metrics.get(f'holdout.{g}.delta'), True)}"
                           for g in ("verifier", "keyword", "judge") if f"holdout.{g}.delta" in res.metrics)
        rows.append((f"{res.arm.label} (seed {res.arm.seed})", f"{deltas} · verdict {res.verdict} · run {res.run_id}"))
        rows.extend((f"{res.arm.label} (seed {res.arm.seed}) {k}", v) for k, v in lm_error_rows(res.metrics))
    reporter.summary("side-by-side experiment", rows, {"parent run id": str(parent_run_id)})
