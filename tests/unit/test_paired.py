"""The paired comparison within rounds, against known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from pgfsbench.analysis.paired import compare_paired, pair_by_round, rounds_to_decide
from pgfsbench.analysis.stats import compare


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


def test_small_and_constant_samples() -> None:
    assert compare_paired([], 0.02).ratio is None
    one = compare_paired([(10.0, 11.0)], 0.02)
    assert one.ratio == pytest.approx(1.1) and one.p_value is None and one.ci() is None
    same = compare_paired([(10.0, 10.0)] * 4, 0.02)
    assert (same.p_value, same.p_equivalent) == (1.0, 0.0)
    apart = compare_paired([(10.0, 11.0), (20.0, 22.0), (5.0, 5.5)], 0.02)
    assert (apart.p_value, apart.p_equivalent) == (0.0, 1.0)


def test_rounds_needed_shrinks_as_the_effect_grows() -> None:
    rng = np.random.default_rng(3)
    noise = rng.normal(0, 0.03, 4)
    base = [1000.0] * 4
    needed = []
    for effect in (0.03, 0.05, 0.08, 0.12):
        other = [b * math.exp(effect + e) for b, e in zip(base, noise - noise.mean())]
        c = compare_paired(_pairs(base, other), 0.02)
        needed.append(rounds_to_decide(c, lambda n: 0.05))
    assert all(n is not None for n in needed)
    assert needed == sorted(needed, reverse=True) and needed[0] > needed[-1]
