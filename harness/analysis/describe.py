"""What a run shows at a glance in the MLflow UI: its name, its description, its headline metrics, the per-task
pivot, the statistics table and markdown previews of the skill files.

Pure functions of the run's results (no MLflow): :mod:`harness.run` and :mod:`harness.compare` log what they
return through the tracker.  The description is the run's ``mlflow.note.content`` tag, which the MLflow UI
renders as markdown at the top of the run page and in the runs table's "Description" column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from harness import artifacts
from harness.analysis.stats import (
    IMPROVED,
    REGRESSED,
    UNCHANGED,
    PairedStats,
    SeedSpread,
    Verdict,
    fmt_delta,
)

#: the grader the verdict rests on
PRIMARY = "verifier"
#: MLflow renders this tag as the run's description
DESCRIPTION_TAG = artifacts.TAG_DESCRIPTION
#: ``verdict/score`` per verdict: +1 improved, -1 regressed, 0 anything else (inconclusive, rejected, unchanged)
VERDICT_SCORES: dict[str, float] = {IMPROVED: 1.0, REGRESSED: -1.0}


def _num(x: float) -> str:
    return f"{x:.3f}" if x is not None and math.isfinite(x) else "n/a"


def verdict_score(verdict: str) -> float:
    """+1 for ``improved``, -1 for ``regressed``, 0 otherwise (a number the runs table can sort and chart)."""
    return VERDICT_SCORES.get(verdict, 0.0)


# ------------------------------------------------------------------------------------------------ names


def arm_label(fitness: str, optimizer: str = "gepa") -> str:
    """``verifier`` or ``verifier/miprov2`` (the optimizer is named only when it is not the default GEPA)."""
    return fitness if optimizer == "gepa" else f"{fitness}/{optimizer}"


def run_name(skill: str, fitness: str, task_model: str, seed: int, optimizer: str = "gepa") -> str:
    """The display name of an evolution run, distinguishing part first (the UI truncates long names):
    ``"verifier s0 · arxiv · test/lessons"``."""
    return f"{arm_label(fitness, optimizer)} s{seed} · {skill} · {task_model}"


def parent_run_name(skill: str, labels: Sequence[str], task_model: str, seeds: int) -> str:
    """The display name of a side-by-side parent, distinguishing part first: ``"keyword,judge,verifier ×2 seeds ·
    side-by-side · arxiv · test/lessons"`` (``×1 seed`` for one)."""
    arms = ",".join(dict.fromkeys(labels))
    return f"{arms} ×{seeds} seed{'s' if seeds != 1 else ''} · side-by-side · {skill} · {task_model}"


def verdict_run_name(headline: str, name: str) -> str:
    """A run's name once its outcome is known: the outcome first, since MLflow's default runs table shows only
    the name (its column is 190 px wide, about 22 characters), then the name the run started with, so runs stay
    told apart: ``"improved · verifier s0 · arxiv · test/lessons"``.  ``headline``: a verdict (``improved``,
    ``inconclusive``, ...), :func:`verdicts_headline` of a parent, or the outcome of a run that ended early
    (``failed``, ``killed``); empty = ``name`` unchanged (and an empty ``name`` gives ``headline``)."""
    return " · ".join(part for part in (headline, name) if part)


def verdicts_headline(verdicts: Sequence[str]) -> str:
    """The headline of a run holding several verdicts (a side-by-side parent: one per arm; an A/B parent: one per
    candidate): how many improved, then how many regressed when any did: ``"2/3 improved"``, ``"0/2 improved, 1
    regressed"``.  One verdict is its own headline; none gives ``""``."""
    if len(verdicts) <= 1:
        return verdicts[0] if verdicts else ""
    text = f"{sum(v == IMPROVED for v in verdicts)}/{len(verdicts)} {IMPROVED}"
    regressed = sum(v == REGRESSED for v in verdicts)
    return text + (f", {regressed} {REGRESSED}" if regressed else "")


