"""The three questions a run answers beside its verdict, gathered once: does the skill help at all (the
no-skill control), can the judge be trusted here (agreement with the verifier), what did it cost (per
verified improvement).  :func:`run_evidence` computes them from a run's holdout rows and spend; the result
gives the metrics, tags and the markdown sections appended to the claim report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from harness.analysis.agreement import Agreement, agreement_frame_rows, agreement_lines, agreements, judge_trust_line
from harness.analysis.control import ControlComparison, compare_to_control, control_lines
from harness.analysis.cost import CostSummary, cost_lines, cost_summary
from harness.analysis.stats import PairedStats


def rests_on_judge(stats: Mapping[str, PairedStats]) -> bool:
    """True when the verdict cannot rest on the verifier (no verifier statistics, or no scored verifier pair:
    e.g. a skill whose tasks have no checks) and the judge graded the holdout."""
    verifier = stats.get("verifier")
    return "judge" in stats and (verifier is None or verifier.n_pairs == 0)


@dataclass(frozen=True)
class RunEvidence:
    """Control comparisons, grader agreement and cost of one run (see the module docstring)."""

    control: list[ControlComparison]
    agreement: dict[str, Agreement]
    cost: CostSummary
    judge_verdict_note: str = ""

    def metrics(self) -> dict[str, float]:
        """``control.*``, ``agreement.*``, ``spend.*``, ``flips.*``, ``per_flip.*`` metrics."""
        out: dict[str, float] = {}
        for c in self.control:
            out.update(c.metrics())
        for a in self.agreement.values():
            out.update(a.to_metrics())
        out.update(self.cost.metrics())
        return out

    def tags(self) -> dict[str, str]:
        """``verdict.control.<variant>`` (improved = the skill beats no skill) and ``agreement.<grader>`` (the
        one-line sentence)."""
        tags = {f"verdict.control.{c.variant}": c.verdict for c in self.control}
        tags.update({f"agreement.{g}": a.sentence()[:500] for g, a in self.agreement.items()})
        return tags

    def agreement_table(self) -> pd.DataFrame:
        """One row per compared grader (:meth:`Agreement.to_dict` plus the correct/incorrect rules)."""
        return pd.DataFrame(agreement_frame_rows(self.agreement))

    def markdown(self) -> str:
        """The claim report's added sections: no-skill control, grader agreement, cost."""
        lines = ["## Does the skill help at all? (no-skill control)", "", *control_lines(self.control), "",
                 "## Can the judge be trusted here? (agreement with the verifier)", "",
                 *agreement_lines(self.agreement)]
        if self.judge_verdict_note:
            lines += ["", self.judge_verdict_note]
        lines += ["", "## Cost per verified improvement", "", *cost_lines(self.cost), ""]
        return "\n".join(lines)

    def summary_rows(self) -> list[tuple[str, str]]:
        """Console summary rows: one per control comparison, per agreement, and the cost."""
        rows = [(f"{c.variant} vs no skill", c.sentence()) for c in self.control]
        rows += [(f"{g} vs verifier", a.sentence()) for g, a in self.agreement.items()]
        rows.append(("cost", self.cost.sentence()))
        return rows


def run_evidence(rows: Sequence[Any] | Any, usage: Mapping[str, float], stats: Mapping[str, PairedStats], *,
                 alpha: float, seed: int = 0) -> RunEvidence:
    """:class:`RunEvidence` of one run.

    Args:
        rows: the run's holdout rows (baseline, evolved and, when graded, the ``none`` control).
        usage: the run's own spend (``UsageCounter.metrics()`` or :func:`harness.analysis.cost.usage_since`).
        stats: the run's baseline-vs-evolved statistics per grader (to tell whether the verdict rests on the judge).
    """
    found = agreements(rows)
    note = judge_trust_line(found, "this run") if rests_on_judge(stats) else ""
    return RunEvidence(compare_to_control(rows, alpha=alpha, seed=seed), found, cost_summary(usage, rows), note)


def val_scores(candidates: Sequence[Mapping[str, Any]], baseline_body: str, evolved_body: str,
               fitness: str) -> dict[str, float]:
    """``val.<fitness>.baseline`` / ``val.<fitness>.evolved``: the optimizer's own full-valset scores (under the
    fitness grader) of the candidate whose instructions are the baseline body and of the one the run kept
    (the baseline's when the gates rejected the candidate).  A variant the optimizer never scored on the whole
    valset is left out.

    Args:
        candidates: ``OptimizationResult.candidates`` (``instructions``, ``val_score``).
    """
    def score_of(body: str) -> float | None:
        found = [float(c["val_score"]) for c in candidates
                 if str(c.get("instructions", "")).strip() == body.strip() and c.get("val_score") is not None]
        return max(found) if found else None

    out = {}
    for variant, body in (("baseline", baseline_body), ("evolved", evolved_body)):
        score = score_of(body)
        if score is not None:
            out[f"val.{fitness}.{variant}"] = score
    return out
