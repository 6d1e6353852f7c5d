"""Two targets measured in the same rounds: a paired comparison on the log scale.

Interleaved rounds are blocks: every target is visited once per round, so drift
of the machine (a neighbour, a warm cache, thermal state) that slows one round
slows every target in it. Comparing within rounds removes that shared part of
the noise; comparing all runs of one target with all runs of the other (as the
unpaired Mann-Whitney test does) leaves it in, and a consistent 4-5% difference
drowns in 10-20% round-to-round drift.

The method, and why:

* **Per-round log-ratios.** ``d_r = log(contender_r / baseline_r)`` for every
  round ``r`` in which both have a value. The log makes the comparison
  multiplicative (×0.95 and ×1/0.95 are equally far from 1), which is how a
  DBA reads "5% slower", and makes the per-round differences close to
  symmetric.
* **Paired t on the log-ratios** for "is there a difference" (H0: mean
  ``d`` = 0). This is the analysis of a crossover/block design, and exactly the
  one regulators use for average bioequivalence. An exact sign-flip
  permutation test would need no normality, but its smallest two-sided p is
  ``2 / 2^n``: with the multiplicity correction over a plan's headline
  comparisons and the alpha spent across sequential looks, it could not
  decide anything below 11-12 rounds, beyond a 10-minute budget. The t's risk,
  heavy tails (a stalled round), inflates the standard deviation and so makes
  it *conservative* (an inconclusive verdict), not a false "better".
* **Two one-sided tests (TOST) for "equivalent"**, with the noise margin as the
  equivalence bound on the log scale: equivalent only when the data show the
  true ratio lies within ``[1/(1+noise), 1+noise]``; failing to find a
  difference is never called equivalence.
* **The ratio** reported is the geometric mean of the per-round ratios,
  ``exp(mean d)``, with the t confidence interval transformed back.
* **No spread, no test.** When every round gives the same ratio (the log-ratios'
  sd is 0), the t statistic divides by zero: that is no evidence of certainty,
  only of values that cannot show their spread (fio's percentiles come in
  histogram buckets, so three rounds can all read 370.688 µs on both sides; a
  constant ratio of 1.039 is the same bucket pattern repeated). Such a
  comparison gets no p and no TOST p (``Paired.note`` says why) and is never
  better, worse or equivalent. Where values are quantized but do vary (ties
  inside a side), the sd the tests use is floored at what the resolution alone
  could hide: with ``q`` the smallest step between distinct values (on the log
  scale), a value may sit anywhere in its bucket, so a log-ratio can carry up to
  ``q / sqrt(2)`` of spread that the reported values never show.
* **What an open comparison is worth** (``detectable``): the smallest true change its
  rounds would likely (80%) have decided at its level, with the observed per-round sd
  as a nuisance parameter; not post-hoc power (no observed effect goes in), a
  statement of the campaign's resolution. ``rounds_for`` is its inverse: the rounds at
  which a stated change would likely be decided. Power comes from the noncentral t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

# The t, noncentral t and normal distributions of scipy.special, through remembered:
# scipy is imported only for a value not computed before (importing it is
# most of a read command's start-up).
from pgfsbench.analysis.stats.remembered import remembered, special

POWER = 0.80  # of the "more rounds" estimate
MAX_ROUNDS_ESTIMATE = 1000  # beyond this the estimate says "many"
MAX_CHANGE = 1000.0  # beyond ×1000 a detectable change is no figure at all
# A log-ratio sd below this is float error on identical ratios (10/11 vs 20/22), not spread.
_NO_SPREAD = 1e-9
# No parentheses: the answer line puts a note in them.
NO_SPREAD_NOTE = (
    "no spread to judge by: every round gave the same ratio, so the values "
    "are quantized or identical"
)


@dataclass(frozen=True)
class Paired:
    """A contender against a baseline over the rounds both were measured in."""

    n: int  # rounds with a value on both sides
    ratio: float | None  # exp(mean log-ratio): contender / baseline
    mean_log: float | None
    sd_log: float | None  # standard deviation of the per-round log-ratios (observed)
    p_value: float | None  # two-sided paired t, H0: ratio = 1
    p_equivalent: float | None  # TOST: the larger one-sided p; small means equivalent
    margin: float  # the equivalence bound (relative)
    # The smallest step between distinct values of a side (log scale), when the
    # values are quantized (ties inside a side); None for continuous values.
    resolution: float | None = None
    note: str = ""  # why there is no p (no spread to judge by)
    # The smallest difference worth a claim (relative), when it is not the margin: a
    # plan's noise under a wider equivalence margin.
    threshold: float | None = None

    @property
    def claim(self) -> float:
        """The smallest relative difference a "better"/"worse" must show."""
        return self.margin if self.threshold is None else self.threshold

    @property
    def spread(self) -> float | None:
        """The sd the tests and CIs use: the observed one, floored at what the
        resolution could hide (module docstring); None when there is none to judge by."""
        if self.sd_log is None or self.sd_log <= _NO_SPREAD:
            return None
        floor = self.resolution / math.sqrt(2) if self.resolution else 0.0
        return max(self.sd_log, floor)

    def ci(self, confidence: float = 0.95) -> tuple[float, float] | None:
        """Confidence interval of the ratio (None below 2 rounds or without spread)."""
        sd = self.spread
        if self.n < 2 or sd is None or self.mean_log is None:
            return None
        half = special("stdtrit", self.n - 1, 0.5 + confidence / 2) * sd / math.sqrt(self.n)
        return math.exp(self.mean_log - half), math.exp(self.mean_log + half)

    def flipped(self) -> Paired:
        """The baseline against the contender: the same evidence read the other way."""
        return replace(
            self,
            ratio=1 / self.ratio if self.ratio else None,
            mean_log=None if self.mean_log is None else -self.mean_log,
        )


def pair_by_round(base: dict[int, float], other: dict[int, float]) -> list[tuple[float, float]]:
    """(baseline, contender) of every round both have a positive, finite value in."""

    def ok(v: float | None) -> bool:
        return v is not None and math.isfinite(v) and v > 0

    return [
        (base[r], other[r])
        for r in sorted(base.keys() & other.keys())
        if ok(base[r]) and ok(other[r])
    ]


def resolution(*sides: np.ndarray) -> float | None:
    """The step quantized values come in (log scale), or None for continuous ones.

    Values that tie inside a side are quantized (a continuous measurement never
    repeats exactly; fio's percentiles come in buckets): their step is the
    smallest gap between distinct values of such a side. A side that is all one
    value shows no step: only another quantized side can tell it.
    """
    steps = []
    for x in sides:
        values = distinct(np.log(x))
        if len(values) < len(x) and len(values) > 1:
            steps.append(float(np.diff(values).min()))
    return min(steps) if steps else None


def compare_paired(
    pairs: list[tuple[float, float]], margin: float, threshold: float | None = None
) -> Paired:
    """The paired comparison of (baseline, contender) values, one pair per round:
    equivalence tested within ``margin``; a difference is worth a claim from
    ``threshold`` (default: the margin)."""
    n = len(pairs)
    if threshold == margin:
        threshold = None
    if n == 0:
        return Paired(0, None, None, None, None, None, margin, threshold=threshold)
    base = np.array([b for b, _ in pairs], dtype=float)
    other = np.array([c for _, c in pairs], dtype=float)
    d = np.log(other / base)
    mean = float(d.mean())
    if n < 2:
        return Paired(n, math.exp(mean), mean, None, None, None, margin, threshold=threshold)
    sd = float(d.std(ddof=1))
    step = resolution(base, other)
    if sd <= _NO_SPREAD:
        # Every round the same ratio: a t test would divide by zero and call any ratio
        # certain. Identical values say the spread is below what they can show, not that
        # it is nil: no p, no equivalence, never decided (module docstring).
        return Paired(
            n, math.exp(mean), mean, 0.0, None, None, margin, step, NO_SPREAD_NOTE, threshold
        )
    c = Paired(n, math.exp(mean), mean, sd, None, None, margin, step, threshold=threshold)
    spread = c.spread
    assert spread is not None  # sd is above _NO_SPREAD here, and the floor only raises it
    se = spread / math.sqrt(n)
    df = n - 1
    bound = math.log1p(margin)
    p = 2 * special("stdtr", df, -abs(mean) / se)
    # TOST: H0 mean <= -bound (rejected by a large t_low) and H0 mean >= bound.
    p_low = special("stdtr", df, -(mean + bound) / se)
    p_high = special("stdtr", df, (mean - bound) / se)
    return replace(c, p_value=p, p_equivalent=max(p_low, p_high))


def power(effect: float, sd: float, threshold: float, ns: np.ndarray, level: float) -> np.ndarray:
    """Power of "different" at each n: the two-sided paired t at ``level`` rejects in the
    effect's direction and the estimate clears ``threshold`` (taken as independent: a
    lower bound, since the two go together), for a true mean log ratio ``effect`` and a
    per-round sd ``sd``: the noncentral t."""
    from scipy.special import nctdtr, ndtr, stdtrit

    df = ns - 1
    se = sd / np.sqrt(ns)
    reject = 1 - nctdtr(df, effect / se, stdtrit(df, 1 - level / 2))
    return reject * ndtr((effect - math.log1p(threshold)) / se)


def detectable(c: Paired, level: float) -> float | None:
    """The smallest change (relative: 0.12 for 12%) this comparison's rounds would likely
    (POWER) have decided at ``level``, with its observed spread: what an open pair's
    "not told apart" is worth. None without spread, or beyond ×MAX_CHANGE."""
    sd = c.spread
    if c.n < 2 or sd is None or not level > 0:
        return None

    def compute() -> float | None:
        low, high = 0.0, math.log(MAX_CHANGE)
        if power(high, sd, c.claim, np.array([c.n]), level)[0] < POWER:
            return None
        for _ in range(40):  # bisection on the log scale: 2^-40 of ×1000
            mid = (low + high) / 2
            if power(mid, sd, c.claim, np.array([c.n]), level)[0] >= POWER:
                high = mid
            else:
                low = mid
        return math.expm1(high)

    found = remembered("detectable", (np.array([sd, c.n, level, c.claim]),), compute)
    assert found is None or isinstance(found, float)
    return found


def rounds_for(c: Paired, change: float, level: float) -> int | None:
    """Rounds in all at which a true ``change`` (relative) would likely (POWER) be decided
    at ``level``, with this comparison's spread; None beyond MAX_ROUNDS_ESTIMATE."""
    sd = c.spread
    if sd is None or not level > 0:
        return None
    effect = math.log1p(change)

    def compute() -> int | None:
        ns = np.arange(max(c.n, 3), MAX_ROUNDS_ESTIMATE + 1)
        hit = power(effect, sd, c.claim, ns, level) >= POWER
        return int(ns[np.argmax(hit)]) if hit.any() else None

    found = remembered("rounds-for", (np.array([sd, c.n, level, c.claim, effect]),), compute)
    assert found is None or isinstance(found, int)
    return found


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D array, sorted: np.unique without numpy.ma.

    ``np.unique`` asks ``np.ma.is_masked`` of its argument, which imports numpy.ma
    (~30 ms, a tenth of a read command) the first time; the sort-and-mask here is the
    one np.unique does, the same values."""
    ordered = np.sort(values)
    if ordered.size == 0:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
