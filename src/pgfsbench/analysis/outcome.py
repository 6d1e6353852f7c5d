"""Three honest outcomes per comparison, and the sentence that says why.

* **higher / lower** (better / worse once the metric's direction is known): the
  difference test rejects "ratio = 1" at its (corrected) level *and* the
  estimated change is at least the noise margin;
* **equivalent**: the two one-sided tests show the true ratio lies within the
  noise margin (``[1/(1+noise), 1+noise]``): equivalence is shown, never
  assumed from a test that failed to find a difference;
* **inconclusive**: neither, with how many rounds would likely settle it;
* **na**: nothing to compare (no data, fewer than 2 rounds, no ratio).

Paired comparisons (within rounds) use the t tests of ``paired.py``. Where the
design is not paired (results directories whose rounds do not correspond), the
Mann-Whitney p and the bootstrap CI of the ratio of medians stand in: the
95% CI lying inside the margin is the equivalence test (TOST at 2.5% a side),
only from UNPAIRED_EQUIVALENCE_N runs a side (below that the percentile
bootstrap cannot leave the sample range and is too narrow), and no rounds
estimate is given, since more runs there are not more rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from pgfsbench.analysis.paired import rounds_to_decide
from pgfsbench.analysis.sequential import (EQUIVALENT, HIGHER, INCONCLUSIVE, LOWER, NA,
                                           Decision)
from pgfsbench.analysis.stats import Comparison, can_be_significant, fmt_p, min_n_per_side

UNPAIRED_EQUIVALENCE_N = 6

MARKS = {"better": "+", "worse": "\u2212", "different": "≠", "equivalent": "≈",
         "inconclusive": "?", "na": ""}


@dataclass(frozen=True)
class Verdict:
    kind: str    # "better", "worse", "different" (no direction), "equivalent", "inconclusive", "na"
    mark: str    # short mark for tables
    reason: str  # one short sentence with the figure behind it


@dataclass(frozen=True)
class Judged:
    """A comparison (contender against reference) and what it decided."""

    outcome: str                     # HIGHER, LOWER, EQUIVALENT, INCONCLUSIVE, NA
    comparison: Comparison
    p: float | None = None           # the deciding test's p (difference or TOST), as tested
    level: float | None = None       # the level it met (an equivalence CI is 1 - 2·level)
    at_round: int | None = None      # sequential: the look that decided it
    rounds_needed: int | None = None  # paired, inconclusive: total rounds likely to settle it
    note: str = ""                   # why it is na or cannot be decided

    @property
    def decided(self) -> bool:
        return self.outcome in (HIGHER, LOWER, EQUIVALENT)

    def flipped(self) -> "Judged":
        """The reference against the contender."""
        swap = {HIGHER: LOWER, LOWER: HIGHER}
        return replace(self, outcome=swap.get(self.outcome, self.outcome),
                       comparison=self.comparison.flipped())


def from_decision(d: Decision, comparison: Comparison) -> Judged:
    """A sequential decision (the headline family) as a Judged."""
    note = "fewer than 2 rounds with a value on both sides" if d.outcome == NA else ""
    return Judged(d.outcome, comparison, d.p, d.level, d.at_round, d.rounds_needed, note)


def judge_paired(c: Comparison, p: float | None, p_equivalent: float | None,
                 alpha: float, noise: float) -> Judged:
    """A paired comparison at one level; p and p_equivalent already corrected for the family."""
    pc = c.paired
    if pc is None or pc.n < 2 or pc.mean_log is None:
        return Judged(NA, c, note="fewer than 2 rounds with a value on both sides")
    if p is not None and p <= alpha and abs(pc.mean_log) >= math.log1p(noise):
        return Judged(HIGHER if pc.mean_log > 0 else LOWER, c, p, alpha)
    if p_equivalent is not None and p_equivalent <= alpha:
        return Judged(EQUIVALENT, c, p_equivalent, alpha)
    return Judged(INCONCLUSIVE, c, rounds_needed=rounds_to_decide(pc, lambda n: alpha))


def judge_unpaired(c: Comparison, p: float | None, alpha: float, noise: float,
                   comparisons: int = 1) -> Judged:
    """Independent samples: Mann-Whitney p (corrected) and the bootstrap CI of the ratio."""
    if c.ratio is None:
        why = ("no data" if c.n_base == 0 or c.n_other == 0
               else "no ratio: baseline median is zero or negative")
        return Judged(NA, c, note=why)
    if (min(c.n_base, c.n_other) < 2
            or not can_be_significant(c.n_base, c.n_other, alpha, comparisons)):
        need = min_n_per_side(alpha, comparisons)
        return Judged(INCONCLUSIVE, c, note=f"need n ≥ {need} per side "
                                            f"(have {c.n_base} and {c.n_other})")
    excludes_one = c.ci_low is not None and not c.ci_low <= 1 <= c.ci_high
    if p is not None and p < alpha and abs(c.ratio - 1) >= noise and excludes_one:
        return Judged(HIGHER if c.ratio > 1 else LOWER, c, p, alpha)
    if (min(c.n_base, c.n_other) >= UNPAIRED_EQUIVALENCE_N and c.ci_low is not None
            and 1 / (1 + noise) <= c.ci_low and c.ci_high <= 1 + noise):
        return Judged(EQUIVALENT, c, None, 0.025)
    return Judged(INCONCLUSIVE, c, p)


def verdict_of(j: Judged, higher_is_better: bool | None, noise: float,
               budget: int | None = None) -> Verdict:
    """The mark and sentence of a judged comparison; ``budget``: the plan's most rounds."""
    c = j.comparison

    def verdict(kind: str, reason: str) -> Verdict:
        return Verdict(kind, MARKS[kind], reason)

    if j.outcome == NA:
        return verdict("na", j.note or "no data")
    how = design_text(c)
    if j.outcome in (HIGHER, LOWER):
        kind = ("different" if higher_is_better is None
                else "better" if (j.outcome == HIGHER) == higher_is_better else "worse")
        when = (f"; decided at round {j.at_round}"
                if j.at_round is not None and c.paired and j.at_round < _last_round(c) else "")
        p = fmt_p(j.p) if j.p is not None else "p n/a"
        return verdict(kind, f"{p} ({how}{when}), {change_text(c.ratio)}")
    if j.outcome == EQUIVALENT:
        conf = 1 - 2 * (j.level or 0.025)
        lo, hi = ((c.paired.ci(conf) or (None, None)) if c.paired else (c.ci_low, c.ci_high))
        ci = f": {conf * 100:.3g}% CI {lo:.3f}–{hi:.3f}" if lo is not None else ""
        return verdict("equivalent", f"equivalent within ±{noise * 100:g}%{ci} ({how})")
    what = j.note or f"{interval_text(c)} ({how})"
    return verdict("inconclusive", f"inconclusive: {what}; {settle_text(j, budget)}")


