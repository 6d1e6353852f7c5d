"""Statistics for repeated runs, on synthetic data with known answers (all seeded)."""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from pgfsbench.analysis.findings import MARKS, _outcome
from pgfsbench.analysis.stats.medians import (
    CONFIDENCE,
    Comparison,
    Summary,
    benjamini_hochberg,
    can_be_significant,
    compare,
    compare_medians,
    holm,
    min_n_per_side,
    smallest_p,
    summarize,
    summarize_geometric,
)
from pgfsbench.analysis.stats.outcome import judge_unpaired


def classify(
    comp: Comparison,
    p: float | None,
    *,
    higher_is_better: bool | None,
    alpha: float = 0.05,
    noise: float = 0.02,
    comparisons: int = 1,
):
    """The unpaired outcome (independent samples), as a finding names it."""
    j = judge_unpaired(comp, p, alpha, noise, comparisons)
    kind = _outcome(j.outcome, higher_is_better)
    return SimpleNamespace(kind=kind, mark=MARKS[kind], note=j.note, judged=j)


# --- summarize -------------------------------------------------------------------


def test_summarize_known_sample() -> None:
    data = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]  # mean 5, sum of squares 32
    s = summarize(data)
    assert s.n == 8 and s.dropped == 0
    assert s.centre == pytest.approx(4.5)
    assert s.cv == pytest.approx(math.sqrt(32 / 7) / 5)
    assert s.ci_low is not None and s.ci_high is not None
    assert s.ci_low <= s.centre <= s.ci_high
    assert 2.0 <= s.ci_low and s.ci_high <= 9.0
    assert s.half_width == pytest.approx((s.ci_high - s.ci_low) / 2 / 4.5)
    # Fixed seed: the same data always gives the same report.
    assert summarize(data) == s
    assert summarize(list(reversed(data))).centre == s.centre
    assert CONFIDENCE == 0.95


def test_summarize_drops_failed_runs() -> None:
    s = summarize([10.0, None, 11.0, float("nan"), 12.0, float("inf")])
    assert s.n == 3 and s.dropped == 3
    assert s.centre == 11.0
    assert s.ci_low is not None and s.cv is not None


def test_summarize_small_and_empty() -> None:
    assert summarize([]) == Summary(0, None, None, None, None, 0)
    assert summarize([None]) == Summary(0, None, None, None, None, 1)
    one = summarize([42.0])
    assert (one.n, one.centre, one.ci_low, one.ci_high, one.cv) == (1, 42.0, None, None, None)
    assert one.half_width is None
    two = summarize([1.0, 3.0])
    # With n=2 the bootstrap median can only be 1, 2 or 3: bounded by the sample range.
    assert 1.0 <= two.ci_low <= two.ci_high <= 3.0


def test_summarize_zero_variance_and_zero_mean() -> None:
    s = summarize([5.0] * 6)
    assert (s.centre, s.ci_low, s.ci_high, s.cv, s.half_width) == (5.0, 5.0, 5.0, 0.0, 0.0)
    z = summarize([-1.0, 0.0, 1.0])
    assert z.centre == 0.0 and z.cv is None and z.half_width is None


# --- min_n_per_side ---------------------------------------------------------------


def test_min_n_per_side() -> None:
    # Smallest exact two-sided p with n per side is 2/C(2n, n):
    # n=3: 2/20 = 0.1, n=4: 2/70 ≈ 0.029 < 0.05.
    assert min_n_per_side(0.05) == 4
    # alpha/10 = 0.005: n=5: 2/252 ≈ 0.0079, n=6: 2/924 ≈ 0.0022 < 0.005.
    assert min_n_per_side(0.05, comparisons=10) == 6
    assert min_n_per_side(0.01) == 5  # 2/252 ≈ 0.0079 < 0.01, 2/70 is not


