"""One comparison, computed once: a pair of targets on one metric, and what it showed.

A ``Finding`` is everything any output says about a pair: the estimate the decision
tested (target / reference), its interval at the level the decision was made at, the
rounds it rests on, the outcome, the centre of each side over those same rounds, and,
where nothing was decided, the smallest difference the campaign would likely have
decided. The table builds every finding once (``table.py``); the verdict lines, the
tables of ``show`` and ``compare``, ``history``, ``advise``, the report, the exports and
the store's decisions render them and compute no figure of their own, so no two of them
can disagree.

Who is quoted against whom: **every target against the plan's baseline** (``[verdicts]
baseline``, else the first target), in every output and in the store. A pair that does
not hold the baseline (a tier's relation between two other targets, a trade-off in the
recommendation) is quoted as that named pair, from its own finding.

The figure always lies inside its own interval: a paired estimate is the geometric mean
of the per-round ratios with its t interval, symmetric around it on the log scale; an
unpaired interval (bootstrap, stretched to the decision's level) is widened to hold its
ratio of medians where small samples put it outside.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pgfsbench.analysis.stats import sequential
from pgfsbench.analysis.stats.outcome import Judged, percent_text
from pgfsbench.analysis.stats.paired import detectable, pair_by_round
from pgfsbench.ratios import change_text, span_text

if TYPE_CHECKING:
    from pgfsbench.analysis.table import Row, Table

# Outcomes of the target against the reference, with the metric's direction applied.
BETTER, WORSE, DIFFERENT = "better", "worse", "different"
EQUIVALENT, INCONCLUSIVE, NA = "equivalent", "inconclusive", "na"
DECIDED = (BETTER, WORSE, DIFFERENT, EQUIVALENT)
MARKS = {
    BETTER: "+",
    WORSE: "\u2212",
    DIFFERENT: "≠",
    EQUIVALENT: "≈",
    INCONCLUSIVE: "?",
    NA: "",
}
_FLIP = {BETTER: WORSE, WORSE: BETTER}


@dataclass(frozen=True)
class Level:
    """How an interval's confidence came about, to say it once in words.

    ``family``: the comparisons sharing alpha (1: a row alone); ``looks``: the planned
    looks alpha is spent over; ``look``: which of them (1-based) this interval is at;
    ``tost``: an equivalence's interval (two one-sided tests at ``(1 - confidence) / 2``
    each); ``adjusted``: False for the exploratory rows, each at alpha alone; ``share``:
    the comparison's share of alpha where the plan's weights make shares unequal."""

    confidence: float
    alpha: float
    family: int = 1
    looks: int = 1
    look: int = 1
    tost: bool = False
    adjusted: bool = True
    share: float | None = None  # this comparison's share of alpha when the plan's weights
    # make the shares unequal (None: 1 / family)

    @property
    def label(self) -> str:
        """'99.2% CI'."""
        return f"{percent_text(self.confidence)} CI"

    def words(self) -> str:
        """'99.2% CIs, 95% for the 6 comparisons together', said once per output."""
        overall = f"{percent_text(1 - self.alpha)}"
        if not self.adjusted:
            what = "this row alone (exploratory rows are not adjusted for each other)"
        elif self.family <= 1 and self.looks <= 1:
            what = ""
        else:
            together = (
                f"for the {self.family} comparisons together" if self.family > 1 else "in all"
            )
            if self.share is not None:  # the row's own CI says its share; the plan, why
                together += " (shared by the plan's weights)"
            over = f", over {self.looks} looks" if self.looks > 1 else ""
            what = f"{overall} {together}{over}"
        if self.tost:
            tests = f"two one-sided tests at {(1 - self.confidence) / 2 * 100:.2g}% each"
            return f"an equivalence by its {self.label} ({tests}" + (f"; {what})" if what else ")")
        return f"{self.label}s" + (f": {what}" if what else "")


@dataclass(frozen=True)
class Finding:
    """``target`` against ``reference`` on one metric of one measurement."""

    workload: str
    label: str
    metric: str
    unit: str
    higher_is_better: bool | None
    reference: str
    target: str
    outcome: str  # BETTER, WORSE, DIFFERENT, EQUIVALENT, INCONCLUSIVE or NA
    ratio: float | None  # target / reference: the estimate the decision tested
    low: float | None  # its interval at ``level`` (None: none can be given)
    high: float | None
    level: Level | None
    paired: bool  # within rounds; else independent samples (runs of two campaigns)
    rounds: int  # paired: the rounds it rests on; unpaired: the reference's runs
    target_runs: int  # unpaired: the target's runs (paired: = rounds)
    through: int | None = None  # decided at the look after this round (rounds 1..it)
    last_round: int | None = None  # paired: the last round either side has
    centre_reference: float | None = None  # paired: geometric mean over the same rounds
    centre_target: float | None = None  # unpaired: the medians
    p: float | None = None  # the deciding test's p (difference or TOST), as tested
    spread: float | None = None  # paired: sd of the per-round log ratios
    detectable: float | None = None  # open: the smallest change likely decided here
    note: str = ""  # why nothing can be decided (no data, no spread, fixed rounds)
    headline: bool = True
    margin: float = 0.0  # the equivalence margin it was tested against
    threshold: float = 0.0  # the smallest change a better/worse must show

    @property
    def decided(self) -> bool:
        return self.outcome in DECIDED

    @property
    def mark(self) -> str:
        return MARKS[self.outcome]

    @property
    def early(self) -> bool:
        """Decided at a look before the last round the pair has: its figure rests on
        fewer rounds than the table's centres."""
        return (
            self.through is not None
            and self.last_round is not None
            and self.through < self.last_round
        )

    def flipped(self) -> Finding:
        """The reference against the target: the same evidence read the other way."""
        inv = lambda x: None if not x else 1 / x  # noqa: E731 - a one-line inverse
        return replace(
            self,
            reference=self.target,
            target=self.reference,
            outcome=_FLIP.get(self.outcome, self.outcome),
            ratio=inv(self.ratio),
            low=inv(self.high),
            high=inv(self.low),
            centre_reference=self.centre_target,
            centre_target=self.centre_reference,
            rounds=self.target_runs if not self.paired else self.rounds,
            target_runs=self.rounds if not self.paired else self.target_runs,
        )

    def data(self) -> dict:
        """As the machine-readable outputs write it (JSON, the store, history)."""
        return {
            "reference": self.reference,
            "target": self.target,
            "outcome": self.outcome,
            "mark": self.mark,
            "ratio": self.ratio,
            "interval": list(self.interval) if self.interval is not None else None,
            "confidence": self.level.confidence if self.level is not None else None,
            "level": self.level.words() if self.level is not None else None,
            "paired": self.paired,
            "rounds": self.rounds if self.paired else None,
            "runs": None if self.paired else [self.rounds, self.target_runs],
            "decided_at_round": self.through,
            "centres": [self.centre_reference, self.centre_target],
            "p_value": self.p,
            "detectable_change": self.detectable,
            "note": self.note or None,
            "text": self.sentence(),
        }

    # ------------------------------------------------------------ words

    def change(self, what: str = "", labelled: bool = False) -> str:
        """'−47% TPC-B tps [−63%, −25%]' (``labelled``: '[99.2% CI −63%, −25%]')."""
        label = self.level.label if labelled and self.level else ""
        return change_text(self.ratio, self.interval, what, label)

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if self.low is None or self.high is None else (self.low, self.high)

    def span(self) -> str:
        """'−17%..+20%' (the interval), or the figure alone without one."""
        if self.interval is None:
            return change_text(self.ratio)
        return span_text(self.interval)

    def rests_on(self) -> str:
        """'16 rounds', 'rounds 1–6', '5 and 7 runs'."""
        if not self.paired:
            return f"{self.rounds} and {self.target_runs} runs"
        if self.early:
            return f"rounds 1–{self.through}"
        return f"{self.rounds} round{'s' if self.rounds != 1 else ''}"

    def outcome_words(self) -> str:
        """'better', 'worse', 'equivalent within ±10%', 'not told apart', 'no data'."""
        if self.outcome == EQUIVALENT:
            return f"equivalent within ±{self.margin * 100:g}%"
        if self.outcome == INCONCLUSIVE:
            return "not told apart"
        if self.outcome == NA:
            return self.note or "no comparison"
        return self.outcome

    def sentence(self, what: str = "") -> str:
        """The finding in one line, as every output says it: 'xfs vs ext4: +9.5%
        [−3.1%, +24%], not told apart (16 rounds)'."""
        head = f"{self.target} vs {self.reference}"
        if self.ratio is None:
            return f"{head}: {self.outcome_words()}"
        when = f", decided at round {self.through}" if self.early else ""
        note = f"; {self.note}" if self.note and self.outcome != NA else ""
        return (
            f"{head}: {self.change(what)}, {self.outcome_words()} ({self.rests_on()}{when}){note}"
        )


