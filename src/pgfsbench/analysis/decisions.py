"""A campaign's decisions, as the tool makes them, for the PostgreSQL store's
``decisions`` table (filled at import: the CLI hands this function to
``store/importing.py``, as the store imports no analysis; the columns are
``store/rows.py``'s).

Verdicts stay in the tool: they are paired within rounds, sequential (a look per
round at an adjusted level), corrected across the headline family and decided
against an equivalence margin. A view computing them in SQL would answer otherwise
than the report; so the store keeps the report's own: each contender against the
baseline, per measurement and metric, with the figures behind it.
"""

from __future__ import annotations

import math

from pgfsbench.store.read import Campaign

DIRECTION = {True: "higher", False: "lower", None: "none"}


def _num(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def decisions(campaign: Campaign) -> list[dict]:
    """One row per contender cell of the campaign's comparison table (its plan's
    baseline, alpha and noise): the report's verdict and its figures, a value for each
    of ``store.rows.DECISIONS``."""
    from pgfsbench.analysis.table import comparison_table  # heavy: only when importing

    table = comparison_table(campaign)
    rows = []
    for row in table.rows:
        base = row.cells.get(table.baseline) if table.baseline else None
        for target, cell in row.cells.items():
            c = cell.comparison
            if c is None or base is None:  # the baseline itself, or nothing to compare
                continue
            rows.append(
                {
                    "workload": row.workload,
                    "label": row.label,
                    "metric": row.metric,
                    "unit": row.unit,
                    "direction": DIRECTION[row.higher_is_better],
                    "headline": row.headline,
                    "target": target,
                    "baseline": table.baseline,
                    "verdict": cell.verdict.kind if cell.verdict else "na",
                    "reason": cell.verdict.reason if cell.verdict else "",
                    "median": _num(cell.value),
                    "baseline_median": _num(base.value),
                    "n": cell.n,
                    "baseline_n": base.n,
                    "ratio": _num(c.ratio),
                    "ratio_low": _num(c.ci_low),
                    "ratio_high": _num(c.ci_high),
                    "p_value": _num(cell.p_adjusted if cell.p_adjusted is not None else c.p_value),
                    "paired": c.paired is not None,
                    "decided_at_round": cell.judged.at_round if cell.judged else None,
                    "rounds_needed": cell.judged.rounds_needed if cell.judged else None,
                }
            )
    return rows