def test_smallest_p_for_unequal_sizes() -> None:
    assert smallest_p(3, 3) == pytest.approx(0.1)  # 2 / C(6, 3)
    assert smallest_p(3, 10) == pytest.approx(2 / 286)  # 2 / C(13, 3)
    assert smallest_p(1, 1) == 1.0 and smallest_p(0, 5) == 1.0
    assert not can_be_significant(3, 3) and can_be_significant(4, 4)
    assert can_be_significant(3, 10) and can_be_significant(2, 10)  # 2/66 ≈ 0.030
    assert not can_be_significant(2, 5)  # 2/21 ≈ 0.095
    assert not can_be_significant(3, 10, comparisons=10)  # 0.007 ≥ 0.005


def test_compare_unequal_sizes_gets_a_p_value_when_one_could_be_significant() -> None:
    c = compare_medians([1.0, 2.0, 3.0], [float(v) for v in range(10, 20)])
    assert c.p_value == pytest.approx(2 / 286)
    assert compare_medians([1.0, 2.0], [5.0, 6.0, 7.0, 8.0, 9.0]).p_value is None
    v = classify(c, c.p_value, higher_is_better=True)
    assert v.kind == "better"


# --- compare ----------------------------------------------------------------------


def test_compare_complete_separation_gives_smallest_exact_p() -> None:
    c = compare_medians([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0])
    assert c.p_value == pytest.approx(2 / 70)
    assert c.ratio == pytest.approx(6.5 / 2.5)
    assert c.ci_low is not None and c.ci_low > 1
    assert (c.n_base, c.n_other) == (4, 4)
    assert compare_medians([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]) == c  # deterministic


def test_compare_below_min_n_withholds_p() -> None:
    c = compare_medians([1.0, 2.0, 3.0], [5.0, 6.0, 7.0, 8.0])
    assert c.p_value is None and c.ratio is not None and c.ci_low is not None


def test_positive_values_are_compared_by_welch_on_their_logs() -> None:
    # The ratio of the two geometric means, Welch's t on the logs: the figure compare and
    # history print is exactly the ratio of the two values beside it.
    from scipy import stats as sps

    base, other = [90.0, 100, 110, 105], [180.0, 210, 190, 200, 205]
    c = compare(base, other)
    assert c.independent is not None
    gm = lambda xs: math.exp(np.mean(np.log(xs)))  # noqa: E731
    assert c.ratio == pytest.approx(gm(other) / gm(base))
    welch = sps.ttest_ind(np.log(other), np.log(base), equal_var=False)
    assert c.p_value == pytest.approx(welch.pvalue)
    assert c.ci_low < c.ratio < c.ci_high
    g = summarize_geometric(other)
    assert g.centre == pytest.approx(gm(other)) and g.ci_low < g.centre < g.ci_high
    # a value at zero has no logarithm: the median route
    assert compare([0.0, 1.0, 2.0], [1.0, 2.0, 3.0]).independent is None


def test_compare_edge_cases() -> None:
    assert compare([], [1.0]) == Comparison(None, None, None, None, 0, 1)
    assert compare([None, float("nan")], []) == Comparison(None, None, None, None, 0, 0)
    zero = compare([0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0])
    assert zero.ratio is None and zero.ci_low is None
    neg = compare([-1.0, -2.0, -3.0, -4.0], [1.0, 2.0, 3.0, 4.0])
    assert neg.ratio is None
    # Baseline median > 0 but resamples can hit 0: the ratio CI is unbounded, so None.
    mixed = compare([0.0, 0.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0])
    assert mixed.ratio == pytest.approx(2.5) and mixed.ci_low is None


def test_compare_constant_sides_no_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = compare_medians([7.0] * 5, [7.0] * 5)
        diff = compare_medians([7.0] * 5, [8.0] * 5)
        flat = compare([7.0] * 5, [8.0] * 5)  # Welch: no spread, no p, no claim
    assert flat.no_spread and flat.p_value is None and flat.ratio == pytest.approx(8 / 7)
    assert same.p_value == 1.0 and same.ratio == 1.0
    assert (same.ci_low, same.ci_high) == (1.0, 1.0)
    assert diff.p_value is not None and diff.p_value < 0.05
    assert diff.ratio == pytest.approx(8 / 7)


