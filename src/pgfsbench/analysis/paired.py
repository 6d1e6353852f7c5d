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
* **How many more rounds** an inconclusive comparison would likely need is the
  smallest n at which, if the effect and its spread stay as measured, the
  expected t clears the test's critical value (difference or equivalence,
  whichever comes first) with 80% power: a planning figure, said as such.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

POWER = 0.80  # of the "more rounds" estimate
MAX_ROUNDS_ESTIMATE = 1000  # beyond this the estimate says "many"


@dataclass(frozen=True)
class Paired:
    """A contender against a baseline over the rounds both were measured in."""

    n: int                      # rounds with a value on both sides
    ratio: float | None         # exp(mean log-ratio): contender / baseline
    mean_log: float | None
    sd_log: float | None        # standard deviation of the per-round log-ratios
    p_value: float | None       # two-sided paired t, H0: ratio = 1
    p_equivalent: float | None  # TOST: the larger one-sided p; small means equivalent
    margin: float               # the equivalence bound (relative): the noise

    def ci(self, confidence: float = 0.95) -> tuple[float, float] | None:
        """Confidence interval of the ratio (None below 2 rounds or without spread)."""
        if self.n < 2 or self.sd_log is None or self.mean_log is None:
            return None
        half = sps.t.ppf(0.5 + confidence / 2, self.n - 1) * self.sd_log / math.sqrt(self.n)
        return math.exp(self.mean_log - half), math.exp(self.mean_log + half)


def pair_by_round(base: dict[int, float], other: dict[int, float]) -> list[tuple[float, float]]:
    """(baseline, contender) of every round both have a positive, finite value in."""
    def ok(v: float | None) -> bool:
        return v is not None and math.isfinite(v) and v > 0

    return [(base[r], other[r]) for r in sorted(base.keys() & other.keys())
            if ok(base[r]) and ok(other[r])]


def compare_paired(pairs: list[tuple[float, float]], margin: float) -> Paired:
    """The paired comparison of (baseline, contender) values, one pair per round."""
    n = len(pairs)
    if n == 0:
        return Paired(0, None, None, None, None, None, margin)
    d = np.log(np.array([c for _, c in pairs]) / np.array([b for b, _ in pairs]))
    mean = float(d.mean())
    if n < 2:
        return Paired(n, math.exp(mean), mean, None, None, None, margin)
    sd = float(d.std(ddof=1))
    bound = math.log1p(margin)
    if sd == 0:
        # Every round gave the same ratio: no spread to judge by. A difference is then
        # certain, and so is equivalence when the ratio lies inside the margin.
        p = 1.0 if mean == 0 else 0.0
        p_eq = 0.0 if abs(mean) < bound else 1.0
        return Paired(n, math.exp(mean), mean, 0.0, p, p_eq, margin)
    se = sd / math.sqrt(n)
    df = n - 1
    p = float(2 * sps.t.sf(abs(mean) / se, df))
    # TOST: H0 mean <= -bound (rejected by a large t_low) and H0 mean >= bound.
    p_low = float(sps.t.sf((mean + bound) / se, df))
    p_high = float(sps.t.cdf((mean - bound) / se, df))
    return Paired(n, math.exp(mean), mean, sd, p, max(p_low, p_high), margin)


def rounds_to_decide(c: Paired, alpha: Callable[[int], float]) -> int | None:
    """Rounds (in total) at which this comparison would likely be decided.

    ``alpha(n)`` is the level its tests would be held to with n rounds (a
    sequential design spends alpha across rounds).
    Assumes the measured mean and spread stay as they are; None when there is
    nothing to extrapolate from (fewer than 2 rounds), or when more than
    MAX_ROUNDS_ESTIMATE would be needed (the effect sits on the margin).
    """
    if c.n < 2 or c.sd_log is None or c.mean_log is None:
        return None
    if c.sd_log == 0:
        return c.n
    bound = math.log1p(c.margin)
    # Distance to what each test must clear: 0 for a difference, the margin for TOST.
    effects = [abs(c.mean_log)]
    if abs(c.mean_log) < bound:
        effects.append(bound - abs(c.mean_log))
    # Every candidate n at once: the scan is the same, scipy's quantiles are vectorised
    # (one by one, an undecidable comparison cost ~2000 quantile calls).
    ns = np.arange(max(c.n, 3), MAX_ROUNDS_ESTIMATE + 1)
    levels = np.array([alpha(int(n)) for n in ns])
    ok = levels > 0
    ns, levels = ns[ok], levels[ok]
    if len(ns) == 0:
        return None
    df = ns - 1
    power = sps.t.ppf(POWER, df)
    need = sps.t.ppf(1 - levels / 2, df) + power
    need_eq = sps.t.ppf(1 - levels, df) + power
    se = c.sd_log / np.sqrt(ns)
    hit = effects[0] / se >= need
    if len(effects) > 1:
        hit |= effects[1] / se >= need_eq
    return int(ns[np.argmax(hit)]) if hit.any() else None
