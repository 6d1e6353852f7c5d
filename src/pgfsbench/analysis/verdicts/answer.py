"""The answer in plain words: tiers first, then every target against the baseline, then
what is still open and what this campaign could have decided.

``xfs, ext4 > btrfs: against ext4, btrfs −47% TPC-B tps [−63%, −25%] worse; xfs +9.5%
[−17%, +20%] not told apart (16 rounds); a difference of 25% or more would likely have
been decided here``. Every figure is a finding's (``findings.py``), quoted against the
plan's baseline as in every other output; the levels of the intervals are said once, in
the glossary (``glossary``), not on every line.
"""

from __future__ import annotations

from collections.abc import Callable

from pgfsbench.analysis.findings import (
    BETTER,
    EQUIVALENT,
    INCONCLUSIVE,
    NA,
    WORSE,
    Finding,
)
from pgfsbench.analysis.headline import metric_label
from pgfsbench.analysis.stats.paired import Paired, rounds_for
from pgfsbench.analysis.table import Row, Table
from pgfsbench.analysis.verdicts.tiers import BETTER as AHEAD
from pgfsbench.analysis.verdicts.tiers import OPEN, SAME, Tiers


def relation_of(table: Table, row: Row) -> Callable[[str, str], str]:
    """relation(a, b) on a headline row: AHEAD (a decided better), SAME or OPEN."""

    def relation(a: str, b: str) -> str:
        f = table.pair(row, a, b)  # b against a
        if f is None:
            return OPEN
        if f.outcome == WORSE:
            return AHEAD
        return SAME if f.outcome == EQUIVALENT else OPEN

    return relation


def figure(f: Finding, what: str = "") -> str:
    """'btrfs −47% TPC-B tps [−63%, −25%] worse': a target's finding against the
    baseline as the verdict lines say it (the round of an early decision with it)."""
    words = {BETTER: "better", WORSE: "worse", EQUIVALENT: f.outcome_words()}
    said = words.get(f.outcome, "not told apart" if f.outcome == INCONCLUSIVE else "")
    early = f" (decided at round {f.through})" if f.early else ""
    note = f" ({f.note})" if f.note and f.outcome in (INCONCLUSIVE, NA) else ""
    return f"{f.target} {f.change(what)}" + (f" {said}" if said else "") + early + note


def measurement_answer(row: Row, table: Table, tiers: Tiers, label: bool = True) -> str:
    """One measurement's answer: ``label`` names the metric after the first change."""
    name = metric_label(row.metric, row.workload) if label else ""
    base = table.baseline or ""
    order = [t for tier in tiers.tiers for t in tier]
    facts: list[str] = []
    against = [f for t in order if t != base and (f := table.pair(row, base, t)) is not None]
    if against:
        said = [figure(f, name if i == 0 else "") for i, f in enumerate(against)]
        facts.append(f"against {base}, " + "; ".join(said))
    elif base not in order:
        facts.append(f"no data for the baseline {base}")
    # What the tiers do not show between two other targets: not told apart inside a
    # tier, shown equivalent, or decided without a cut holding it.
    for a, b, rel in tiers.inside:
        if base in (a, b):
            continue
        f = table.pair(row, a, b)
        if f is None:
            facts.append(f"{b} vs {a}: no rounds in common")
        elif rel == AHEAD:
            facts.append(f"{a} ahead of {b}: {figure(f)}")
        else:
            facts.append(f"{b} vs {a} {f.span()}, {f.outcome_words()}")
    lead = tiers.text() if tiers.decided_any else "not told apart"
    text = lead + (": " + "; ".join(facts) if facts else "")
    rounds = _rounds(row, table)
    if rounds:
        text += f" ({rounds})"
    if reach := reach_text(row, table):
        text += f"; {reach}"
    return text


def _rounds(row: Row, table: Table) -> str:
    """'16 rounds' (paired: the most any pair rests on), or '6 and 6 runs' (unpaired: each
    side's, where every pair has the same)."""
    found = _all_pairs(row, table)
    paired = [f.last_round or f.rounds for f in found if f.paired]
    if paired:
        n = max(paired)
        return f"{n} round{'s' if n != 1 else ''}"
    runs = {f.rests_on() for f in found}
    return runs.pop() if len(runs) == 1 else ""


