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
* **How many more rounds** an inconclusive comparison would likely need is a
  planning figure (``rounds_to_decide``), not post-hoc power: the observed sd is
  used as a nuisance parameter (as sample-size re-estimation does), the effect
  is fixed in advance by the route that can decide. Inside the margin only
  equivalence can be decided: it is planned for a true ratio of 1. Beyond the
  margin only a difference can: it is planned for the larger of twice the
  margin (the smallest difference worth a claim, plus the margin the estimate
  must clear; planning at the margin itself gives at most 50% power) and the
  nearer end of the current 95% CI (the smallest effect the data still allow).
  Power comes from the noncentral t, 80%.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

# The t, noncentral t and normal distributions of scipy.special, through remembered:
# scipy is imported only for a value not computed before (issue 23: importing it is
# most of a read command's start-up).
from pgfsbench.analysis import arrays
from pgfsbench.analysis.remembered import remembered, special

POWER = 0.80  # of the "more rounds" estimate
MAX_ROUNDS_ESTIMATE = 1000  # beyond this the estimate says "many"
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
        distinct = arrays.distinct(np.log(x))
        if len(distinct) < len(x) and len(distinct) > 1:
            steps.append(float(np.diff(distinct).min()))
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


def planned_effects(c: Paired) -> list[tuple[str, float]]:
    """The routes that can decide this comparison, each with the effect it is planned for.

    ("equivalent", 0.0) inside the equivalence margin: TOST can decide there, planned
    for a true ratio of 1. ("different", delta) at or beyond the claim threshold: the
    difference test can, planned for delta = max(2 * threshold, the nearer end of the
    current 95% CI) on the log scale: twice the threshold because the estimate must
    also clear it (at the threshold itself power cannot pass 50%); the CI's nearer end
    because the data already rule out smaller effects with 95% confidence, and it is
    still the least of the effects they allow, not the observed one. With one margin
    for both (the default) exactly one route applies; a wider equivalence margin than
    the threshold leaves both open between them. Empty: no spread to plan with, or a
    zero threshold with a CI reaching 1 (no effect to aim at).
    """
    sd = c.spread
    if c.n < 2 or sd is None or c.mean_log is None:
        return []
    routes = []
    if abs(c.mean_log) < math.log1p(c.margin):
        routes.append(("equivalent", 0.0))
    claim = math.log1p(c.claim)
    if abs(c.mean_log) >= claim:
        nearer = abs(c.mean_log) - special("stdtrit", c.n - 1, 0.975) * sd / math.sqrt(c.n)
        delta = max(2 * claim, nearer)
        if delta > 0:
            routes.append(("different", float(delta)))
    return routes


def planned_effect(c: Paired) -> tuple[str, float] | None:
    """The first route of ``planned_effects`` (the only one under a single margin)."""
    routes = planned_effects(c)
    return routes[0] if routes else None


def power(
    route: str, effect: float, sd: float, margin: float, ns: np.ndarray, levels: np.ndarray
) -> np.ndarray:
    """Power of the decision at each n (with its level), for a true mean log-ratio
    ``effect`` and per-round sd ``sd``: noncentral t.

    "different": the two-sided t at ``level`` rejects in the effect's direction and
    the estimate clears the margin (taken as independent: a lower bound, since the
    two go together). "equivalent": both one-sided t's of TOST reject
    (1 - P(one fails) - P(other fails): a lower bound).
    """
    from scipy.special import nctdtr, ndtr, stdtrit

    df = ns - 1
    se = sd / np.sqrt(ns)
    bound = math.log1p(margin)  # "different": the claim threshold; else the margin
    if route == "different":
        reject = 1 - nctdtr(df, effect / se, stdtrit(df, 1 - levels / 2))
        return reject * ndtr((effect - bound) / se)
    crit = stdtrit(df, 1 - levels)
    fail_low = nctdtr(df, (effect + bound) / se, crit)
    fail_high = nctdtr(df, (bound - effect) / se, crit)
    return np.clip(1 - fail_low - fail_high, 0.0, 1.0)


