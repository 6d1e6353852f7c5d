"""One verdict line per measurement: who wins, by how much, and is it safe.

Read from the headline family's pair decisions (``family.py``), so a line
never says more than the table's marks:

* **winner**: one target is decided better than *every* other target;
* **equivalent**: every pair is decided equivalent within the noise margin;
* **inconclusive**: anything else, naming what is decided and what is not,
  and how many rounds would likely settle the rest;
* **single run**: one run each, which cannot tell a difference from noise.

An unsafe winner (or leader) is never named without the warning that it is unsafe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pgfsbench.analysis.durability import SAFE, Durability
from pgfsbench.analysis.outcome import (Judged, change_text, design_text, interval_text,
                                        settle_text)
from pgfsbench.analysis.sequential import EQUIVALENT as SAME
from pgfsbench.analysis.sequential import HIGHER, LOWER
from pgfsbench.analysis.stats import fmt_p
from pgfsbench.analysis.table import Row, Table

WINNER, EQUIVALENT, INCONCLUSIVE, SINGLE = "winner", "equivalent", "inconclusive", "single run"
# Every pair decided, yet no single winner (equivalent leaders ahead of the rest): an
# answer, which more rounds would not change.
LEADERS = "tied leaders"


@dataclass
class VerdictLine:
    workload: str
    label: str
    metric: str
    unit: str
    kind: str  # WINNER, LEADERS, EQUIVALENT, INCONCLUSIVE or SINGLE
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


Durabilities = dict[str, Durability | None]  # column → its target's class


def verdict_lines(table: Table,
                  durability: Durabilities | Callable[[Row], Durabilities]) -> list[VerdictLine]:
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
    return sorted(values, key=values.get, reverse=bool(row.higher_is_better))


def _beats(j: Judged | None, higher_is_better: bool) -> bool:
    """Whether the reference is decided better than the contender j judged."""
    return j is not None and j.outcome == (LOWER if higher_is_better else HIGHER)


def _line(row: Row, order: list[str], table: Table,
          durability: Durabilities) -> VerdictLine:
    leader = order[0]
    classes = {t: (d.level if (d := durability.get(t)) else "unknown")
               for t in table.targets if t in order}  # plan order, baseline first
    line = VerdictLine(row.workload, row.label, row.metric, row.unit, INCONCLUSIVE, None, "",
                       classes)
    better = bool(row.higher_is_better)
    # b against a for every pair, a ahead of b by median
    judged = {(a, b): table.pair(row, a, b) for i, a in enumerate(order) for b in order[i + 1:]}

    if all(row.cells[t].n < 2 for t in order) or not table.pairs:
        word = "higher" if better else "lower"
        line.kind = SINGLE
        tied = [t for t in order if row.cells[t].value == row.cells[leader].value]
        said = (f"{' and '.join(tied)} had the same {row.metric}" if len(tied) > 1
                else f"{leader} had the {word} {row.metric}")
        line.text = (f"{said} in a single run each; one run cannot tell a real "
                     "difference from noise (set [repetitions] count to 5 or more, or "
                     "\"auto\")")
    elif winner := next((t for t in order if all(
            _beats(table.pair(row, t, o), better) for o in order if o != t)), None):
        line.kind, line.winner = WINNER, winner
        line.text = f"{winner} wins: " + "; ".join(
            _against(table.pair(row, winner, o), o) for o in order if o != winner)
    elif all(j is not None and j.outcome == SAME for j in judged.values()):
        line.kind = EQUIVALENT
        line.text = (f"equivalent within ±{table.noise * 100:g}%: "
                     + "; ".join(f"{b} vs {a} {_figure(j)}" for (a, b), j in judged.items()))
    else:
        settled, line.text = _inconclusive(judged, better, table)
        if settled:
            line.kind = LEADERS
    # The claim is about the targets that have a value; say which have none.
    if missing := [t for t in table.targets if t not in order]:
        line.text += f"; no data for {', '.join(missing)}"
    lead = line.winner or leader
    if classes.get(lead) not in (SAFE, "unknown"):
        reasons = durability[lead].reasons if durability.get(lead) else []
        line.warning = (f"{lead} is {classes[lead].upper()}"
                        + (f": {reasons[0]}" if reasons else ""))
    return line


def _figure(j: Judged) -> str:
    return f"{interval_text(j.comparison)} ({design_text(j.comparison)})"


def _against(j: Judged, other: str) -> str:
    """``other`` against the winner: ratio, CI, design and the deciding p."""
    c = j.comparison
    p = f"{fmt_p(j.p)}, " if j.p is not None else ""
    return f"{other} at {interval_text(c)} ({p}{design_text(c)}, {change_text(c.ratio)})"


def _inconclusive(judged: dict[tuple[str, str], Judged | None], better: bool,
                  table: Table) -> tuple[bool, str]:
    """(every pair decided, the text): what is decided and what is not."""
    decided, open_ = [], []
    for (a, b), j in judged.items():
        if j is None:
            open_.append((a, b, None))
        elif _beats(j, better):
            decided.append(f"{a} beats {b} ({b} at {_figure(j)})")
        elif _beats(j.flipped(), better):
            decided.append(f"{b} beats {a} ({a} at {_figure(j.flipped())})")
        elif j.outcome == SAME:
            decided.append(f"{a} and {b} are equivalent ({_figure(j)})")
        else:
            open_.append((a, b, j))
    # Every pair decided, yet no single winner (equivalent leaders ahead of the rest):
    # nothing more rounds would settle, so the line does not call itself undecided.
    if not open_:
        return True, "no single winner, every pair decided: " + "; ".join(decided)
    parts = ["inconclusive"]
    if decided:
        parts.append("decided: " + "; ".join(decided))
    if open_:
        parts.append("not decided: " + "; ".join(
            f"{a} vs {b}" + ("" if j is None else f" ({j.note})" if j.note else f" {_figure(j)}")
            for a, b, j in open_))
        parts.append(_rounds([j for _, _, j in open_ if j is not None], table))
    return False, parts[0] + ": " + "; ".join(parts[1:])


def _rounds(open_: list[Judged], table: Table) -> str:
    """The largest rounds estimate among the undecided pairs."""
    paired = [j for j in open_ if j.comparison.paired is not None and j.comparison.paired.n >= 2]
    if not paired:
        return settle_text(open_[0], table.budget) if open_ else "more runs would be needed"
    if any(j.rounds_needed is None for j in paired):
        return settle_text(next(j for j in paired if j.rounds_needed is None), table.budget)
    return settle_text(max(paired, key=lambda j: max(j.rounds_needed, j.comparison.paired.n + 1)),
                       table.budget)
