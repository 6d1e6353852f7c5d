"""Three honest outcomes per comparison, and the sentence that says why.

* **higher / lower** (better / worse once the metric's direction is known): the
  difference test rejects "ratio = 1" at its (corrected) level *and* the
  estimated change is at least the noise margin;
* **equivalent**: the two one-sided tests show the true ratio lies within the
  noise margin (``[1/(1+noise), 1+noise]``): equivalence is shown, never
  assumed from a test that failed to find a difference;
* **inconclusive**: neither, with how many rounds would likely settle it;
* **na**: nothing to compare (no data, fewer than 2 rounds, no ratio).

Paired comparisons (within rounds) use the t tests of ``paired.py``; a
comparison with no spread to judge by (every round the same ratio: quantized or
identical values) gets no p and stays inconclusive, saying so. Where the
design is not paired (results directories whose rounds do not correspond), the
Mann-Whitney p and the bootstrap CI of the ratio of medians stand in, with the
same error control as paired comparisons: a difference needs its (1 - level)
CI to exclude 1, an equivalence its (1 - 2·level) CI to lie inside the margin
(TOST at ``level`` a side), where ``level`` is alpha shared out over the
comparisons of its family (Bonferroni, ``comparisons``); only from
UNPAIRED_EQUIVALENCE_N runs a side (below that the percentile bootstrap cannot
leave the sample range and is too narrow), never when both sides are constant,
and no rounds estimate is given, since more runs there are not more rounds.

**The CI beside a decision** is the one at the level the decision was made at
(``Judged.decision_ci``): a decided difference's (1 - level) CI excludes 1, an
equivalence's (1 - 2·level) CI lies inside the margin, computed on the rounds of
the look that decided it (``Judged.decided_on``), so "better" never sits beside
an interval that reaches 1. With alpha spent over looks and Holm within them,
that level is small (97.9%, 99.6%), so the interval is wider than a plain 95%
one: the price of having looked. The plain 95% CI over every round stays
available for tables (``Judged.plain_ci``), labelled as such; it is an estimate
beside the decision, not the decision's interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from pgfsbench.analysis.paired import Paired, rounds_to_decide, why_unsettled
from pgfsbench.analysis.sequential import EQUIVALENT, HIGHER, INCONCLUSIVE, LOWER, NA, Decision
from pgfsbench.analysis.stats import Comparison, can_be_significant, fmt_p, min_n_per_side

UNPAIRED_EQUIVALENCE_N = 6

MARKS = {
    "better": "+",
    "worse": "\u2212",
    "different": "≠",
    "equivalent": "≈",
    "inconclusive": "?",
    "na": "",
}


@dataclass(frozen=True)
class Verdict:
    kind: str  # "better", "worse", "different" (no direction), "equivalent", "inconclusive", "na"
    mark: str  # short mark for tables
    reason: str  # one short sentence with the figure behind it


def percent_text(confidence: float) -> str:
    """A confidence as a percentage with the digits that keep it below 100: '95%',
    '97.9%', '99.96%' (a level of 0.0004 is not a 100% CI)."""
    miss = (1 - confidence) * 100
    decimals = max(0, -math.floor(math.log10(miss))) + 1 if miss > 0 else 1
    text = f"{confidence * 100:.{decimals}f}".rstrip("0").rstrip(".")
    return f"{text}%"


@dataclass(frozen=True)
class Interval:
    """A CI of the ratio (contender / baseline) and what it is."""

    ratio: float | None  # the estimate it is about
    low: float
    high: float
    confidence: float  # 0.979 for a 97.9% CI
    rounds: int | None  # paired: the rounds it rests on; None unpaired
    decision: bool  # True: at the level of the decision; False: the plain 95% CI

    @property
    def label(self) -> str:
        """'97.9% CI, the level of the decision', or '95% CI, all rounds'."""
        pct = f"{percent_text(self.confidence)} CI"
        if self.decision:
            return f"{pct}, the level of the decision"
        return f"{pct}, all rounds" if self.rounds is not None else f"{pct}, all runs"


@dataclass(frozen=True)
class Judged:
    """A comparison (contender against reference) and what it decided."""

    outcome: str  # HIGHER, LOWER, EQUIVALENT, INCONCLUSIVE, NA
    comparison: Comparison
    p: float | None = None  # the deciding test's p (difference or TOST), as tested
    level: float | None = None  # the level it met (an equivalence CI is 1 - 2·level)
    at_round: int | None = None  # sequential: the look that decided it
    rounds_needed: int | None = None  # paired, inconclusive: total rounds likely to settle it
    note: str = ""  # why it is na or cannot be decided
    # Paired, decided at a look before the last round: the comparison on the rounds of
    # that look (None: decided on every round, ``comparison.paired``).
    decided_on: Paired | None = None
    # Inconclusive without a rounds estimate: why, when the caller knows better than the
    # comparison alone can tell (its rounds ended before the campaign's: fixed).
    why_open: str = ""

    @property
    def decided(self) -> bool:
        return self.outcome in (HIGHER, LOWER, EQUIVALENT)

    def decision_ci(self) -> Interval | None:
        """The CI at the level the decision was made at, on the rounds it was made on:
        (1 - level) for a difference (it excludes 1), (1 - 2·level) for an equivalence
        (inside the margin). None when nothing is decided or no level is known."""
        if not self.decided or self.level is None:
            return None
        conf = 1 - self.level if self.outcome in (HIGHER, LOWER) else 1 - 2 * self.level
        on = self.decided_on or self.comparison.paired
        if on is not None:
            ci, ratio, rounds = on.ci(conf), on.ratio, on.n
        else:
            ci, ratio, rounds = self.comparison.ci_at(conf), self.comparison.ratio, None
        return None if ci is None else Interval(ratio, *ci, conf, rounds, True)

    def plain_ci(self) -> Interval | None:
        """The plain 95% CI over every round (or run): for tables, not for the decision."""
        c = self.comparison
        if c.ci_low is None or c.ci_high is None:
            return None
        return Interval(
            c.ratio, c.ci_low, c.ci_high, 0.95, c.paired.n if c.paired is not None else None, False
        )

    def flipped(self) -> Judged:
        """The reference against the contender."""
        swap = {HIGHER: LOWER, LOWER: HIGHER}
        return replace(
            self,
            outcome=swap.get(self.outcome, self.outcome),
            comparison=self.comparison.flipped(),
            decided_on=self.decided_on.flipped() if self.decided_on else None,
        )


def from_decision(d: Decision, comparison: Comparison, decided_on: Paired | None = None) -> Judged:
    """A sequential decision (the headline family) as a Judged; ``decided_on``: the
    comparison on the rounds of the look that decided it, for its CI."""
    note = (
        "fewer than 2 rounds with a value on both sides"
        if d.outcome == NA
        else d.paired.note
        if not d.decided
        else ""
    )
    return Judged(
        d.outcome,
        comparison,
        d.p,
        d.level,
        d.at_round,
        d.rounds_needed,
        note,
        decided_on if d.decided else None,
    )


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
    return Judged(
        INCONCLUSIVE, c, rounds_needed=rounds_to_decide(pc, lambda n: alpha), note=pc.note
    )


def judge_unpaired(
    c: Comparison,
    p: float | None,
    alpha: float,
    noise: float,
    comparisons: int = 1,
    margin: float | None = None,
) -> Judged:
    """Independent samples: Mann-Whitney p (corrected) and the bootstrap CI of the ratio.

    ``comparisons``: how many share ``alpha`` in the family; each CI is held to
    ``alpha / comparisons`` (Bonferroni), the level ``Judged.level`` records.
    """
    if c.ratio is None:
        why = (
            "no data"
            if c.n_base == 0 or c.n_other == 0
            else "no ratio: baseline median is zero or negative"
        )
        return Judged(NA, c, note=why)
    if min(c.n_base, c.n_other) < 2 or not can_be_significant(
        c.n_base, c.n_other, alpha, comparisons
    ):
        need = min_n_per_side(alpha, comparisons)
        return Judged(
            INCONCLUSIVE, c, note=f"need n ≥ {need} per side (have {c.n_base} and {c.n_other})"
        )
    level = alpha / max(1, comparisons)
    ci = c.ci_at(1 - level)
    excludes_one = ci is not None and not ci[0] <= 1 <= ci[1]
    if p is not None and p < alpha and abs(c.ratio - 1) >= noise and excludes_one:
        return Judged(HIGHER if c.ratio > 1 else LOWER, c, p, level)
    p_eq = c.p_equivalent_unpaired(noise if margin is None else margin)
    if min(c.n_base, c.n_other) >= UNPAIRED_EQUIVALENCE_N and p_eq is not None and p_eq <= level:
        return Judged(EQUIVALENT, c, p_eq, level)
    note = "no spread to judge by: every run gave the same value" if c.no_spread else ""
    return Judged(INCONCLUSIVE, c, p, note=note)


def verdict_of(
    j: Judged,
    higher_is_better: bool | None,
    noise: float,
    budget: int | None = None,
    margin: float | None = None,
) -> Verdict:
    """The mark and sentence of a judged comparison; ``budget``: the plan's most rounds."""
    c = j.comparison

    def verdict(kind: str, reason: str) -> Verdict:
        return Verdict(kind, MARKS[kind], reason)

    if j.outcome == NA:
        return verdict("na", j.note or "no data")
    how = design_text(c)
    if j.outcome in (HIGHER, LOWER):
        kind = (
            "different"
            if higher_is_better is None
            else "better"
            if (j.outcome == HIGHER) == higher_is_better
            else "worse"
        )
        when = (
            f"; decided at round {j.at_round}"
            if j.at_round is not None and c.paired and j.at_round < _last_round(c)
            else ""
        )
        p = fmt_p(j.p) if j.p is not None else "p n/a"
        return verdict(kind, f"{p} ({how}{when}), {change_text(c.ratio)}{_ci_text(j)}")
    if j.outcome == EQUIVALENT:
        dci = j.decision_ci()
        ci = (
            f": {percent_text(dci.confidence)} CI {dci.low:.3f}–{dci.high:.3f}, "
            "the level of the decision"
            if dci is not None
            else ""
        )
        within = noise if margin is None else margin
        return verdict("equivalent", f"equivalent within ±{within * 100:g}%{ci} ({how})")
    what = j.note or f"{interval_text(c)} ({how})"
    return verdict("inconclusive", f"inconclusive: {what}; {settle_text(j, budget)}")


