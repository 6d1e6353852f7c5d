"""The paired comparison within rounds, against known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from pgfsbench.analysis.outcome import Judged, from_decision, judge_paired, settle_text, verdict_of
from pgfsbench.analysis.paired import (
    Paired,
    compare_paired,
    pair_by_round,
    planned_effect,
    rounds_to_decide,
    why_unsettled,
)
from pgfsbench.analysis.sequential import INCONCLUSIVE, Design, decide
from pgfsbench.analysis.stats import compare, from_paired


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
    assert rounds_to_decide(c, lambda n: 0.05) is None
    assert why_unsettled(c).startswith("no spread to judge by")


def test_identical_values_are_never_decided_in_the_family_or_the_table() -> None:
    base = {r: 370.688 for r in range(1, 4)}
    [d] = decide({"k": (base, dict(base))}, Design.fixed(0.05, 0.02, 3)).values()
    assert d.outcome == INCONCLUSIVE and d.rounds_needed is None
    j = from_decision(d, from_paired(d.paired))
    v = verdict_of(j, False, 0.02)
    assert v.kind == "inconclusive" and "no spread to judge by" in v.reason
    assert v.reason.endswith("no number of rounds can be estimated to settle it")
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


# --- how many rounds would settle it --------------------------------------------------


def _exact(mean: float, sd: float, n: int, margin: float) -> Paired:
    """A comparison whose log-ratios have exactly this mean and sd."""
    z = np.random.default_rng(n).normal(0, 1, n)
    d = mean + sd * (z - z.mean()) / z.std(ddof=1)
    return compare_paired([(1000.0, 1000 * math.exp(x)) for x in d], margin)


def test_rounds_follow_the_route_that_can_decide() -> None:
    # The issue's case: mean 2%, sd 3%, margin 3%. Inside the margin no difference can be
    # decided (before: "20 rounds", from the difference route at the observed 2%); only
    # equivalence can, planned for a true ratio of 1.
    c = _exact(math.log(1.02), 0.03, 5, 0.03)
    assert planned_effect(c) == ("equivalent", 0.0)
    n = rounds_to_decide(c, lambda n: 0.05)
    assert n == rounds_to_decide(_exact(math.log(0.995), 0.03, 5, 0.03), lambda n: 0.05)
    # Not post-hoc: beyond the margin the effect planned is twice the margin until the
    # data rule out less, so a larger observed effect alone does not shrink the figure...
    small = _exact(0.045, 0.04, 4, 0.02)
    large = _exact(0.07, 0.04, 4, 0.02)
    assert planned_effect(small) == planned_effect(large) == ("different", 2 * math.log1p(0.02))
    assert rounds_to_decide(small, lambda n: 0.05) == rounds_to_decide(large, lambda n: 0.05)
    # ...while an effect whose whole CI lies far beyond it plans for the CI's nearer end.
    far = _exact(0.5, 0.04, 4, 0.02)
    route, effect = planned_effect(far)
    assert effect == pytest.approx(0.5 - sps.t.ppf(0.975, 3) * 0.04 / 2)
    assert rounds_to_decide(far, lambda n: 0.05) < rounds_to_decide(large, lambda n: 0.05)


def _simulated_power(
    route: str, effect: float, sd: float, n: int, level: float, margin: float, campaigns: int = 2000
) -> float:
    """The real test (compare_paired) on simulated paired normal log-ratios."""
    rng = np.random.default_rng(42)
    bound = math.log1p(margin)
    hits = 0
    for d in rng.normal(effect, sd, (campaigns, n)):
        c = compare_paired([(1.0, math.exp(x)) for x in d], margin)
        if route == "equivalent":
            hits += c.p_equivalent is not None and c.p_equivalent <= level
        else:
            hits += c.p_value is not None and c.p_value <= level and abs(c.mean_log) >= bound
    return hits / campaigns


@pytest.mark.parametrize(
    "mean, sd, margin, level",
    [
        (math.log(1.02), 0.03, 0.03, 0.05),  # equivalence route
        (0.0, 0.11, 0.10, 0.01),  # equivalence, the issue's tps noise
        (0.10, 0.11, 0.02, 0.01),  # difference route, planned at twice the margin
        (0.40, 0.11, 0.02, 0.005),  # difference route, planned at the CI's nearer end
    ],
)
def test_rounds_to_decide_gives_80_percent_power_in_simulation(mean, sd, margin, level) -> None:
    c = _exact(mean, sd, 4, margin)
    n = rounds_to_decide(c, lambda n: level)
    route, effect = planned_effect(c)
    assert n is not None and n >= 3
    got = _simulated_power(route, effect, sd, n, level, margin, 800 if n > 40 else 1200)
    assert 0.76 <= got <= 0.92, (route, n, got)
    if n > 3:  # the smallest such n: one round fewer falls short
        assert _simulated_power(route, effect, sd, n - 1, level, margin, 400) < 0.85


def test_when_no_estimate_can_be_made_the_reason_is_true() -> None:
    # The issue's "(the ratio sits at the noise margin)" beside ×0.37 and ×1.09: what kept
    # those from an estimate was a wide spread in 3 rounds, or no further look.
    wide = _exact(math.log(1.09), 1.0, 3, 0.02)
    assert rounds_to_decide(wide, lambda n: 0.005) is None
    assert why_unsettled(wide, lambda n: 0.005).startswith("more than 1000 rounds: its spread")
    fixed = _exact(math.log(0.37), 0.3, 3, 0.02)  # pg_test_fsync, its own 3 repetitions
    assert rounds_to_decide(fixed, lambda n: 0.05 if n <= 3 else 0.0) is None
    assert why_unsettled(fixed, lambda n: 0.05 if n <= 3 else 0.0).startswith(
        "its rounds are fixed, so no further look would test it"
    )
    j = Judged(INCONCLUSIVE, from_paired(fixed))
    assert "sits at the noise margin" not in settle_text(j)
    assert settle_text(j).startswith(
        "no number of rounds can be estimated to settle it: its rounds are fixed"
    )
    j = Judged(INCONCLUSIVE, from_paired(wide))
    assert "more than 1000 rounds" in settle_text(j)


def test_rounds_to_decide_is_fast_enough_for_a_table() -> None:
    import time

    start = time.perf_counter()
    for mean in (0.0, 0.01, 0.05, 0.2):
        rounds_to_decide(_exact(mean, 0.11, 5, 0.02), lambda n: 0.001)
    assert time.perf_counter() - start < 1.0
