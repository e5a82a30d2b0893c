"""Tests for harness.analysis.stats: each statistic against an independent computation, the verdict rules,
pooling across seeds, and an A/A false-positive check with the offline noisy test LM."""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
import warnings
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from harness.analysis.stats import (
    IMPROVED,
    INCONCLUSIVE,
    NO_VERIFIER_REASON,
    REGRESSED,
    REJECTED,
    PairedSample,
    PairedStats,
    Verdict,
    grader_verdict,
    k_min_mcnemar,
    k_min_wilcoxon,
    overall_verdict,
    paired_stats,
    pairs_by_grader,
    pairs_from_rows,
    pool_samples,
    pooled_verdict,
    power_statement,
)
from harness.engine.holdout import HoldoutRow

# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------


def sample_from_deltas(deltas: Sequence[float], grader: str = "verifier", base: float = 0.4) -> PairedSample:
    """A sample whose evolved - baseline deltas are ``deltas`` (correct = composite 1)."""
    baseline = [base] * len(deltas)
    evolved = [base + d for d in deltas]
    return PairedSample(grader, tuple(f"t{i}" for i in range(len(deltas))), tuple(baseline), tuple(evolved),
                        tuple(b >= 1 for b in baseline), tuple(e >= 1 for e in evolved))


def sample_from_counts(b: int, c: int, both: int = 0, neither: int = 0, grader: str = "verifier") -> PairedSample:
    """A sample with b tasks correct only after, c only before, ``both`` always, ``neither`` never."""
    pattern = [(False, True)] * b + [(True, False)] * c + [(True, True)] * both + [(False, False)] * neither
    base = tuple(1.0 if x else 0.5 for x, _ in pattern)
    evo = tuple(1.0 if y else 0.5 for _, y in pattern)
    return PairedSample(grader, tuple(f"t{i}" for i in range(len(pattern))), base, evo,
                        tuple(x for x, _ in pattern), tuple(y for _, y in pattern))


def average_ranks(values: np.ndarray) -> list[float]:
    """1-based ranks of ``values``, ties given their average rank (by hand, not scipy)."""
    return [float(np.sum(values < x) + (np.sum(values == x) + 1) / 2.0) for x in values]


def rank_sum_pos(d: np.ndarray) -> float:
    """Sum of the ranks of |d| over the positive values of d (d without zeros)."""
    return float(sum(r for r, x in zip(average_ranks(np.abs(d)), d, strict=True) if x > 0))


def brute_force_wilcoxon_p(d: Sequence[float]) -> float:
    """Two-sided p of the signed-rank statistic over all 2**k sign flips of the non-zero deltas.

    Flipping signs leaves |d|, hence the (average) ranks, unchanged: each pattern's statistic is the sum
    of the ranks it makes positive.
    """
    nz = np.array([x for x in d if x != 0], dtype=float)
    ranks = [r for r in average_ranks(np.abs(nz))]
    observed = sum(r for r, x in zip(ranks, nz, strict=True) if x > 0)
    null = [sum(r for r, up in zip(ranks, signs, strict=True) if up)
            for signs in itertools.product((True, False), repeat=len(nz))]
    eps = 1e-9
    upper = sum(t >= observed - eps for t in null) / len(null)
    lower = sum(t <= observed + eps for t in null) / len(null)
    return min(1.0, 2 * min(upper, lower))


def fwd_sample_deltas(base: Sequence[float], evo: Sequence[float]) -> list[float]:
    """evolved - baseline, rounded as PairedSample.deltas rounds them."""
    return [round(e - b, 12) for b, e in zip(base, evo, strict=True)]


def row(task_id: str, variant: str, grader: str, composite: float, correctness: float) -> HoldoutRow:
    return HoldoutRow(task_id, "title", "p1", variant, grader, "out", correctness, 1.0, 1.0, composite, "fb")


# --------------------------------------------------------------------------------------------------
# pairing
# --------------------------------------------------------------------------------------------------


def holdout_rows() -> list[HoldoutRow]:
    nan = float("nan")
    return [
        row("a", "baseline", "verifier", 0.5, 0.0), row("a", "evolved", "verifier", 1.0, 1.0),
        row("b", "baseline", "verifier", 1.0, 1.0), row("b", "evolved", "verifier", 0.85, 0.5),
        row("c", "baseline", "verifier", 0.7, 1.0), row("c", "evolved", "verifier", nan, nan),
        row("d", "evolved", "verifier", 1.0, 1.0),  # no baseline row: unpaired
        row("a", "baseline", "judge", 0.6, 1.0), row("a", "evolved", "judge", 0.9, 1.0),
        row("b", "evolved", "judge", 0.2, 0.0), row("b", "baseline", "judge", 0.3, 0.0),
    ]