def _last_round(c: Comparison) -> int:
    return c.paired.n if c.paired else 0


def design_text(c: Comparison) -> str:
    if c.paired is not None:
        return f"paired, {c.paired.n} rounds"
    return f"unpaired, {c.n_base} and {c.n_other} runs"


def change_text(ratio: float | None) -> str:
    if ratio is None:
        return "no ratio"
    return f"{abs(ratio - 1):.1%} {'higher' if ratio > 1 else 'lower'}"


def interval_text(c: Comparison) -> str:
    if c.ratio is None:
        return "no ratio"
    ci = f" [{c.ci_low:.3f}, {c.ci_high:.3f}]" if c.ci_low is not None else ""
    return f"×{c.ratio:.3f}{ci}"


def settle_text(j: Judged, budget: int | None = None) -> str:
    """How many rounds would likely settle an inconclusive comparison: a planning figure."""
    if j.comparison.paired is None:
        return "more runs would be needed (measure in the same rounds to compare within them)"
    if j.rounds_needed is None:
        return "no likely number of rounds settles it (the ratio sits at the noise margin)"
    # The estimate counts rounds in total; a test the look's correction kept from
    # deciding now still needs at least one more.
    need = max(j.rounds_needed, j.comparison.paired.n + 1)
    beyond = f", more than the plan's {budget}" if budget and need > budget else ""
    return f"about {need} rounds would likely settle it{beyond}"
