"""Statistics for repeated benchmark runs: summaries, comparisons, verdicts.

Pure functions, no I/O. The methods, and why each is the right tool here:

* **Median, not mean.** Benchmark runs are few and their errors are one-sided
  (a background flush, a cold cache, a noisy neighbour only ever slow a run
  down), so the median is the robust centre. ``cv`` (sample stdev / |mean|) is
  still reported, because it is the familiar "how noisy is this" number.

* **Percentile bootstrap for the CI of the median and of the ratio of
  medians.** The median has no simple standard error, and run results are not
  normal, so a distribution-free interval is needed. The bootstrap is
  vectorised (one resample matrix, the middle of each sorted row), uses 10,000
  resamples, and a *fixed* seed so the same data always gives the same report.
  Because the seed is fixed, a summary of n values always draws the same positions:
  they are drawn once per n and kept as counts (``_fresh_boot_medians``, the same
  numbers without a sort per resample), and each interval is kept by a digest of
  this code and its values (``ci_cache.py`` stores them beside the results).
  For the ratio each side is resampled independently (the two targets' runs
  are independent) and the interval is taken over median(contender*) /
  median(baseline*). Caveat: with small n the percentile bootstrap is coarse:
  for n = 2..5 a bootstrap median can only take a handful of values and the
  interval can never leave the sample range, so it is too narrow. That is why
  verdicts are gated by the significance test, not by the CI (an unpaired
  "equivalent" needs 6 runs a side, ``outcome.py``), and why no
  p-value is reported below the sample size at which the test could ever be
  significant (``can_be_significant``). A verdict held to a level other than
  5% (alpha shared over a family: ``outcome.judge_unpaired``) reads the CI at
  that level from ``Comparison.ci_at``: the 95% percentile interval stretched on
  the log scale, each side by the ratio of normal quantiles, because 10,000
  resamples of a few runs cannot give a 99.6% percentile interval; the
  unpaired TOST p (``p_equivalent_unpaired``) is that interval's dual, so
  "p ≤ level" and "the (1 - 2·level) CI lies inside the margin" are one test.
  Two sides that are each one constant value (identical or quantized runs)
  have no spread to judge by: their CI collapses to a point, and they are
  never called equivalent (``Comparison.no_spread``).

* **Mann-Whitney U (two-sided) for "is there a difference" between
  independent samples**: the fallback where two cells were not measured in the
  same rounds of one campaign (``compare`` across results directories). Within
  rounds the paired analysis (``paired.py``) is the test, because interleaved
  rounds are blocks. Mann-Whitney is rank-based, so it needs no normality and
  is not swayed by one outlier run; scipy's ``method="auto"`` uses the exact
  distribution for small samples without ties and the asymptotic tie-corrected
  one for large ones; small samples *with* ties get an exact enumeration here
  (``_exact_tied_p``), because the approximation can claim significance where
  the exact test cannot.

* **Holm / Benjamini-Hochberg for many metrics at once.** A report compares
  many metrics and targets; without a correction ~5% of them would look
  "significant" by chance. Holm controls the family-wise error and is never
  worse than Bonferroni; BH controls the false discovery rate when the family
  is large.

How a comparison becomes better / worse / equivalent / inconclusive is
``outcome.py``.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from pgfsbench.analysis.stats.independent import Independent, compare_independent

# The normal distribution from scipy.special through remembered.special: scipy is
# imported only for a value not yet computed; the rank tests import scipy.stats (~0.7 s)
# where they run.
from pgfsbench.analysis.stats.paired import Paired, compare_paired, distinct, pair_by_round
from pgfsbench.analysis.stats.remembered import remembered, special
from pgfsbench.plan.design import Verdicts

CONFIDENCE = 0.95
DEFAULT = Verdicts()  # alpha and noise when the caller gives none: the plan's defaults

_RESAMPLES = 10_000
_SEED = 20261122
# Resample matrices are built in row chunks so a long series cannot eat memory.
_CHUNK_CELLS = 2_000_000


def _interval(kind: str, arrays: tuple[np.ndarray, ...], compute) -> tuple[float, float] | None:
    """compute(), or the interval it gave before for the same code, kind and values
    (in this process, or kept beside the results by ci_cache)."""
    value = remembered(kind, arrays, compute)
    if value is None:
        return None
    assert isinstance(value, tuple)
    return value[0], value[1]


@dataclass(frozen=True)
class Summary:
    n: int  # finite samples used
    centre: float | None  # the median (``summarize``) or the geometric mean; None: n == 0
    ci_low: float | None  # its 95% CI; None when n < 2
    ci_high: float | None
    cv: float | None  # sample stdev (ddof=1) / |mean|; None when n < 2 or mean == 0
    dropped: int  # None/NaN/inf samples left out (a failed run)

    @property
    def half_width(self) -> float | None:
        """Half the CI width relative to the centre (0.03 means ±3%)."""
        if self.ci_low is None or self.ci_high is None or not self.centre:
            return None
        return (self.ci_high - self.ci_low) / 2 / abs(self.centre)


@dataclass(frozen=True)
class Comparison:
    """Contender against baseline. Unpaired: ratio of medians, bootstrap CI, Mann-Whitney p.
    Paired (``paired`` set): geometric mean of the per-round ratios, its t CI, paired t p."""

    ratio: float | None  # contender / baseline
    ci_low: float | None  # 95% CI of that ratio; None when either side has n < 2
    ci_high: float | None
    p_value: (
        float | None
    )  # two-sided; unpaired: None where no data of these sizes could reach alpha
    n_base: int  # paired: the rounds both have a value in
    n_other: int
    paired: Paired | None = None  # the within-round analysis, when the design is paired
    # Unpaired: every value the same on each side (identical or quantized values): the
    # bootstrap CI collapses to a point, which is no evidence of equivalence.
    no_spread: bool = False
    # Unpaired with positive values: Welch on the logs (independent.py), the ratio of
    # geometric means; None: the median route (a value at or below zero).
    independent: Independent | None = None

    @property
    def p_equivalent(self) -> float | None:
        """TOST p of equivalence within the noise margin (paired only)."""
        return self.paired.p_equivalent if self.paired else None

    def ci_at(self, confidence: float) -> tuple[float, float] | None:
        """The ratio's CI at another confidence than 95%.

        Paired: the t interval. Unpaired: the 95% bootstrap interval stretched on the
        log scale, each side by z(confidence) / z(95%) (the percentile bootstrap of a
        few runs cannot give its far tails; stretching keeps its asymmetry and widens
        it as a normal interval would).
        """
        if self.paired is not None:
            return self.paired.ci(confidence)
        if self.independent is not None:
            return self.independent.ci(confidence)
        if self.ratio is None or self.ci_low is None or self.ci_high is None:
            return None
        if self.ci_high <= 0:  # a side at zero in every resample: a point at zero
            return 0.0, 0.0
        if self.ratio <= 0:
            return None
        k = _z(confidence) / _z(CONFIDENCE)
        r = math.log(self.ratio)
        # A lower end at zero is the end of the scale whatever the level.
        lo = 0.0 if self.ci_low <= 0 else math.exp(r - (r - math.log(self.ci_low)) * k)
        return lo, math.exp(r + (math.log(self.ci_high) - r) * k)

    def p_equivalent_unpaired(self, noise: float) -> float | None:
        """Unpaired TOST p: the smallest ``level`` at which the (1 - 2·level) interval of
        ``ci_at`` lies inside the margin (so p ≤ level exactly when it does). None where
        no interval can be given, or without spread on either side."""
        if self.independent is not None:
            return None if self.no_spread else self.independent.p_equivalent(noise)
        if (
            self.paired is not None
            or self.no_spread
            or self.ratio is None
            or self.ratio <= 0
            or self.ci_low is None
            or self.ci_low <= 0
            or self.ci_high is None  # never without ci_low
        ):
            return None
        bound = math.log1p(noise)
        r = math.log(self.ratio)
        z95 = _z(CONFIDENCE)
        p = 0.0
        for dist, half in (
            (r + bound, r - math.log(self.ci_low)),
            (bound - r, math.log(self.ci_high) - r),
        ):
            if dist <= 0:
                return 1.0
            p = max(p, 0.0 if half <= 0 else special("ndtr", -dist * z95 / half))
        return p

    def flipped(self) -> Comparison:
        """The baseline against the contender: the same evidence read the other way."""
        if not self.ratio:  # none, or zero: no ratio the other way round
            return Comparison(
                None, None, None, self.p_value, self.n_other, self.n_base, no_spread=self.no_spread
            )
        lo, hi = (
            (1 / self.ci_high, 1 / self.ci_low)
            if self.ci_low and self.ci_high is not None  # ci_high is set with ci_low
            else (None, None)
        )
        back = None if self.paired is None else self.paired.flipped()
        ind = None if self.independent is None else self.independent.flipped()
        return Comparison(
            1 / self.ratio,
            lo,
            hi,
            self.p_value,
            self.n_other,
            self.n_base,
            back,
            self.no_spread,
            ind,
        )


def _z(confidence: float) -> float:
    """The two-sided normal quantile of a confidence (1.96 for 95%)."""
    return special("ndtri", 0.5 + confidence / 2)


def _clean(values: Iterable[float | None]) -> tuple[np.ndarray, int]:
    """Finite samples as an array, and how many were None/NaN/inf (failed runs)."""
    kept: list[float] = []
    dropped = 0
    for v in values:
        f = math.nan if v is None else float(v)
        if math.isfinite(f):
            kept.append(f)
        else:
            dropped += 1
    return np.asarray(kept, dtype=float), dropped


def _median(x: np.ndarray) -> float:
    """np.median of finite 1-D samples, the same number (the middle one, or the mean of
    the middle two) without the ~30 ms numpy.ma import np.median pays on first use."""
    ordered = sorted(x.tolist())
    n = len(ordered)
    return (ordered[(n - 1) // 2] + ordered[n // 2]) / 2


def _boot_medians(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    """Medians of _RESAMPLES bootstrap resamples of x (x non-empty)."""
    n = len(x)
    rows = max(1, _CHUNK_CELLS // n)
    out = np.empty(_RESAMPLES)
    for start in range(0, _RESAMPLES, rows):
        stop = min(start + rows, _RESAMPLES)
        resamples = np.sort(x[rng.integers(0, n, size=(stop - start, n))], axis=1)
        # The median of each row: the middle one or two of the sorted row. Same
        # number np.median(axis=1) gives, but a plain sort is ~3x faster here.
        out[start:stop] = (resamples[:, (n - 1) // 2] + resamples[:, n // 2]) / 2
    return out


# Up to this many values, a summary's resamples are drawn once per n and kept as counts.
_COUNTED_N = 64


@functools.lru_cache(maxsize=16)
def _fresh_counts(n: int) -> np.ndarray:
    """How often each of n positions is drawn in each resample that _boot_medians draws
    from a fresh default_rng(_SEED) (one chunk: n <= _COUNTED_N)."""
    idx = np.random.default_rng(_SEED).integers(0, n, size=(_RESAMPLES, n))
    flat = idx + n * np.arange(_RESAMPLES)[:, None]
    return np.bincount(flat.ravel(), minlength=_RESAMPLES * n).reshape(_RESAMPLES, n)


def _fresh_boot_medians(x: np.ndarray) -> np.ndarray:
    """_boot_medians(default_rng(_SEED), x), the same numbers without a sort per resample:
    the k-th smallest of a resample is the k-th smallest value of x counted with the
    number of times it was drawn (a cumulative count over x in sorted order)."""
    n = len(x)
    if n > _COUNTED_N:
        return _boot_medians(np.random.default_rng(_SEED), x)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    drawn = np.cumsum(_fresh_counts(n)[:, order], axis=1)
    low = sorted_x[np.count_nonzero(drawn <= (n - 1) // 2, axis=1)]
    high = sorted_x[np.count_nonzero(drawn <= n // 2, axis=1)]
    return (low + high) / 2


def _percentile_ci(boot: np.ndarray) -> tuple[float, float]:
    tail = (1 - CONFIDENCE) / 2 * 100
    lo, hi = np.percentile(boot, [tail, 100 - tail])
    return float(lo), float(hi)


def summarize(values: Iterable[float | None]) -> Summary:
    x, dropped = _clean(values)
    n = len(x)
    if n == 0:
        return Summary(0, None, None, None, None, dropped)
    median = _median(x)
    if n < 2:
        return Summary(n, median, None, None, None, dropped)
    lo, hi = _interval("median", (x,), lambda: _percentile_ci(_fresh_boot_medians(x))) or (
        None,
        None,
    )
    mean = float(np.mean(x))
    cv = float(np.std(x, ddof=1)) / abs(mean) if mean != 0 else None
    return Summary(n, median, lo, hi, cv, dropped)


def summarize_geometric(values: Iterable[float | None]) -> Summary | None:
    """The geometric mean and its 95% t interval on the log scale, the centre that goes
    with a paired comparison (its ratio is the geometric mean of per-round ratios, so
    over the same rounds it is the ratio of the two sides' geometric means). None when
    a value is zero or negative: no geometric mean (``summarize`` then)."""
    x, dropped = _clean(values)
    n = len(x)
    if n == 0 or bool(np.any(x <= 0)):
        return None
    logs = np.log(x)
    centre = math.exp(float(logs.mean()))
    if n < 2:
        return Summary(n, centre, None, None, None, dropped)
    mean = float(np.mean(x))
    cv = float(np.std(x, ddof=1)) / mean
    sd = float(logs.std(ddof=1))
    if sd <= 1e-12:  # every value the same: a point
        return Summary(n, centre, centre, centre, cv, dropped)
    half = special("stdtrit", n - 1, 0.5 + CONFIDENCE / 2) * sd / math.sqrt(n)
    lo, hi = math.exp(float(logs.mean()) - half), math.exp(float(logs.mean()) + half)
    return Summary(n, centre, lo, hi, cv, dropped)


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p exact Mann-Whitney can give for samples of n1 and n2.

    Only complete separation reaches it: 2 of the C(n1+n2, n1) equally likely
    rank orders are that extreme.
    """
    if n1 < 1 or n2 < 1:
        return 1.0
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def can_be_significant(
    n1: int, n2: int, alpha: float = DEFAULT.alpha, comparisons: int = 1
) -> bool:
    """Whether some data of these sizes could give p < alpha/comparisons."""
    return smallest_p(n1, n2) < alpha / max(1, comparisons)


def min_n_per_side(alpha: float = DEFAULT.alpha, comparisons: int = 1) -> int:
    """Smallest equal n per side at which exact two-sided Mann-Whitney can give p < alpha/comparisons.

    This is the figure the messages quote ("need n ≥ 4 per side"); the tests
    themselves use can_be_significant, which also handles unequal sizes.
    """
    if alpha <= 0:
        raise ValueError("alpha must be positive")
    n = 1
    while not can_be_significant(n, n, alpha, comparisons):
        n += 1
    return n


# Up to this many ways to split the pooled runs, a tied sample's p-value is
# computed exactly by enumerating them (C(16, 8) = 12,870 takes milliseconds).
_EXACT_SPLITS = 20_000


def _mann_whitney(a: np.ndarray, b: np.ndarray) -> float | None:
    """The two-sided p of a against b, remembered (remembered.py): computing it imports
    scipy.stats (~0.7 s), which a read of stored campaigns then need not do again."""
    p = remembered("mann_whitney", (a, b), lambda: _mann_whitney_p(a, b))
    assert p is None or isinstance(p, float)
    return p


def _mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float | None:
    # Every value the same on both sides: no evidence of any difference. Some
    # scipy versions return nan (zero rank variance) here, so answer directly.
    if np.all(a == a[0]) and np.all(b == a[0]):
        return 1.0
    pooled = np.concatenate([a, b])
    tied = len(distinct(pooled)) < len(pooled)
    if tied and math.comb(len(pooled), len(a)) <= _EXACT_SPLITS:
        return _exact_tied_p(a, b)
    from scipy.stats import mannwhitneyu  # here: the unpaired path alone needs it

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)
    return p if math.isfinite(p) else None


