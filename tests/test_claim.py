"""Tests for harness.analysis.claim: the markdown claim report's sections, numbers and evidence link."""

from __future__ import annotations

import re

import pytest

from harness.analysis.claim import TABLE_ARTIFACT, claim_report, load_table_snippet, seeds_report
from harness.analysis.stats import (
    PairedSample,
    PairedStats,
    overall_verdict,
    paired_stats,
    pooled_verdict,
)

STRONG_UP = [0.12, 0.2, 0.31, 0.25, 0.4, 0.18, 0.22, 0.35, 0.28, 0.15, 0.3, 0.26, 0.33, 0.21, 0.17, 0.29]
MIXED = [0.1, -0.2, 0.3, -0.05, 0.15, -0.12, 0.22, 0.08]




def sample(deltas: list[float], grader: str, base: float = 0.4, dropped: int = 0) -> PairedSample:
    evolved = [base + d for d in deltas]
    return PairedSample(grader, tuple(f"t{i}" for i in range(len(deltas))), (base,) * len(deltas), tuple(evolved),
                        (False,) * len(deltas), tuple(e >= 1 for e in evolved), dropped)


def mcnemar_sample(b: int, c: int, both: int, neither: int) -> PairedSample:
    pattern = [(False, True)] * b + [(True, False)] * c + [(True, True)] * both + [(False, False)] * neither
    return PairedSample("verifier", tuple(f"t{i}" for i in range(len(pattern))),
                        tuple(1.0 if x else 0.5 for x, _ in pattern), tuple(1.0 if y else 0.5 for _, y in pattern),
                        tuple(x for x, _ in pattern), tuple(y for _, y in pattern), dropped=1)


def three_graders() -> dict[str, PairedStats]:
    return {
        "keyword": paired_stats(sample(STRONG_UP, "keyword")),
        "verifier": paired_stats(mcnemar_sample(7, 1, 5, 3)),
        "judge": paired_stats(sample([0.1, 0.2, -0.1, 0.3], "judge", dropped=2)),
    }


def table_rows(report: str) -> list[list[str]]:
    """Cells of every markdown table line (header, separator and body)."""
    rows = [line for line in report.splitlines() if line.startswith("|")]
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in rows]


def test_report_sections_and_numbers() -> None:
    stats = three_graders()
    verdict = overall_verdict(stats)
    report = claim_report("arxiv", "run123", "verifier", stats, verdict, 0.05)
    lines = report.splitlines()
    assert lines[0] == "# Claim: arxiv"
    assert f"**Verdict: {verdict.verdict}**: {verdict.reason}." in report
    assert verdict.verdict == "inconclusive"  # 7 vs 1 of 16 changed: exact p = 0.0703
    rows = table_rows(report)
    header, body = rows[0], rows[2:]
    assert header[:5] == ["grader", "n (dropped)", "baseline", "evolved", "delta"]
    assert "95% CI" in header and "McNemar p (b/c)" in header and "min detectable share" in header
    assert all(len(r) == len(header) for r in rows)
    assert [r[0] for r in body] == ["verifier", "keyword", "judge"]  # the primary grader first
    v = dict(zip(header, body[0], strict=True))
    s = stats["verifier"]
    assert v["n (dropped)"] == "16 (1)"
    assert v["baseline"] == f"{s.baseline_mean:.3f}" and v["evolved"] == f"{s.evolved_mean:.3f}"
    assert v["delta"] == f"{s.mean_delta:+.3f}"
    assert v["McNemar p (b/c)"] == "0.0703 (7/1)"
    assert v["Wilcoxon p"] == f"{s.wilcoxon_p:.3g}"
    assert v["min detectable share"] == "6/16 = 38%"
    assert v["verdict"] == "inconclusive"
    judge = dict(zip(header, body[2], strict=True))
    assert judge["n (dropped)"] == "4 (2)" and "underpowered" in judge["min detectable share"]
    assert "## Power" in report and "judge: underpowered: 4 holdout pairs" in report
    assert "## Disagreements" in report and "- keyword says improved, verifier says inconclusive" in report
    assert "## Across seeds" not in report