def rounds_to_decide(c: Paired, alpha: Callable[[int], float]) -> int | None:
    """Rounds (in total) at which this comparison would likely be decided: 80% power
    for the route that can decide it, at the effect planned for it (``planned_effect``),
    with the observed per-round spread.

    ``alpha(n)`` is the level its tests would be held to with n rounds (a
    sequential design spends alpha across rounds; 0 where no look would test it).
    None when there is nothing to plan with (fewer than 2 rounds, no spread), no
    further look would test it, or more than MAX_ROUNDS_ESTIMATE would be needed:
    ``why_unsettled`` says which.
    """
    found = [
        n
        for route, effect in planned_effects(c)
        if (n := _rounds_for(c, route, effect, alpha)) is not None
    ]
    return min(found) if found else None


def _rounds_for(c: Paired, route: str, effect: float, alpha: Callable[[int], float]) -> int | None:
    bound = c.claim if route == "different" else c.margin
    sd = c.spread
    if sd is None:  # no route without spread (planned_effects): nothing to plan with
        return None

    def first_hit(ns: np.ndarray) -> int | None:
        """The first n of ``ns`` whose power reaches POWER (scipy's quantiles are
        vectorised over them; the answer is remembered by its inputs)."""
        levels = np.array([alpha(int(n)) for n in ns], dtype=float)
        ok = levels > 0
        ns, levels = ns[ok], levels[ok]
        if len(ns) == 0:
            return None

        def compute() -> int | None:
            hit = power(route, effect, sd, bound, ns, levels) >= POWER
            return int(ns[np.argmax(hit)]) if hit.any() else None

        found = remembered(
            f"first-hit.{route}", (np.array([effect, sd, bound]), ns, levels), compute
        )
        assert found is None or isinstance(found, int)
        return found

    # Power grows with n: a coarse geometric grid finds the span, the rounds inside it
    # the first n (every n from 3 to 1000 cost a read command ~0.25 s per campaign).
    start = max(c.n, 3)
    grid = arrays.distinct(np.geomspace(start, MAX_ROUNDS_ESTIMATE, 40).astype(int))
    coarse = first_hit(grid)
    if coarse is None:
        return None
    below = grid[grid < coarse]
    return first_hit(np.arange(int(below[-1]) + 1 if len(below) else start, coarse + 1))


def why_unsettled(c: Paired, alpha: Callable[[int], float] | None = None) -> str:
    """Why ``rounds_to_decide`` gives no estimate, in words that are true of this case.

    Without ``alpha`` (the caller no longer has it), a level far below any family's
    (0.05%) stands in: if even that would settle it, what kept the real levels from
    doing so is that no further look tests it (a measurement with its own fixed
    repetitions).
    """
    if c.n < 2 or c.mean_log is None:
        return "fewer than 2 rounds with a value on both sides"
    if c.spread is None:
        return NO_SPREAD_NOTE
    plan = planned_effect(c)
    if plan is None:
        return "no difference to plan for: the margin is 0 and the CI reaches ×1"
    route, _ = plan
    if alpha is None:
        fixed = rounds_to_decide(c, lambda n: 0.0005) is not None
    else:
        fixed = not any(alpha(n) > 0 for n in range(c.n + 1, MAX_ROUNDS_ESTIMATE + 1))
    if fixed:
        return "its rounds are fixed, so no further look would test it (raise its repetitions)"
    sd = f"±{math.expm1(c.spread) * 100:.0f}% a round"
    if route == "equivalent":
        return (
            f"more than {MAX_ROUNDS_ESTIMATE} rounds: its spread ({sd}) is wide "
            f"against the ±{c.margin * 100:g}% margin"
        )
    return (
        f"more than {MAX_ROUNDS_ESTIMATE} rounds: its spread ({sd}) is wide "
        f"against the difference it would have to show"
    )