def test_pairs_from_rows_aligns_by_task_and_counts_dropped() -> None:
    s = pairs_from_rows(holdout_rows(), "verifier")
    assert s.task_ids == ("a", "b")
    assert s.baseline == (0.5, 1.0) and s.evolved == (1.0, 0.85)
    assert s.baseline_correct == (False, True) and s.evolved_correct == (True, False)  # 0.5 is not correct
    assert s.dropped == 2  # c has a NaN side, d has no baseline
    j = pairs_from_rows(holdout_rows(), "judge")
    assert j.task_ids == ("a", "b") and j.evolved == (0.9, 0.2) and j.dropped == 0


def test_pairs_from_rows_accepts_a_dataframe_and_dicts() -> None:
    rows = holdout_rows()
    frame = pd.DataFrame([r.to_dict() for r in rows])
    assert pairs_from_rows(frame, "verifier") == pairs_from_rows(rows, "verifier")
    assert pairs_from_rows([r.to_dict() for r in rows], "judge") == pairs_from_rows(rows, "judge")
    assert set(pairs_by_grader(frame)) == {"verifier", "judge"}


def test_pairs_from_rows_errors() -> None:
    with pytest.raises(ValueError, match="no holdout rows for grader 'keyword'"):
        pairs_from_rows(holdout_rows(), "keyword")
    dup = holdout_rows() + [row("a", "baseline", "verifier", 0.5, 0.0)]
    with pytest.raises(ValueError, match="two baseline rows"):
        pairs_from_rows(dup, "verifier")


def test_paired_sample_validates() -> None:
    with pytest.raises(ValueError, match="one length"):
        PairedSample("v", ("a",), (0.1, 0.2), (0.1,), (False,), (False,))
    with pytest.raises(ValueError, match="finite"):
        PairedSample("v", ("a",), (float("nan"),), (0.1,), (False,), (False,))
    s = PairedSample("v", ["a"], [np.float64(0.25)], [0.5], [0], [1], dropped=3)
    assert s.to_dict() == {"grader": "v", "task_ids": ["a"], "baseline": [0.25], "evolved": [0.5],
                           "baseline_correct": [False], "evolved_correct": [True], "dropped": 3, "faulted": 0}


# --------------------------------------------------------------------------------------------------
# McNemar, Wilcoxon, bootstrap, power
# --------------------------------------------------------------------------------------------------


def test_mcnemar_exact_b7_c1() -> None:
    s = paired_stats(sample_from_counts(7, 1, both=5, neither=3))
    expected = 2 * sum(math.comb(8, k) for k in range(0, 2)) / 2 ** 8
    assert expected == 0.0703125
    assert s.mcnemar_p == pytest.approx(expected, abs=1e-12)
    assert (s.discordant_improved, s.discordant_regressed) == (7, 1)
    assert s.baseline_correct_share == pytest.approx(6 / 16) and s.evolved_correct_share == pytest.approx(12 / 16)


def test_mcnemar_without_discordant_pairs_is_one() -> None:
    s = paired_stats(sample_from_counts(0, 0, both=4, neither=4))
    assert s.mcnemar_p == 1.0 and s.discordant_improved == s.discordant_regressed == 0


@pytest.mark.parametrize(("deltas", "method"), [
    ([0.11, -0.23, 0.31, 0.42, 0.05, -0.07, 0.6, 0.19], "exact"),  # no ties
    ([0.1, 0.1, -0.1, 0.2, 0.0, 0.3, -0.2, 0.1, 0.0, 0.4], "permutation"),  # ties and zeros
    ([0.5, 0.5, 0.5, 0.5, 0.5, 0.5], "permutation"),  # all one sign: 2 * 0.5**6
    ([0.5] * 7 + [-0.5] + [0.0] * 8, "permutation"),  # 16 pairs, 7 of 8 changed up: exact, not normal
    ([0.5] * 9 + [-0.5] * 3 + [0.0] * 4 + [0.25, 0.25], "permutation"),  # 18 pairs, 14 changed, with ties
])
def test_wilcoxon_matches_brute_force_sign_flips(deltas: list[float], method: str) -> None:
    s = paired_stats(sample_from_deltas(deltas))
    assert s.wilcoxon_method == method
    assert s.wilcoxon_p == pytest.approx(brute_force_wilcoxon_p(deltas), abs=1e-9)
    assert s.n_nonzero == sum(1 for d in deltas if d != 0)
    nz = np.array([d for d in deltas if d != 0])
    assert s.rank_sum_pos == pytest.approx(rank_sum_pos(nz))