def evaluation_run_name(variant: str, run_name_: str | None) -> str:
    """The name of the evaluation run holding one variant's holdout traces: ``"evolved · <run name>"``."""
    return f"{variant} · {run_name_}" if run_name_ else f"{variant} holdout"


# ------------------------------------------------------------------------------------------ headline


def headline_metrics(stats: Mapping[str, PairedStats], verdict: Verdict, primary: str = PRIMARY) -> dict[str, float]:
    """The few metrics a run shows first, named with ``/`` so MLflow groups them.

    * ``verdict/score``: :func:`verdict_score` of the run's verdict;
    * the primary grader: ``<g>/baseline``, ``<g>/evolved``, ``<g>/delta`` (paired means over the ``<g>/n``
      scored pairs, so they agree with the verdict), ``<g>/flipped_up`` / ``<g>/flipped_down`` (tasks correct
      only after / only before evolution), ``<g>/p`` (Wilcoxon) and ``<g>/verdict`` (+1/0/-1);
    * every other grader: ``<g>/delta``, ``<g>/n`` and ``<g>/verdict``.

    Values may be NaN (no scored pairs); the tracker skips NaN.
    """
    out: dict[str, float] = {"verdict/score": verdict_score(verdict.verdict)}
    names = ([primary] if primary in stats else []) + [g for g in stats if g != primary]
    for g in names:
        s = stats[g]
        if g == primary:
            out.update({f"{g}/baseline": s.baseline_mean, f"{g}/evolved": s.evolved_mean,
                        f"{g}/flipped_up": float(s.discordant_improved),
                        f"{g}/flipped_down": float(s.discordant_regressed), f"{g}/p": s.wilcoxon_p})
        out[f"{g}/delta"] = s.mean_delta
        out[f"{g}/n"] = float(s.n_pairs)
        out[f"{g}/verdict"] = verdict_score(verdict.per_grader.get(g, ""))
    return {k: float(v) for k, v in out.items()}


def is_tail_metric(name: str) -> bool:
    """Whether a metric of :func:`harness.engine.holdout.summarize` or :meth:`Assessment.metrics
    <harness.analysis.assess.Assessment.metrics>` goes to the statistics table instead of a metric column:
    ``stats.*`` and ``holdout.<grader>.<variant>.{correct_share,unscored}``.  ``holdout.<grader>.{baseline,
    evolved,delta}`` stay metrics (``harness export`` and existing queries read them)."""
    return name.startswith("stats.") or (name.startswith("holdout.") and name.endswith((".correct_share",
                                                                                        ".unscored")))


def statistics_table(stats: Mapping[str, PairedStats], verdict: Verdict,
                     holdout_metrics: Mapping[str, float]) -> pd.DataFrame:
    """The long tail of a run's statistics: one row per grader with its verdict and reason, every
    :class:`PairedStats` field, and the holdout's per-variant correct shares and unscored counts
    (``holdout.<grader>.<variant>.{correct_share,unscored}`` from :func:`harness.engine.holdout.summarize`)."""
    rows = []
    for g, s in stats.items():
        row: dict[str, Any] = {"grader": g, "verdict": verdict.per_grader.get(g, ""),
                               "reason": verdict.per_grader_reasons.get(g, "")}
        row.update({k: v for k, v in s.to_dict().items() if k != "grader"})
        for key, value in holdout_metrics.items():
            prefix = f"holdout.{g}."
            if key.startswith(prefix) and key.endswith((".correct_share", ".unscored")):
                row[key.removeprefix(prefix)] = value
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------ descriptions


def _flips(s: PairedStats) -> str:
    return f"{s.discordant_improved} task{'s' if s.discordant_improved != 1 else ''} flipped to correct, " \
           f"{s.discordant_regressed} to wrong"


