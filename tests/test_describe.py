"""What a run shows at a glance (issue 16): descriptions, names, headline metrics, the pivot, previews, wording."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping

import pandas as pd
import pytest

from harness.analysis import describe
from harness.analysis.assess import assess
from harness.analysis.claim import claim_report, seeds_report
from harness.analysis.stats import (
    UNCHANGED,
    PairedSample,
    overall_verdict,
    paired_stats,
    pooled_verdict,
    power_statement,
)
from harness.cli.console import PlainLines, Reporter
from harness.cli.summary import summary_rows
from harness.config import EvolveConfig
from harness.engine.holdout import HoldoutRow
from harness.run import evolve
from harness.skills.gates import GateResult
from harness.tracking.tracker import NullTracker

NAN = float("nan")


def _rows(base: list[float], evo: list[float], grader: str = "verifier") -> list[HoldoutRow]:
    rows = []
    for variant, values in (("baseline", base), ("evolved", evo)):
        for i, v in enumerate(values):
            rows.append(HoldoutRow(f"t{i}", "fact", "", variant, grader, f"{variant} answer {i}", v, 1.0, 1.0, v,
                                   "feedback"))
    return rows


PASSED = GateResult(passed=True, reasons=())


def test_run_description_names_verdict_grades_flips_and_evidence() -> None:
    claim = assess(_rows([0.0] * 8 + [1.0] * 2, [1.0] * 10), PASSED, skill="arxiv", fitness="verifier",
                   run_id="r1", alpha=0.05, seed=0)
    text = describe.run_description(claim.verdict, claim.stats, holdout_size=12)
    lines = text.strip().split("\n\n")
    assert len(lines) == 3
    assert lines[0].startswith("**improved** (verifier grader): Wilcoxon p =")
    assert lines[1] == ("verifier 0.200 → 1.000 (Δ +0.800) on 10 of 12 holdout tasks; 8 tasks flipped to correct, "
                        "0 to wrong.")
    assert "claim_report.md" in lines[2] and "holdout/per_task.json" in lines[2] and "Compare to" in lines[2]
    assert "the evolved run's description links that comparison" in lines[2]


def test_unchanged_skill_says_no_change_not_a_verdict() -> None:
    rows = _rows([0.5, 1.0, 0.0] * 3, [0.5, 1.0, 0.0] * 3)
    claim = assess(rows, PASSED, skill="arxiv", fitness="verifier", run_id=None, alpha=0.05, seed=0, unchanged=True)
    assert claim.verdict.verdict == UNCHANGED and not claim.verdict.disagreements
    text = describe.run_description(claim.verdict, claim.stats, holdout_size=9)
    assert text.startswith("**no change**: the optimizer kept the baseline skill text")
    assert "inconclusive" not in text and "improved" not in text and "(same skill text both times)" in text
    assert describe.headline_metrics(claim.stats, claim.verdict)["verdict/score"] == 0.0
    # a gate rejection stays "rejected" even when the kept text is the baseline
    rejected = assess(rows, GateResult(passed=False, reasons=("too long",)), skill="arxiv", fitness="verifier",
                      run_id=None, alpha=0.05, seed=0, unchanged=True)
    assert rejected.verdict.verdict == "rejected"


def test_names_tell_runs_apart() -> None:
    assert describe.run_name("arxiv", "verifier", "test/lessons", 0) == "verifier s0 · arxiv · test/lessons"
    assert describe.run_name("arxiv", "judge", "openai/gpt-4o", 2, "miprov2") == (
        "judge/miprov2 s2 · arxiv · openai/gpt-4o")
    assert describe.parent_run_name("arxiv", ["keyword", "verifier", "keyword"], "test/lessons", 3) == (
        "keyword,verifier ×3 seeds · side-by-side · arxiv · test/lessons")
    assert describe.parent_run_name("arxiv", ["verifier"], "embedded", 1) == (
        "verifier ×1 seed · side-by-side · arxiv · embedded")
    assert describe.evaluation_run_name("evolved", "verifier s0 · arxiv") == "evolved · verifier s0 · arxiv"


def test_a_run_name_leads_with_its_verdict_once_known() -> None:
    # MLflow's default runs table shows ~22 characters of the name and nothing else of the verdict
    name = describe.run_name("arxiv", "verifier", "test/lessons", 0)
    assert describe.verdict_run_name("improved", name) == "improved · verifier s0 · arxiv · test/lessons"
    assert describe.verdict_run_name("failed", name) == "failed · verifier s0 · arxiv · test/lessons"
    assert describe.verdict_run_name("", name) == name and describe.verdict_run_name("killed", "") == "killed"
    # parents: how many arms (or candidates) improved, and regressions when any
    assert describe.verdicts_headline(["improved", "inconclusive", "improved"]) == "2/3 improved"
    assert describe.verdicts_headline(["regressed", "unchanged"]) == "0/2 improved, 1 regressed"
    assert describe.verdicts_headline(["unchanged"]) == "unchanged" and describe.verdicts_headline([]) == ""


def test_headline_metrics_are_few_grouped_and_agree_with_the_stats() -> None:
    rows = _rows([0.0] * 8, [1.0] * 6 + [0.0, 0.0]) + _rows([0.5] * 8, [0.5] * 8, grader="keyword")
    claim = assess(rows, PASSED, skill="arxiv", fitness="verifier", run_id=None, alpha=0.05, seed=0)
    m = describe.headline_metrics(claim.stats, claim.verdict)
    assert list(m)[0] == "verdict/score" and all("/" in k for k in m) and len(m) <= 15
    assert (m["verifier/baseline"], m["verifier/evolved"], m["verifier/delta"]) == (0.0, 0.75, 0.75)
    assert (m["verifier/flipped_up"], m["verifier/flipped_down"], m["verifier/n"]) == (6, 0, 8)
    assert m["keyword/delta"] == 0.0 and m["keyword/verdict"] == 0.0 and "keyword/baseline" not in m
    assert describe.is_tail_metric("stats.verifier.wilcoxon_p")
    assert describe.is_tail_metric("holdout.judge.evolved.unscored")
    assert not describe.is_tail_metric("holdout.verifier.delta") and not describe.is_tail_metric("fitness.unscored")
    table = describe.statistics_table(claim.stats, claim.verdict, {"holdout.verifier.evolved.correct_share": 0.75})
    assert list(table.grader) == ["keyword", "verifier"]
    assert table.set_index("grader").loc["verifier", "evolved.correct_share"] == 0.75


def test_per_task_pivot_puts_variants_side_by_side_with_flips_and_unscored() -> None:
    rows = _rows([0.0, 1.0, 1.0, 0.5], [1.0, 0.0, 1.0, NAN])
    rows += [HoldoutRow("t0", "fact", "", "none", "verifier", "no skill", 0.0, 1.0, 1.0, 0.0, "")]
    pivot = describe.per_task_pivot(rows)
    assert list(pivot.task_id) == ["t0", "t1", "t2", "t3"]
    assert list(pivot.flipped) == ["↑ now correct", "↓ now wrong", "", "unscored"]
    # what the artifact viewer shows without scrolling: the flip and the verifier's grade of baseline and evolved
    assert list(pivot.columns[:5]) == ["task_id", "flipped", "baseline verifier", "evolved verifier", "none verifier"]
    assert list(pivot.columns[5:8]) == ["baseline answer", "evolved answer", "none answer"]
    assert pivot.loc[0, "baseline answer"] == "baseline answer 0" and pivot.loc[0, "evolved verifier"] == 1.0
    assert "none answer" in pivot.columns and pivot.loc[0, "none verifier"] == 0.0  # any variant present
    assert math.isnan(pivot.loc[3, "evolved verifier"])
    assert describe.per_task_pivot([]).empty


def test_previews_fence_the_frontmatter_and_the_diff() -> None:
    text = "---\nname: arxiv\ndescription: x\n---\n# Body\n\nUse ```code```.\n"
    preview = describe.skill_preview_markdown(text, "skill/evolved/SKILL.md")
    assert "```yaml\nname: arxiv\ndescription: x\n```\n" in preview and preview.endswith("# Body\n\nUse ```code```.\n")
    assert "\n---\n" not in preview  # nothing left for markdown to turn into a setext heading
    assert describe.skill_preview_markdown("# No frontmatter\n", "s").endswith("# No frontmatter\n")
    diff = describe.diff_markdown("--- a/SKILL.md\n+++ b/SKILL.md\n+```py\n", "skill/diff.patch")
    assert "````diff\n--- a/SKILL.md" in diff and diff.rstrip().endswith("````")  # a longer fence than inside
    assert "No change" in describe.diff_markdown("", "skill/diff.patch")


def _summary(label: str, seed: int, verdict: str, base: float, evo: float, up: int, down: int) -> describe.ArmSummary:
    return describe.ArmSummary(label, seed, f"run-{label}-{seed}", verdict,
                               {"verifier/baseline": base, "verifier/evolved": evo, "verifier/delta": evo - base,
                                "verifier/flipped_up": up, "verifier/flipped_down": down})


def test_parent_description_verdict_and_report_without_seeds() -> None:
    arms = [_summary("keyword", 0, "inconclusive", 0.5, 0.5, 1, 1), _summary("verifier", 0, "improved", 0.5, 1.0, 5, 0)]
    text = describe.parent_description(arms, {}, task_model="test/lessons", seeds=1, holdout_size=10)
    first, second, third = text.strip().split("\n\n")
    assert "Compared 2 fitness arms (keyword, verifier) × 1 seed" in first and "`test/lessons`" in first
    assert "**Verdicts: keyword inconclusive, verifier improved**" in first
    assert "verifier s0: improved, verifier 0.500 → 1.000 (Δ +0.500, +5/−0 flipped)" in second
    assert "claim_report.md" in third and "evaluation" in third
    assert describe.experiment_verdict(arms, {}) == "keyword: inconclusive · verifier: improved"
    matrix = pd.DataFrame({"verifier": [0.0, 0.5]}, index=["keyword", "verifier"])
    report = describe.experiment_report(arms, {}, matrix, skill="arxiv", task_model="test/lessons", seeds=1)
    assert report.startswith("# Side-by-side: arxiv") and "- **verifier**: improved" in report
    assert "| verifier | 0 | improved | 0.500 | 1.000 | +0.500 | +5/−0 | `run-verifier-0` |" in report
    assert "| keyword | 0.000 |" in report  # a zero delta has no sign


def _sample(deltas: list[float], grader: str = "verifier") -> PairedSample:
    n = len(deltas)
    base = [0.5] * n
    evo = [0.5 + d for d in deltas]
    return PairedSample(grader, [f"t{i}" for i in range(n)], base, evo, [False] * n, [e >= 1.0 for e in evo])


def test_wording_bugs_of_issue_16_are_fixed() -> None:
    # seeds: an all-zero delta is not a "sign change (+0, +0, +0)"
    verdict, spread = pooled_verdict([_sample([0.0] * 8)] * 3)
    assert "+0," not in verdict.reason and "changes sign" not in verdict.reason
    assert "the mean delta is 0 in every seed (0.000, 0.000, 0.000)" in verdict.reason
    assert "0.000, 0.000, 0.000" in seeds_report({"verifier": spread})
    mixed, _ = pooled_verdict([_sample([0.5] + [0.0] * 7), _sample([-0.5] + [0.0] * 7)])
    assert "changes sign across seeds (+0.062, -0.062)" in mixed.reason
    # power: equal deltas have no "min detectable shift 0 (SD 0)"
    same = paired_stats(_sample([0.25] * 8))
    assert "SD of deltas 0" not in power_statement(same) and "(SD 0)" not in power_statement(same)
    assert "every pair has the same delta (+0.250)" in power_statement(same)
    # claim report: an underpowered holdout is not "6/3 = 200%"
    small = {"verifier": paired_stats(_sample([0.5, 0.5, 0.0]))}
    report = claim_report("arxiv", None, "verifier", small, overall_verdict(small), 0.05)
    assert "200%" not in report and "needs 6 changed tasks, only 3 scored (underpowered)" in report


def test_unscored_note_words_it_the_harness_way() -> None:
    assert describe.unscored_note("judge", "evolved", 12, 16).startswith(
        "holdout · evolved: judge unscored on 12 of 16 tasks")


def test_plain_lines_drop_ansi_and_bar_redraws() -> None:
    target = io.StringIO()
    stream = PlainLines(target)
    stream.write("\x1b[32m✨ Evaluation completed.\x1b[0m\n")
    for i in range(1, 4):
        stream.write(f"\rAverage Metric: {i} / 3")
    stream.write("\n")
    stream.write("\r\x1b[2Kouter 1/2\r\x1b[2Kinner done\r\nlast")
    stream.close()
    assert target.getvalue() == "✨ Evaluation completed.\nAverage Metric: 3 / 3\ninner done\nlast\n"
    assert not stream.isatty()


@pytest.mark.parametrize("verdict,score", [("improved", 1.0), ("regressed", -1.0), ("inconclusive", 0.0),
                                           ("rejected", 0.0), ("unchanged", 0.0)])
def test_verdict_score(verdict: str, score: float) -> None:
    assert describe.verdict_score(verdict) == score


class _Recording(NullTracker):
    """A tracker that keeps the tags and metrics it is given and counts registrations."""

    def __init__(self) -> None:
        self.tags: dict[str, str] = {}
        self.metric_batches: list[list[str]] = []
        self.registered = 0

    def set_tags(self, tags: Mapping[str, str]) -> None:
        self.tags.update(tags)

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        self.metric_batches.append(list(metrics))

    def register_skill_version(self, *args: object, **kwargs: object) -> int | None:
        self.registered += 1
        return None


def test_an_unchanged_run_says_no_change_everywhere() -> None:
    tracker = _Recording()
    result = evolve(EvolveConfig(task_model="test/oracle", num_cases=24, budget=12, seed=0), tracker,
                    Reporter(quiet=True))
    assert result.evolved_text == result.skill.text  # test/oracle answers everything right: nothing to learn
    assert tracker.tags["gates"] == "no change" and tracker.tags["verdict"] == UNCHANGED
    assert tracker.tags["mlflow.note.content"].startswith("**no change**: the optimizer kept the baseline")
    assert tracker.registered == 0  # an unchanged skill is not a new version
    headline = next(b for b in tracker.metric_batches if "verdict/score" in b)
    assert headline[0] == "verdict/score"  # the headline batch is logged before the long tail
    assert tracker.metric_batches.index(headline) < next(
        i for i, b in enumerate(tracker.metric_batches) if "holdout.verifier.delta" in b)
    rows = dict(summary_rows(result))
    assert rows["gates"] == "no change" and rows["verdict"].startswith("unchanged")
