"""What did it cost?  LM spend per run and per verified improvement.

The spend of a run is what :meth:`harness.models.usage.UsageCounter.metrics` counted for it (per role: LM
calls, tokens of uncached calls, and USD where the provider or LiteLLM priced them).  A *verified
improvement* is a holdout task the verifier saw flip from wrong (``correctness < 1``) under the baseline skill
to right (``correctness >= 1``) under the evolved one, the ``b`` of the McNemar test; the net flips are
``b - c`` (``c``: right -> wrong).  Cost per verified improvement = spend / b; per net flip = spend / (b - c)
when that is positive.  With b = 0 there is "no verified improvement" and no ratio is made up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.stats import pairs_from_rows

#: the grader whose flips count as verified
VERIFIED_BY = "verifier"
NO_IMPROVEMENT = "no verified improvement"
#: counters of ``UsageCounter.metrics`` that add up (a spend is their difference between two readings)
_ADDITIVE_PREFIXES = ("lm_calls.", "lm_errors.", "tokens.", "cost.")


def usage_since(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    """The spend between two readings of ``UsageCounter.metrics()``: ``after - before`` per counter.

    A side-by-side experiment run in one process shares one counter between its arms; the difference is the
    arm's own spend.  Keys present only in ``after`` count from 0.
    """
    return {k: float(v) - float(before.get(k, 0.0)) for k, v in after.items() if k.startswith(_ADDITIVE_PREFIXES)}


@dataclass(frozen=True)
class Flips:
    """Holdout tasks whose verifier correctness changed from baseline to evolved.

    Attributes:
        wrong_to_right: task ids correct only after evolution (McNemar's b).
        right_to_wrong: task ids correct only before (c).
        n_pairs: tasks scored for both variants.
    """

    wrong_to_right: tuple[str, ...]
    right_to_wrong: tuple[str, ...]
    n_pairs: int

    @property
    def net(self) -> int:
        """``b - c``."""
        return len(self.wrong_to_right) - len(self.right_to_wrong)


def verified_flips(rows: Sequence[Any] | Any, grader: str = VERIFIED_BY) -> Flips | None:
    """The flips of ``grader`` between baseline and evolved (None when ``rows`` hold no grade of it)."""
    try:
        sample = pairs_from_rows(rows, grader)
    except ValueError:
        return None
    up = tuple(t for t, b, e in zip(sample.task_ids, sample.baseline_correct, sample.evolved_correct, strict=True)
               if e and not b)
    down = tuple(t for t, b, e in zip(sample.task_ids, sample.baseline_correct, sample.evolved_correct, strict=True)
                 if b and not e)
    return Flips(up, down, sample.n)


def _roles(usage: Mapping[str, float]) -> list[str]:
    return sorted(k.split(".", 1)[1] for k in usage if k.startswith("lm_calls.") and k.count(".") == 1
                  and k not in ("lm_calls.total", "lm_calls.uncached"))


@dataclass(frozen=True)
class CostSummary:
    """A run's spend and its price per verified improvement.

    Attributes:
        per_role: role -> {"lm_calls", "uncached", "tokens", "cost_usd" (absent when unpriced)}.
        lm_calls, tokens: totals over roles (tokens = prompt + completion of uncached calls); ``uncached``:
            the calls a model answered (the rest came from DSPy's cache and cost nothing).
        cost_usd: total USD, None when no role was priced.
        flips: the verifier's flips (None: no verifier grades).
    """

    per_role: dict[str, dict[str, float]]
    lm_calls: float
    tokens: float
    cost_usd: float | None
    flips: Flips | None
    uncached: float = 0.0

    @property
    def improvements(self) -> int:
        """Verified wrong -> right flips (0 without a verifier)."""
        return len(self.flips.wrong_to_right) if self.flips else 0

    def per_flip(self, amount: float | None, net: bool = False) -> float | None:
        """``amount`` divided by the verified flips (``net``: by the net flips); None when there are none."""
        if amount is None or self.flips is None:
            return None
        n = self.flips.net if net else self.improvements
        return amount / n if n > 0 else None

    def metrics(self) -> dict[str, float]:
        """``spend.{lm_calls,tokens,cost_usd}``, ``flips.verifier.{wrong_to_right,right_to_wrong,net}`` and, when
        there is a verified improvement, ``per_flip.{tokens,lm_calls,cost_usd}`` and (positive net)
        ``per_net_flip.*``."""
        out = {"spend.lm_calls": self.lm_calls, "spend.tokens": self.tokens}
        if self.cost_usd is not None:
            out["spend.cost_usd"] = self.cost_usd
        if self.flips is not None:
            out.update({f"flips.{VERIFIED_BY}.wrong_to_right": float(len(self.flips.wrong_to_right)),
                        f"flips.{VERIFIED_BY}.right_to_wrong": float(len(self.flips.right_to_wrong)),
                        f"flips.{VERIFIED_BY}.net": float(self.flips.net)})
        for prefix, net in (("per_flip", False), ("per_net_flip", True)):
            for name, amount in (("tokens", self.tokens), ("lm_calls", self.lm_calls), ("cost_usd", self.cost_usd)):
                value = self.per_flip(amount, net)
                if value is not None:
                    out[f"{prefix}.{name}"] = value
        return out

    def sentence(self) -> str:
        """One line, e.g. ``1,234 tokens in 80 LM calls (unpriced) bought 3 verified improvements (net +2):
        411 tokens per improvement``."""
        money = f"${self.cost_usd:.4f}" if self.cost_usd is not None else "unpriced"
        cached = self.lm_calls - self.uncached
        spent = (f"{self.tokens:,.0f} tokens in {self.lm_calls:,.0f} LM calls ({money}"
                 + (f"; {cached:,.0f} answered from the DSPy cache" if cached > 0 else "") + ")")
        if self.flips is None:
            return f"{spent}; no verifier grades, so no verified improvement can be counted"
        if self.improvements == 0:
            return f"{spent} bought {NO_IMPROVEMENT} ({len(self.flips.right_to_wrong)} task(s) flipped right -> wrong)"
        text = (f"{spent} bought {self.improvements} verified improvement(s) (net {self.flips.net:+d}): "
                f"{self.per_flip(self.tokens):,.0f} tokens and {self.per_flip(self.lm_calls):,.1f} LM calls per "
                f"improvement")
        usd = self.per_flip(self.cost_usd)
        return text + (f", ${usd:.4f} per improvement" if usd is not None else "")


def cost_summary(usage: Mapping[str, float], rows: Sequence[Any] | Any) -> CostSummary:
    """The spend in ``usage`` (``UsageCounter.metrics()`` or :func:`usage_since`) priced per verified flip in
    ``rows`` (holdout rows of baseline and evolved)."""
    per_role: dict[str, dict[str, float]] = {}
    for role in _roles(usage):
        entry = {"lm_calls": float(usage.get(f"lm_calls.{role}", 0.0)),
                 "uncached": float(usage.get(f"lm_calls.{role}.uncached", 0.0)),
                 "tokens": float(usage.get(f"tokens.{role}.prompt", 0.0)) + float(usage.get(f"tokens.{role}.completion",
                                                                                           0.0))}
        if f"cost.{role}" in usage:
            entry["cost_usd"] = float(usage[f"cost.{role}"])
        per_role[role] = entry
    priced = [e["cost_usd"] for e in per_role.values() if "cost_usd" in e]
    return CostSummary(per_role, sum(e["lm_calls"] for e in per_role.values()),
                       sum(e["tokens"] for e in per_role.values()), sum(priced) if priced else None,
                       verified_flips(rows), sum(e["uncached"] for e in per_role.values()))


def cost_lines(summary: CostSummary) -> list[str]:
    """Markdown: the one-line sentence, a per-role table, and the flipped tasks."""
    lines = [f"- {summary.sentence()}.", "", "| role | LM calls | uncached | tokens | USD |",
             "|---|---:|---:|---:|---:|"]
    for role, e in summary.per_role.items():
        usd = f"{e['cost_usd']:.4f}" if "cost_usd" in e else "unpriced"
        lines.append(f"| {role} | {e['lm_calls']:.0f} | {e['uncached']:.0f} | {e['tokens']:.0f} | {usd} |")
    if summary.flips is not None:
        up = ", ".join(summary.flips.wrong_to_right) or "none"
        down = ", ".join(summary.flips.right_to_wrong) or "none"
        lines += ["", f"- flipped wrong -> right (verifier): {up}", f"- flipped right -> wrong (verifier): {down}"]
    return lines


#: per-arm columns the side-by-side arms table adds from each child's metrics
ARM_COST_COLUMNS: dict[str, str] = {
    "lm_calls": "spend.lm_calls", "tokens": "spend.tokens", "cost_usd": "spend.cost_usd",
    "wrong_to_right": f"flips.{VERIFIED_BY}.wrong_to_right", "right_to_wrong": f"flips.{VERIFIED_BY}.right_to_wrong",
    "net_flips": f"flips.{VERIFIED_BY}.net", "tokens_per_flip": "per_flip.tokens",
    "lm_calls_per_flip": "per_flip.lm_calls", "cost_usd_per_flip": "per_flip.cost_usd",
}


def arm_cost_row(metrics: Mapping[str, float]) -> dict[str, Any]:
    """The cost columns of one arm from its run's metrics (NaN when not logged), plus ``verified`` =
    :data:`NO_IMPROVEMENT` or ``"<b> improvement(s)"``."""
    row: dict[str, Any] = {col: float(metrics.get(key, float("nan"))) for col, key in ARM_COST_COLUMNS.items()}
    b = metrics.get(f"flips.{VERIFIED_BY}.wrong_to_right")
    row["verified"] = "no verifier" if b is None else (NO_IMPROVEMENT if b <= 0 else f"{b:.0f} improvement(s)")
    return row
