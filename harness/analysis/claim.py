"""The markdown claim report: what a run may claim about evolved vs baseline skill, and on what evidence.

The report is short plain markdown (a headline, one table, a few bullet lists) so it reads well in the
MLflow UI's artifact preview, whether rendered as markdown or shown as text.  Statistics and verdict
rules live in :mod:`harness.analysis.stats`; this module only words them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from harness.analysis.stats import (
    PairedStats,
    SeedSpread,
    Verdict,
    fmt_alpha,
    fmt_delta,
    fmt_interval,
    fmt_num,
    power_statement,
)
from harness.artifacts import HOLDOUT_TABLE

#: Default artifact path of the per-task holdout table the report rests on.
TABLE_ARTIFACT = HOLDOUT_TABLE


def _cell(text: str) -> str:
    """A markdown table cell: pipes escaped, newlines flattened."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _mean(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "n/a"


def _delta(x: float) -> str:
    return f"{x:+.3f}" if math.isfinite(x) else "n/a"


def _share(s: PairedStats) -> str:
    if s.n_pairs == 0:
        return "n/a"
    if s.underpowered:  # k_min > n: a share over 100% ("6/3 = 200%") reads as nonsense
        return f"needs {s.k_min} changed tasks, only {s.n_pairs} scored (underpowered)"
    return f"{s.k_min}/{s.n_pairs} = {s.min_detectable_share:.0%}"


def _ordered(stats: Mapping[str, PairedStats], primary: str) -> list[str]:
    names = list(stats)
    return ([primary] if primary in stats else []) + [g for g in names if g != primary]


def load_table_snippet(run_id: str | None, table_artifact: str = TABLE_ARTIFACT) -> str:
    """``mlflow.load_table("<artifact>", run_ids=["<run_id>"])`` (``<run_id>`` when unknown)."""
    return f'mlflow.load_table("{table_artifact}", run_ids=["{run_id or "<run_id>"}"])'


def claim_report(skill: str, run_id: str | None, fitness: str, stats: Mapping[str, PairedStats], verdict: Verdict,
                 alpha: float, table_artifact: str = TABLE_ARTIFACT) -> str:
    """A short markdown report of the claim a run makes.

    Sections: a headline with the verdict and its reason; a table of per-grader statistics (n and dropped
    pairs, baseline and evolved mean composite, mean delta with its ``1 - alpha`` bootstrap interval,
    Wilcoxon p, exact McNemar p with b/c, minimum detectable share and the grader's own verdict); the
    power statement per grader; disagreements between graders; and the per-task table it rests on, with the
    call that loads it.

    Args:
        skill: the skill's name.
        run_id: the MLflow run id (``None``: a ``<run_id>`` placeholder in the load snippet).
        fitness: the fitness the skill was evolved under (keyword, judge, verifier).
        stats: grader name -> its :class:`PairedStats` (may be empty).
        verdict: from :func:`harness.analysis.stats.overall_verdict` (its ``primary`` grader is listed first).
        alpha: the significance level the statistics were computed at.
        table_artifact: artifact path of the per-task holdout table.
    Returns:
        Markdown text ending with a newline.
    Raises:
        ValueError: a grader's statistics were computed at another alpha.
    """
    for s in stats.values():
        if not math.isclose(s.alpha, alpha, rel_tol=1e-9):
            raise ValueError(f"{s.grader} statistics were computed at alpha {fmt_alpha(s.alpha)}, "
                             f"the report is for alpha {fmt_alpha(alpha)}")
    a = fmt_alpha(alpha)
    level = f"{1 - alpha:.0%}"
    lines = [f"# Claim: {skill}", "",
             f"**Verdict: {verdict.verdict}**: {verdict.reason}.", "",
             f"Evolved vs baseline skill on the same holdout tasks, paired per task (fitness used for "
             f"evolution: `{fitness}`). The verdict rests on the `{verdict.primary}` grader: Wilcoxon "
             f"signed-rank test on the composite (p < {a}) and a {level} bootstrap interval of the mean delta "
             f"that excludes 0."]
    if run_id:
        lines[-1] += f" MLflow run `{run_id}`."
    lines.append("")

    if stats:
        lines += [f"| grader | n (dropped) | baseline | evolved | delta | {level} CI | Wilcoxon p | McNemar p (b/c) "
                  f"| min detectable share | verdict |",
                  "|---|---:|---:|---:|---:|---|---:|---:|---:|---|"]
        for g in _ordered(stats, verdict.primary):
            s = stats[g]
            cells = [g, f"{s.n_pairs} ({s.dropped_pairs})", _mean(s.baseline_mean), _mean(s.evolved_mean),
                     _delta(s.mean_delta), fmt_interval(s.ci_low, s.ci_high) if s.n_pairs else "n/a",
                     fmt_num(s.wilcoxon_p), f"{fmt_num(s.mcnemar_p)} ({s.discordant_improved}/"
                     f"{s.discordant_regressed})", _share(s), verdict.per_grader.get(g, "")]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        lines += ["", "Composite scores are in [0, 1]; delta = evolved − baseline. b = tasks answered correctly "
                  "only after evolution, c = only before (exact McNemar test). Min detectable share = the "
                  "fewest tasks that must all change in one direction for p < " + a + ", over n.", ""]
    else:
        lines += ["No per-grader statistics were computed for this run.", ""]
    faulted = max((s.faulted_pairs for s in stats.values()), default=0)
    if faulted:
        lines += [f"**LM faults:** {faulted} holdout pair(s) were excluded from the paired tests because the task "
                  "LM call failed on the baseline or the evolved side (rate limit, server error, timeout, a reply "
                  "that was not JSON or was empty; see `lm_errors.json`): an infrastructure fault is never graded "
                  "as the model's answer. They are counted in \"dropped\".", ""]

    if stats:
        lines += ["## Power", ""]
        lines += [f"- {power_statement(stats[g])}" for g in _ordered(stats, verdict.primary)]
        lines.append("")

    lines += ["## Disagreements", ""]
    if verdict.disagreements:
        lines += [f"- {d}" for d in verdict.disagreements]
    else:
        lines.append("- none: every grader's verdict matches the " + verdict.primary + "'s.")
    lines.append("")

    lines += ["## Evidence", "",
              f"Per-task table: `{table_artifact}` (one row per task, variant and grader). Load it with "
              f"`{load_table_snippet(run_id, table_artifact)}`.", ""]
    return "\n".join(lines)


def seeds_report(spreads: dict[str, SeedSpread]) -> str:
    """Markdown: per arm, the verifier's mean delta per seed, its spread, and the pooled verdict across seeds."""
    out = ["# Across seeds", "", "`improved` across seeds needs the same sign in every seed and a significant "
           "pooled paired test (verifier grades).", "",
           "| optimised by | seeds | mean Δ per seed | min | max | std | pooled verdict |",
           "|---|---|---|---|---|---|---|"]
    for label, sp in spreads.items():
        per_seed = ", ".join(fmt_delta(d) for d in sp.mean_deltas)
        out.append(f"| {label} | {sp.n_seeds} | {per_seed} | {fmt_delta(sp.min_delta)} | {fmt_delta(sp.max_delta)} | "
                   f"{_mean(sp.std_delta)} | {sp.verdict}: {_cell(sp.reason)} |")
    return "\n".join(out) + "\n"
