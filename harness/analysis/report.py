"""The run report: one self-contained markdown (or HTML) file a reviewer can read, fit for a pull request that
proposes an evolved skill.

:func:`build_report` words a :class:`ReportInput` (what a run logged: params, metrics, tags, the holdout
table, the skill texts, the gate checks, links), recomputing the statistics from the per-task table with the
same functions the run used, so the report and the run cannot disagree.  Sections: what was evolved and how;
scores per split (train, val, holdout) for baseline, evolved and no skill per grader; the verdict with its
test, interval and power; the no-skill control; flipped tasks; grader agreement; cost; gates as passed /
failed / not run; the skill diff; links.  ``fmt="html"`` renders the same markdown to one HTML file
(markdown-it-py) with the figures inline as base64 PNG.
"""

from __future__ import annotations

import base64
import html
import math
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from harness.analysis.agreement import Agreement, agreement_lines, agreements, judge_trust_line
from harness.analysis.control import CONTROL_VARIANT, compare_to_control, control_lines
from harness.analysis.cost import ARM_COST_COLUMNS, NO_IMPROVEMENT, arm_cost_row, cost_lines, cost_summary
from harness.analysis.evidence import rests_on_judge
from harness.analysis.stats import (
    fmt_interval,
    fmt_num,
    overall_verdict,
    paired_stats,
    pairs_by_grader,
    power_statement,
)

#: report formats
FORMATS: tuple[str, ...] = ("md", "html")
#: holdout variants in table order, with their column titles
VARIANT_TITLES: dict[str, str] = {"baseline": "baseline", "evolved": "evolved", CONTROL_VARIANT: "no skill"}
GRADERS: tuple[str, ...] = ("verifier", "keyword", "judge")
#: what the report says about the trainset (the run does not grade it: see :func:`_split_lines`)
TRAIN_NOTE = ("not graded by the run: the optimizer scores minibatches of the trainset only, and a full "
              "grading of every variant by every grader would add |train| x 3 task-LM calls (and judge calls) "
              "for a number the optimizer has already fitted to")