def grader_line(s: PairedStats, holdout_size: int | None = None) -> str:
    """``"verifier 0.500 → 1.000 (Δ +0.500) on 10 of 12 holdout tasks; 5 tasks flipped to correct, 0 to wrong"``."""
    scope = f"{s.n_pairs} of {holdout_size}" if holdout_size is not None else f"{s.n_pairs}"
    if s.n_pairs == 0:
        return f"{s.grader}: no scored holdout pairs ({s.dropped_pairs} unscored)"
    return (f"{s.grader} {_num(s.baseline_mean)} → {_num(s.evolved_mean)} (Δ {fmt_delta(s.mean_delta)}) on {scope} "
            f"holdout tasks; {_flips(s)}")


def evidence_line(run_id: str | None = None) -> str:
    """Where the evidence of a run is: its claim report, per-task table and the traces comparison."""
    return (f"Evidence: `{artifacts.CLAIM_REPORT}` (tests and power), `{artifacts.PER_TASK_TABLE}` (each task's "
            f"answers and grades side by side), `{artifacts.SKILL_DIFF_PREVIEW}`; traces: the `baseline · …` and "
            f"`evolved · …` evaluation runs in experiment `<this experiment>{artifacts.HOLDOUT_EXPERIMENT_SUFFIX}` "
            "(Evaluation runs → select the evolved run → Compare to the baseline run; the evolved run's "
            "description links that comparison)")


def run_description(verdict: Verdict, stats: Mapping[str, PairedStats], holdout_size: int,
                    primary: str = PRIMARY, *, lead: str = "") -> str:
    """The two or three markdown lines of a run's description (``mlflow.note.content``).

    Line 1 is the verdict and its reason (``**no change**`` for an evolved skill equal to the baseline, with
    no statistics claimed), after ``lead`` when given (an A/B run says what it compared); line 2 the primary
    grader's baseline → evolved with the flipped-task counts; line 3 where the evidence is.
    """
    if verdict.verdict == UNCHANGED:
        first = f"**no change**: {verdict.reason}."
    else:
        first = f"**{verdict.verdict}** ({verdict.primary} grader): {verdict.reason}."
    first = f"{lead} {first}" if lead else first
    lines = [first]
    s = stats.get(primary)
    if s is not None:
        lines.append(grader_line(s, holdout_size) + ("" if verdict.verdict != UNCHANGED
                                                      else " (same skill text both times)") + ".")
    lines.append(evidence_line())
    return "\n\n".join(lines) + "\n"


@dataclass(frozen=True)
class ArmSummary:
    """One child of a side-by-side experiment as its parent describes it.

    Attributes:
        label: the arm (``verifier`` or ``verifier/miprov2``); ``seed``: its seed; ``run_id``: its run.
        verdict: the child's verdict; ``metrics``: its headline metrics (:func:`headline_metrics` names).
    """

    label: str
    seed: int
    run_id: str | None
    verdict: str
    metrics: Mapping[str, float]


def arm_verdicts(arms: Sequence[ArmSummary], spreads: Mapping[str, SeedSpread]) -> dict[str, str]:
    """Per arm label: the pooled verdict across seeds when there are several, else the single child's verdict."""
    out: dict[str, str] = {}
    for arm in arms:
        out.setdefault(arm.label, spreads[arm.label].verdict if arm.label in spreads else arm.verdict)
    return out


def experiment_verdict(arms: Sequence[ArmSummary], spreads: Mapping[str, SeedSpread]) -> str:
    """The parent's ``verdict`` tag: ``"keyword: inconclusive · verifier: improved"`` (one per arm; an
    experiment compares arms, so it has no single verdict)."""
    return " · ".join(f"{label}: {v}" for label, v in arm_verdicts(arms, spreads).items())


