"""The side-by-side table: every metric, one column per target.

A pure function of stored results, so the terminal, the HTML report and the
exports all show the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgfsbench.store.read import Campaign


@dataclass
class Cell:
    value: float | None  # None: unsupported, or the run failed
    ratio: float | None  # to the baseline target's value
    best: bool
    status: str  # "ok", "unsupported", "failed", "missing"


@dataclass
class Row:
    workload: str
    label: str  # the measurement within a sweep ("clients=8"), or ""
    metric: str
    unit: str
    higher_is_better: bool
    cells: dict[str, Cell]  # by target name
    note: str = ""  # what the metric is, when its name cannot say (a statement's SQL)


@dataclass
class Table:
    targets: list[str]  # column order: plan order, baseline first
    baseline: str | None
    rows: list[Row]


def comparison_table(campaign: Campaign) -> Table:
    targets = [t.name for t in campaign.targets if t.status != "skipped"]
    baseline = targets[0] if targets else None
    rows: dict[tuple[str, str, str], Row] = {}
    failed: set[tuple[str, str, str]] = set()  # (target, workload, label) whose run failed
    for run in campaign.runs:
        if run.status != "ok":
            failed.add((run.target, run.workload, run.label))
            continue
        for m in run.metrics:
            row = rows.setdefault((run.workload, run.label, m.name), Row(
                run.workload, run.label, m.name, m.unit, m.higher_is_better, {}))
            status = "ok" if m.value is not None else "unsupported"
            row.note = row.note or m.note
            row.cells[run.target] = Cell(m.value, None, False, status)
    for row in rows.values():
        for t in targets:
            if t not in row.cells:
                status = "failed" if (t, row.workload, row.label) in failed else "missing"
                row.cells[t] = Cell(None, None, False, status)
        values = {t: c.value for t, c in row.cells.items() if c.value is not None}
        if len(values) >= 2:
            pick = max if row.higher_is_better else min
            best = pick(values, key=values.get)
            row.cells[best].best = True
        base = row.cells.get(baseline) if baseline else None
        if base is not None and base.value:
            for c in row.cells.values():
                if c.value is not None:
                    c.ratio = c.value / base.value
        row.cells = {t: row.cells[t] for t in targets}
    return Table(targets, baseline, list(rows.values()))
