"""One verdict line per measurement: the targets ranked into tiers, in plain words.

Read from the headline family's pair decisions (``family.py``), so a line
never says more than the table's marks. The line leads with the answer
(``tiers.py``): ``ext4 ≈ xfs > btrfs``, every pair across tiers decided, then
by how much the lower tiers lose (percentages with their CIs, over the rounds
actually run) and what is not told apart inside a tier. Its kind:

* **winner**: one target alone in the top tier: decided better than every other;
* **tied leaders**: several in the top tier, every pair decided (shown
  equivalent inside it): an answer more rounds would not change;
* **equivalent**: every pair shown equivalent within the noise margin;
* **partly decided**: some pairs decided, others not: the tiers say which;
* **inconclusive**: nothing decided at all, with how many rounds would likely
  settle it;
* **single run**: one run each, which cannot tell a difference from noise.

Nothing decided is ever filed under "inconclusive". An unsafe winner (or leader)
is never named without the warning that it is unsafe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pgfsbench.analysis.caveats.durability import SAFE, Durability, stated
from pgfsbench.analysis.findings import Finding
from pgfsbench.analysis.stats.medians import fmt_p
from pgfsbench.analysis.table import Row, Table
from pgfsbench.analysis.verdicts.answer import measurement_answer, relation_of
from pgfsbench.analysis.verdicts.tiers import Tiers, rank

WINNER, EQUIVALENT, INCONCLUSIVE, SINGLE = "winner", "equivalent", "inconclusive", "single run"
# Every pair decided, yet no single winner (equivalent leaders ahead of the rest): an
# answer, which more rounds would not change.
LEADERS = "tied leaders"
# Some pairs decided, some not: the tiers say which (never filed under inconclusive).
PARTIAL = "partly decided"
# Measured for the advice with its own count in an 'auto' plan: described, never tested.
DESCRIBED = "described"


@dataclass
class VerdictLine:
    workload: str
    label: str
    metric: str
    unit: str
    kind: str  # WINNER, LEADERS, EQUIVALENT, PARTIAL, INCONCLUSIVE or SINGLE
    winner: str | None
    text: str  # the answer: tiers first, then by how much, then what is open
    durability: dict[str, str] = field(default_factory=dict)  # column → class
    warning: str = ""  # the winner (or leader) is not crash-safe
    # What the runs behind it measured instead of storage, loop-image and virtual-disk
    # caveats: filled by analysis.caveats.notes.fill_verdict_caveats.
    caveats: list[str] = field(default_factory=list)
    tiers: Tiers | None = None  # None for single runs
    details: list[str] = field(default_factory=list)  # each pair's test: p, design, round

    @property
    def title(self) -> str:
        return f"{self.workload} {self.label}".strip()

    @property
    def ranking(self) -> str:
        """The tiers in a few characters (``ext4 ≈ xfs > btrfs``), or the kind."""
        if self.tiers is None or not self.tiers.decided_any:
            return self.kind
        return self.tiers.text()


Durabilities = dict[str, Durability | None]  # column → its target's class


def verdict_lines(
    table: Table, durability: Durabilities | Callable[[Row], Durabilities]
) -> list[VerdictLine]:
    """``durability``: each column's target classified, or, where a column holds a
    different target on each row (campaigns compared, a pair a row), a row's."""
    of_row = durability if callable(durability) else (lambda row: durability)
    lines = []
    for row in table.rows:
        if not row.headline or row.higher_is_better is None:
            continue
        order = _ranked(row)
        if len(order) >= 2:
            lines.append(_line(row, order, table, of_row(row)))
    return lines


def _ranked(row: Row) -> list[str]:
    values = {t: c.value for t, c in row.cells.items() if c.value is not None}
    return sorted(values, key=lambda t: values[t], reverse=bool(row.higher_is_better))


def _line(row: Row, order: list[str], table: Table, durability: Durabilities) -> VerdictLine:
    classes = {
        t: (d.level if (d := durability.get(t)) else "unknown") for t in table.targets if t in order
    }  # plan order, baseline first
    line = VerdictLine(
        row.workload, row.label, row.metric, row.unit, INCONCLUSIVE, None, "", classes
    )
    described = table.design is not None and (row.workload, row.label) in table.design.descriptive
    if described:
        _described(line, row, order)
    elif all(row.cells[t].n < 2 for t in order) or not table.pairs:
        _single(line, row, order)
    else:
        tiers = rank(order, relation_of(table, row))
        line.tiers = tiers
        line.kind = _kind(tiers)
        if line.kind == WINNER:
            line.winner = tiers.tiers[0][0]
        line.text = measurement_answer(row, table, tiers)
        line.details = _details(row, table, tiers)
    # The claim is about the targets that have a value; say which have none.
    if missing := [t for t in table.targets if t not in order]:
        line.text += f"; no data for {', '.join(missing)}"
    lead = line.winner or (line.tiers.tiers[0][0] if line.tiers else order[0])
    unsafe_leaders = [
        t
        for t in (line.tiers.tiers[0] if line.tiers else [lead])
        if classes.get(t) not in (SAFE, "unknown")
    ]
    if unsafe_leaders:
        first = unsafe_leaders[0]
        d = durability.get(first)
        line.warning = stated(first, d) if d is not None else f"{first}: crash safety unknown"
    return line


def _kind(tiers: Tiers) -> str:
    if not tiers.decided_any:
        return INCONCLUSIVE
    if not tiers.all_decided:
        return PARTIAL
    if len(tiers.tiers) == 1:
        return EQUIVALENT if all(rel == "same" for *_, rel in tiers.inside) else PARTIAL
    return WINNER if len(tiers.tiers[0]) == 1 else LEADERS


def _described(line: VerdictLine, row: Row, order: list[str]) -> None:
    """Medians only: what the advice reads, said as such (no test, no share of alpha)."""
    line.kind = DESCRIBED
    rounds = max(row.cells[t].n for t in order)
    line.text = (
        f"for the advice, not tested (its own {rounds} round"
        + ("s" if rounds != 1 else "")
        + "): "
        # ``order`` holds the targets with a value (_ranked)
        + " · ".join(f"{t} {_number(v)}" for t in order if (v := row.cells[t].value) is not None)
        + f" {row.unit}"
    )


def _number(x: float) -> str:
    """Thousands separated, three significant digits (3,118; 2.47)."""
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def _single(line: VerdictLine, row: Row, order: list[str]) -> None:
    word = "higher" if row.higher_is_better else "lower"
    line.kind = SINGLE
    leader = order[0]
    tied = [t for t in order if row.cells[t].value == row.cells[leader].value]
    said = (
        f"{' and '.join(tied)} had the same {row.metric}"
        if len(tied) > 1
        else f"{leader} had the {word} {row.metric}"
    )
    line.text = (
        f"{said} in a single run each; one run cannot tell a real "
        "difference from noise (set [repetitions] count to 5 or more, or "
        '"auto")'
    )


def _details(row: Row, table: Table, tiers: Tiers) -> list[str]:
    """Each pair's finding, for readers who want the statistics: b against a, a ahead."""
    ordered = [t for tier in tiers.tiers for t in tier]
    out = []
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            f = table.pair(row, a, b)
            if f is not None:
                out.append(_figure(f))
    return out


def _figure(f: Finding) -> str:
    """'btrfs vs xfs: −47% [−63%, −25%], worse (16 rounds), p<0.001, 99.2% CI'."""
    parts = [f.sentence()]
    if f.decided and f.p is not None:
        parts.append(fmt_p(f.p))
    if f.level is not None:
        parts.append(f.level.label)
    return ", ".join(parts)
