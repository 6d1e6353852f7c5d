"""The headline family: every pair of targets on every headline measurement, decided once.

The table's marks on headline rows and the verdict lines both read these
decisions, and they are made by the same procedure a running campaign uses to
stop (``sequential.decide`` over ``headline_family`` with the plan's design),
so the three never disagree. Pairs measured in the same rounds of one
campaign are paired; the others (results directories whose rounds do not
correspond) fall back to independent samples. When a family holds
both, alpha is split between them in proportion to their weights (the plan's
``[verdicts] weights``; their sizes when none are given) (Bonferroni),
so the family-wise error stays under alpha (pairs that could never reach a p,
one run a side, take no share); within the unpaired share each CI is held to
its Bonferroni level, equivalence included (``outcome.judge_unpaired``).

An undecided pair whose rounds ended well before the campaign's (a measurement
with its own fixed repetitions in an 'auto' plan stored before such were left
out of the family) says why: more rounds of the campaign add none to it.

A paired decision made at a look before the last round keeps the comparison on
that look's rounds (``sequential.Decision.paired``), so the figure and interval
shown are the ones the decision was made on, at its level.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pgfsbench.analysis.findings import Level
from pgfsbench.analysis.stats.medians import Comparison, compare, compare_rounds, holm
from pgfsbench.analysis.stats.outcome import Judged, from_decision, judge_unpaired
from pgfsbench.analysis.stats.sequential import (
    EQUIVALENT,
    INCONCLUSIVE,
    Design,
    Key,
    decide,
    headline_family,
    shares,
)


def rounds_of(cell) -> dict[int, float]:
    """Round → value of a table cell (its first value where a round repeats)."""
    out: dict[int, float] = {}
    for r, v in zip(cell.rounds, cell.values):
        out.setdefault(r, v)
    return out


def pairable(base, other) -> bool:
    """Measured in the same rounds of the same campaign (at least two of them)."""
    return (
        bool(base.block)
        and base.block == other.block
        and len(set(base.rounds) & set(other.rounds)) >= 2
    )


def compare_cells(
    base, other, alpha: float, noise: float, margin: float | None = None
) -> Comparison:
    """Within rounds where the design is paired, else independent samples (equivalence
    within ``margin``, default ``noise``)."""
    if pairable(base, other):
        return compare_rounds(
            rounds_of(base), rounds_of(other), noise if margin is None else margin, noise
        )
    return compare(base.values, other.values, alpha)


@dataclass(frozen=True)
class Headlines:
    """The headline family decided: each pair's outcome, and what its levels are made
    of (how many comparisons share alpha, over how many looks), for the words."""

    judged: dict[Key, Judged]
    alpha: float
    family: int  # comparisons sharing alpha (paired and unpaired)
    looks: tuple[int, ...] = ()  # the rounds of the paired design's looks
    # Each comparison's share of alpha where the plan's weights make the shares unequal
    # (empty: 1 / family each).
    shares: dict[Key, float] = field(default_factory=dict)

    def level(self, key: Key) -> Level | None:
        j = self.judged[key]
        conf = j.confidence()
        if conf is None:
            return None
        paired = j.comparison.paired is not None
        looks = self.looks if paired else ()
        look = (
            looks.index(j.at_round) + 1
            if j.at_round in looks
            else sum(r <= (j.last_round or 0) for r in looks) or 1
        )
        return Level(
            conf,
            self.alpha,
            self.family,
            max(1, len(looks)),
            look,
            tost=j.outcome == EQUIVALENT,
            share=self.shares.get(key),
        )


def decide_headlines(rows: list, columns: list[str], design: Design) -> Headlines:
    """Every pair of targets (a before b in column order): b judged against a."""
    # Cells without rounds (not paired with anything) are in the family all the same.
    values = {
        (r.workload, r.label): {
            t: rounds_of(c) or dict(enumerate(c.values, 1))
            for t, c in r.cells.items()
            if c.value is not None
        }
        for r in rows
    }
    cells = {(r.workload, r.label): r.cells for r in rows}
    # Measurements described, not tested (their own count in an 'auto' plan): no pair,
    # paired or not, takes a share of alpha.
    everything = headline_family(values, columns, design.descriptive)
    paired = {
        k: v for k, v in everything.items() if pairable(cells[k[:2]][k[2]], cells[k[:2]][k[3]])
    }
    unpaired = {
        k: compare(cells[k[:2]][k[2]].values, cells[k[:2]][k[3]].values, design.alpha)
        for k in everything
        if k not in paired
    }
    # A pair whose sizes can never reach a p (one run a side) claims nothing: no alpha for it.
    live = sum(c.p_value is not None for c in unpaired.values())
    # Each comparison's share of alpha, by the plan's weights (1 / its size without).
    portion = shares([*paired, *(k for k, c in unpaired.items() if c.p_value is not None)], design)
    share = sum(portion[k] for k in paired)
    out: dict[Key, Judged] = {}
    looks: tuple[int, ...] = ()
    if paired:
        if design.first_look == design.last_look:
            # A fixed count is one look: at the last round the data has (a workload's own
            # repetitions, or a campaign cut short, make it differ from the count).
            last = max(r for base, other in paired.values() for r in base.keys() & other.keys())
            design = replace(
                Design.fixed(design.alpha, design.noise, last),
                descriptive=design.descriptive,
                margin=design.margin,
                weights=design.weights,
            )
        decisions = decide(paired, replace(design, alpha=design.alpha * share))
        looks = tuple(design.levels())
        out |= {
            k: from_decision(d, max(paired[k][0].keys() & paired[k][1].keys(), default=None))
            for k, d in decisions.items()
        }
        if design.first_look != design.last_look:
            out |= _fixed_rounds({k: out[k] for k in decisions}, paired)
    if unpaired:
        # none live: nothing is spent, and "need n ≥ …" is quoted at the full alpha
        alpha = design.alpha * (1 - share) if live else design.alpha
        adjusted = holm([c.p_value for c in unpaired.values()])
        for (k, c), p in zip(unpaired.items(), adjusted):
            out[k] = judge_unpaired(
                c, p, alpha, design.noise, comparisons=max(1, live), margin=design.margin
            )
    unequal = len(set(portion.values())) > 1
    return Headlines(out, design.alpha, len(paired) + live, looks, portion if unequal else {})


FIXED_ROUNDS = (
    "its rounds ended at round {last} while the campaign ran {ran}, so more "
    "rounds add none to it (a measurement with its own repetitions)"
)


def _fixed_rounds(judged: dict[Key, Judged], paired: dict) -> dict[Key, Judged]:
    """Undecided pairs whose rounds ended two or more rounds before the campaign's
    last (pg_test_fsync with its own 3 repetitions in an 'auto' plan): more rounds of
    the campaign add none to them, which their note says."""
    last = {k: max(base.keys() & other.keys(), default=0) for k, (base, other) in paired.items()}
    ran = max(last.values(), default=0)
    # A pair whose sides have later rounds, just none in common (runs left out as
    # disturbed, or failed), did not end: more rounds may well add to it.
    ended = {k: max(base.keys() | other.keys(), default=0) for k, (base, other) in paired.items()}
    return {
        k: replace(j, note=FIXED_ROUNDS.format(last=last[k], ran=ran))
        for k, j in judged.items()
        if j.outcome == INCONCLUSIVE and ended[k] <= ran - 2
    }
