"""Three honest outcomes per comparison.

* **higher / lower** (better / worse once the metric's direction is known): the
  difference test rejects "ratio = 1" at its level (its (1 - level) interval excludes 1)
  *and* the estimated change is at least the noise threshold;
* **equivalent**: the two one-sided tests show the true ratio lies within the
  equivalence margin (its (1 - 2·level) interval lies inside ``[1/(1+m), 1+m]``):
  equivalence is shown, never assumed from a test that failed to find a difference;
* **inconclusive**: neither ("not told apart");
* **na**: nothing to compare (no data, fewer than 2 rounds, no ratio).

Paired comparisons (within rounds) use the t tests of ``paired.py``; a comparison with
no spread to judge by (every round the same ratio: quantized or identical values) gets
no p and stays inconclusive, saying so. Where the design is not paired (campaigns whose
rounds do not correspond), Welch's t on the logs stands in (``independent.py``), or,
for rows with a value at or below zero, the Mann-Whitney p and the bootstrap CI of the
ratio of medians (a difference needs its (1 - level) CI to exclude 1, an equivalence
its (1 - 2·level) CI inside the margin and 6 runs a side); ``level`` is alpha shared
over the comparisons of its family (Bonferroni).

``Judged.level`` is the per-comparison level it was (last) tested at, and
``Judged.interval`` the interval at that level on the rounds the decision rests on:
``findings.py`` turns both into the one figure every output quotes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pgfsbench.analysis.stats.medians import (
    Comparison,
    can_be_significant,
    from_paired,
    min_n_per_side,
)
from pgfsbench.analysis.stats.sequential import (
    EQUIVALENT,
    HIGHER,
    INCONCLUSIVE,
    LOWER,
    NA,
    Decision,
)

UNPAIRED_EQUIVALENCE_N = 6


def percent_text(confidence: float) -> str:
    """A confidence as a percentage with the digits that keep it below 100: '95%',
    '97.9%', '99.2%', '99.96%' (a level of 0.0004 is not a 100% CI)."""
    miss = (1 - confidence) * 100
    decimals = max(1, -math.floor(math.log10(miss))) if miss > 0 else 1
    text = f"{confidence * 100:.{decimals}f}".rstrip("0").rstrip(".")
    return f"{text}%"


@dataclass(frozen=True)
class Judged:
    """A comparison (contender against reference) and what it decided.

    ``comparison`` holds the estimate the decision tested: for a paired decision made at
    a look before the last round, the comparison on the rounds up to that look; for an
    open one, every round. ``level``: the per-comparison level it was (last) tested at
    (a difference's interval is at 1 - level, an equivalence's at 1 - 2·level)."""

    outcome: str  # HIGHER, LOWER, EQUIVALENT, INCONCLUSIVE, NA
    comparison: Comparison
    p: float | None = None  # the deciding test's p (difference or TOST), as tested
    level: float | None = None
    at_round: int | None = None  # sequential: the look that decided it
    note: str = ""  # why it is na or cannot be decided
    last_round: int | None = None  # paired: the last round both sides have

    @property
    def decided(self) -> bool:
        return self.outcome in (HIGHER, LOWER, EQUIVALENT)

    def confidence(self) -> float | None:
        """The interval's confidence: (1 - level), an equivalence's (1 - 2·level)."""
        if self.level is None:
            return None
        return 1 - 2 * self.level if self.outcome == EQUIVALENT else 1 - self.level

    def interval(self) -> tuple[float, float] | None:
        conf = self.confidence()
        return None if conf is None else self.comparison.ci_at(conf)


def from_decision(d: Decision, last_round: int | None = None) -> Judged:
    """A sequential decision (the headline family) as a Judged: its comparison is the
    one the decision tested (the deciding look's rounds, or every round when open)."""
    note = (
        "fewer than 2 rounds with a value on both sides"
        if d.outcome == NA
        else d.paired.note
        if not d.decided
        else ""
    )
    return Judged(d.outcome, from_paired(d.paired), d.p, d.level, d.at_round, note, last_round)


def judge_paired(
    c: Comparison, p: float | None, p_equivalent: float | None, alpha: float, noise: float
) -> Judged:
    """A paired comparison at one level; p and p_equivalent already corrected for the family."""
    pc = c.paired
    if pc is None or pc.n < 2 or pc.mean_log is None:
        return Judged(NA, c, note="fewer than 2 rounds with a value on both sides")
    if p is not None and p <= alpha and abs(pc.mean_log) >= math.log1p(noise):
        return Judged(HIGHER if pc.mean_log > 0 else LOWER, c, p, alpha)
    if p_equivalent is not None and p_equivalent <= alpha:
        return Judged(EQUIVALENT, c, p_equivalent, alpha)
    return Judged(INCONCLUSIVE, c, level=alpha, note=pc.note)


def judge_unpaired(
    c: Comparison,
    p: float | None,
    alpha: float,
    noise: float,
    comparisons: int = 1,
    margin: float | None = None,
) -> Judged:
    """Independent samples: Welch on the logs where every value is positive (the ratio
    of geometric means), else Mann-Whitney p and the bootstrap CI of the ratio of medians.

    ``comparisons``: how many share ``alpha`` in the family; each is held to
    ``alpha / comparisons`` (Bonferroni), the level ``Judged.level`` records: a
    difference where its (1 - level) interval excludes 1, an equivalence where its
    (1 - 2·level) interval lies inside the margin.
    """
    if c.ratio is None:
        why = (
            "no data"
            if c.n_base == 0 or c.n_other == 0
            else "no ratio: baseline median is zero or negative"
        )
        return Judged(NA, c, note=why)
    level = alpha / max(1, comparisons)
    within = noise if margin is None else margin
    if c.independent is not None:
        if min(c.n_base, c.n_other) < 2:
            return Judged(INCONCLUSIVE, c, level=level, note="need 2 runs or more a side")
        if c.no_spread:
            note = "no spread to judge by: every run gave the same value"
            return Judged(INCONCLUSIVE, c, level=level, note=note)
        p_diff = c.independent.p_value
        if p_diff is not None and p_diff <= level and abs(math.log(c.ratio)) >= math.log1p(noise):
            return Judged(HIGHER if c.ratio > 1 else LOWER, c, p_diff, level)
        p_eq = c.independent.p_equivalent(within)
        if p_eq is not None and p_eq <= level:
            return Judged(EQUIVALENT, c, p_eq, level)
        return Judged(INCONCLUSIVE, c, p_diff, level)
    if min(c.n_base, c.n_other) < 2 or not can_be_significant(
        c.n_base, c.n_other, alpha, comparisons
    ):
        need = min_n_per_side(alpha, comparisons)
        return Judged(
            INCONCLUSIVE,
            c,
            level=level,
            note=f"need n ≥ {need} per side (have {c.n_base} and {c.n_other})",
        )
    ci = c.ci_at(1 - level)
    excludes_one = ci is not None and not ci[0] <= 1 <= ci[1]
    if p is not None and p < alpha and abs(c.ratio - 1) >= noise and excludes_one:
        return Judged(HIGHER if c.ratio > 1 else LOWER, c, p, level)
    p_eq = c.p_equivalent_unpaired(within)
    if min(c.n_base, c.n_other) >= UNPAIRED_EQUIVALENCE_N and p_eq is not None and p_eq <= level:
        return Judged(EQUIVALENT, c, p_eq, level)
    note = "no spread to judge by: every run gave the same value" if c.no_spread else ""
    return Judged(INCONCLUSIVE, c, p, level, note=note)