def test_wilcoxon_seven_of_eight_up_is_exact_binomial() -> None:
    s = paired_stats(sample_from_deltas([0.5] * 7 + [-0.5] + [0.0] * 8))
    assert s.wilcoxon_p == pytest.approx(2 * sum(math.comb(8, k) for k in range(2)) / 2 ** 8)  # 0.0703
    assert grader_verdict(s)[0] == INCONCLUSIVE


@pytest.mark.parametrize("deltas", [
    [0.11, -0.23, 0.31, 0.42, 0.05, -0.07, 0.6, 0.19],
    [0.1, 0.1, -0.1, 0.2, 0.0, 0.3, -0.2, 0.1],
    [0.3, -0.1, 0.25, 0.2, 0.45, 0.15, 0.05, 0.4, -0.35, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8],
])
def test_wilcoxon_p_equals_scipy_auto_where_scipy_is_exact(deltas: list[float]) -> None:
    from scipy.stats import wilcoxon

    s = paired_stats(sample_from_deltas(deltas, base=0.0))
    assert s.wilcoxon_p == pytest.approx(float(wilcoxon(np.round(deltas, 12)).pvalue), rel=1e-9)


def test_wilcoxon_normal_approximation_with_many_ties_matches_formula() -> None:
    deltas = [0.5] * 12 + [-0.5] * 5 + [0.0] * 4 + [0.25, 0.25, -0.25]  # 20 non-zero, tied: normal approx
    s = paired_stats(sample_from_deltas(deltas))
    assert s.wilcoxon_method == "normal"
    nz = np.array([d for d in deltas if d != 0])
    k = len(nz)
    t_plus = rank_sum_pos(nz)
    ties = Counter(np.abs(nz).tolist()).values()
    var = k * (k + 1) * (2 * k + 1) / 24 - sum(t ** 3 - t for t in ties) / 48
    z = (t_plus - k * (k + 1) / 4) / math.sqrt(var)
    expected = 2 * (1 - statistics.NormalDist().cdf(abs(z)))
    assert s.wilcoxon_p == pytest.approx(expected, rel=1e-9)


def test_all_zero_deltas_do_not_raise_and_give_p_one() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = paired_stats(sample_from_deltas([0.0] * 8))
    assert s.wilcoxon_p == 1.0 and s.n_nonzero == 0
    assert (s.ci_low, s.ci_high) == (0.0, 0.0) and s.ci_method == "degenerate"
    assert grader_verdict(s)[0] == INCONCLUSIVE


def test_degenerate_samples() -> None:
    one = paired_stats(sample_from_deltas([0.3]))
    assert one.ci_low == one.ci_high == pytest.approx(0.3)
    assert math.isnan(one.sd_delta) and math.isnan(one.mde_composite)
    const = paired_stats(sample_from_deltas([0.25] * 10))
    assert const.ci_low == const.ci_high == pytest.approx(0.25) and const.mde_composite == 0.0
    empty = paired_stats(PairedSample("judge", (), (), (), (), (), dropped=4))
    assert empty.n_pairs == 0 and empty.dropped_pairs == 4
    assert math.isnan(empty.wilcoxon_p) and math.isnan(empty.ci_low) and math.isnan(empty.mean_delta)
    assert empty.mcnemar_p == 1.0 and empty.underpowered
    assert grader_verdict(empty) == (INCONCLUSIVE, "no scored holdout pairs (4 dropped)")


