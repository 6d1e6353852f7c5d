"""The CSV format: tidy tables a spreadsheet or ``csv.DictReader`` loads as they are.

``export``: one row per run × metric (a run without metrics, one that failed, is one
row with the metric cells empty), its parameters one ``param.NAME`` column each, the
metric's note last (how it was read; crash-safety and restore notes where they exist).
``compare``: one row per measurement × contender, with both sides' medians, CIs and n,
the ratio with its CI, the mark and the decision (the verdict sentences are prose:
text, Markdown and JSON carry them), and on every row the key provenance differences a
comparison of campaigns was allowed despite (``warnings``, "; "-joined; empty when
none): a spreadsheet cannot miss them.

Cells hold plain values: numbers as Python writes them back losslessly (``float(cell)``
is the stored value), a unit in its own column, yes/no for flags, and an empty cell
for nothing (unsupported, not finite, not applicable), never ``None`` or ``nan``.

A minus is ASCII, whatever the analysis writes (the ``mark``, a reason); ``bom`` and
``ascii`` are for a spreadsheet (formats/csv_text.py).
"""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING, Any, TextIO

from pgfsbench.formats.csv_text import csv_out
from pgfsbench.formats.registry import COMPARISON, EXPORT, OutputFormat
from pgfsbench.render.values import csv_cell

if TYPE_CHECKING:  # only for the annotations: analysis.table imports scipy, slow to load
    from pgfsbench.analysis.table import Cell, Row
    from pgfsbench.compare.comparison import Comparison
    from pgfsbench.store.read import Campaign

EXPORT_COLUMNS = [
    "campaign",
    "plan",
    "target",
    "fs",
    "workload",
    "label",
    "round",
    "settling",
    "run_status",
    "run_error",
]  # then param.*, then METRIC_COLUMNS
# note: what the metric is and how it was read (crash-safety and restore notes of what a
# filesystem offers PostgreSQL); empty when it has none
METRIC_COLUMNS = ["metric", "value", "unit", "direction", "note"]
COMPARISON_COLUMNS = [
    "workload",
    "label",
    "metric",
    "unit",
    "direction",
    "headline",
    "baseline",
    "baseline_status",
    "baseline_centre",
    "baseline_ci_low",
    "baseline_ci_high",
    "baseline_n",
    "contender",
    "contender_status",
    "contender_centre",
    "contender_ci_low",
    "contender_ci_high",
    "contender_n",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "confidence",
    "design",
    "p_value",
    "mark",
    "decision",
    "reason",
    "warnings",
    "baseline_crash_safety",
    "contender_crash_safety",
]


def write_campaign(campaign: Campaign, out: TextIO, bom: bool = False, ascii: bool = False) -> None:
    params = _param_columns(campaign)
    w = csv.writer(csv_out(out, bom, ascii), lineterminator="\n")
    w.writerow(EXPORT_COLUMNS + [f"param.{p}" for p in params] + METRIC_COLUMNS)
    fs_of = {t.name: t.fs for t in campaign.targets}
    for r in sorted(campaign.runs, key=lambda r: (r.repetition, r.id)):
        flat = _flatten(r.params)
        head = [
            campaign.id,
            campaign.plan_name,
            r.target,
            fs_of.get(r.target),
            r.workload,
            r.label,
            r.repetition,
            r.repetition == 0,
            r.status,
            r.error,
            *(flat.get(p) for p in params),
        ]
        if not r.metrics:
            w.writerow(csv_cell(v) for v in head + [None] * len(METRIC_COLUMNS))
        for m in r.metrics:
            w.writerow(
                csv_cell(v)
                for v in head + [m.name, m.value, m.unit, direction(m.higher_is_better), m.note]
            )


def write_comparison(
    comparison: Comparison, out: TextIO, bom: bool = False, ascii: bool = False
) -> None:
    table = comparison.table
    w = csv.writer(csv_out(out, bom, ascii), lineterminator="\n")
    w.writerow(COMPARISON_COLUMNS)
    contenders = [t for t in table.targets if t != table.baseline]
    warnings = "; ".join(comparison.warnings)
    for row in comparison.rows:
        base = row.cells[table.baseline] if table.baseline is not None else None
        classes = comparison.durability(row)
        # One column only: its figures all the same, with no contender.
        targets: list[str | None] = [*contenders] or [None]
        for target in targets:
            w.writerow(
                csv_cell(v)
                for v in comparison_row(row, table.baseline, base, target)
                + [warnings, _level(classes, table.baseline), _level(classes, target)]
            )


def _level(classes: dict, column: str | None) -> str | None:
    """safe, may lose recent commits, not crash-safe; None when not known."""
    d = classes.get(column) if column is not None else None
    return d.level if d is not None else None


FORMAT = OutputFormat(
    "csv",
    "csv",
    "text/csv",
    {EXPORT: write_campaign, COMPARISON: write_comparison},
    order=40,
    series=False,  # one row per metric of a run: no per-second series
    options=("bom", "ascii"),
)


def comparison_row(
    row: Row, baseline: str | None, base: Cell | None, target: str | None
) -> list[Any]:
    other = row.cells[target] if target is not None else None
    f = other.finding if other is not None else None
    return [
        row.workload,
        row.label,
        row.metric,
        row.unit,
        direction(row.higher_is_better),
        row.headline,
        baseline,
        *_side(base),
        target,
        *_side(other),
        f.ratio if f else None,
        f.low if f else None,
        f.high if f else None,
        f.level.confidence if f and f.level else None,
        ("paired" if f.paired else "unpaired") if f else None,
        f.p if f else None,
        f.mark if f else None,
        f.outcome if f else None,
        f.sentence() if f else None,
    ]


def _side(c: Cell | None) -> list[Any]:
    """status, centre (geometric mean, or median), CI low and high, n of one column's cell."""
    if c is None:
        return [None] * 5
    low, high = c.ci if c.ci else (None, None)
    return [c.status, c.value, low, high, c.n]


def _param_columns(campaign: Campaign) -> list[str]:
    """Every parameter any run has, in the order first seen."""
    seen: dict[str, None] = {}
    for r in campaign.runs:
        seen.update(dict.fromkeys(_flatten(r.params)))
    return list(seen)


def _flatten(params: dict, prefix: str = "") -> dict[str, Any]:
    """Nested parameters as dotted names: one column each (``type`` is the workload)."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if not prefix and k == "type":
            continue
        if isinstance(v, dict):
            out |= _flatten(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def direction(higher_is_better: bool | None) -> str:
    """higher or lower is better; empty for informational figures (a count, a size)."""
    return "" if higher_is_better is None else "higher" if higher_is_better else "lower"