# --- holm / benjamini_hochberg ----------------------------------------------------


def test_holm_textbook() -> None:
    # Sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> max so far 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    got = holm([None, 0.01, 0.04, None, 0.03, 0.005])
    assert got[0] is None and got[3] is None
    assert [got[i] for i in (1, 2, 4, 5)] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == [] and holm([None]) == [None]


def test_benjamini_hochberg_textbook() -> None:
    # Sorted p*m/rank: 0.005*4/1=0.02, 0.01*4/2=0.02, 0.03*4/3=0.04, 0.04*4/4=0.04;
    # running minimum from the largest: 0.04, 0.04, 0.02, 0.02.
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    got = benjamini_hochberg([0.01, None, 0.04, 0.03, 0.005])
    assert got[1] is None
    assert [got[i] for i in (0, 2, 3, 4)] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # Monotonicity: 0.02*3/2 = 0.03 exceeds 0.04*3/3 = 0.04? no; 0.03*3/2=0.045 > 0.04 -> 0.04.
    assert benjamini_hochberg([0.01, 0.03, 0.04]) == pytest.approx([0.03, 0.04, 0.04])


# --- classify ---------------------------------------------------------------------


def _run(base: np.ndarray, other: np.ndarray, hib: bool | None):
    comp = compare(base, other)
    return comp, classify(comp, holm([comp.p_value])[0], higher_is_better=hib)


def test_identical_distributions_are_never_often_different() -> None:
    rng = np.random.default_rng(1)
    kinds = [_run(rng.normal(100, 2, 10), rng.normal(100, 2, 10), True)[1].kind for _ in range(400)]
    assert (kinds.count("better") + kinds.count("worse")) / len(kinds) <= 0.05
    assert set(kinds) <= {"equivalent", "inconclusive", "better", "worse"}
    assert kinds.count("equivalent") > 0  # shown, within the margin, by the ratio's CI


@pytest.mark.parametrize("hib, expected", [(True, "better"), (False, "worse")])
def test_ten_percent_shift_detected(hib: bool, expected: str) -> None:
    rng = np.random.default_rng(2)
    hits = 0
    for _ in range(100):
        comp, v = _run(rng.normal(100, 2, 10), rng.normal(110, 2.2, 10), hib)
        assert v.kind in {expected, "inconclusive"}  # never the wrong direction
        assert comp.ci_low > 1  # ratio CI excludes 1
        hits += v.kind == expected
    assert hits >= 95


def test_directionless_metric_is_different() -> None:
    comp = compare([100.0, 101, 99, 100, 102, 98], [120.0, 121, 119, 120, 122, 118])
    v = classify(comp, comp.p_value, higher_is_better=None)
    assert (v.kind, v.mark) == ("different", "≠")
    assert comp.ratio == pytest.approx(1.2, rel=1e-3)
    down = classify(
        compare([120.0, 121, 119, 120, 122, 118], [100.0, 101, 99, 100, 102, 98]),
        0.004,
        higher_is_better=True,
        comparisons=3,
    )
    assert (down.kind, down.mark) == ("worse", "\u2212")
    assert down.judged.level == pytest.approx(0.05 / 3)


def test_classify_n1_is_inconclusive() -> None:
    comp = compare([100.0], [120.0])
    assert comp.p_value is None and comp.ci_low is None and comp.ratio == pytest.approx(1.2)
    v = classify(comp, None, higher_is_better=True)
    assert (v.kind, v.mark) == ("inconclusive", "?")
    assert v.note == "need 2 runs or more a side"


def test_classify_inconclusive_for_family_size() -> None:
    # n=5 can reach p < 0.05 alone, but never p < 0.05 after adjusting over 10 metrics.
    comp = compare_medians([1.0, 2, 3, 4, 5], [11.0, 12, 13, 14, 15])
    v = classify(comp, min(1.0, comp.p_value * 10), higher_is_better=True, comparisons=10)
    assert v.kind == "inconclusive" and "need n ≥ 6 per side" in v.note