def _arm_line(arm: ArmSummary, primary: str = PRIMARY) -> str:
    m = arm.metrics
    base, evo = m.get(f"{primary}/baseline", math.nan), m.get(f"{primary}/evolved", math.nan)
    up, down = m.get(f"{primary}/flipped_up", math.nan), m.get(f"{primary}/flipped_down", math.nan)
    flips = f"+{int(up)}/−{int(down)} flipped" if math.isfinite(up) and math.isfinite(down) else "no flips counted"
    return (f"{arm.label} s{arm.seed}: {arm.verdict}, {primary} {_num(base)} → {_num(evo)} "
            f"(Δ {fmt_delta(m.get(f'{primary}/delta', math.nan))}, {flips})")


def parent_description(arms: Sequence[ArmSummary], spreads: Mapping[str, SeedSpread], *, task_model: str,
                       seeds: int, holdout_size: int, primary: str = PRIMARY) -> str:
    """The description of a side-by-side parent: what it compared and the experiment's verdict per arm;
    each child's ``primary`` grade baseline → evolved with flips; where the evidence is."""
    labels = list(dict.fromkeys(a.label for a in arms))
    verdicts = arm_verdicts(arms, spreads)
    pooled = " (pooled across seeds)" if spreads else ""
    first = (f"Compared {len(labels)} fitness arm{'s' if len(labels) != 1 else ''} ({', '.join(labels)}) × "
             f"{seeds} seed{'s' if seeds != 1 else ''} on the same {holdout_size} holdout tasks, task model "
             f"`{task_model}`. **Verdicts{pooled}: " + ", ".join(f"{k} {v}" for k, v in verdicts.items()) + "**.")
    second = "; ".join(_arm_line(a, primary) for a in arms) + "."
    third = (f"Evidence: `{artifacts.CLAIM_REPORT}` (per arm, cross-grading and seeds), "
             f"`{artifacts.XGRADE_HEATMAP}`, each child's own claim report; traces: the `baseline · …` evaluation "
             f"run of this run vs each child's `evolved · …` run in `<this experiment>"
             f"{artifacts.HOLDOUT_EXPERIMENT_SUFFIX}`.")
    return "\n\n".join([first, second, third]) + "\n"


def ab_parent_description(ranking: pd.DataFrame, *, baseline: str, split: str, task_model: str,
                          disagreements: int) -> str:
    """The description of a ``harness ab --candidates`` parent: what it compared and each candidate's verdict;
    the ranking by the verifier's paired delta with the disagreement count; where the evidence is.

    Args:
        ranking: :func:`harness.ab.ranking`'s frame (``rank``, ``candidate``, ``verifier_delta``, ``verdict``,
            ``tasks``, ..., best first).
        baseline: the baseline file; ``split``: ``holdout`` or ``all``; ``disagreements``: how many keyword or
            judge deltas point against the verifier's (:func:`harness.ab.disagreements`).
    """
    n = len(ranking)
    tasks = int(ranking["tasks"].iloc[0]) if n else 0
    records = ranking.to_dict("records")
    first = (f"A/B of {n} hand-written candidate{'s' if n != 1 else ''} against `{baseline}` (no optimizer) on the "
             f"same {tasks} tasks ({split}), task model `{task_model}`. **Verdicts: "
             + ", ".join(f"{r['candidate']} {r['verdict']}" for r in records) + "**.")
    second = (f"Ranked by the {PRIMARY}'s paired Δ: "
              + "; ".join(f"{r['rank']}. {r['candidate']} Δ {fmt_delta(float(r['verifier_delta']))}" for r in records)
              + (f". {disagreements} keyword/judge delta{'s' if disagreements != 1 else ''} point against the "
                 f"{PRIMARY}'s (tag `ab.disagreements`)." if disagreements else
                 f". Keyword and judge deltas point the {PRIMARY}'s way for every candidate."))
    third = (f"Evidence: `{artifacts.AB_RANKING}`, `{artifacts.AB_SUMMARY}`, each child's `{artifacts.CLAIM_REPORT}` "
             f"and `{artifacts.PER_TASK_TABLE}`; traces: this run's `baseline · …` evaluation run vs each child's "
             f"`evolved · …` run in `<this experiment>{artifacts.HOLDOUT_EXPERIMENT_SUFFIX}`.")
    return "\n\n".join([first, second, third]) + "\n"


