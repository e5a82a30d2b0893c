"""Paired significance tests, power and verdict rules for baseline vs evolved skill on a holdout.

A delta on a small holdout is mostly noise; a claim needs evidence.  For every grader (``verifier``,
``keyword``, ``judge``, ...) the same holdout tasks are graded once for the baseline skill and once for
the evolved skill, so the comparison is *paired* per task.  This module computes, per grader:

* **Binary outcome** (answered correctly: ``correctness >= 1``): the exact McNemar test, i.e. the
  two-sided binomial test of ``b`` successes in ``b + c`` trials with p = 1/2, where ``b`` counts tasks
  correct only after evolution and ``c`` tasks correct only before (McNemar 1947, exact/binomial form;
  ``scipy.stats.binomtest``).
* **Continuous outcome** (composite in [0, 1]): the Wilcoxon signed-rank test on the per-task deltas
  ``evolved - baseline`` (Wilcoxon 1945; zero deltas dropped, Wilcoxon's own rule; scipy's exact null
  distribution without ties (``scipy.stats.wilcoxon(method="exact")``), the exact sign-flip distribution
  with ties for up to 16 non-zero deltas (``scipy.stats.permutation_test``, as ``wilcoxon`` itself does
  for up to 13 pairs), else the tie-corrected normal approximation; see ``_wilcoxon``) and a paired
  bootstrap interval of the mean delta (Efron 1979/1987; ``scipy.stats.bootstrap`` on the deltas, BCa,
  falling back to percentile when BCa is undefined, seeded by a ``numpy`` Generator).
* **Power**: ``k_min``, the fewest pairs that, all changed in one direction, reach two-sided p < alpha
  (the smallest p-value an exact test on k such pairs can give is 2 * 0.5**k, so ``k_min = 6`` at
  alpha 0.05), ``min_detectable_share = k_min / n`` and ``underpowered = n < k_min``; and an approximate
  minimum detectable mean composite shift at 80 % power, ``(z_{1-alpha/2} + z_{0.8}) * sd / sqrt(n)``
  (normal approximation; ``scipy.stats.norm.ppf``).

Verdict rule (:func:`grader_verdict`): ``improved`` only when the Wilcoxon test is significant
(p < alpha), at least ``k_min`` deltas are non-zero, the ``1 - alpha`` bootstrap interval of the mean
delta excludes 0 and the mean delta (and the rank sums) are positive; ``regressed`` is the mirror case;
anything else is ``inconclusive`` with the reason.  The overall verdict (:func:`overall_verdict`) is the
primary grader's (the objective verifier's), with disagreements of the other graders recorded; across
seeds :func:`pooled_verdict` requires the same sign in every seed and a significant pooled test.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import stats as st

IMPROVED = "improved"
REGRESSED = "regressed"
INCONCLUSIVE = "inconclusive"
REJECTED = "rejected"
#: the evolved skill is the baseline text: nothing was compared (the holdout re-ran the same skill)
UNCHANGED = "unchanged"
#: Every value :attr:`Verdict.verdict` can take.
VERDICTS: tuple[str, ...] = (IMPROVED, REGRESSED, INCONCLUSIVE, REJECTED, UNCHANGED)
#: reason of the :data:`UNCHANGED` verdict
UNCHANGED_REASON = ("the optimizer kept the baseline skill text, so the holdout compared the baseline with itself "
                    "and any delta is the task model's own variation")

#: Default significance level (two-sided).
DEFAULT_ALPHA = 0.05
#: Power at which :attr:`PairedStats.mde_composite` is computed.
DEFAULT_POWER = 0.8
#: Deltas are rounded to this many decimals before testing, so float noise (0.9 - 0.8 vs 0.6 - 0.5)
#: neither breaks ties nor turns an exact zero into a tiny non-zero difference.
DELTA_DECIMALS = 12
#: Most non-zero tied deltas whose exact sign-flip distribution is enumerated (2**16 patterns, < 1 s).
EXACT_PERMUTATION_MAX = 16
#: Reason used when the primary grader (the objective verifier) has no statistics.
NO_VERIFIER_REASON = "no objective verifier for this skill"
#: Longest tag value written by :meth:`Verdict.to_tags` (MLflow caps tag values; this stays well below).
MAX_TAG_CHARS = 5000

_NAN = float("nan")


# --------------------------------------------------------------------------------------------------
# Paired sample
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedSample:
    """Baseline and evolved grades of the same holdout tasks under one grader, aligned by task.

    Attributes:
        grader: the grader's name (``"verifier"``, ``"keyword"``, ``"judge"``, ...).
        task_ids: one id per pair, in holdout order.
        baseline: the baseline composite of each task, floats in [0, 1].
        evolved: the evolved composite of each task, floats in [0, 1].
        baseline_correct: whether the baseline answered the task correctly (correctness >= 1).
        evolved_correct: whether the evolved skill answered the task correctly (correctness >= 1).
        dropped: holdout tasks left out: a NaN grade on either side, a task graded for one variant only, or
            an infrastructure fault (counted again in ``faulted``).
        faulted: of ``dropped``, pairs left out because the task LM call failed on either side (the row's
            ``error`` is set: rate limit, 5xx, timeout, a non-JSON or empty reply); such a grade is the
            endpoint's fault, never the model's answer, so it is never paired.

    Raises:
        ValueError: the five sequences differ in length, or a composite is not a finite number.
    """

    grader: str
    task_ids: tuple[str, ...]
    baseline: tuple[float, ...]
    evolved: tuple[float, ...]
    baseline_correct: tuple[bool, ...]
    evolved_correct: tuple[bool, ...]
    dropped: int = 0
    faulted: int = 0

    def __post_init__(self) -> None:
        # normalise to tuples of plain Python values (lists and numpy scalars are accepted)
        object.__setattr__(self, "task_ids", tuple(str(t) for t in self.task_ids))
        object.__setattr__(self, "baseline", tuple(float(x) for x in self.baseline))
        object.__setattr__(self, "evolved", tuple(float(x) for x in self.evolved))
        object.__setattr__(self, "baseline_correct", tuple(bool(x) for x in self.baseline_correct))
        object.__setattr__(self, "evolved_correct", tuple(bool(x) for x in self.evolved_correct))
        lengths = {len(self.task_ids), len(self.baseline), len(self.evolved), len(self.baseline_correct),
                   len(self.evolved_correct)}
        if len(lengths) != 1:
            raise ValueError(f"PairedSample({self.grader!r}): task_ids, baseline, evolved, baseline_correct and "
                             f"evolved_correct must have one length, got {sorted(lengths)}")
        if not all(math.isfinite(x) for x in self.baseline + self.evolved):
            raise ValueError(f"PairedSample({self.grader!r}): composites must be finite; drop NaN pairs first "
                             "(pairs_from_rows does)")
        if self.dropped < 0:
            raise ValueError(f"PairedSample({self.grader!r}): dropped must be >= 0, got {self.dropped}")

    @property
    def n(self) -> int:
        """Number of pairs."""
        return len(self.task_ids)

    @property
    def deltas(self) -> np.ndarray:
        """Per-task ``evolved - baseline`` composite, shape ``(n,)``, rounded to ``DELTA_DECIMALS``."""
        return np.round(np.asarray(self.evolved, dtype=float) - np.asarray(self.baseline, dtype=float),
                        DELTA_DECIMALS)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, JSON-serialisable (tuples become lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def _field(row: Any, name: str) -> Any:
    if isinstance(row, Mapping):
        return row[name]
    return getattr(row, name)


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return _NAN


def pairs_from_rows(rows: Sequence[Any] | Any, grader: str, *, before: str = "baseline",
                    after: str = "evolved") -> PairedSample:
    """Align the baseline and evolved grades of ``grader`` by ``task_id``.

    ``before`` / ``after`` name the two variants paired (default baseline / evolved; e.g. ``before="none"``
    pairs the no-skill control against the baseline or evolved skill); the sample's ``baseline`` side is
    ``before`` and its ``evolved`` side ``after``.

    Args:
        rows: :class:`harness.engine.holdout.HoldoutRow` objects, mappings with the same keys, or a
            ``pandas.DataFrame`` with (at least) the columns ``task_id``, ``variant``, ``grader``,
            ``composite`` and ``correctness`` (the per-task holdout table).
        grader: which grader's rows to pair.
    Returns:
        A :class:`PairedSample` in the order tasks first appear among the baseline rows.  A pair with a
        NaN (or missing) composite or correctness on either side is left out, as is a task graded for one
        variant only and a task whose LM call failed on either side (a non-empty ``error``: counted in
        ``faulted`` too); ``dropped`` counts all three.  "Correct" means ``correctness >= 1.0``.
    Raises:
        ValueError: no row has this grader, or a (task_id, variant) occurs twice for it.
    """
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # a pandas DataFrame
        records: Sequence[Any] = rows.to_dict("records")
    else:
        records = list(rows)
    graders = sorted({str(_field(r, "grader")) for r in records})
    if grader not in graders:
        raise ValueError(f"no holdout rows for grader {grader!r}; graders present: {graders or 'none'}")
    by_variant: dict[str, dict[str, tuple[float, float]]] = {before: {}, after: {}}
    failed: set[str] = set()
    order: list[str] = []
    for r in records:
        if str(_field(r, "grader")) != grader:
            continue
        variant = str(_field(r, "variant"))
        if variant not in by_variant:
            continue
        task_id = str(_field(r, "task_id"))
        if task_id in by_variant[variant]:
            raise ValueError(f"grader {grader!r}: task {task_id!r} has two {variant} rows")
        by_variant[variant][task_id] = (_as_float(_field(r, "composite")), _as_float(_field(r, "correctness")))
        if _row_error(r):
            failed.add(task_id)
        if variant == before:
            order.append(task_id)
    base, evo = by_variant[before], by_variant[after]
    order += [t for t in evo if t not in base]
    ids: list[str] = []
    b_comp: list[float] = []
    e_comp: list[float] = []
    b_ok: list[bool] = []
    e_ok: list[bool] = []
    dropped = faulted = 0
    for task_id in order:
        if task_id not in base or task_id not in evo:
            dropped += 1
            continue
        if task_id in failed:
            dropped += 1
            faulted += 1
            continue
        values = base[task_id] + evo[task_id]
        if not all(math.isfinite(v) for v in values):
            dropped += 1
            continue
        (bc, bk), (ec, ek) = base[task_id], evo[task_id]
        ids.append(task_id)
        b_comp.append(bc)
        e_comp.append(ec)
        b_ok.append(bk >= 1.0)
        e_ok.append(ek >= 1.0)
    return PairedSample(grader, tuple(ids), tuple(b_comp), tuple(e_comp), tuple(b_ok), tuple(e_ok), dropped,
                        faulted)


def _row_error(row: Any) -> bool:
    """Whether a holdout row records a failed task LM call (a non-empty, non-NaN ``error``; absent = no)."""
    try:
        value = _field(row, "error")
    except (KeyError, AttributeError):
        return False
    return isinstance(value, str) and bool(value.strip())


def pairs_by_grader(rows: Sequence[Any] | Any) -> dict[str, PairedSample]:
    """:func:`pairs_from_rows` for every grader present in ``rows`` (sorted by name)."""
    records = rows.to_dict("records") if hasattr(rows, "to_dict") and hasattr(rows, "columns") else list(rows)
    return {g: pairs_from_rows(records, g) for g in sorted({str(_field(r, "grader")) for r in records})}


# --------------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------------


def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return alpha


@lru_cache(maxsize=64)
def k_min_mcnemar(alpha: float = DEFAULT_ALPHA) -> int:
    """Fewest discordant pairs that, all in one direction, give an exact McNemar p < ``alpha`` (two-sided).

    The p-value of ``binomtest(k, k, 0.5)`` is ``2 * 0.5**k`` (capped at 1), so this is 6 at alpha 0.05
    and 7 at 0.02.  Computed with ``scipy.stats.binomtest``.

    Raises:
        ValueError: ``alpha`` outside (0, 1).
    """
    alpha = _check_alpha(alpha)
    k = 1
    while st.binomtest(k, k, 0.5, alternative="two-sided").pvalue >= alpha:
        k += 1
    return k


@lru_cache(maxsize=64)
def k_min_wilcoxon(alpha: float = DEFAULT_ALPHA) -> int:
    """Fewest non-zero, untied deltas that, all of one sign, give an exact Wilcoxon p < ``alpha``.

    Only one of the ``2**k`` sign patterns reaches the extreme rank sum, so the smallest two-sided p is
    ``2 * 0.5**k`` as for McNemar (6 at alpha 0.05).  Computed with ``scipy.stats.wilcoxon(method="exact")``.

    Raises:
        ValueError: ``alpha`` outside (0, 1).
    """
    alpha = _check_alpha(alpha)
    k = 1
    while st.wilcoxon(np.arange(1.0, k + 1.0), method="exact").pvalue >= alpha:
        k += 1
    return k


@dataclass(frozen=True)
class PairedStats:
    """Paired statistics of one grader on one holdout (see the module docstring for the methods).

    Attributes:
        grader: the grader's name.
        alpha: two-sided significance level; the interval has confidence ``1 - alpha``.
        n_pairs: scored pairs (n); ``dropped_pairs``: holdout tasks left out (NaN grade, unpaired or a
            failed LM call); ``faulted_pairs``: of those, the ones left out for a failed LM call on either side.
        baseline_mean, evolved_mean: mean composite per variant over the pairs, in [0, 1] (NaN when n = 0).
        mean_delta: mean of ``evolved - baseline`` composite, in [-1, 1] (NaN when n = 0).
        sd_delta: sample SD (ddof 1) of the deltas (NaN when n < 2).
        n_nonzero: deltas different from 0 (those the Wilcoxon test uses).
        rank_sum_pos, rank_sum_neg: Wilcoxon rank sums of the positive and negative deltas.
        wilcoxon_stat: ``scipy.stats.wilcoxon`` statistic (min of the rank sums).
        wilcoxon_p: two-sided p-value; 1.0 when every delta is 0, NaN when n = 0.
        wilcoxon_method: the null distribution used ("exact", "permutation", "normal", or "none").
        ci_low, ci_high: bootstrap interval of the mean delta; ``[d, d]`` when n = 1 or all deltas equal.
        ci_level: ``1 - alpha``; ``ci_method``: "BCa", "percentile" or "degenerate"; ``n_boot``,
            ``seed``: resamples and the seed of the ``numpy`` Generator.
        discordant_improved (b): tasks answered correctly only after evolution.
        discordant_regressed (c): tasks answered correctly only before evolution.
        mcnemar_p: exact two-sided McNemar p-value (``binomtest(b, b + c, 0.5)``); 1.0 when b + c = 0.
        baseline_correct_share, evolved_correct_share: share of pairs answered correctly per variant.
        k_min_mcnemar, k_min_wilcoxon: see :func:`k_min_mcnemar` and :func:`k_min_wilcoxon`.
        min_detectable_share: ``max(k_min) / n``, in units of "share of holdout tasks" that must change,
            all in one direction, for any significant result (> 1: impossible on this holdout; NaN if n = 0).
        underpowered: ``n < max(k_min)``: no exact two-sided test on this holdout can reach p < alpha.
        mde_composite: approximate minimum detectable mean composite shift at ``power``,
            ``(z_{1-alpha/2} + z_power) * sd_delta / sqrt(n)`` (NaN when n < 2).
        power: the power of ``mde_composite`` (default 0.8).
    """

    grader: str
    alpha: float
    n_pairs: int
    dropped_pairs: int
    baseline_mean: float
    evolved_mean: float
    mean_delta: float
    sd_delta: float
    n_nonzero: int
    rank_sum_pos: float
    rank_sum_neg: float
    wilcoxon_stat: float
    wilcoxon_p: float
    wilcoxon_method: str
    ci_low: float
    ci_high: float
    ci_level: float
    ci_method: str
    n_boot: int
    seed: int
    discordant_improved: int
    discordant_regressed: int
    mcnemar_p: float
    baseline_correct_share: float
    evolved_correct_share: float
    k_min_mcnemar: int
    k_min_wilcoxon: int
    min_detectable_share: float
    underpowered: bool
    mde_composite: float
    power: float = DEFAULT_POWER
    faulted_pairs: int = 0

    @property
    def k_min(self) -> int:
        """The larger of the two exact tests' ``k_min`` (they agree: 6 at alpha 0.05)."""
        return max(self.k_min_mcnemar, self.k_min_wilcoxon)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of every field (NaN stays NaN)."""
        return asdict(self)

    def to_metrics(self, prefix: str = "stats") -> dict[str, float]:
        """Metrics ``{prefix}.{grader}.{name}`` -> float, e.g. ``stats.verifier.wilcoxon_p``.

        Names: wilcoxon_p, mcnemar_p, ci_low, ci_high, mean_delta, baseline_mean, evolved_mean, sd_delta,
        min_detectable_share, mde_composite, discordant_improved, discordant_regressed, n_pairs,
        dropped_pairs, faulted_pairs, n_nonzero, k_min, underpowered (0/1).  Values may be NaN (the logger skips NaN).
        """
        values: dict[str, float] = {
            "wilcoxon_p": self.wilcoxon_p,
            "mcnemar_p": self.mcnemar_p,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "mean_delta": self.mean_delta,
            "baseline_mean": self.baseline_mean,
            "evolved_mean": self.evolved_mean,
            "sd_delta": self.sd_delta,
            "min_detectable_share": self.min_detectable_share,
            "mde_composite": self.mde_composite,
            "discordant_improved": self.discordant_improved,
            "discordant_regressed": self.discordant_regressed,
            "n_pairs": self.n_pairs,
            "dropped_pairs": self.dropped_pairs,
            "faulted_pairs": self.faulted_pairs,
            "n_nonzero": self.n_nonzero,
            "k_min": self.k_min,
            "underpowered": 1.0 if self.underpowered else 0.0,
        }
        base = f"{prefix}.{self.grader}" if prefix else self.grader
        return {f"{base}.{name}": float(value) for name, value in values.items()}


def _wilcoxon(d: np.ndarray) -> tuple[float, float, float, float, str]:
    """(statistic, p, r_plus, r_minus, method) of the two-sided Wilcoxon signed-rank test on the deltas ``d``.

    Zero deltas are dropped (``zero_method="wilcox"``, Wilcoxon's rule); the k non-zero ones are ranked by
    ``|d|`` with average ranks for ties.  The null distribution, exact wherever it is cheap:

    * "exact": no ties and k <= 50: ``scipy.stats.wilcoxon(nonzero, method="exact")``;
    * "permutation": ties and k <= ``EXACT_PERMUTATION_MAX``: the exact distribution of the rank sum over
      all 2**k sign flips, ``scipy.stats.permutation_test(..., n_resamples=inf)``.  This is what
      ``scipy.stats.wilcoxon(method="auto")`` does for up to 13 pairs (it calls the statistic once per
      pattern, about 2 s for 13; here it is vectorised), extended to 16 non-zero deltas because scipy's
      alternative, the normal approximation, is anti-conservative on holdouts of 14-17 tasks (7 of 8
      changed tasks up: exact p = 0.070, normal 0.034);
    * "normal": more than ``EXACT_PERMUTATION_MAX`` tied deltas: ``scipy.stats.wilcoxon(method="asymptotic")``
      (tie-corrected, no continuity correction);
    * "none": no non-zero delta (p = 1.0) or no delta at all (p = NaN).
    """
    nonzero = d[d != 0]
    if d.size == 0:
        return _NAN, _NAN, 0.0, 0.0, "none"
    if nonzero.size == 0:  # no evidence either way; scipy would divide 0 by 0
        return 0.0, 1.0, 0.0, 0.0, "none"
    ranks = st.rankdata(np.abs(nonzero))
    r_plus, r_minus = float(ranks[nonzero > 0].sum()), float(ranks[nonzero < 0].sum())
    statistic = min(r_plus, r_minus)
    has_ties = np.unique(np.abs(nonzero)).size < nonzero.size
    if not has_ties and nonzero.size <= 50:
        res = st.wilcoxon(nonzero, alternative="two-sided", method="exact")
        return float(res.statistic), float(min(1.0, res.pvalue)), r_plus, r_minus, "exact"
    if nonzero.size <= EXACT_PERMUTATION_MAX:
        def rank_sum_pos(x: np.ndarray, axis: int = -1) -> np.ndarray:
            return np.sum((x > 0) * ranks, axis=axis)

        perm = st.permutation_test((nonzero,), rank_sum_pos, permutation_type="samples", n_resamples=np.inf,
                                   vectorized=True, alternative="two-sided", batch=4096)
        return statistic, float(min(1.0, perm.pvalue)), r_plus, r_minus, "permutation"
    res = st.wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="asymptotic")
    return float(res.statistic), float(min(1.0, res.pvalue)), r_plus, r_minus, "normal"


def _bootstrap_ci(d: np.ndarray, alpha: float, n_boot: int, seed: int) -> tuple[float, float, str]:
    """(low, high, method) of the ``1 - alpha`` bootstrap interval of the mean of ``d``."""
    if d.size == 0:
        return _NAN, _NAN, "none"
    if d.size < 2 or np.all(d == d[0]):
        m = float(d.mean())
        return m, m, "degenerate"
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DegenerateDataWarning / RuntimeWarning: we check the result
            res = st.bootstrap((d,), np.mean, n_resamples=n_boot, confidence_level=1.0 - alpha,
                               method=method, vectorized=True, rng=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return low, high, method
    m = float(d.mean())  # unreachable for finite data with two distinct values; kept for safety
    return m, m, "degenerate"


def paired_stats(sample: PairedSample, alpha: float = DEFAULT_ALPHA, n_boot: int = 2000, seed: int = 0,
                 power: float = DEFAULT_POWER) -> PairedStats:
    """All statistics of one :class:`PairedSample` (see :class:`PairedStats` for fields and units).

    Never raises for small or degenerate samples: n = 0 gives NaN means, p-values and interval;
    all-zero deltas give Wilcoxon p = 1.0; n = 1 or equal deltas give the interval ``[d, d]``.
    Reproducible: the bootstrap uses ``numpy.random.default_rng(seed)``.

    Raises:
        ValueError: ``alpha`` or ``power`` outside (0, 1), or ``n_boot < 1``.
    """
    alpha = _check_alpha(alpha)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    n = sample.n
    d = sample.deltas
    base = np.asarray(sample.baseline, dtype=float)
    evo = np.asarray(sample.evolved, dtype=float)
    w_stat, w_p, r_plus, r_minus, w_method = _wilcoxon(d)
    ci_low, ci_high, ci_method = _bootstrap_ci(d, alpha, n_boot, seed)

    b = sum(1 for x, y in zip(sample.baseline_correct, sample.evolved_correct, strict=True) if y and not x)
    c = sum(1 for x, y in zip(sample.baseline_correct, sample.evolved_correct, strict=True) if x and not y)
    mcnemar_p = float(st.binomtest(b, b + c, 0.5, alternative="two-sided").pvalue) if b + c else 1.0

    kmc, kmw = k_min_mcnemar(alpha), k_min_wilcoxon(alpha)
    k_min = max(kmc, kmw)
    sd = float(np.std(d, ddof=1)) if n >= 2 else _NAN
    z = float(st.norm.ppf(1.0 - alpha / 2.0) + st.norm.ppf(power))
    return PairedStats(
        grader=sample.grader,
        alpha=alpha,
        n_pairs=n,
        dropped_pairs=sample.dropped,
        faulted_pairs=sample.faulted,
        baseline_mean=float(base.mean()) if n else _NAN,
        evolved_mean=float(evo.mean()) if n else _NAN,
        mean_delta=float(d.mean()) if n else _NAN,
        sd_delta=sd,
        n_nonzero=int(np.count_nonzero(d)),
        rank_sum_pos=r_plus,
        rank_sum_neg=r_minus,
        wilcoxon_stat=w_stat,
        wilcoxon_p=w_p,
        wilcoxon_method=w_method,
        ci_low=ci_low,
        ci_high=ci_high,
        ci_level=1.0 - alpha,
        ci_method=ci_method,
        n_boot=int(n_boot),
        seed=int(seed),
        discordant_improved=b,
        discordant_regressed=c,
        mcnemar_p=mcnemar_p,
        baseline_correct_share=sum(sample.baseline_correct) / n if n else _NAN,
        evolved_correct_share=sum(sample.evolved_correct) / n if n else _NAN,
        k_min_mcnemar=kmc,
        k_min_wilcoxon=kmw,
        min_detectable_share=k_min / n if n else _NAN,
        underpowered=n < k_min,
        mde_composite=z * sd / math.sqrt(n) if n >= 2 else _NAN,
        power=float(power),
    )


# --------------------------------------------------------------------------------------------------
# Wording
# --------------------------------------------------------------------------------------------------


def fmt_num(x: float, digits: int = 3) -> str:
    """``x`` with ``digits`` significant digits (``"n/a"`` for NaN), e.g. 0.0703125 -> ``"0.0703"``."""
    if x is None or not math.isfinite(float(x)):
        return "n/a"
    return f"{float(x):.{digits}g}"


def fmt_interval(low: float, high: float) -> str:
    """``"[-0.05, 0.12]"``."""
    return f"[{fmt_num(low)}, {fmt_num(high)}]"


def fmt_alpha(alpha: float) -> str:
    """``0.05`` -> ``"0.05"``."""
    return f"{alpha:g}"


def fmt_delta(x: float) -> str:
    """A mean delta for prose: ``+0.125``, ``-0.050``, ``0.000`` for an exact zero (no sign), ``n/a`` for NaN.

    Three decimals, never ``%g`` (which turns 0.0004 into ``+0.0004`` and 0 into ``+0``)."""
    if x is None or not math.isfinite(float(x)):
        return "n/a"
    return "0.000" if round(float(x), 3) == 0 else f"{float(x):+.3f}"


def underpowered_reason(n: int, alpha: float) -> str:
    """``"underpowered: 4 holdout pairs, no exact two-sided test can reach p < 0.05 with fewer than 6"``."""
    k = max(k_min_mcnemar(alpha), k_min_wilcoxon(alpha))
    return (f"underpowered: {n} holdout pair{'s' if n != 1 else ''}, no exact two-sided test can reach "
            f"p < {fmt_alpha(alpha)} with fewer than {k}")


def power_statement(s: PairedStats) -> str:
    """One plain sentence on what this holdout could detect at all (see :class:`PairedStats`)."""
    a = fmt_alpha(s.alpha)
    if s.n_pairs == 0:
        return f"{s.grader}: no scored holdout pairs ({s.dropped_pairs} dropped), nothing can be detected."
    if s.underpowered:
        return (f"{s.grader}: {underpowered_reason(s.n_pairs, s.alpha)} (the smallest two-sided exact p on "
                f"{s.n_pairs} pairs is {fmt_num(2 * 0.5 ** s.n_pairs)}); a larger holdout is needed for any claim.")
    text = (f"{s.grader}: with {s.n_pairs} pairs, a significant result at alpha {a} needs at least {s.k_min} "
            f"tasks changing in the same direction ({s.k_min}/{s.n_pairs} = {s.min_detectable_share:.0%} of the "
            f"holdout)")
    if math.isfinite(s.mde_composite) and s.sd_delta > 0:
        text += (f"; the approximate minimum detectable mean composite shift at {s.power:.0%} power is "
                 f"{fmt_num(s.mde_composite)} (SD of deltas {fmt_num(s.sd_delta)})")
    elif math.isfinite(s.sd_delta) and s.sd_delta == 0:
        # a zero SD gives a "minimum detectable shift" of 0, which reads as "anything is detectable"
        text += (f"; every pair has the same delta ({fmt_delta(s.mean_delta)}), so no minimum detectable shift "
                 "can be estimated")
    return text + "."


# --------------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The claim a run makes about evolved vs baseline skill.

    Attributes:
        verdict: one of :data:`VERDICTS` (improved, regressed, inconclusive, rejected).
        reason: why, in one line (e.g. ``"p = 0.21 ≥ 0.05"``).
        per_grader: grader name -> that grader's own verdict by the same rule.
        disagreements: lines like ``"keyword says improved, verifier says inconclusive"``.
        per_grader_reasons: grader name -> the reason of its verdict.
        primary: the grader the verdict rests on (the objective verifier).
    """

    verdict: str
    reason: str
    per_grader: dict[str, str] = field(default_factory=dict)
    disagreements: tuple[str, ...] = ()
    per_grader_reasons: dict[str, str] = field(default_factory=dict)
    primary: str = "verifier"

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        object.__setattr__(self, "disagreements", tuple(self.disagreements))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, JSON-serialisable."""
        d = asdict(self)
        d["disagreements"] = list(self.disagreements)
        return d

    def to_tags(self) -> dict[str, str]:
        """MLflow tags: ``verdict``, ``verdict.reason`` and, when any, ``verdict.disagreement``."""
        tags = {"verdict": self.verdict, "verdict.reason": self.reason[:MAX_TAG_CHARS]}
        if self.disagreements:
            tags["verdict.disagreement"] = "; ".join(self.disagreements)[:MAX_TAG_CHARS]
        return tags


def grader_verdict(stats: PairedStats, alpha: float | None = None) -> tuple[str, str]:
    """``(verdict, reason)`` of one grader's statistics.

    ``improved`` only when all hold: n >= k_min (not underpowered), at least k_min non-zero deltas,
    Wilcoxon p < alpha, the ``1 - alpha`` bootstrap interval excludes 0 with ``ci_low > 0``, the mean
    delta > 0 and the positive rank sum exceeds the negative one; ``regressed`` is the mirror case;
    otherwise ``inconclusive`` with the first failing condition as the reason.

    Args:
        alpha: significance level; ``None`` means ``stats.alpha``.
    Raises:
        ValueError: ``alpha`` differs from the level the statistics (interval, k_min) were computed at.
    """
    a = stats.alpha if alpha is None else _check_alpha(alpha)
    if not math.isclose(a, stats.alpha, rel_tol=1e-9):
        raise ValueError(f"{stats.grader} statistics were computed at alpha {fmt_alpha(stats.alpha)}, not "
                         f"{fmt_alpha(a)}; recompute them with paired_stats(..., alpha={fmt_alpha(a)})")
    sa = fmt_alpha(a)
    if stats.n_pairs == 0:
        return INCONCLUSIVE, f"no scored holdout pairs ({stats.dropped_pairs} dropped)"
    if stats.underpowered:
        return INCONCLUSIVE, underpowered_reason(stats.n_pairs, a)
    if stats.n_nonzero < stats.k_min:
        return INCONCLUSIVE, (f"too few changed tasks: {stats.n_nonzero} of {stats.n_pairs} pairs differ, no exact "
                              f"two-sided test can reach p < {sa} with fewer than {stats.k_min}")
    if not stats.wilcoxon_p < a:
        return INCONCLUSIVE, f"p = {fmt_num(stats.wilcoxon_p)} ≥ {sa}"
    interval = fmt_interval(stats.ci_low, stats.ci_high)
    if not (stats.ci_low > 0 or stats.ci_high < 0):
        return INCONCLUSIVE, f"interval spans 0: {interval}"
    up = stats.ci_low > 0 and stats.mean_delta > 0 and stats.rank_sum_pos > stats.rank_sum_neg
    down = stats.ci_high < 0 and stats.mean_delta < 0 and stats.rank_sum_neg > stats.rank_sum_pos
    if not (up or down):
        return INCONCLUSIVE, (f"directions disagree: mean delta {stats.mean_delta:+.3g}, interval {interval}, "
                              f"rank sums +{fmt_num(stats.rank_sum_pos)}/-{fmt_num(stats.rank_sum_neg)}")
    level = f"{stats.ci_level:.0%}"
    return (IMPROVED if up else REGRESSED), (
        f"Wilcoxon p = {fmt_num(stats.wilcoxon_p)} < {sa}, mean delta {stats.mean_delta:+.3g}, "
        f"{level} interval {interval} excludes 0")


def overall_verdict(stats_by_grader: Mapping[str, PairedStats], alpha: float = DEFAULT_ALPHA,
                    primary: str = "verifier", gate_rejected_reasons: Sequence[str] = ()) -> Verdict:
    """The run's verdict: the ``primary`` grader's :func:`grader_verdict`, plus every grader's own verdict.

    * ``gate_rejected_reasons`` non-empty -> ``rejected`` ("evolved skill rejected by the gates: ...; the
      baseline was kept"), whatever the statistics say;
    * no statistics for ``primary`` -> ``inconclusive``, reason "no objective verifier for this skill";
    * otherwise the primary grader's verdict and reason.

    A disagreement is recorded for each other grader whose verdict differs from the primary's
    ("keyword says improved, verifier says inconclusive"), or, without a primary, for each grader that
    is not inconclusive ("keyword says improved, no verifier to confirm it").

    Raises:
        ValueError: as :func:`grader_verdict` (statistics computed at another alpha).
    """
    per: dict[str, tuple[str, str]] = {g: grader_verdict(s, alpha) for g, s in stats_by_grader.items()}
    per_grader = {g: v for g, (v, _) in per.items()}
    reasons = {g: r for g, (_, r) in per.items()}
    disagreements: list[str] = []
    if primary in per:
        pv = per[primary][0]
        verdict, reason = per[primary]
        for g, (v, _) in per.items():
            if g != primary and v != pv:
                disagreements.append(f"{g} says {v}, {primary} says {pv}")
    else:
        verdict, reason = INCONCLUSIVE, NO_VERIFIER_REASON
        for g, (v, _) in per.items():
            if v != INCONCLUSIVE:
                disagreements.append(f"{g} says {v}, no {primary} to confirm it")
    gates = [str(r) for r in gate_rejected_reasons if str(r).strip()]
    if gates:
        verdict, reason = REJECTED, "evolved skill rejected by the gates: " + "; ".join(gates) + \
            " (the baseline was kept)"
    return Verdict(verdict, reason, per_grader, tuple(disagreements), reasons, primary)


@dataclass(frozen=True)
class SeedSpread:
    """One grader's result across seeds: the per-seed mean deltas and the pooled test.

    Attributes:
        grader: the grader's name.
        n_seeds: number of seeds.
        mean_deltas: each seed's mean composite delta (NaN for a seed without pairs).
        min_delta, max_delta, mean_delta: min / max / mean of ``mean_deltas`` (NaN-ignoring).
        std_delta: sample SD (ddof 1) of ``mean_deltas`` (NaN with fewer than two seeds).
        same_sign: ``"+"`` when every seed's mean delta is > 0, ``"-"`` when every one is < 0, else ``""``.
        pooled: :class:`PairedStats` of all pairs of all seeds pooled (task ids prefixed ``s<i>:``).
        verdict, reason: the pooled verdict (see :func:`pooled_verdict`).
    """

    grader: str
    n_seeds: int
    mean_deltas: tuple[float, ...]
    min_delta: float
    max_delta: float
    mean_delta: float
    std_delta: float
    same_sign: str
    pooled: PairedStats
    verdict: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (``pooled`` nested, tuples as lists)."""
        d = asdict(self)
        d["mean_deltas"] = list(self.mean_deltas)
        return d

    def to_metrics(self, prefix: str = "stats") -> dict[str, float]:
        """``{prefix}.{grader}.seeds.{min,max,mean,std}_delta`` and ``.n_seeds``, plus the pooled statistics
        under ``{prefix}.pooled.{grader}.*`` (see :meth:`PairedStats.to_metrics`)."""
        base = f"{prefix}.{self.grader}.seeds" if prefix else f"{self.grader}.seeds"
        out = {f"{base}.min_delta": self.min_delta, f"{base}.max_delta": self.max_delta,
               f"{base}.mean_delta": self.mean_delta, f"{base}.std_delta": self.std_delta,
               f"{base}.n_seeds": float(self.n_seeds)}
        out.update(self.pooled.to_metrics(f"{prefix}.pooled" if prefix else "pooled"))
        return {k: float(v) for k, v in out.items()}


def pool_samples(per_seed: Sequence[PairedSample]) -> PairedSample:
    """One pair per holdout task, averaged over seeds: the pooled sample of a multi-seed experiment.

    The seeds re-run the optimisation on the *same* holdout tasks, so their pairs are not independent:
    stacking them would count each task once per seed and overstate the evidence (pseudo-replication).
    Each task's baseline and evolved composites are therefore the means over the seeds that graded it, and
    it counts as answered correctly when it was in a majority of those seeds.  Tasks graded in only some
    seeds are kept with the seeds they have; ``dropped`` is the sum over seeds.

    Raises:
        ValueError: no samples, or samples of different graders.
    """
    if not per_seed:
        raise ValueError("pool_samples needs at least one seed's sample")
    graders = {s.grader for s in per_seed}
    if len(graders) != 1:
        raise ValueError(f"cannot pool samples of different graders: {sorted(graders)}")
    by_task: dict[str, list[tuple[float, float, bool, bool]]] = {}
    for sample in per_seed:
        for values in zip(sample.task_ids, sample.baseline, sample.evolved, sample.baseline_correct,
                          sample.evolved_correct, strict=True):
            by_task.setdefault(values[0], []).append(values[1:])
    tasks = list(by_task)

    def mean(i: int) -> tuple[float, ...]:
        return tuple(float(np.mean([v[i] for v in by_task[t]])) for t in tasks)

    def majority(i: int) -> tuple[bool, ...]:
        return tuple(2 * sum(v[i] for v in by_task[t]) > len(by_task[t]) for t in tasks)

    return PairedSample(per_seed[0].grader, tuple(tasks), mean(0), mean(1), majority(2), majority(3),
                        sum(s.dropped for s in per_seed))


def pooled_verdict(per_seed: Sequence[PairedSample], alpha: float = DEFAULT_ALPHA, n_boot: int = 2000,
                   seed: int = 0) -> tuple[Verdict, SeedSpread]:
    """Verdict across seeds for one grader, and the spread of the per-seed mean deltas.

    ``improved`` requires the mean delta to be > 0 in every seed *and* the pooled test (Wilcoxon and
    bootstrap on all pairs of all seeds, :func:`grader_verdict`) to say improved; ``regressed`` is the
    mirror; otherwise ``inconclusive`` with the reason.  Pooling treats pairs as independent, which holds
    for the task LM's sampling noise but not for tasks shared between seeds' holdouts; the same-sign rule
    guards against one lucky seed carrying the pool.

    Returns:
        ``(verdict, spread)``; ``verdict.per_grader`` has the pooled verdict under the grader's name.
    Raises:
        ValueError: no samples, samples of different graders, or ``alpha`` outside (0, 1).
    """
    alpha = _check_alpha(alpha)
    pooled_sample = pool_samples(per_seed)
    grader = pooled_sample.grader
    means = tuple(float(s.deltas.mean()) if s.n else _NAN for s in per_seed)
    finite = [m for m in means if math.isfinite(m)]
    arr = np.asarray(finite, dtype=float)
    if means and all(math.isfinite(m) and m > 0 for m in means):
        sign = "+"
    elif means and all(math.isfinite(m) and m < 0 for m in means):
        sign = "-"
    else:
        sign = ""
    pooled = paired_stats(pooled_sample, alpha=alpha, n_boot=n_boot, seed=seed)
    pv, preason = grader_verdict(pooled, alpha)
    listed = ", ".join(fmt_delta(m) for m in means)
    if pv == IMPROVED and sign != "+":
        verdict = INCONCLUSIVE
        reason = f"pooled test says improved but the mean delta is not > 0 in every seed ({listed})"
    elif pv == REGRESSED and sign != "-":
        verdict = INCONCLUSIVE
        reason = f"pooled test says regressed but the mean delta is not < 0 in every seed ({listed})"
    elif pv == INCONCLUSIVE:
        verdict, reason = INCONCLUSIVE, f"pooled over {len(per_seed)} seeds: {preason}"
        if not sign:
            finite_means = [m for m in means if math.isfinite(m)]
            if finite_means and all(round(m, 3) == 0 for m in finite_means):
                reason += f"; the mean delta is 0 in every seed ({listed})"
            elif any(m > 0 for m in finite_means) and any(m < 0 for m in finite_means):
                reason += f"; mean delta changes sign across seeds ({listed})"
            else:
                reason += f"; mean delta per seed: {listed}"
    else:
        verdict, reason = pv, f"same sign in all {len(per_seed)} seeds ({listed}); pooled: {preason}"
    spread = SeedSpread(
        grader=grader,
        n_seeds=len(per_seed),
        mean_deltas=means,
        min_delta=float(arr.min()) if arr.size else _NAN,
        max_delta=float(arr.max()) if arr.size else _NAN,
        mean_delta=float(arr.mean()) if arr.size else _NAN,
        std_delta=float(arr.std(ddof=1)) if arr.size >= 2 else _NAN,
        same_sign=sign,
        pooled=pooled,
        verdict=verdict,
        reason=reason,
    )
    return Verdict(verdict, reason, {grader: verdict}, (), {grader: reason}, grader), spread
