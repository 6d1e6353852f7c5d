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
    """One row per finding of the campaign's comparison table (its plan's baseline,
    alpha and noise): every contender against the baseline on every metric, as every
    output quotes it, and on the headline metrics every other pair of targets (what the
    tiers rest on); a value for each of ``store.rows.DECISIONS``."""
    from pgfsbench.analysis.table import comparison_table  # heavy: only when importing

    table = comparison_table(campaign)
    rows = []
    by_key = {(r.workload, r.label, r.metric): r for r in table.rows}
    found = [c.finding for r in table.rows for c in r.cells.values() if c.finding is not None]
    quoted = {(f.workload, f.label, f.reference, f.target) for f in found}
    # the headline pairs the tiers rest on that hold no baseline, as the family has them
    found += [f for k, f in table.pairs.items() if k not in quoted]
    for f in found:
        row = by_key[(f.workload, f.label, f.metric)]
        base, cell = row.cells[f.reference], row.cells[f.target]
        rows.append(
            {
                "workload": f.workload,
                "label": f.label,
                "metric": f.metric,
                "unit": f.unit,
                "direction": DIRECTION[f.higher_is_better],
                "headline": row.headline,
                "target": f.target,
                "baseline": f.reference,
                "verdict": f.outcome,
                "reason": f.sentence(),
                "centre": _num(cell.value),
                "baseline_centre": _num(base.value),
                "n": cell.n,
                "baseline_n": base.n,
                "ratio": _num(f.ratio),
                "ratio_low": _num(f.low),
                "ratio_high": _num(f.high),
                "p_value": _num(f.p),
                "paired": f.paired,
                "decided_at_round": f.through,
                "confidence": _num(f.level.confidence) if f.level is not None else None,
                "detectable_change": _num(f.detectable),
            }
        )
    return rows
