"""The comparison table (medians, CIs, ratios, verdicts) as plain JSON data."""

from __future__ import annotations

from pgfsbench.analysis.table import Cell, Row, Table
from pgfsbench.analysis.verdicts import VerdictLine


def to_json(table: Table, rows: list[Row], verdicts: list[VerdictLine]) -> dict:
    def cell(c: Cell) -> dict:
        d = {"status": c.status, "median": c.value, "n": c.n,
             "ci95": list(c.ci) if c.ci else None, "cv": c.cv, "values": c.values}
        if c.comparison is not None:
            cmp = c.comparison
            d["vs_baseline"] = {
                "ratio": cmp.ratio,
                "ratio_ci95": [cmp.ci_low, cmp.ci_high] if cmp.ci_low is not None else None,
                "p_value": cmp.p_value, "p_adjusted": c.p_adjusted,
                "verdict": c.verdict.kind if c.verdict else None,
                "reason": c.verdict.reason if c.verdict else None}
        return d

    return {
        "baseline": table.baseline,
        "columns": table.targets,
        "alpha": table.alpha,
        "noise": table.noise,
        "rows": [{"workload": r.workload, "label": r.label, "metric": r.metric,
                  "unit": r.unit, "headline": r.headline,
                  "direction": {True: "higher", False: "lower", None: "none"}[r.higher_is_better],
                  "cells": {t: cell(r.cells[t]) for t in table.targets}} for r in rows],
        "verdicts": [{"workload": v.workload, "label": v.label, "metric": v.metric,
                      "kind": v.kind, "winner": v.winner, "text": v.text,
                      "durability": v.durability, "warning": v.warning or None}
                     for v in verdicts],
    }
