"""Does the skill help at all?  The no-skill control, tested paired against the baseline and the evolved skill.

The ``none`` variant answers every holdout task with the same task LM under a neutral instruction
(:data:`harness.engine.program.CONTROL_INSTRUCTIONS`) and no skill body; every grader grades it.  For each
skill variant (baseline, evolved) and grader, :func:`harness.analysis.stats.paired_stats` runs on the pairs
(control, skill) of the same tasks, and :func:`harness.analysis.stats.grader_verdict` words the result, so
"the skill beats no skill" needs exactly the evidence "evolved beats baseline" needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.stats import (
    IMPROVED,
    INCONCLUSIVE,
    REGRESSED,
    PairedStats,
    grader_verdict,
    paired_stats,
    pairs_from_rows,
)

#: the variant name of the no-skill control in holdout tables
CONTROL_VARIANT = "none"
#: the skill variants compared with the control, in report order
SKILL_VARIANTS: tuple[str, ...] = ("baseline", "evolved")


@dataclass(frozen=True)
class ControlComparison:
    """One skill variant against the no-skill control, per grader.

    Attributes:
        variant: ``baseline`` or ``evolved``.
        stats: grader -> statistics of (skill − no skill); the ``baseline_*`` fields are the control's side.
        verdicts: grader -> (verdict, reason): ``improved`` = the skill beats no skill.
        primary: the grader :attr:`verdict` rests on.
    """

    variant: str
    stats: dict[str, PairedStats]
    verdicts: dict[str, tuple[str, str]]
    primary: str = "verifier"

    @property
    def verdict(self) -> str:
        """The primary grader's verdict (inconclusive without it)."""
        return self.verdicts.get(self.primary, (INCONCLUSIVE, ""))[0]

    def metrics(self) -> dict[str, float]:
        """``control.<variant>.<grader>.*`` (see :meth:`PairedStats.to_metrics`)."""
        out: dict[str, float] = {}
        for s in self.stats.values():
            out.update(s.to_metrics(f"control.{self.variant}"))
        return out

    def sentence(self) -> str:
        """E.g. ``the baseline skill beats no skill (verifier: Wilcoxon p = 0.002 < 0.05, ...)``."""
        if self.primary not in self.verdicts:
            return f"whether the {self.variant} skill beats no skill is unknown: no {self.primary} grades"
        verdict, reason = self.verdicts[self.primary]
        s = self.stats[self.primary]
        scores = f"{self.primary} composite {s.baseline_mean:.3f} without the skill, {s.evolved_mean:.3f} with it"
        if verdict == IMPROVED:
            head = f"the {self.variant} skill beats no skill"
        elif verdict == REGRESSED:
            head = f"no skill beats the {self.variant} skill"
        else:
            head = f"no evidence that the {self.variant} skill beats no skill"
        return f"{head} ({scores}; {reason})"


def compare_to_control(rows: Sequence[Any] | Any, *, alpha: float, seed: int = 0,
                       primary: str = "verifier") -> list[ControlComparison]:
    """Each skill variant of ``rows`` against the control, per grader present in both (empty when ``rows``
    hold no control rows).

    Args:
        rows: holdout rows (objects, mappings or a DataFrame with ``task_id, variant, grader, composite,
            correctness``).
    """
    records = rows.to_dict("records") if hasattr(rows, "to_dict") and hasattr(rows, "columns") else list(rows)

    def get(r: Any, name: str) -> str:
        return str(r[name] if isinstance(r, dict) else getattr(r, name))

    present = {(get(r, "variant"), get(r, "grader")) for r in records}
    graders = sorted({g for v, g in present if v == CONTROL_VARIANT})
    out = []
    for variant in SKILL_VARIANTS:
        stats = {g: paired_stats(pairs_from_rows(records, g, before=CONTROL_VARIANT, after=variant), alpha=alpha,
                                 seed=seed)
                 for g in graders if (variant, g) in present}
        if stats:
            out.append(ControlComparison(variant, stats, {g: grader_verdict(s, alpha) for g, s in stats.items()},
                                         primary))
    return out


def control_lines(comparisons: Sequence[ControlComparison]) -> list[str]:
    """Markdown: one bullet per skill variant, then a table of every grader's (skill − no skill) statistics."""
    if not comparisons:
        return ["- no no-skill control was graded in this run (--no-control)."]
    lines = [f"- {c.sentence()}." for c in comparisons]
    lines += ["", "| skill | grader | n | no skill | skill | delta | CI | Wilcoxon p | McNemar p (b/c) | verdict |",
              "|---|---|---:|---:|---:|---:|---|---:|---:|---|"]
    for c in comparisons:
        for g, s in c.stats.items():
            lines.append(f"| {c.variant} | {g} | {s.n_pairs} | {s.baseline_mean:.3f} | {s.evolved_mean:.3f} | "
                         f"{s.mean_delta:+.3f} | [{s.ci_low:.3g}, {s.ci_high:.3g}] | {s.wilcoxon_p:.3g} | "
                         f"{s.mcnemar_p:.3g} ({s.discordant_improved}/{s.discordant_regressed}) | "
                         f"{c.verdicts[g][0]} |")
    return lines