def experiment_report(arms: Sequence[ArmSummary], spreads: Mapping[str, SeedSpread], matrix: pd.DataFrame, *,
                      skill: str, task_model: str, seeds: int, primary: str = PRIMARY) -> str:
    """The parent's ``claim_report.md`` (written for any number of seeds): the verdict per arm, one row per
    child run, the cross-grading matrix and, with several seeds, the pooled verdicts."""
    verdicts = arm_verdicts(arms, spreads)
    out = [f"# Side-by-side: {skill}", "",
           f"Task model `{task_model}`, {seeds} seed{'s' if seeds != 1 else ''} per arm. The verdict of an arm rests "
           f"on the `{primary}` grader" + (" pooled across seeds (same sign in every seed and a significant "
                                           "pooled test)" if spreads else "") + ".", ""]
    out += [f"- **{label}**: {v}" + (f" ({spreads[label].reason})" if label in spreads else "")
            for label, v in verdicts.items()]
    out += ["", f"| arm | seed | verdict | {primary} baseline | {primary} evolved | Δ | flipped +/− | run |",
            "|---|---:|---|---:|---:|---:|---|---|"]
    for a in arms:
        m = a.metrics
        up, down = m.get(f"{primary}/flipped_up", math.nan), m.get(f"{primary}/flipped_down", math.nan)
        flips = f"+{int(up)}/−{int(down)}" if math.isfinite(up) and math.isfinite(down) else "n/a"
        out.append(f"| {a.label} | {a.seed} | {a.verdict} | {_num(m.get(f'{primary}/baseline', math.nan))} | "
                   f"{_num(m.get(f'{primary}/evolved', math.nan))} | {fmt_delta(m.get(f'{primary}/delta', math.nan))}"
                   f" | {flips} | `{a.run_id}` |")
    if not matrix.empty:
        out += ["", "## Cross-grading (mean Δ composite over seeds; rows optimised by, columns graded by)", "",
                "| optimised by | " + " | ".join(str(c) for c in matrix.columns) + " |",
                "|---|" + "---:|" * len(matrix.columns)]
        for label, row in matrix.iterrows():
            out.append(f"| {label} | " + " | ".join(fmt_delta(float(v)) for v in row) + " |")
    if spreads:
        out += ["", f"Per-seed spreads: `{artifacts.SEEDS_REPORT}`."]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------------------ per-task pivot


def per_task_pivot(rows: Sequence[Any] | pd.DataFrame, primary: str = PRIMARY) -> pd.DataFrame:
    """One row per holdout task: ``task_id``, ``flipped``, the ``primary`` grader's composite of every variant
    present (``<variant> <grader>``: baseline, evolved, then any other), every variant's answer (``<variant>
    answer``), the other graders' composites and ``kind``.

    ``flipped`` compares the ``primary`` grader's correctness of baseline and evolved: ``"↑ now correct"``,
    ``"↓ now wrong"``, ``""`` (same), ``"unscored"`` (either side ungraded) or ``""`` without both variants.
    NaN composites stay NaN (unscored).

    Args:
        rows: :class:`harness.engine.holdout.HoldoutRow` objects or the holdout table (task_id, kind, variant,
            grader, output, correctness, composite).
    """
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame([r.to_dict() for r in rows])
    if frame.empty:
        return pd.DataFrame(columns=["task_id", "kind", "flipped"])
    tasks = list(dict.fromkeys(frame["task_id"].astype(str)))
    variants = list(dict.fromkeys(frame["variant"].astype(str)))
    graders = list(dict.fromkeys(frame["grader"].astype(str)))
    graders = ([primary] if primary in graders else []) + [g for g in graders if g != primary]
    index = {(str(r["task_id"]), str(r["variant"]), str(r["grader"])): r for r in frame.to_dict("records")}
    out = []
    for task in tasks:
        any_row = next(r for (t, _, _), r in index.items() if t == task)
        # ``flipped`` next to the task id: the viewer shows the first few columns without scrolling
        record: dict[str, Any] = {"task_id": task, "flipped": "", "kind": any_row.get("kind", "")}
        for variant in variants:
            graded = [index[(task, variant, g)] for g in graders if (task, variant, g) in index]
            record[f"{variant} answer"] = str(graded[0].get("output", "")) if graded else ""
            for g in graders:
                cell = index.get((task, variant, g))
                record[f"{variant} {g}"] = float(cell["composite"]) if cell is not None else math.nan
        before, after = index.get((task, "baseline", primary)), index.get((task, "evolved", primary))
        record["flipped"] = _flip(before, after)
        out.append(record)
    table = pd.DataFrame(out)
    # the artifact viewer shows about five columns without scrolling: the flip, then the primary grade of baseline
    # and evolved, then the answers; the other graders and the kind after them
    ordered = sorted(variants, key=lambda v: ({"baseline": 0, "evolved": 1}.get(v, 2)))
    lead = ["task_id", "flipped", *(f"{v} {primary}" for v in ordered if primary in graders),
            *(f"{v} answer" for v in ordered)]
    return table[lead + [c for c in table.columns if c not in lead]]


