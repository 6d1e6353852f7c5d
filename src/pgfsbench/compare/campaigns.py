"""``pgfsbench compare BASELINE CONTENDER...``: campaigns as one Comparison.

The pairing and the provenance check are ``compare/pairing.py``; here, what the
output formats get: the table's rows, the verdicts, a title naming the sides,
the facts of each side, and the warnings and notes every format shows (each
prefixed with its contender's column when there are several).
"""

from __future__ import annotations

from collections.abc import Callable

from pgfsbench.analysis.caveats.durability import durabilities
from pgfsbench.analysis.table import Row
from pgfsbench.analysis.verdicts.verdict_lines import Durabilities, verdict_lines
from pgfsbench.compare.comparison import Comparison
from pgfsbench.compare.pairing import Pairing, pair_label, paired_table
from pgfsbench.compare.row_texts import select_rows
from pgfsbench.store.read import Campaign


def side_facts(role: str, column: str, c: Campaign) -> dict:
    return {
        "role": role,
        "column": column,
        "uuid": c.uuid,
        "id": c.id,
        "plan": c.plan_name,
        "started": c.started,
        "host": c.host.get("hostname"),
        "results_dir": str(c.results_dir),
    }


def _side(c: Campaign, column: str) -> str:
    return f"{column} ({c.plan_name}, {c.host.get('hostname', '?')})"


def row_durability(group: list[Pairing]) -> Callable[[Row], Durabilities]:
    """A row is one pair's measurement: in each column, the crash safety of the pair's
    target on that side (a faster contender that is not crash-safe must say so here
    as in a campaign's own verdicts)."""
    sides: dict[str, Durabilities] = {}  # pair label → column → class
    for p in group:
        base, cont = durabilities(p.baseline), durabilities(p.contender)
        for b, c in p.pairs:
            side = sides.setdefault(pair_label((b, c)), {})
            side[p.names[0]], side[p.names[1]] = base.get(b), cont.get(c)

    def of_row(row: Row) -> Durabilities:
        return next(
            (
                d
                for label, d in sides.items()
                if row.label == label or row.label.startswith(label + " ")
            ),
            {},
        )

    return of_row


def cross_comparison(
    group: list[Pairing], alpha: float | None, noise: float | None, metric: str | None
) -> Comparison:
    table = paired_table(group, alpha, noise)
    rows = select_rows(table, metric)
    first = group[0]
    several = len(group) > 1
    title = (
        f"baseline {_side(first.baseline, first.names[0])} vs contender"
        f"{'s' if several else ''} " + ", ".join(_side(p.contender, p.names[1]) for p in group)
    )
    facts = [side_facts("baseline", first.names[0], first.baseline)]
    facts += [side_facts("contender", p.names[1], p.contender) for p in group]

    def who(p: Pairing, text: str) -> str:
        return f"{p.names[1]}: {text}" if several else text

    durability = row_durability(group)
    return Comparison(
        table,
        rows,
        verdict_lines(table, durability),
        title,
        tuple(facts),
        tuple((b, c, p.names[1]) for p in group for b, c in p.pairs),
        tuple(who(p, w) for p in group for w in p.warnings),
        tuple(who(p, n) for p in group for n in p.notes),
        durability,
    )
