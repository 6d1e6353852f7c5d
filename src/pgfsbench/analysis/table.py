"""The side-by-side table: every metric, one column per target, with statistics.

A pure function of stored results, so the terminal, the HTML report, the
exports and ``pgfsbench compare`` all show the same numbers.

Each cell is the median over repetitions with its 95% CI; each contender is
compared with the baseline (ratio of medians with its CI, Mann-Whitney U).
Two families of tests, corrected separately for multiple comparisons:

* the **headline** metric of each measurement (the one verdicts are about):
  Holm–Bonferroni, so the chance of *any* false "X is faster" claim stays
  under alpha;
* every other row: Benjamini–Hochberg, controlling the share of false marks
  among the many exploratory rows (latency percentiles, eff.*, ...) without
  making them undetectable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from pgfsbench.analysis.cells import CellKey, Samples, collect, failed_measurements
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.analysis.stats import (
    DEFAULT,
    Comparison,
    Verdict,
    benjamini_hochberg,
    classify,
    compare,
    holm,
    summarize,
)
from pgfsbench.store.read import Campaign


@dataclass
class Cell:
    value: float | None  # median over repetitions; None: unsupported, or every run failed
    ratio: float | None  # median ratio to the baseline target's median
    best: bool
    status: str  # "ok", "unsupported", "failed", "missing"
    n: int = 0
    ci: tuple[float, float] | None = None  # 95% CI of the median (n >= 2)
    half_width: float | None = None  # of that CI, relative to the median
    cv: float | None = None
    values: list[float] = field(default_factory=list)
    comparison: Comparison | None = None  # against the baseline; None for the baseline
    p_adjusted: float | None = None
    verdict: Verdict | None = None


@dataclass
class Row:
    workload: str
    label: str  # the measurement within a sweep ("clients=8"), or ""
    metric: str
    unit: str
    higher_is_better: bool | None
    cells: dict[str, Cell]  # by column name
    note: str = ""  # what the metric is, when its name cannot say (a statement's SQL)
    headline: bool = False  # the metric this measurement's verdict is about


@dataclass
class Table:
    targets: list[str]  # column order: baseline first, then plan order
    baseline: str | None
    rows: list[Row]
    alpha: float = DEFAULT.alpha
    noise: float = DEFAULT.noise
    headline_tests: int = 0  # size of the Holm family
    repeated: bool = False  # some cell has n >= 2: CIs and verdicts are possible


@dataclass
class Source:
    """The campaigns a table is built from; column names are already unique."""

    columns: list[str]
    cells: dict[CellKey, Samples]  # target part of the key is the column name
    failed: set[tuple[str, str, str]] = field(default_factory=set)  # (column, workload, label)


def campaign_source(campaign: Campaign) -> Source:
    columns = [t.name for t in campaign.targets if t.status != "skipped"]
    return Source(columns, collect(campaign), failed_measurements(campaign))


# A loaded campaign does not change, and the bootstrap behind a table costs
# about a second on a verdict run; the terminal, the report and its charts
# share one table per campaign and settings. Callers must not modify it.
_tables: WeakKeyDictionary[Campaign, dict[tuple, Table]] = WeakKeyDictionary()


def comparison_table(campaign: Campaign, baseline: str | None = None,
                     alpha: float | None = None, noise: float | None = None) -> Table:
    """The table of one campaign; its plan's [verdicts] settings unless overridden."""
    verdicts = campaign.plan.get("verdicts") or {}
    key = (baseline or verdicts.get("baseline"),
           alpha if alpha is not None else verdicts.get("alpha", DEFAULT.alpha),
           noise if noise is not None else verdicts.get("noise", DEFAULT.noise))
    known = _tables.setdefault(campaign, {})
    if key not in known:
        known[key] = build_table(campaign_source(campaign), *key)
    return known[key]


def build_table(source: Source, baseline: str | None, alpha: float, noise: float) -> Table:
    columns = list(source.columns)
    if baseline is None or baseline not in columns:
        baseline = columns[0] if columns else None
    else:
        columns.remove(baseline)
        columns.insert(0, baseline)
    rows: dict[tuple[str, str, str], Row] = {}
    names: dict[tuple[str, str, str], list[str]] = {}  # what each measurement stored
    for key in source.cells:
        names.setdefault((key.target, key.workload, key.label), []).append(key.metric)
    for key, samples in source.cells.items():
        if key.target not in columns:
            continue
        row = rows.setdefault((key.workload, key.label, key.metric), Row(
            key.workload, key.label, key.metric, samples.unit, samples.higher_is_better, {}))
        row.note = row.note or samples.note
        row.headline = row.headline or key.metric == headline_metric(
            key.workload, samples.params, names[(key.target, key.workload, key.label)])
        row.cells[key.target] = _cell(samples)
    failed = source.failed
    for row in rows.values():
        for t in columns:
            if t not in row.cells:
                status = "failed" if (t, row.workload, row.label) in failed else "missing"
                row.cells[t] = Cell(None, None, False, status)
        row.cells = {t: row.cells[t] for t in columns}
        _mark_best(row)
    table = Table(columns, baseline, list(rows.values()), alpha, noise)
    table.repeated = any(c.n >= 2 for r in table.rows for c in r.cells.values())
    _compare_with_baseline(table)
    return table


def _cell(samples: Samples) -> Cell:
    if not samples.values:
        return Cell(None, None, False, "unsupported" if samples.unsupported else "failed")
    s = summarize(samples.values)
    ci = (s.ci_low, s.ci_high) if s.ci_low is not None and s.ci_high is not None else None
    return Cell(s.median, None, False, "ok", s.n, ci, s.half_width, s.cv, list(samples.values))


def _mark_best(row: Row) -> None:
    values = {t: c.value for t, c in row.cells.items() if c.value is not None}
    if row.higher_is_better is None or len(set(values.values())) < 2:
        return  # no direction, or nothing to choose between (all equal)
    pick = max if row.higher_is_better else min
    row.cells[pick(values, key=values.get)].best = True


def _compare_with_baseline(table: Table) -> None:
    if table.baseline is None:
        return
    pairs: list[tuple[Row, Cell]] = []
    for row in table.rows:
        base = row.cells[table.baseline]
        for t in table.targets[1:]:
            cell = row.cells[t]
            if base.value is not None and cell.value is not None:
                cell.comparison = compare(base.values, cell.values, table.alpha)
                cell.ratio = cell.comparison.ratio
                pairs.append((row, cell))
    if not table.repeated:  # one run per cell: ratios only; a "?" on every cell says nothing
        return
    for headline in (True, False):
        family = [(r, c) for r, c in pairs if r.headline is headline]
        adjust = holm if headline else benjamini_hochberg
        adjusted = adjust([c.comparison.p_value for _, c in family])
        if headline:
            table.headline_tests = sum(p is not None for p in adjusted) or len(family)
        for (row, cell), p in zip(family, adjusted):
            cell.p_adjusted = p
            if max(cell.n, row.cells[table.baseline].n) < 2:
                continue  # one run on each side (repetitions = 1): a ratio, no verdict
            # Holm's strictest threshold is alpha/m; BH's most lenient is alpha itself.
            cell.verdict = classify(cell.comparison, p, higher_is_better=row.higher_is_better,
                                    alpha=table.alpha, noise=table.noise,
                                    comparisons=max(1, len(family)) if headline else 1)


def params_key(params: dict) -> str:
    """Parameters that make two measurements comparable (not how often they ran)."""
    return json.dumps({k: v for k, v in params.items() if k != "repetitions"}, sort_keys=True)
