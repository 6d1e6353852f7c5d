"""The paired comparison within rounds, against known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from pgfsbench.analysis.stats.medians import compare, from_paired
from pgfsbench.analysis.stats.outcome import from_decision, judge_paired
from pgfsbench.analysis.stats.paired import (
    Paired,
    compare_paired,
    detectable,
    pair_by_round,
    rounds_for,
)
from pgfsbench.analysis.stats.sequential import INCONCLUSIVE, Design, decide


def _pairs(base: list[float], other: list[float]) -> list[tuple[float, float]]:
    return list(zip(base, other))


def _issue_case() -> tuple[list[float], list[float]]:
    """wal_sync_method = fsync against fdatasync: slower in 8 of 8 rounds, ×0.95-0.97,
    while the machine drifts 15% from round to round."""
    drift = np.exp(np.random.default_rng(12).normal(0, 0.15, 8))
    slow = [0.96, 0.95, 0.97, 0.955, 0.965, 0.96, 0.95, 0.97]
    base = [1000 * d for d in drift]
    return base, [b * s for b, s in zip(base, slow)]


def test_p_is_the_paired_t_on_the_logs() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(900, 1100, 7)
    other = base * np.exp(rng.normal(0.03, 0.04, 7))
    c = compare_paired(_pairs(list(base), list(other)), 0.02)
    ref = sps.ttest_rel(np.log(other), np.log(base))
    assert c.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert c.ratio == pytest.approx(math.exp(np.mean(np.log(other / base))))
    lo, hi = c.ci()
    t = sps.t.ppf(0.975, 6) * np.std(np.log(other / base), ddof=1) / math.sqrt(7)
    assert (lo, hi) == pytest.approx((c.ratio * math.exp(-t), c.ratio * math.exp(t)))


def test_tost_is_the_larger_of_the_two_one_sided_t() -> None:
    rng = np.random.default_rng(2)
    base = rng.uniform(900, 1100, 10)
    other = base * np.exp(rng.normal(0.004, 0.01, 10))
    c = compare_paired(_pairs(list(base), list(other)), 0.02)
    d = np.log(other / base)
    bound = math.log1p(0.02)
    low = sps.ttest_1samp(d, -bound, alternative="greater").pvalue
    high = sps.ttest_1samp(d, bound, alternative="less").pvalue
    assert c.p_equivalent == pytest.approx(max(low, high), rel=1e-9)
    assert c.p_equivalent < 0.05  # within ±2%, and shown to be


def test_the_issue_case_is_found_paired_but_not_unpaired() -> None:
    base, other = _issue_case()
    paired = compare_paired(_pairs(base, other), 0.02)
    unpaired = compare(base, other)
    assert paired.p_value < 0.001 and 0.95 < paired.ratio < 0.97
    assert unpaired.p_value > 0.05  # the round drift drowns it between independent samples


def test_pair_by_round_keeps_rounds_both_have_a_positive_value() -> None:
    base = {1: 10.0, 2: 11.0, 3: 0.0, 4: 12.0, 5: float("nan")}
    other = {1: 9.0, 3: 8.0, 4: 13.0, 5: 7.0, 6: 1.0}
    assert pair_by_round(base, other) == [(10.0, 9.0), (12.0, 13.0)]


def test_small_samples() -> None:
    assert compare_paired([], 0.02).ratio is None
    one = compare_paired([(10.0, 11.0)], 0.02)
    assert one.ratio == pytest.approx(1.1) and one.p_value is None and one.ci() is None


# --- no spread to judge by ----------------------------------------------------------


@pytest.mark.parametrize(
    "pairs",
    [
        [(370.688, 370.688)] * 3,  # fio p99, one bucket on both sides
        [(370.688, 370.688)] * 12,  # however many rounds
        [(10.0, 10.39), (20.0, 20.78), (5.0, 5.195)],  # a constant ratio of 1.039
        [(10.0, 11.0), (20.0, 22.0), (5.0, 5.5)],  # float error in log(11/10) vs log(22/20)
    ],
)
def test_identical_ratios_give_no_p_and_no_equivalence(pairs) -> None:
    # Before: p = 1 and TOST p = 0 (equivalent at round 3) for identical values, and
    # p = 0 (certainly different) for a constant ratio: a t test dividing by sd 0.
    c = compare_paired(pairs, 0.02)
    assert c.p_value is None and c.p_equivalent is None and c.spread is None
    assert c.note.startswith("no spread to judge by") and c.ci() is None
    assert detectable(c, 0.05) is None and rounds_for(c, 0.1, 0.05) is None


def test_identical_values_are_never_decided_in_the_family_or_the_table() -> None:
    base = {r: 370.688 for r in range(1, 4)}
    [d] = decide({"k": (base, dict(base))}, Design.fixed(0.05, 0.02, 3)).values()
    assert d.outcome == INCONCLUSIVE
    j = from_decision(d)
    assert j.outcome == INCONCLUSIVE and j.note.startswith("no spread to judge by")
    assert j.interval() is None  # no interval to print beside it
    c = from_paired(compare_paired(pair_by_round(base, {1: 385.0, 2: 385.0, 3: 385.0}), 0.02))
    assert judge_paired(c, c.p_value, c.p_equivalent, 0.05, 0.02).outcome == INCONCLUSIVE


def test_quantized_values_floor_the_spread_at_their_resolution() -> None:
    # fio buckets 4.096 µs wide here: two ties on each side, one step apart on one round.
    base = [370.688, 370.688, 370.688, 374.784]
    other = [370.688, 370.688, 374.784, 374.784]
    c = compare_paired(_pairs(base, other), 0.02)
    step = math.log(374.784 / 370.688)
    assert c.resolution == pytest.approx(step)
    d = np.log(np.array(other) / np.array(base))
    assert c.sd_log == pytest.approx(d.std(ddof=1)) and c.sd_log < step / math.sqrt(2)
    assert c.spread == pytest.approx(step / math.sqrt(2))
    se = c.spread / 2
    assert c.p_value == pytest.approx(2 * sps.t.sf(abs(d.mean()) / se, 3))
    # Continuous values: no floor.
    assert compare_paired(_pairs([1000.0, 1010, 990], [1001.0, 1012, 991]), 0.02).resolution is None


# --- what an open pair is worth -------------------------------------------------------


def _exact(mean: float, sd: float, n: int, margin: float) -> Paired:
    """A comparison whose log-ratios have exactly this mean and sd."""
    z = np.random.default_rng(n).normal(0, 1, n)
    d = mean + sd * (z - z.mean()) / z.std(ddof=1)
    return compare_paired([(1000.0, 1000 * math.exp(x)) for x in d], margin)


def _simulated_power(effect: float, sd: float, n: int, level: float, threshold: float) -> float:
    """The real test (compare_paired) deciding "different" on simulated paired normal
    log-ratios: p at ``level`` and the estimate beyond the threshold."""
    rng = np.random.default_rng(42)
    bound = math.log1p(threshold)
    hits = 0
    draws = rng.normal(effect, sd, (1500, n))
    for d in draws:
        c = compare_paired([(1.0, math.exp(x)) for x in d], threshold)
        hits += c.p_value is not None and c.p_value <= level and abs(c.mean_log) >= bound
    return hits / len(draws)


@pytest.mark.parametrize(
    "sd, n, level, threshold",
    [
        (0.10, 16, 0.05 / 6, 0.03),  # the default plan's tps: 16 rounds, 6 comparisons
        (0.04, 6, 0.05 / 6, 0.03),  # a quiet machine, an early look
        (0.46, 16, 0.05 / 6, 0.03),  # fio p99 on a noisy day
    ],
)
def test_the_detectable_change_is_decided_in_80_percent_of_simulations(
    sd, n, level, threshold
) -> None:
    # "a difference of 12% or more would likely have been decided here": the real test
    # decides a true change of that size in about 80% of campaigns of these rounds, and a
    # change 20% smaller clearly less often.
    c = _exact(0.0, sd, n, threshold)
    change = detectable(c, level)
    assert change is not None and change > threshold
    effect = math.log1p(change)
    assert 0.76 <= _simulated_power(effect, sd, n, level, threshold) <= 0.86
    assert _simulated_power(0.8 * effect, sd, n, level, threshold) < 0.72


def test_rounds_for_a_change_give_80_percent_power() -> None:
    c = _exact(0.0, 0.10, 16, 0.03)
    n = rounds_for(c, 0.10, 0.05 / 6)
    assert n is not None and n > 16
    got = _simulated_power(math.log1p(0.10), 0.10, n, 0.05 / 6, 0.03)
    assert 0.76 <= got <= 0.88
    # A spread far beyond the change: no practical number of rounds.
    assert rounds_for(_exact(0.0, 3.0, 16, 0.03), 0.05, 0.05 / 6) is None
    assert detectable(_exact(0.0, 30.0, 4, 0.03), 0.05 / 6) is None  # beyond ×1000
