"""From per-task holdout grades to a claim: paired statistics per grader, the verdict, the claim report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.claim import claim_report
from harness.analysis.stats import (
    UNCHANGED,
    UNCHANGED_REASON,
    PairedStats,
    Verdict,
    overall_verdict,
    paired_stats,
    pairs_by_grader,
)
from harness.artifacts import CLAIM_REPORT
from harness.engine.holdout import HoldoutRow
from harness.skills.gates import GateResult

CLAIM_ARTIFACT = CLAIM_REPORT


@dataclass(frozen=True)
class Assessment:
    """Statistics per grader, the verdict, and the markdown claim report of one run."""

    stats: dict[str, PairedStats]
    verdict: Verdict
    report: str

    def metrics(self) -> dict[str, float]:
        """``stats.<grader>.*`` metrics of every grader."""
        out: dict[str, float] = {}
        for s in self.stats.values():
            out.update(s.to_metrics("stats"))
        return out


def assess(rows: Sequence[HoldoutRow], gate: GateResult, *, skill: str, fitness: str, run_id: str | None,
           alpha: float, seed: int, unchanged: bool = False) -> Assessment:
    """Paired tests on ``rows`` (baseline vs evolved, per grader) and the verdict at ``alpha``.

    A gate rejection makes the verdict ``rejected`` whatever the statistics say (the baseline was kept).
    ``unchanged`` (the optimizer's best candidate is the baseline text) makes it ``unchanged``: the
    statistics compare the baseline with itself, so they are reported but claim nothing.
    """
    stats = {g: paired_stats(sample, alpha=alpha, seed=seed) for g, sample in pairs_by_grader(rows).items()}
    verdict = overall_verdict(stats, alpha=alpha, gate_rejected_reasons=() if gate.passed else gate.reasons)
    if unchanged and gate.passed:
        verdict = Verdict(UNCHANGED, UNCHANGED_REASON, verdict.per_grader, (), verdict.per_grader_reasons,
                          verdict.primary)
    report = claim_report(skill, run_id, fitness, stats, verdict, alpha)
    return Assessment(stats, verdict, report)