@dataclass
class ReportInput:
    """What a run logged, as the report needs it (filled by :mod:`harness.tracking.reports` or by the run).

    Attributes:
        run_id, run_name, experiment: the run's identity.
        params: the run's params (strings, as logged); metrics: its latest metric values; tags: its tags.
        rows: the per-task holdout table (columns of :class:`harness.engine.holdout.HoldoutRow`).
        baseline_skill, evolved_skill, diff: the skill texts and their unified diff ("" when not logged).
        gates: ``[{"gate", "status", "reason"}]`` as the run logged them; None when none were logged.
        links: label -> URL or ``runs:/`` URI.
        children: the child runs of a side-by-side parent (their own inputs; empty for a single run).
        experiment_agreement: agreement pooled over the runs ``agreement_scope`` names (None: not looked at).
        status: the run's status (FINISHED, FAILED, ...; "" when unknown).
    """

    run_id: str | None
    experiment: str
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    rows: pd.DataFrame
    baseline_skill: str = ""
    evolved_skill: str = ""
    diff: str = ""
    gates: list[dict[str, str]] | None = None
    links: dict[str, str] = field(default_factory=dict)
    children: list[ReportInput] = field(default_factory=list)
    experiment_agreement: dict[str, Agreement] | None = None
    run_name: str = ""
    status: str = ""
    agreement_scope: str = "this experiment"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _num(x: Any, signed: bool = False) -> str:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return "n/a"
    if not math.isfinite(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(inp: ReportInput, key: str, default: str = "") -> str:
    return str(inp.params.get(key, default))


def _alpha(inp: ReportInput) -> float:
    try:
        return float(inp.params.get("alpha", 0.05))
    except ValueError:
        return 0.05


def _seed(inp: ReportInput) -> int:
    try:
        return int(float(inp.params.get("seed", 0)))
    except ValueError:
        return 0


def _uses_test_models(inp: ReportInput) -> bool:
    return any(_p(inp, k).startswith("test/") for k in ("task_model", "judge_model", "reflection_model"))


def _setup_lines(inp: ReportInput) -> list[str]:
    sizes = ", ".join(f"{name} {_p(inp, f'split.{key}', '?')}"
                      for name, key in (("train", "trainset"), ("val", "valset"), ("holdout", "holdout")))
    models = f"task `{_p(inp, 'task_model', '?')}`"
    if _p(inp, "reflection_model"):
        models += f", reflection `{_p(inp, 'reflection_model')}`"
    judged = not inp.rows.empty and "judge" in set(inp.rows["grader"])
    models += f", judge `{_p(inp, 'judge_model', '?')}`" + ("" if judged or inp.children else " (not used)")
    rows = [("skill", f"`{_p(inp, 'skill_name', inp.tags.get('skill', '?'))}` ({_p(inp, 'skill_path', '?')}, "
                      f"baseline sha256 `{_p(inp, 'baseline_sha256', '?')[:12]}`)"),
            ("optimizer", f"{_p(inp, 'optimizer', '?')} ({_p(inp, 'proposer_resolved', _p(inp, 'proposer', '?'))} "
                          f"proposer)"),
            ("fitness", _p(inp, "fitness_resolved", inp.tags.get("fitness", "?"))),
            ("models", models),
            ("budget", f"{_p(inp, 'budget', '?')} metric calls, seed {_p(inp, 'seed', '?')}, alpha "
                       f"{_p(inp, 'alpha', '?')}"),
            ("dataset", f"digest `{_p(inp, 'dataset_digest', '?')}`; {sizes}"),
            ("no-skill control", "graded" if _p(inp, "control", "True").lower() in ("true", "1") else "off")]
    return ["| what | value |", "|---|---|", *[f"| {k} | {_cell(v)} |" for k, v in rows]]


def _holdout_table(rows: pd.DataFrame) -> list[str]:
    if rows.empty:
        return ["No holdout table was logged."]
    present = [v for v in VARIANT_TITLES if v in set(rows["variant"])]
    head = "| grader | " + " | ".join(f"{VARIANT_TITLES[v]} composite (correct)" for v in present) + " | unscored |"
    lines = [head, "|---|" + "---:|" * len(present) + "---:|"]
    for grader in [g for g in GRADERS if g in set(rows["grader"])]:
        cells, unscored = [], 0
        for v in present:
            sel = rows[(rows["grader"] == grader) & (rows["variant"] == v)]
            comp = pd.to_numeric(sel["composite"], errors="coerce")
            corr = pd.to_numeric(sel["correctness"], errors="coerce")
            scored = comp.notna()
            unscored += int((~scored).sum())
            share = f"{(corr[scored] >= 1.0).mean():.0%}" if scored.any() else "n/a"
            cells.append(f"{_num(comp[scored].mean()) if scored.any() else 'n/a'} ({share})")
        lines.append(f"| {grader} | " + " | ".join(cells) + f" | {unscored} |")
    lines += ["", "Mean composite in [0, 1] over scored tasks; (correct) = share with correctness 1."]
    return lines


def _split_lines(inp: ReportInput) -> list[str]:
    fitness = _p(inp, "fitness_resolved", inp.tags.get("fitness", ""))
    base, evo = inp.metrics.get(f"val.{fitness}.baseline"), inp.metrics.get(f"val.{fitness}.evolved")
    lines = ["### train", "", f"- {TRAIN_NOTE}.", "", "### val", ""]
    if base is None and evo is None:
        lines.append("- no validation scores were logged for this run.")
    else:
        lines += ["| grader | baseline | evolved | no skill |", "|---|---:|---:|---:|",
                  f"| {fitness} (the fitness) | {_num(base)} | {_num(evo)} | not graded |", "",
                  "The optimizer's own validation scores under the fitness grader (mean over the valset); the "
                  "other graders and the no-skill control grade the holdout only."]
    return [*lines, "", "### holdout", "", *_holdout_table(inp.rows)]


def _verdict_lines(inp: ReportInput) -> list[str]:
    alpha = _alpha(inp)
    if inp.rows.empty:
        return [f"**Verdict: {inp.tags.get('verdict', 'none')}**: {inp.tags.get('verdict.reason', 'not logged')}."]
    stats = {g: paired_stats(s, alpha=alpha, seed=_seed(inp)) for g, s in pairs_by_grader(inp.rows).items()}
    gates_rejected = inp.tags.get("gates") == "rejected"
    verdict = overall_verdict(stats, alpha=alpha,
                              gate_rejected_reasons=["see the gates below"] if gates_rejected else ())
    lines = [f"**Verdict: {inp.tags.get('verdict', verdict.verdict)}**: "
             f"{inp.tags.get('verdict.reason', verdict.reason)}.", ""]
    primary = stats.get(verdict.primary)
    if primary is not None:
        level = f"{1 - alpha:.0%}"
        lines += [f"- test: Wilcoxon signed-rank on the per-task composite deltas ({primary.wilcoxon_method}), "
                  f"p = {fmt_num(primary.wilcoxon_p)}; exact McNemar on correct/not correct, p = "
                  f"{fmt_num(primary.mcnemar_p)} (b = {primary.discordant_improved}, c = "
                  f"{primary.discordant_regressed}); alpha {alpha:g}.",
                  f"- interval: mean delta {_num(primary.mean_delta, True)}, {level} bootstrap interval "
                  f"{fmt_interval(primary.ci_low, primary.ci_high)} ({primary.ci_method}).",
                  f"- power: {power_statement(primary)}"]
    lines += [f"- {d}" for d in verdict.disagreements]
    if rests_on_judge(stats):
        scope = inp.agreement_scope if inp.experiment_agreement is not None else "this run"
        found = inp.experiment_agreement if inp.experiment_agreement is not None else agreements(inp.rows)
        lines += ["", judge_trust_line(found, scope)]
    return lines


def _flip_lines(inp: ReportInput) -> list[str]:
    if inp.rows.empty or "verifier" not in set(inp.rows["grader"]):
        return ["- no verifier grades: no flip can be verified."]
    sample = pairs_by_grader(inp.rows).get("verifier")
    if sample is None:
        return ["- no verifier grades: no flip can be verified."]
    kinds = dict(zip(inp.rows["task_id"].astype(str), inp.rows["kind"].astype(str), strict=False))
    out = ["| task | kind | baseline | evolved |", "|---|---|---|---|"]
    for t, b, e in zip(sample.task_ids, sample.baseline_correct, sample.evolved_correct, strict=True):
        if b != e:
            out.append(f"| {_cell(t)} | {_cell(kinds.get(t, ''))} | {'right' if b else 'wrong'} | "
                       f"{'right' if e else 'wrong'} |")
    if len(out) == 2:
        return [f"- no task flipped under the verifier ({sample.n} scored pairs)."]
    return out


def _gate_lines(inp: ReportInput) -> list[str]:
    if inp.gates is None:
        state = "not run" if "gates" not in inp.tags else f"{inp.tags['gates']} (per-gate detail not logged)"
        return [f"- gates: {state}."]
    out = ["| gate | status | reason |", "|---|---|---|"]
    out += [f"| {_cell(g.get('gate', ''))} | {_cell(g.get('status', 'not run'))} | {_cell(g.get('reason', ''))} |"
            for g in inp.gates]
    return out


def _diff_lines(inp: ReportInput) -> list[str]:
    diff = inp.diff.strip()
    if not diff or diff == "(no change)":
        return ["No change: the evolved skill is the baseline."]
    fence = "````" if "```" in diff else "```"
    return [f"{fence}diff", diff, fence]


def _link_lines(inp: ReportInput) -> list[str]:
    if not inp.links:
        return [f"- run `{inp.run_id}`" if inp.run_id else "- no tracking store: the run was not logged."]
    return [f"- {label}: <{url}>" if "://" in url and not url.startswith("runs:/") else f"- {label}: `{url}`"
            for label, url in inp.links.items()]


def _amount(value: float, column: str) -> str:
    if not math.isfinite(value):
        return "n/a"
    if column.startswith("cost_usd"):
        return f"{value:.4f}"
    return f"{value:,.1f}" if column.endswith("_per_flip") else f"{value:,.0f}"


def _arms_lines(inp: ReportInput) -> list[str]:
    head = ["arm", "seed", "verdict", "verifier delta", *ARM_COST_COLUMNS, "verified", "run"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for child in inp.children:
        cost = arm_cost_row(child.metrics)
        label = child.tags.get("fitness", "?")
        if _p(child, "optimizer", "gepa") != "gepa":
            label += f"/{_p(child, 'optimizer')}"
        cells = [label, _p(child, "seed", "?"), child.tags.get("verdict", "n/a"),
                 _num(child.metrics.get("holdout.verifier.delta"), True),
                 *[_amount(cost[c], c) for c in ARM_COST_COLUMNS],
                 cost["verified"], f"`{child.run_id}`"]
        out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    out += ["", f"Spend is each arm's own (its optimisation and its evolved skill's holdout); the shared baseline "
            f"and no-skill grading is the parent's. \"{NO_IMPROVEMENT}\" = the verifier saw no task flip wrong -> "
            "right."]
    return out


def _markdown(inp: ReportInput) -> str:
    skill = _p(inp, "skill_name", inp.tags.get("skill", "skill"))
    if inp.children:
        verdicts = ", ".join(f"{c.tags.get('verdict', 'n/a')}" for c in inp.children)
        lines = [f"# Side-by-side experiment on skill `{skill}`: {len(inp.children)} arms ({verdicts})", ""]
    else:
        lines = [f"# Evolved skill `{skill}`: {inp.tags.get('verdict', 'no verdict')}", ""]
    if _uses_test_models(inp):
        lines += ["> **Figures from offline test LMs** (`test/...` model strings): deterministic stand-ins for "
                  "tests and demos; they say nothing about any real model.", ""]
    lines += [f"Run `{inp.run_id}` in experiment `{inp.experiment}`"
              + (f" ({inp.status})" if inp.status else "") + ".", "",
              "## What was evolved and how", "", *_setup_lines(inp), ""]
    if inp.children:
        lines += ["## Arms (side-by-side)", "", *_arms_lines(inp), ""]
        control = compare_to_control(inp.rows, alpha=_alpha(inp), seed=_seed(inp)) if not inp.rows.empty else []
        lines += ["## Does the baseline skill help at all? (no-skill control)", "", *control_lines(control), ""]
        found = inp.experiment_agreement or {}
        lines += ["## Grader agreement with the verifier (pooled)", "",
                  *agreement_lines(found, inp.agreement_scope), "", "## Links", "", *_link_lines(inp), ""]
        return "\n".join(lines)
    alpha = _alpha(inp)
    rows = inp.rows
    lines += ["## Scores per split", "", *_split_lines(inp), "",
              "## Verdict", "", *_verdict_lines(inp), "",
              "## Does the skill help at all? (no-skill control)", "",
              *control_lines(compare_to_control(rows, alpha=alpha, seed=_seed(inp)) if not rows.empty else []), "",
              "## Flipped tasks (verifier)", "", *_flip_lines(inp), "",
              "## Grader agreement with the verifier", "", *agreement_lines(agreements(rows) if not rows.empty else {},
                                                                           "this run")]
    here = agreements(rows) if not rows.empty else {}
    wider = inp.experiment_agreement or {}
    if any(a.n_graded > (here[g].n_graded if g in here else 0) for g, a in wider.items()):
        lines += agreement_lines(wider, inp.agreement_scope)
    usage = {k: v for k, v in inp.metrics.items() if k.startswith(("lm_calls.", "tokens.", "cost."))}
    lines += ["", "## Cost", "", *cost_lines(cost_summary(usage, rows)), "",
              "## Gates", "", *_gate_lines(inp), "",
              "## Skill diff", "", *_diff_lines(inp), "",
              "## Links", "", *_link_lines(inp), ""]
    return "\n".join(lines)


def report_figures(inp: ReportInput, folder: Path) -> list[tuple[str, Path]]:
    """``(caption, png)`` figures of the report: the verifier's per-task chart and the agreement matrices."""
    from harness.analysis.plots import agreement_png, holdout_per_task_png

    out: list[tuple[str, Path]] = []
    if inp.rows.empty:
        return out
    graders = set(inp.rows["grader"])
    main = "verifier" if "verifier" in graders else sorted(graders)[0]
    out.append((f"Holdout per task ({main} grader)", holdout_per_task_png(inp.rows, folder / "per_task.png", main)))
    found = agreements(inp.rows) if not inp.children else (inp.experiment_agreement or {})
    if found:
        out.append(("Agreement with the verifier",
                    agreement_png({g: a.confusion() for g, a in found.items()}, folder / "agreement.png")))
    return out


def _html(markdown_text: str, figures: Sequence[tuple[str, Path]], title: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown_text)
    images = "".join(
        f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,'
        f'{base64.b64encode(path.read_bytes()).decode("ascii")}"><figcaption>{html.escape(caption)}</figcaption>'
        f"</figure>\n" for caption, path in figures)
    style = ("body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
             "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
             "pre{background:#f6f8fa;padding:.6rem;overflow:auto}img{max-width:100%}")
    return (f"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>\n{body}\n<h2>Figures</h2>\n{images}</body></html>\n")


def build_report(inp: ReportInput, fmt: str = "md") -> str:
    """The report of ``inp`` as markdown (``fmt="md"``) or one self-contained HTML file (``"html"``).

    Raises:
        ValueError: an unknown format.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")
    text = _markdown(inp)
    if fmt == "md":
        return text
    with tempfile.TemporaryDirectory(prefix="harness-report-") as tmp:
        return _html(text, report_figures(inp, Path(tmp)), f"report {inp.run_id}")


def gate_records(checks: Sequence[tuple[str, str, str]]) -> list[dict[str, str]]:
    """``GateResult.checks`` as the JSON records a run logs and :class:`ReportInput` reads."""
    return [{"gate": g, "status": s, "reason": r} for g, s, r in checks]


def metrics_of(values: Mapping[str, Any]) -> dict[str, float]:
    """Finite-or-NaN floats of a metrics mapping (non-numbers dropped)."""
    out = {}
    for k, v in values.items():
        try:
            out[k] = float(v)
        except (TypeError, ValueError):
            continue
    return out