def test_classify_equivalent_only_when_shown_else_inconclusive() -> None:
    # Every run the same value on both sides: no spread to judge by, never equivalent.
    flat = compare([5.0] * 6, [5.0] * 6)
    assert flat.no_spread and flat.p_equivalent_unpaired(0.02) is None
    v = classify(flat, flat.p_value, higher_is_better=True)
    assert (v.kind, v.mark) == ("inconclusive", "?")
    assert v.note.startswith("no spread to judge by")
    # Six a side that vary within ±0.3%: shown equivalent, TOST at 5% (its 90% interval
    # inside ±2%).
    rng = np.random.default_rng(9)
    near = compare(
        list(5 * (1 + rng.uniform(-0.003, 0.003, 6))), list(5 * (1 + rng.uniform(-0.003, 0.003, 6)))
    )
    v = classify(near, near.p_value, higher_is_better=True)
    assert v.kind == "equivalent"
    low, high = v.judged.interval()
    assert 1 / 1.02 < low < 1 < high < 1.02 and v.judged.confidence() == pytest.approx(0.90)
    # The median route: below 6 runs a side the bootstrap CI is too narrow to show it by.
    assert (
        classify(
            compare_medians([5.0, 5.01, 4.99, 5.0, 5.0], [5.0, 4.99, 5.01, 5.0, 5.0]),
            1.0,
            higher_is_better=True,
        ).kind
        == "inconclusive"
    )
    # Significant but below the practical-noise threshold, CI inside the margin.
    small = Comparison(1.012, 1.005, 1.0199, 0.001, 10, 10)
    assert classify(small, 0.001, higher_is_better=True).kind == "equivalent"
    # Significant, above noise, but the ratio CI still includes 1: not shown either way.
    wide = Comparison(1.05, 0.99, 1.10, 0.01, 10, 10)
    v = classify(wide, 0.01, higher_is_better=True)
    assert (v.kind, v.mark) == ("inconclusive", "?")
    # Not significant is not equivalence.
    assert (
        classify(Comparison(1.05, 1.01, 1.10, 0.2, 10, 10), 0.2, higher_is_better=True).kind
        == "inconclusive"
    )


def test_classify_failed_run_dropped_and_empty_is_na() -> None:
    base = [100.0, 101.0, None, 99.0, 100.5, float("nan")]
    assert summarize(base).dropped == 2
    comp = compare(base, [110.0, 111.0, 109.0, 110.5])
    assert (comp.n_base, comp.n_other) == (4, 4)
    assert classify(comp, comp.p_value, higher_is_better=True).kind == "better"
    empty = classify(compare([], []), None, higher_is_better=True)
    assert (empty.kind, empty.mark, empty.note) == ("na", "", "no data")
    zero = classify(compare([0.0] * 4, [1.0] * 4), None, higher_is_better=True)
    assert zero.kind == "na"


def test_small_tied_samples_get_the_exact_permutation_p() -> None:
    from scipy.stats import PermutationMethod, mannwhitneyu

    from pgfsbench.analysis.stats.medians import _mann_whitney

    a, b = np.array([1090.0, 1090, 1090, 1106]), np.array([1254.0, 1270, 1254, 1254])
    assert _mann_whitney(a, b) == pytest.approx(2 / 70)  # the approximation says 0.023
    rng = np.random.default_rng(5)
    for _ in range(30):
        n1, n2 = rng.integers(2, 8, size=2)
        x, y = np.round(rng.normal(10, 1.5, n1)), np.round(rng.normal(11, 1.5, n2))
        if np.all(np.concatenate([x, y]) == x[0]):
            continue
        exact = mannwhitneyu(
            x, y, method=PermutationMethod(n_resamples=math.comb(n1 + n2, n1))
        ).pvalue
        assert _mann_whitney(x, y) == pytest.approx(exact)