def test_bootstrap_interval_is_reproducible_and_contains_the_mean() -> None:
    rng = np.random.default_rng(7)
    deltas = np.round(rng.normal(0.1, 0.2, size=40), 3).tolist()
    a = paired_stats(sample_from_deltas(deltas, base=0.0), seed=3)
    b = paired_stats(sample_from_deltas(deltas, base=0.0), seed=3)
    c = paired_stats(sample_from_deltas(deltas, base=0.0), seed=4)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert (a.ci_low, a.ci_high) != (c.ci_low, c.ci_high)
    assert a.ci_low < a.mean_delta < a.ci_high
    assert a.ci_method == "BCa" and a.ci_level == pytest.approx(0.95)
    # close to the t interval for a roughly normal sample of 40 (independent check of the width)
    half = statistics.stdev(deltas) / math.sqrt(40) * 2.0227  # t_{0.975, 39}
    assert a.ci_low == pytest.approx(a.mean_delta - half, abs=0.25 * half)
    assert a.ci_high == pytest.approx(a.mean_delta + half, abs=0.25 * half)


def test_k_min() -> None:
    for alpha, k in ((0.05, 6), (0.02, 7), (0.01, 8)):
        assert k_min_mcnemar(alpha) == k_min_wilcoxon(alpha) == k
        assert 2 * 0.5 ** k < alpha <= 2 * 0.5 ** (k - 1)
    with pytest.raises(ValueError):
        k_min_mcnemar(0.0)


def test_power_fields() -> None:
    deltas = [0.5, -0.5, 0.5, 0.0, 0.5, 0.5, 0.0, -0.5, 0.5, 0.5, 0.0, 0.5, -0.5, 0.5, 0.0, 0.5]
    s = paired_stats(sample_from_deltas(deltas))
    assert s.n_pairs == 16 and s.k_min == 6
    assert s.min_detectable_share == pytest.approx(6 / 16) and not s.underpowered
    nd = statistics.NormalDist()
    expected = (nd.inv_cdf(0.975) + nd.inv_cdf(0.8)) * statistics.stdev(deltas) / math.sqrt(16)
    assert s.mde_composite == pytest.approx(expected, rel=1e-9)
    s2 = paired_stats(sample_from_deltas(deltas), alpha=0.02)
    assert s2.k_min == 7 and s2.min_detectable_share == pytest.approx(7 / 16)
    small = paired_stats(sample_from_deltas([0.5] * 5))
    assert small.underpowered and small.min_detectable_share == pytest.approx(6 / 5)
    assert "underpowered" in power_statement(small) and "fewer than 6" in power_statement(small)
    assert "6/16" in power_statement(s)


def test_paired_stats_rejects_bad_arguments() -> None:
    sample = sample_from_deltas([0.1, 0.2])
    for kwargs in ({"alpha": 0.0}, {"alpha": 1.0}, {"n_boot": 0}, {"power": 1.0}):
        with pytest.raises(ValueError):
            paired_stats(sample, **kwargs)


def test_to_metrics_and_to_dict() -> None:
    s = paired_stats(sample_from_counts(7, 1, both=5, neither=3))
    m = s.to_metrics("stats")
    for name in ("wilcoxon_p", "mcnemar_p", "ci_low", "ci_high", "mean_delta", "min_detectable_share",
                 "mde_composite", "discordant_improved", "discordant_regressed", "n_pairs", "dropped_pairs"):
        assert f"stats.verifier.{name}" in m
    assert all(isinstance(v, float) for v in m.values())
    assert m["stats.verifier.discordant_improved"] == 7.0 and m["stats.verifier.n_pairs"] == 16.0
    assert m["stats.verifier.mcnemar_p"] == s.mcnemar_p
    assert s.to_dict()["grader"] == "verifier" and s.to_dict()["wilcoxon_p"] == s.wilcoxon_p
    empty = paired_stats(PairedSample("judge", (), (), (), (), ()))
    assert math.isnan(empty.to_metrics()["stats.judge.wilcoxon_p"])


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.sampled_from([0.0, 0.5, 0.65, 0.8, 1.0]), hst.sampled_from([0.0, 0.5, 0.8, 1.0])),
                 min_size=0, max_size=20))