def _exact_tied_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided exact Mann-Whitney p for small samples with ties.

    scipy's "auto" falls back to the normal approximation when values tie
    (fio's percentiles come in buckets, so they often do), and for small n that
    approximation can give p-values below anything the exact test allows. Here
    every split of the pooled mid-ranks into groups of len(a) and len(b) is
    equally likely when both come from one distribution; p is twice the smaller tail of the
    rank sum, like scipy's exact test without ties.
    """
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([a, b]))
    n1 = len(a)
    picks = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(len(ranks)), n1)), dtype=np.intp
    ).reshape(-1, n1)
    sums = ranks[picks].sum(axis=1)
    observed = ranks[:n1].sum()
    eps = 1e-9 * max(1.0, abs(observed))  # mid-ranks are halves: compare with slack
    lower = np.mean(sums <= observed + eps)
    upper = np.mean(sums >= observed - eps)
    return float(min(1.0, 2 * min(lower, upper)))


def compare(
    baseline: Iterable[float | None],
    contender: Iterable[float | None],
    alpha: float = DEFAULT.alpha,
) -> Comparison:
    """Contender against baseline as independent samples: Welch on the logs where every
    value is positive (the ratio of geometric means, ``independent.py``), else the
    median route (``compare_medians``)."""
    base, _ = _clean(baseline)
    other, _ = _clean(contender)
    nb, no = len(base), len(other)
    if nb == 0 or no == 0:
        return Comparison(None, None, None, None, nb, no)
    if (ind := compare_independent(base, other)) is not None:
        ci = ind.ci(CONFIDENCE) if nb >= 2 and no >= 2 else None
        lo, hi = ci if ci is not None else (None, None)
        flat = nb >= 2 and no >= 2 and ind.se is None
        return Comparison(ind.ratio, lo, hi, ind.p_value, nb, no, no_spread=flat, independent=ind)
    return compare_medians(base, other, alpha)


def compare_medians(
    baseline: Iterable[float | None],
    contender: Iterable[float | None],
    alpha: float = DEFAULT.alpha,
) -> Comparison:
    """Contender against baseline: ratio of medians, its bootstrap CI, Mann-Whitney p:
    the route of rows with a value at or below zero (no logarithm).

    p is withheld when no data of these sizes could reach alpha
    (can_be_significant): 3 runs against 10 can (smallest p 0.007), 3 against 3
    cannot (0.1).
    """
    base, _ = _clean(baseline)
    other, _ = _clean(contender)
    nb, no = len(base), len(other)
    if nb == 0 or no == 0:
        return Comparison(None, None, None, None, nb, no)

    base_med = _median(base)
    # A ratio against a zero or negative baseline is no relative change at all.
    ratio = _median(other) / base_med if base_med > 0 else None

    ci_low = ci_high = None
    if ratio is not None and nb >= 2 and no >= 2:
        ci_low, ci_high = _interval("ratio", (base, other), lambda: _ratio_ci(base, other)) or (
            None,
            None,
        )

    # Withhold p where no outcome could be significant (see module docstring).
    p = _mann_whitney(base, other) if can_be_significant(nb, no, alpha) else None
    flat = bool(np.all(base == base[0]) and np.all(other == other[0]))
    return Comparison(ratio, ci_low, ci_high, p, nb, no, no_spread=flat)


def _ratio_ci(base: np.ndarray, other: np.ndarray) -> tuple[float, float] | None:
    rng = np.random.default_rng(_SEED)
    boot_base = _boot_medians(rng, base)
    boot_other = _boot_medians(rng, other)
    # Resampled baselines at or below zero make the ratio unbounded: no CI.
    if np.all(boot_base > 0):
        return _percentile_ci(boot_other / boot_base)
    return None


def compare_rounds(
    baseline: dict[int, float],
    contender: dict[int, float],
    noise: float = DEFAULT.noise,
    threshold: float | None = None,
) -> Comparison:
    """Contender against baseline within the rounds both were measured in (paired.py):
    equivalence within ``noise``; claims from ``threshold`` (default: the same)."""
    return from_paired(compare_paired(pair_by_round(baseline, contender), noise, threshold))


def from_paired(c: Paired) -> Comparison:
    lo, hi = c.ci() or (None, None)
    return Comparison(c.ratio, lo, hi, c.p_value, c.n, c.n, c)


def _valid_ps(pvalues: Sequence[float | None]) -> list[tuple[int, float]]:
    """(index, p) of the valid p-values (not None, not NaN), smallest p first."""
    valid = [(i, p) for i, p in enumerate(pvalues) if p is not None and math.isfinite(p)]
    valid.sort(key=lambda ip: ip[1])
    return valid


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values; None (or NaN) entries stay None and are not counted."""
    idx = _valid_ps(pvalues)
    m = len(idx)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (i, p) in enumerate(idx):
        # Step-down: the k-th smallest p is multiplied by (m - k); keep monotone.
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def benjamini_hochberg(pvalues: Sequence[float | None]) -> list[float | None]:
    """BH (FDR) adjusted q-values; None (or NaN) entries stay None and are not counted."""
    idx = _valid_ps(pvalues)
    m = len(idx)
    out: list[float | None] = [None] * len(pvalues)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        # Step-up: q(k) = min over j >= k of p(j) * m / j.
        i, p = idx[rank]
        running = min(running, p * m / (rank + 1))
        out[i] = running
    return out


def fmt_p(p: float) -> str:
    if p < 0.001:
        return "p<0.001"
    # Two significant digits, truncated: 0.0497 must not print as 0.050 next to
    # "significant" at alpha 0.05.
    decimals = max(1, 1 - math.floor(math.log10(p)))
    # The slack keeps float error from truncating 0.29 (0.28999…) to 0.28.
    return f"p={math.floor(p * 10**decimals + 1e-9) / 10**decimals:.{decimals}f}"
