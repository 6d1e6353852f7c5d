"""One verdict line per measurement: who wins, by how much, and is it safe.

A winner is named only when it beats *every* other target on the
measurement's headline metric significantly (Mann-Whitney U, Holm-corrected
over all verdicts of the table) and by more than the noise threshold. An
unsafe winner is never named without the warning that it is unsafe.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgfsbench.analysis.durability import SAFE, Durability
from pgfsbench.analysis.stats import Comparison, classify, compare, holm, min_n_per_side
from pgfsbench.analysis.table import Row, Table

WINNER, TIE, INSUFFICIENT, SINGLE = "winner", "no difference", "insufficient", "single run"


@dataclass
class VerdictLine:
    workload: str
    label: str
    metric: str
    unit: str
    kind: str  # WINNER, TIE, INSUFFICIENT or SINGLE
    winner: str | None
    text: str
    durability: dict[str, str] = field(default_factory=dict)  # column → class
    warning: str = ""  # the winner (or leader) is not crash-safe
    # What the runs behind it measured instead of storage, loop-image and virtual-disk
    # caveats: filled by analysis.caveats.fill_verdict_caveats.
    caveats: list[str] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.workload} {self.label}".strip()


def verdict_lines(table: Table, durability: dict[str, Durability | None]) -> list[VerdictLine]:
    rows = [r for r in table.rows if r.headline and r.higher_is_better is not None]
    tests = []  # (row index, leader, other, comparison)
    ranked: list[list[str]] = []
    for i, row in enumerate(rows):
        order = _ranked(row)
        ranked.append(order)
        for other in order[1:]:
            tests.append((i, other, *_leader_vs(row, order[0], other, table.alpha)))
    adjusted = holm([c.p_value for _, _, c, _ in tests])
    family = max(1, len(tests))
    lines = []
    for i, row in enumerate(rows):
        order = ranked[i]
        if len(order) < 2:
            continue
        mine = [(other, c, flipped, p)
                for (j, other, c, flipped), p in zip(tests, adjusted) if j == i]
        lines.append(_line(row, order, mine, table, durability, family))
    return lines


def _leader_vs(row: Row, leader: str, other: str, alpha: float) -> tuple[Comparison, bool]:
    """The leader measured against `other`, and whether the roles are flipped.

    Normally `other` is the reference (ratio leader/other). When its median is
    zero or negative there is no such ratio, so the leader is the reference
    (ratio other/leader) and the direction is read the other way round.
    """
    c = compare(row.cells[other].values, row.cells[leader].values, alpha)
    if c.ratio is None and c.n_base and c.n_other:
        return compare(row.cells[leader].values, row.cells[other].values, alpha), True
    return c, False


def _ranked(row: Row) -> list[str]:
    values = {t: c.value for t, c in row.cells.items() if c.value is not None}
    return sorted(values, key=values.get, reverse=bool(row.higher_is_better))


def _line(row: Row, order: list[str], tests: list, table: Table,
          durability: dict[str, Durability | None], family: int) -> VerdictLine:
    leader = order[0]
    classes = {t: (d.level if (d := durability.get(t)) else "unknown")
               for t in table.targets if t in order}  # plan order, baseline first
    word = "higher" if row.higher_is_better else "lower"
    line = VerdictLine(row.workload, row.label, row.metric, row.unit, TIE, None, "",
                       classes)
    # "better" is always the leader's: a flipped comparison reads the other way.
    verdicts = {other: classify(c, p, higher_is_better=row.higher_is_better != flipped,
                                alpha=table.alpha, noise=table.noise, comparisons=family)
                for other, c, flipped, p in tests}
    comparisons = {other: (c, flipped) for other, c, flipped, _ in tests}

    def against(other: str) -> str:
        (c, flipped), v = comparisons[other], verdicts[other]
        ci = f" [{c.ci_low:.2f}, {c.ci_high:.2f}]" if c.ci_low is not None else ""
        ratio = f"×{c.ratio:.2f}" if c.ratio is not None else "n/a"
        if flipped:
            return f"{other} at {ratio}{ci} of {leader} ({v.reason})"
        return f"{ratio}{ci} vs {other} ({v.reason})"

    if all(row.cells[t].n < 2 for t in order):
        line.kind = SINGLE
        line.text = (f"{leader} had the {word} {row.metric} in a single run each; one run "
                     "cannot tell a real difference from noise (set [repetitions] count = "
                     f"{min_n_per_side(table.alpha, family)} or more)")
    elif all(v.kind == "better" for v in verdicts.values()):
        line.kind, line.winner = WINNER, leader
        line.text = f"{leader} wins: " + "; ".join(against(o) for o in order[1:])
    elif any(v.kind == "insufficient" for v in verdicts.values()):
        line.kind = INSUFFICIENT
        need = min_n_per_side(table.alpha, family)
        line.text = (f"cannot tell yet: {leader} leads, but a difference needs n ≥ {need} per "
                     f"side for {family} comparison{'s' if family > 1 else ''} (have "
                     + ", ".join(f"{t} {row.cells[t].n}" for t in order) + ")")
    else:
        same = [o for o in order[1:] if verdicts[o].kind not in ("better", "na")]
        behind = [o for o in order[1:] if verdicts[o].kind == "better"]
        apart = [o for o in order[1:] if verdicts[o].kind == "na"]
        line.text = "no clear winner"
        if same:
            line.text += (f": {', '.join([leader, *same])} are not distinguishable "
                          f"({'; '.join(against(o) for o in same)})")
        if behind:
            line.text += f"; {', '.join(behind)} {'is' if len(behind) == 1 else 'are'} behind"
        if apart:
            line.text += "; " + "; ".join(f"{o} cannot be compared with {leader} "
                                          f"({verdicts[o].reason})" for o in apart)
    # The claim is about the targets that have a value; say which have none.
    if missing := [t for t in table.targets if t not in order]:
        line.text += f"; no data for {', '.join(missing)}"
    lead = line.winner or leader
    if classes.get(lead) not in (SAFE, "unknown"):
        reasons = durability[lead].reasons if durability.get(lead) else []
        line.warning = (f"{lead} is {classes[lead].upper()}"
                        + (f": {reasons[0]}" if reasons else ""))
    return line