def test_any_sample_gives_valid_statistics_and_swapping_mirrors(pairs: list[tuple[float, float]]) -> None:
    base, evo = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    ids = tuple(str(i) for i in range(len(pairs)))
    fwd = paired_stats(PairedSample("v", ids, base, evo, tuple(x >= 1 for x in base), tuple(x >= 1 for x in evo)),
                       n_boot=200)
    rev = paired_stats(PairedSample("v", ids, evo, base, tuple(x >= 1 for x in evo), tuple(x >= 1 for x in base)),
                       n_boot=200)
    if pairs:
        assert 0.0 <= fwd.wilcoxon_p <= 1.0 and 0.0 <= fwd.mcnemar_p <= 1.0
        assert fwd.ci_low <= fwd.ci_high
        assert fwd.wilcoxon_p == pytest.approx(rev.wilcoxon_p) and fwd.mcnemar_p == pytest.approx(rev.mcnemar_p)
        assert fwd.mean_delta == pytest.approx(-rev.mean_delta, abs=1e-12)
        if len(pairs) <= 10:
            assert fwd.wilcoxon_p == pytest.approx(brute_force_wilcoxon_p(fwd_sample_deltas(base, evo)), abs=1e-9)
    assert (fwd.discordant_improved, fwd.discordant_regressed) == (rev.discordant_regressed, rev.discordant_improved)
    v_fwd, v_rev = grader_verdict(fwd)[0], grader_verdict(rev)[0]
    mirror = {IMPROVED: REGRESSED, REGRESSED: IMPROVED, INCONCLUSIVE: INCONCLUSIVE}
    if v_fwd != INCONCLUSIVE:
        assert v_rev == mirror[v_fwd]


# --------------------------------------------------------------------------------------------------
# verdict rules
# --------------------------------------------------------------------------------------------------

STRONG_UP = [0.12, 0.2, 0.31, 0.25, 0.4, 0.18, 0.22, 0.35, 0.28, 0.15, 0.3, 0.26, 0.33, 0.21, 0.17, 0.29]


def test_underpowered_five_pairs_all_improved_is_inconclusive() -> None:
    s = paired_stats(sample_from_deltas([0.5, 0.3, 0.4, 0.2, 0.6]))
    verdict, reason = grader_verdict(s)
    assert verdict == INCONCLUSIVE
    assert reason == "underpowered: 5 holdout pairs, no exact two-sided test can reach p < 0.05 with fewer than 6"
    assert s.wilcoxon_p == pytest.approx(2 * 0.5 ** 5)


def test_improved_and_regressed() -> None:
    up = paired_stats(sample_from_deltas(STRONG_UP, base=0.3))
    verdict, reason = grader_verdict(up, 0.05)
    assert verdict == IMPROVED, reason
    assert up.wilcoxon_p < 0.05 and up.ci_low > 0
    assert "excludes 0" in reason and "p = " in reason
    down = paired_stats(sample_from_deltas([-d for d in STRONG_UP], base=0.7))
    assert grader_verdict(down)[0] == REGRESSED


def test_p_not_significant_reason() -> None:
    s = paired_stats(sample_from_deltas([0.1, -0.2, 0.3, -0.05, 0.15, -0.12, 0.22, 0.08]))
    verdict, reason = grader_verdict(s)
    assert verdict == INCONCLUSIVE and s.wilcoxon_p >= 0.05
    assert reason == f"p = {s.wilcoxon_p:.3g} ≥ 0.05"


def test_too_few_changed_tasks_is_inconclusive() -> None:
    # 20 pairs but only 5 differ, all up: exact p = 2 * 0.5**5
    s = paired_stats(sample_from_deltas([0.5] * 5 + [0.0] * 15))
    assert s.wilcoxon_p == pytest.approx(0.0625) and not s.underpowered
    verdict, reason = grader_verdict(s)
    assert verdict == INCONCLUSIVE
    assert reason == "too few changed tasks: 5 of 20 pairs differ, no exact two-sided test can reach p < 0.05 " \
                     "with fewer than 6"
    # the guard holds even where an approximate p-value is small (the normal approximation gives 0.025)
    approx = dataclasses.replace(s, wilcoxon_p=0.025, wilcoxon_method="normal")
    assert grader_verdict(approx)[0] == INCONCLUSIVE


def test_interval_spanning_zero_is_inconclusive() -> None:
    # the rule itself: a significant test whose interval still contains 0
    base = paired_stats(sample_from_deltas(STRONG_UP))
    spans = dataclasses.replace(base, ci_low=-0.05, ci_high=0.12)
    assert grader_verdict(spans) == (INCONCLUSIVE, "interval spans 0: [-0.05, 0.12]")
    # and on data: many small gains and one large loss
    s = paired_stats(sample_from_deltas([0.05, 0.06, 0.07, 0.04, 0.05, 0.06, 0.08, 0.05, 0.07, 0.06, 0.05, 0.04,
                                         0.06, 0.05, 0.07, -0.9], base=0.95 - 0.0))
    assert s.wilcoxon_p < 0.05
    verdict, reason = grader_verdict(s)
    assert verdict == INCONCLUSIVE and reason.startswith("interval spans 0: [")


