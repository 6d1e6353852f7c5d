"""``pgfsbench compare BASELINE CONTENDER``: two campaigns as one Comparison.

The pairing and the provenance check are ``analysis/pairing.py``; here, what the
output formats get: the table's rows, the verdicts, a title naming both sides,
the facts of each side, and the warnings and notes every format shows.
"""

from __future__ import annotations

from pgfsbench.analysis.pairing import Pairing, paired_table
from pgfsbench.analysis.verdicts import verdict_lines
from pgfsbench.export.output import Comparison
from pgfsbench.report.compare import select_rows
from pgfsbench.store.read import Campaign


def side_facts(role: str, column: str, c: Campaign) -> dict:
    return {"role": role, "column": column, "uuid": c.uuid, "id": c.id, "plan": c.plan_name,
            "started": c.started, "host": c.host.get("hostname"),
            "results_dir": str(c.results_dir)}


def cross_comparison(p: Pairing, alpha: float, noise: float, metric: str | None) -> Comparison:
    table = paired_table(p, alpha, noise)
    rows = select_rows(table, metric)
    b, c = p.names
    title = (f"baseline {b} ({p.baseline.plan_name}, {p.baseline.host.get('hostname', '?')}) "
             f"vs contender {c} ({p.contender.plan_name}, "
             f"{p.contender.host.get('hostname', '?')})")
    return Comparison(table, rows, verdict_lines(table, {}), title,
                      (side_facts("baseline", b, p.baseline),
                       side_facts("contender", c, p.contender)),
                      tuple(p.pairs), tuple(p.warnings), tuple(p.notes))