def _flip(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    if before is None or after is None:
        return ""
    b, a = float(before["correctness"]), float(after["correctness"])
    if not (math.isfinite(b) and math.isfinite(a)):
        return "unscored"
    if a >= 1.0 > b:
        return "↑ now correct"
    if b >= 1.0 > a:
        return "↓ now wrong"
    return ""


# ------------------------------------------------------------------------------------------ previews

_FRONTMATTER = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def _fence(text: str, info: str) -> str:
    """``text`` in a backtick fence longer than any backtick run inside it (CommonMark)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip(chr(10))}\n{ticks}\n"


def skill_preview_markdown(text: str, source: str) -> str:
    """A markdown copy of a SKILL.md for the artifact viewer: the YAML frontmatter in a ``yaml`` fence (rendered
    as-is, the bare ``---`` block would become one giant setext heading), then the body unchanged; a first line
    names the original file ``source`` (which stays byte for byte)."""
    head = f"*Preview of `{source}` (frontmatter shown as YAML).*\n\n"
    match = _FRONTMATTER.match(text)
    if not match:
        return head + text
    return head + _fence(match.group(1), "yaml") + "\n" + text[match.end():]


def diff_markdown(diff: str, source: str) -> str:
    """The unified diff in a ``diff`` fence (the viewer previews ``.md``, not ``.patch``); ``"(no change)"``
    for an empty diff."""
    if not diff.strip() or diff.strip() == "(no change)":
        return f"# Skill diff\n\nNo change: the evolved skill is the baseline text (`{source}`).\n"
    return f"# Skill diff\n\nBaseline → evolved SKILL.md (`{source}` holds the raw patch).\n\n" + _fence(diff, "diff")


def unscored_note(grader: str, variant: str, unscored: int, total: int) -> str:
    """``"holdout · evolved: judge unscored on 12 of 16 tasks (MLflow counts each as a failed assessment)"``."""
    return (f"holdout · {variant}: {grader} unscored on {unscored} of {total} tasks (left out of means and tests; "
            "MLflow lists each as a failed assessment)")


__all__ = ["ArmSummary", "DESCRIPTION_TAG", "ab_parent_description", "arm_label", "arm_verdicts", "diff_markdown",
           "evaluation_run_name", "experiment_report", "experiment_verdict", "grader_line", "headline_metrics",
           "is_tail_metric", "parent_description", "parent_run_name", "per_task_pivot", "run_description", "run_name",
           "skill_preview_markdown", "statistics_table", "unscored_note", "verdict_run_name", "verdict_score",
           "verdicts_headline"]