def test_directions_must_agree() -> None:
    base = paired_stats(sample_from_deltas(STRONG_UP))
    odd = dataclasses.replace(base, mean_delta=-0.01)
    verdict, reason = grader_verdict(odd)
    assert verdict == INCONCLUSIVE and reason.startswith("directions disagree")


def test_alpha_mismatch_raises() -> None:
    s = paired_stats(sample_from_deltas(STRONG_UP), alpha=0.1)
    with pytest.raises(ValueError, match="alpha 0.1"):
        grader_verdict(s, 0.05)
    assert grader_verdict(s, 0.1)[0] == IMPROVED


def test_overall_disagreement_and_tags() -> None:
    stats = {
        "verifier": paired_stats(sample_from_deltas([0.1, -0.2, 0.3, -0.05, 0.15, -0.12, 0.22, 0.08])),
        "keyword": paired_stats(sample_from_deltas(STRONG_UP, grader="keyword")),
        "judge": paired_stats(sample_from_deltas([0.01, -0.02, 0.03, -0.01, 0.02, -0.03, 0.0, 0.01], grader="judge")),
    }
    v = overall_verdict(stats)
    assert v.verdict == INCONCLUSIVE and v.reason.startswith("p = ")
    assert v.per_grader == {"verifier": INCONCLUSIVE, "keyword": IMPROVED, "judge": INCONCLUSIVE}
    assert v.disagreements == ("keyword says improved, verifier says inconclusive",)
    tags = v.to_tags()
    assert tags == {"verdict": INCONCLUSIVE, "verdict.reason": v.reason,
                    "verdict.disagreement": "keyword says improved, verifier says inconclusive"}
    assert v.to_dict()["disagreements"] == ["keyword says improved, verifier says inconclusive"]


def test_overall_agreement_has_no_disagreement_tag() -> None:
    stats = {"verifier": paired_stats(sample_from_deltas(STRONG_UP)),
             "keyword": paired_stats(sample_from_deltas(STRONG_UP, grader="keyword"))}
    v = overall_verdict(stats)
    assert v.verdict == IMPROVED and v.disagreements == ()
    assert set(v.to_tags()) == {"verdict", "verdict.reason"}


def test_gate_rejection_overrides_statistics() -> None:
    stats = {"verifier": paired_stats(sample_from_deltas(STRONG_UP))}
    v = overall_verdict(stats, gate_rejected_reasons=["skill grew 3.1x (limit 2x)", "frontmatter changed"])
    assert v.verdict == REJECTED
    assert v.reason == ("evolved skill rejected by the gates: skill grew 3.1x (limit 2x); frontmatter changed "
                        "(the baseline was kept)")
    assert v.per_grader == {"verifier": IMPROVED}
    assert v.to_tags()["verdict"] == REJECTED


def test_no_verifier_is_inconclusive() -> None:
    stats = {"keyword": paired_stats(sample_from_deltas(STRONG_UP, grader="keyword"))}
    v = overall_verdict(stats)
    assert (v.verdict, v.reason) == (INCONCLUSIVE, NO_VERIFIER_REASON)
    assert v.disagreements == ("keyword says improved, no verifier to confirm it",)
    assert overall_verdict({}).reason == "no objective verifier for this skill"


def test_verdict_validates() -> None:
    with pytest.raises(ValueError):
        Verdict("better", "because")


# --------------------------------------------------------------------------------------------------
# across seeds
# --------------------------------------------------------------------------------------------------


def test_pooled_verdict_same_sign_and_significant() -> None:
    seeds = [sample_from_deltas(STRONG_UP[:8]), sample_from_deltas(STRONG_UP[8:]),
             sample_from_deltas([0.1, 0.3, 0.2, 0.05, 0.25, 0.15, 0.12, 0.18])]
    verdict, spread = pooled_verdict(seeds, n_boot=500)
    assert verdict.verdict == IMPROVED and spread.verdict == IMPROVED and spread.same_sign == "+"
    means = [statistics.fmean(STRONG_UP[:8]), statistics.fmean(STRONG_UP[8:]),
             statistics.fmean([0.1, 0.3, 0.2, 0.05, 0.25, 0.15, 0.12, 0.18])]
    assert spread.mean_deltas == pytest.approx(means)
    assert spread.min_delta == pytest.approx(min(means)) and spread.max_delta == pytest.approx(max(means))
    assert spread.mean_delta == pytest.approx(statistics.fmean(means))
    assert spread.std_delta == pytest.approx(statistics.stdev(means))
    assert spread.pooled.n_pairs == 8 and spread.n_seeds == 3  # one pair per task, averaged over seeds
    assert spread.to_metrics()["stats.verifier.seeds.n_seeds"] == 3.0
    assert "stats.pooled.verifier.wilcoxon_p" in spread.to_metrics()