def _all_pairs(row: Row, table: Table) -> list[Finding]:
    return [f for k, f in table.pairs.items() if k[:2] == (row.workload, row.label)]


def reach_text(row: Row, table: Table) -> str:
    """What the open pairs of a measurement are worth: the smallest difference these
    rounds would likely (80%) have decided, and what deciding the margin would take."""
    open_ = [f for f in _all_pairs(row, table) if f.outcome == INCONCLUSIVE and f.paired]
    if not open_:
        return ""
    found = [f.detectable for f in open_ if f.detectable is not None]
    widest = max(open_, key=lambda f: f.spread or 0.0)
    spread = widest.spread
    if not found:
        if spread is None:
            return ""
        return (
            f"its rounds vary by ±{_pct(spread)} (each pair's per-round spread): no "
            "practical number of rounds would decide a difference here"
        )
    reach = max(found)
    size = f"{reach * 100:.0f}%" if reach < 1 else f"{1 + reach:.2g} times"
    text = f"a difference of {size} or more would likely have been decided here"
    if reach > table.equivalence and spread is not None:
        # the pair's rounds as Paired needs them: only spread, n and the claim matter
        need = rounds_for(
            Paired(
                widest.rounds,
                None,
                None,
                spread,
                None,
                None,
                widest.margin,
                None,
                threshold=widest.threshold,
            ),
            table.equivalence,
            _open_level(widest),
        )
        goal = f"{table.equivalence * 100:g}%"
        text += (
            f"; deciding {goal} would take about {need} rounds"
            if need is not None
            else f"; {goal} is out of reach of rounds that vary by ±{_pct(spread)}"
        )
    return text


def _open_level(f: Finding) -> float:
    """The per-comparison level an open finding's interval is at."""
    return 1 - f.level.confidence if f.level is not None else 0.05


def _pct(log_sd: float) -> str:
    import math

    return f"{math.expm1(log_sd) * 100:.0f}%"


# The terms the answer explains under its verdicts, as docs/glossary.md defines them
# (tests/unit/test_docs_build.py checks the page says the same).
TERMS = {
    "Round": "every target measured once, in turn; pairs compared within rounds",
    "Tier": "'a, b > c': c decided worse than a and b, which are not told apart",
}


def glossary(table: Table) -> list[str]:
    """The terms of the answer, said once: the intervals' levels (the decisions'), what
    a round and a tier are (``TERMS``)."""
    levels = dict.fromkeys(f.level.words() for f in table.pairs.values() if f.level is not None)
    out = []
    if levels:
        out.append("[…]: " + "; ".join(levels))
    if any(f.paired for f in table.pairs.values()):
        out.append("a round: " + TERMS["Round"])
    if len(table.targets) > 2 and table.pairs:
        out.append(TERMS["Tier"])
    return [" · ".join(out)] if out else []


def campaign_answer(lines: list) -> str:
    """The whole campaign in one line (``VerdictLine``s): one ranking when every decided
    measurement ranks the targets the same, else each one's; then what is not decided.
    A metric measured several times (a sweep's clients, a pair of campaigns' targets) is
    named with its label, each once."""
    ranked = [v for v in lines if v.tiers is not None]  # not single runs, not described
    if not ranked:
        return (
            (
                "one run each: nothing can be told apart from noise (set [repetitions] "
                'count to 5 or more, or "auto")'
            )
            if lines
            else ""
        )
    shared = {m for m in (metric_label(v.metric, v.workload) for v in ranked)}
    counts = {m: sum(metric_label(v.metric, v.workload) == m for v in ranked) for m in shared}

    def name(v) -> str:
        label = metric_label(v.metric, v.workload)
        return f"{label} ({v.label})" if counts[label] > 1 and v.label else label

    decided = [v for v in ranked if v.tiers.decided_any]
    open_ = list(dict.fromkeys(name(v) for v in ranked if not v.tiers.decided_any))
    parts = []
    if decided and len({v.ranking for v in decided}) == 1:
        on = list(dict.fromkeys(name(v) for v in decided))
        parts.append(f"{decided[0].ranking} on " + " and ".join(on))
    else:
        parts += [f"{name(v)}: {v.ranking}" for v in decided]
    if open_:
        parts.append(
            ("nothing told apart on " if not decided else "not told apart on ") + ", ".join(open_)
        )
    return "; ".join(parts)
