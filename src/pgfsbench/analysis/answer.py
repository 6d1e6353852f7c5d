"""The answer in plain words: tiers first, then by how much, then what is still open.

``ext4 ≈ xfs > btrfs: btrfs −51% TPC-B tps [−53%, −48%]; xfs vs ext4 within −11%..+4%,
not told apart in 10 rounds``. Changes are percentages (a multiple, ``3.6×``, where
one side is more than twice the other), each with its confidence interval; no nested
parentheses; the rounds are the ones that ran.
"""

from __future__ import annotations

from collections.abc import Callable

from pgfsbench.analysis.labels import metric_label
from pgfsbench.analysis.outcome import Judged, percent_text, settle_text
from pgfsbench.analysis.sequential import EQUIVALENT, HIGHER, LOWER
from pgfsbench.analysis.table import Row, Table
from pgfsbench.analysis.tiers import BETTER, OPEN, SAME, Tiers

MINUS = "\u2212"


def relation_of(table: Table, row: Row) -> Callable[[str, str], str]:
    """relation(a, b) on a headline row: BETTER (a decided better), SAME or OPEN."""
    better = bool(row.higher_is_better)

    def relation(a: str, b: str) -> str:
        j = table.pair(row, a, b)  # b judged against a
        if j is None:
            return OPEN
        if j.outcome == (LOWER if better else HIGHER):
            return BETTER
        return SAME if j.outcome == EQUIVALENT else OPEN

    return relation


def percent(ratio: float) -> str:
    x = (ratio - 1) * 100
    text = f"{x:+.0f}%" if abs(x) >= 9.95 else f"{x:+.1f}%"
    return text.replace("-", MINUS)


def change(
    ratio: float | None, ci: tuple[float, float] | None = None, what: str = "", label: str = ""
) -> str:
    """'−51% [−53%, −48%]', or '3.6× [3.3×, 4.1×]' where the ratio is 2 or more;
    ``what`` goes between the figure and its CI ('−51% TPC-B tps [−53%, −48%]'), ``label``
    inside the brackets ('[97.9% CI −53%, −48%]')."""
    if ratio is None:
        return "no ratio"
    if ratio >= 2 or (ratio > 0 and ratio <= 0.05):
        fmt = (lambda r: f"{r:.2g}×") if ratio >= 2 else (lambda r: f"×{r:.2g}")
    else:
        fmt = percent
    what = f" {what}" if what else ""
    if ci is None:
        return f"{fmt(ratio)}{what}"
    label = f"{label} " if label else ""
    return f"{fmt(ratio)}{what} [{label}{fmt(ci[0])}, {fmt(ci[1])}]"


def decided_change(j: Judged, what: str = "") -> str:
    """A decided pair's change with the CI at the level of its decision, labelled: the
    interval agrees with the decision (a plain 95% CI need not after an early stop)."""
    ci = j.decision_ci()
    if ci is None:
        return change(j.comparison.ratio, _ci(j), what)
    return change(ci.ratio, (ci.low, ci.high), what, f"{percent_text(ci.confidence)} CI")


def _ci(j: Judged) -> tuple[float, float] | None:
    c = j.comparison
    return (c.ci_low, c.ci_high) if c.ci_low is not None and c.ci_high is not None else None


def _span(j: Judged, bare: bool = False) -> str:
    """'within −11%..+4%' (the CI; ``bare``: '−11%..+4%'), or the ratio without one."""
    ci = _ci(j)
    if ci is None:
        return f"at {change(j.comparison.ratio)}"
    return ("" if bare else "within ") + f"{percent(ci[0])}..{percent(ci[1])}"


def _runs(j: Judged) -> str:
    c = j.comparison
    if c.paired is not None:
        return f"{c.paired.n} round{'s' if c.paired.n != 1 else ''}"
    return f"{c.n_base} and {c.n_other} runs"


def measurement_answer(row: Row, table: Table, tiers: Tiers, label: bool = True) -> str:
    """One measurement's answer: ``label`` names the metric after each change."""
    name = metric_label(row.metric) if label else ""
    facts: list[str] = []
    top = tiers.tiers[0][0]
    # Against whom, where it is not plain: several on top, or more than two tiers.
    against = f" vs {top}" if len(tiers.tiers[0]) > 1 or len(tiers.tiers) > 2 else ""
    for tier in tiers.tiers[1:]:
        for t in tier:
            j = table.pair(row, top, t)
            assert j is not None  # a lower tier is decided against the top one
            facts.append(f"{t} {decided_change(j, name)}{against}")
    open_: list[tuple[str, str, Judged]] = []
    for a, b, rel in tiers.inside:
        j = table.pair(row, a, b)
        if j is None:
            facts.append(f"{b} vs {a}: no rounds in common")
        elif rel == SAME:
            ci = j.decision_ci()
            span = (
                f"{percent(ci.low)}..{percent(ci.high)} ({percent_text(ci.confidence)} CI)"
                if ci
                else _span(j, bare=True)
            )
            facts.append(f"{b} vs {a} {span}, equivalent within ±{table.equivalence * 100:g}%")
        elif rel == BETTER:  # decided, yet no cut holds it (decisions not transitive)
            facts.append(f"{a} ahead of {b}: {b} {decided_change(j, name)}")
        else:
            open_.append((a, b, j))
    if open_:
        # One clause for the pairs not told apart, grouped by the rounds behind them.
        by_runs: dict[str, list[str]] = {}
        for a, b, j in open_:
            why = f" ({j.note})" if j.note else ""
            by_runs.setdefault(_runs(j), []).append(f"{b} vs {a} {_span(j, bare=True)}{why}")
        facts += [
            f"not told apart in {runs} (95% CIs): {', '.join(pairs)}"
            for runs, pairs in by_runs.items()
        ]
    # Nothing decided: say so first, so the ranking-shaped list is not read as one.
    lead = tiers.text() if tiers.decided_any else "inconclusive"
    text = lead + (": " + "; ".join(facts) if facts else "")
    if open_:
        text += "; " + _settle([j for *_, j in open_], table)
    return text


def _settle(open_: list[Judged], table: Table) -> str:
    """The largest rounds estimate among the pairs not told apart: a planning figure."""
    paired = [(j, p) for j in open_ if (p := j.comparison.paired) is not None]
    if not paired:
        return settle_text(open_[0], table.budget)
    ran = max(p.n for _, p in paired)
    estimated = [(n, p) for j, p in paired if (n := j.rounds_needed) is not None]
    if not estimated:  # the first pair's reason: no spread, fixed rounds, too many
        return f"{settle_text(paired[0][0])} ({ran} ran)"
    need = max(max(n, p.n + 1) for n, p in estimated)
    rest = "" if len(estimated) == len(paired) else ", where an estimate can be made"
    return f"about {need} rounds in all would likely settle it{rest} ({ran} ran)"


def campaign_answer(lines: list) -> str:
    """The whole campaign in one line (``VerdictLine``s): one ranking when every decided
    measurement ranks the targets the same, else each one's; then what is not decided."""
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
    decided = [v for v in ranked if v.tiers.decided_any]
    open_ = [metric_label(v.metric) for v in ranked if not v.tiers.decided_any]
    parts = []
    if decided and len({v.ranking for v in decided}) == 1:
        parts.append(
            f"{decided[0].ranking} on " + " and ".join(metric_label(v.metric) for v in decided)
        )
    else:
        parts += [f"{metric_label(v.metric)}: {v.ranking}" for v in decided]
    if open_:
        parts.append(
            ("nothing told apart on " if not decided else "not told apart on ") + ", ".join(open_)
        )
    return "; ".join(parts)