def test_one_run_against_many_is_no_verdict() -> None:
    c = compare_medians([1000.0 + i for i in range(40)], [2000.0])
    assert c.p_value is not None and c.p_value < 0.05  # the test alone would say so
    assert classify(c, c.p_value, higher_is_better=True).kind == "inconclusive"


def test_p_values_print_truncated_without_float_error() -> None:
    from pgfsbench.analysis.stats.medians import fmt_p

    assert [fmt_p(p) for p in (0.29, 0.57, 0.0029, 0.0497, 0.0004)] == [
        "p=0.29",
        "p=0.57",
        "p=0.0029",
        "p=0.049",
        "p<0.001",
    ]


# --- unpaired error control: the same as paired ----------------------------------


def test_unpaired_equivalence_is_held_to_the_level_of_its_family() -> None:
    # A 95% CI inside the margin, but not the (1 - 2·0.05/5) = 98% one: alone it is
    # shown equivalent, as one of 5 comparisons sharing alpha it is not (before, the
    # 95% bootstrap CI decided it whatever the family).
    c = Comparison(1.0, 0.982, 1.018, 0.9, 10, 10)
    alone = judge_unpaired(c, 0.9, 0.05, 0.02, comparisons=1)
    assert alone.outcome == "equivalent" and alone.level == 0.05
    assert judge_unpaired(c, 0.9, 0.05, 0.02, comparisons=5).outcome == "inconclusive"
    # The TOST p is the level at which the (1 - 2·level) interval touches the margin.
    p = c.p_equivalent_unpaired(0.02)
    lo, hi = c.ci_at(1 - 2 * p)
    assert min(lo - 1 / 1.02, 1.02 - hi) == pytest.approx(0, abs=1e-9)
    assert (
        judge_unpaired(c, 0.9, 0.05, 0.02, comparisons=math.floor(0.05 / p)).outcome == "equivalent"
    )


def test_unpaired_difference_needs_its_family_level_ci_to_exclude_one() -> None:
    c = Comparison(1.05, 1.004, 1.10, 0.001, 10, 10)  # 95% CI excludes 1, barely
    assert judge_unpaired(c, 0.001, 0.05, 0.02).outcome == "higher"
    j = judge_unpaired(c, 0.004, 0.05, 0.02, comparisons=4)  # 98.75% CI reaches 1
    assert j.outcome == "inconclusive"


def test_unpaired_decision_ci_is_at_the_level_of_the_decision() -> None:
    rng = np.random.default_rng(10)
    base, other = rng.normal(100, 2, 10), rng.normal(120, 2, 10)
    c = compare(list(base), list(other))
    j = judge_unpaired(c, c.p_value * 3, 0.05, 0.02, comparisons=3)
    assert j.outcome == "higher" and j.level == pytest.approx(0.05 / 3)
    low, high = j.interval()
    assert j.confidence() == pytest.approx(1 - 0.05 / 3) and low > 1
    assert low < c.ci_low and high > c.ci_high  # wider than the plain 95% CI
    assert low < c.ratio < high


@pytest.mark.parametrize("seed", range(20))
def test_the_plain_median_and_distinct_are_numpys_own_numbers(seed):
    """stats._median and paired.distinct stand in for np.centre and np.unique (which
    import numpy.ma): the same floats, bit for bit, ties and odd or even sizes alike."""
    from pgfsbench.analysis.stats.medians import _median
    from pgfsbench.analysis.stats.paired import distinct

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    x = rng.lognormal(7, 1.5, n)
    if seed % 2:  # quantized values, as fio's percentiles come
        x = np.round(x, -2) + 100
    assert _median(x) == float(np.median(x))
    assert distinct(x).tolist() == np.unique(x).tolist()
    assert distinct(np.log(x)).tolist() == np.unique(np.log(x)).tolist()
    assert distinct(np.array([])).tolist() == []