def test_report_links_the_per_task_table() -> None:
    stats = three_graders()
    report = claim_report("arxiv", "run123", "verifier", stats, overall_verdict(stats), 0.05)
    assert f"`{TABLE_ARTIFACT}`" in report
    assert 'mlflow.load_table("holdout/holdout_table.json", run_ids=["run123"])' in report
    anonymous = claim_report("arxiv", None, "verifier", stats, overall_verdict(stats), 0.05,
                             table_artifact="holdout/other.json")
    assert 'mlflow.load_table("holdout/other.json", run_ids=["<run_id>"])' in anonymous
    assert "MLflow run `" not in anonymous
    assert load_table_snippet("abc") == 'mlflow.load_table("holdout/holdout_table.json", run_ids=["abc"])'
    assert report.endswith("\n")


def test_report_with_seeds_and_improved_verdict() -> None:
    stats = {"verifier": paired_stats(sample(STRONG_UP, "verifier"))}
    verdict = overall_verdict(stats)
    _, spread = pooled_verdict([sample(STRONG_UP[:8], "verifier"), sample(STRONG_UP[8:], "verifier")], n_boot=500)
    report = claim_report("arxiv", "r1", "keyword", stats, verdict, 0.05)
    assert "**Verdict: improved**" in report and "excludes 0" in report
    assert "fitness used for evolution: `keyword`" in report
    assert "- none: every grader's verdict matches the verifier's." in report
    seeds = seeds_report({"keyword": spread})  # the across-seeds report is the parent's, in one place
    assert "# Across seeds" in seeds and f"| keyword | {spread.n_seeds} |" in seeds
    assert f"{spread.min_delta:+.3f} | {spread.max_delta:+.3f}" in seeds
    assert f"{spread.verdict}: {spread.reason}" in seeds


def test_report_without_verifier_and_with_gate_rejection() -> None:
    stats = {"keyword": paired_stats(sample(STRONG_UP, "keyword"))}
    report = claim_report("demo", "r2", "keyword", stats, overall_verdict(stats), 0.05)
    assert "**Verdict: inconclusive**: no objective verifier for this skill." in report
    assert "keyword says improved, no verifier to confirm it" in report
    rejected = overall_verdict(stats, gate_rejected_reasons=["body grew 4x"])
    report = claim_report("demo", "r2", "keyword", stats, rejected, 0.05)
    assert "**Verdict: rejected**: evolved skill rejected by the gates: body grew 4x (the baseline was kept)." in report
    empty = claim_report("demo", "r3", "keyword", {}, overall_verdict({}), 0.05)
    assert "No per-grader statistics" in empty and "|" not in empty.split("## Evidence")[0]


def test_report_escapes_pipes_and_checks_alpha() -> None:
    stats = {"a|b": paired_stats(sample(MIXED, "a|b"))}
    report = claim_report("demo", "r", "judge", stats, overall_verdict(stats), 0.05)
    rows = table_rows(report)
    assert rows[2][0] == "a\\|b" and len(rows[2]) == len(rows[0])
    with pytest.raises(ValueError, match="alpha 0.1"):
        claim_report("demo", "r", "judge", {"v": paired_stats(sample(MIXED, "v"), alpha=0.1)},
                     overall_verdict({}), 0.05)


def test_report_at_another_alpha_labels_the_interval() -> None:
    stats = {"verifier": paired_stats(sample(STRONG_UP, "verifier"), alpha=0.1)}
    report = claim_report("demo", "r", "verifier", stats, overall_verdict(stats, alpha=0.1), 0.1)
    assert "90% CI" in report and "p < 0.1" in report and "95%" not in report.split("## Power")[0]