def test_pooled_verdict_opposite_seed_is_inconclusive() -> None:
    seeds = [sample_from_deltas(STRONG_UP), sample_from_deltas(STRONG_UP),
             sample_from_deltas([-0.05, 0.02, -0.03, -0.01, 0.01, -0.02])]
    # the pooled test alone would say improved
    assert grader_verdict(paired_stats(pool_samples(seeds), n_boot=500))[0] == IMPROVED
    verdict, spread = pooled_verdict(seeds, n_boot=500)
    assert verdict.verdict == INCONCLUSIVE and spread.same_sign == ""
    assert "not > 0 in every seed" in verdict.reason
    assert spread.min_delta < 0 < spread.max_delta


def test_pooled_verdict_regressed_and_errors() -> None:
    seeds = [sample_from_deltas([-d for d in STRONG_UP[:8]]), sample_from_deltas([-d for d in STRONG_UP[8:]])]
    verdict, spread = pooled_verdict(seeds, n_boot=500)
    assert verdict.verdict == REGRESSED and spread.same_sign == "-"
    with pytest.raises(ValueError):
        pooled_verdict([])
    with pytest.raises(ValueError, match="different graders"):
        pooled_verdict([sample_from_deltas([0.1]), sample_from_deltas([0.1], grader="judge")])
    pooled = pool_samples(seeds)  # same tasks re-run per seed: averaged per task, never stacked
    assert pooled.task_ids == tuple(f"t{i}" for i in range(8))
    assert pooled.deltas.tolist() == pytest.approx([-(a + b) / 2 for a, b in zip(STRONG_UP[:8], STRONG_UP[8:],
                                                                                    strict=True)])


# --------------------------------------------------------------------------------------------------
# A/A: a skill against itself with a noisy test LM must rarely be called improved
# --------------------------------------------------------------------------------------------------

AA_SEEDS = 300


def aa_sample(seed: int) -> PairedSample:
    """Baseline and 'evolved' outputs of the same skill for one seed's holdout, via HoldoutRows."""
    from harness.models.testing import ScriptedEngine
    from verifiers import get_verifier

    verifier = get_verifier("arxiv")
    engine = ScriptedEngine("noisy", seed=seed)
    holdout = verifier.build_dataset(None, seed).holdout
    system = "# arXiv facts\n\nAnswer with the exact fact, in one short sentence."
    rows = []
    for variant in ("baseline", "evolved"):  # the same system text for both variants
        for task in holdout:
            out = engine.answer(system, task.question)
            g = verifier.score(task.question, out)
            rows.append(HoldoutRow(task.task_id, task.kind, task.group, variant, "verifier", out, g.correctness,
                                   g.well_formed, g.conciseness, g.composite, g.feedback))
    return pairs_from_rows(rows, "verifier")


def test_aa_comparison_is_rarely_called_improved() -> None:
    alpha = 0.05
    counts: Counter[str] = Counter()
    changed = 0
    for seed in range(AA_SEEDS):
        sample = aa_sample(seed)
        assert 16 <= sample.n <= 17 and sample.dropped == 0
        stats = paired_stats(sample, alpha=alpha, n_boot=500, seed=seed)
        changed += stats.n_nonzero > 0
        counts[overall_verdict({"verifier": stats}, alpha).verdict] += 1
    assert changed > 0.9 * AA_SEEDS  # the noisy model really does change answers between the two variants
    bound = alpha + 3 * math.sqrt(alpha * (1 - alpha) / AA_SEEDS)  # ~ 0.088: 3 SE above a rate of alpha
    improved = counts[IMPROVED] / AA_SEEDS
    either = (counts[IMPROVED] + counts[REGRESSED]) / AA_SEEDS
    assert improved <= bound, counts
    assert either <= bound, counts


def test_stats_are_frozen() -> None:
    s = paired_stats(sample_from_deltas([0.1, 0.2]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.alpha = 0.1  # type: ignore[misc]
    assert isinstance(s, PairedStats)