def holding(ratio: float | None, low: float | None, high: float | None):
    """An interval widened to hold its figure (an unpaired bootstrap interval of a few
    runs can leave the ratio of medians outside it)."""
    if ratio is None or low is None or high is None:
        return low, high
    return min(low, ratio), max(high, ratio)


def finding_of(
    table: Table,
    row: Row,
    reference: str,
    target: str,
    judged: Judged,
    level: Level | None,
    headline: bool = True,
) -> Finding:
    """The finding of ``judged`` (target against reference on ``row``), its figures
    read once: the estimate the decision tested, its interval at ``level``, the centre
    of each side over the same rounds, and for an open headline pair the smallest change
    these rounds would likely have decided."""
    c = judged.comparison
    paired = c.paired
    a, b = row.cells[reference], row.cells[target]
    conf = level.confidence if level is not None else None
    interval = c.ci_at(conf) if conf is not None else None
    low, high = interval if interval is not None else (None, None)
    through = judged.at_round if judged.decided and paired is not None else None
    if paired is not None:
        centres = _geometric_centres(a, b, through)
        rounds, runs = paired.n, paired.n
    else:
        low, high = holding(c.ratio, low, high)
        centres = (a.value, b.value)  # each side's own centre: their ratio is the estimate
        rounds, runs = c.n_base, c.n_other
    open_ = judged.outcome == sequential.INCONCLUSIVE
    return Finding(
        row.workload,
        row.label,
        row.metric,
        row.unit,
        row.higher_is_better,
        reference,
        target,
        _outcome(judged.outcome, row.higher_is_better),
        c.ratio,
        low,
        high,
        level if low is not None else None,
        paired is not None,
        rounds,
        runs,
        through,
        judged.last_round,
        *centres,
        p=judged.p,
        spread=paired.spread if paired is not None else None,
        detectable=(
            detectable(paired, judged.level)
            if headline and open_ and paired is not None and judged.level
            else None
        ),
        note=judged.note,
        headline=headline,
        margin=table.equivalence,
        threshold=table.noise,
    )


def _outcome(outcome: str, higher_is_better: bool | None) -> str:
    if outcome in (sequential.HIGHER, sequential.LOWER):
        if higher_is_better is None:
            return DIFFERENT
        return BETTER if (outcome == sequential.HIGHER) == higher_is_better else WORSE
    return {sequential.EQUIVALENT: EQUIVALENT, sequential.INCONCLUSIVE: INCONCLUSIVE}.get(
        outcome, NA
    )


def _geometric_centres(a, b, through: int | None) -> tuple[float | None, float | None]:
    """Each side's geometric mean over the rounds both have (up to ``through``): their
    ratio is the pair's estimate."""

    def by_round(cell) -> dict[int, float]:
        out: dict[int, float] = {}
        for r, v in zip(cell.rounds, cell.values):
            if through is None or r <= through:
                out.setdefault(r, v)
        return out

    pairs = pair_by_round(by_round(a), by_round(b))
    if not pairs:
        return None, None
    n = len(pairs)
    return (
        math.exp(sum(math.log(x) for x, _ in pairs) / n),
        math.exp(sum(math.log(y) for _, y in pairs) / n),
    )