def _ci_text(j: Judged) -> str:
    """'; 97.9% CI 1.052–1.161, the level of the decision' (with the round of the look
    when that came before the last round)."""
    dci = j.decision_ci()
    if dci is None:
        return ""
    on = (
        f" on rounds 1–{j.at_round}"
        if j.decided_on is not None
        and j.comparison.paired
        and j.at_round is not None
        and j.at_round < j.comparison.paired.n
        else ""
    )
    return (
        f"; {percent_text(dci.confidence)} CI {dci.low:.3f}–{dci.high:.3f}{on}, "
        "the level of the decision"
    )


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
        why = _why(j)
        return "no number of rounds can be estimated to settle it" + (
            "" if why == j.note else f": {why}"
        )
    # The estimate counts rounds in total; a test the look's correction kept from
    # deciding now still needs at least one more.
    need = max(j.rounds_needed, j.comparison.paired.n + 1)
    beyond = f", more than the plan's {budget}" if budget and need > budget else ""
    return f"about {need} rounds would likely settle it{beyond}"


def _why(j: Judged) -> str:
    """What keeps an inconclusive paired comparison from a rounds estimate (the ratio
    may be far from the margin: ×0.37 with a wide spread is not 'at the margin')."""
    paired = j.comparison.paired
    return j.why_open or (why_unsettled(paired) if paired is not None else "")
