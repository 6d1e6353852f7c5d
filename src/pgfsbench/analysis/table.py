"""The side-by-side table: every metric, one column per target, with statistics.

A pure function of stored results, so the terminal, the HTML report, the
exports and ``pgfsbench compare`` all show the same numbers.

Each cell is the median over repetitions with its 95% CI; each contender is
compared with the baseline within the rounds both were measured in (paired,
``stats/paired.py``), or as independent samples where the rounds do not correspond
(Mann-Whitney U and the ratio of medians). Each comparison ends better / worse,
equivalent, or inconclusive (``stats/outcome.py``). Two families of tests:

* the **headline** metric of each measurement (the one verdicts are about):
  every pair of targets, decided by the plan's design (``family.py``:
  alpha spent over looks and shared by the family), so the chance of *any*
  false claim (better, worse or equivalent) stays under alpha and the campaign,
  the table and the verdict lines agree;
* every other row: each contender against the baseline at alpha with
  Benjamini–Hochberg, controlling the share of false marks among the many
  exploratory rows (latency percentiles, eff.*, ...) without making them
  undetectable.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from weakref import WeakKeyDictionary

from pgfsbench.analysis.cells import CellKey, Samples, collect, failed_measurements
from pgfsbench.analysis.family import compare_cells, decide_headlines
from pgfsbench.analysis.findings import BETTER, EQUIVALENT, WORSE, Finding, Level, finding_of
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.analysis.stats.ci_cache import kept_in
from pgfsbench.analysis.stats.medians import (
    DEFAULT,
    Comparison,
    benjamini_hochberg,
    summarize,
    summarize_geometric,
)
from pgfsbench.analysis.stats.outcome import Judged, judge_paired, judge_unpaired
from pgfsbench.analysis.stats.sequential import EQUIVALENT as SAME
from pgfsbench.analysis.stats.sequential import NA, Design, Key
from pgfsbench.analysis.stats.stored_design import design_for
from pgfsbench.store.read import Campaign

# What a cell's value is: the centre that goes with the row's comparisons.
GEOMETRIC, MEDIAN = "geometric mean", "median"


@dataclass
class Cell:
    value: float | None  # the centre over repetitions (``centre``); None: unsupported,
    # or every run failed
    best: bool
    status: str  # "ok", "unsupported", "failed", "missing"
    n: int = 0
    ci: tuple[float, float] | None = None  # 95% CI of the centre (n >= 2)
    half_width: float | None = None  # of that CI, relative to the centre
    cv: float | None = None
    values: list[float] = field(default_factory=list)
    # Against the baseline (None for the baseline itself, or nothing to compare): the
    # one comparison every output quotes (findings.py).
    finding: Finding | None = None
    rounds: list[int] = field(default_factory=list)  # the round of each value
    block: str = ""  # the campaign those rounds belong to
    settling: int = 0  # settling-round runs left out of every statistic
    # GEOMETRIC (the comparisons' ratios are ratios of geometric means, within rounds or
    # across campaigns), MEDIAN where a value of the row is at or below zero.
    centre: str = MEDIAN


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
    # The largest value of this metric in the whole table (every row of it): its unit
    # and precision are chosen from it, so a metric reads alike on every row.
    scale: float | None = None


@dataclass
class Table:
    targets: list[str]  # column order: baseline first, then plan order
    baseline: str | None
    rows: list[Row]
    alpha: float = DEFAULT.alpha
    noise: float = DEFAULT.noise
    headline_tests: int = 0  # pairs of targets the headline verdicts decide
    repeated: bool = False  # some cell has n >= 2: CIs and verdicts are possible
    design: Design | None = None  # of the headline decisions
    # Headline rows: every pair of targets, b against a (a first in column order).
    pairs: dict[Key, Finding] = field(default_factory=dict)
    paired: bool = False  # some comparison is within rounds
    unpaired: bool = False  # some comparison is between independent samples
    margin: float | None = None  # the plan's equivalence margin, when not the noise
    measured: bool = False  # some target stored some metric (a headline row or not)

    @property
    def equivalence(self) -> float:
        """The margin "equivalent" means within."""
        return self.noise if self.margin is None else self.margin

    def pair(self, row: Row, a: str, b: str) -> Finding | None:
        """b against a on a headline row, whichever order the family holds them in."""
        if (f := self.pairs.get((row.workload, row.label, a, b))) is not None:
            return f
        f = self.pairs.get((row.workload, row.label, b, a))
        return None if f is None else f.flipped()

    def findings(self, row: Row) -> list[Finding]:
        """Every target's finding against the baseline on ``row``, in column order."""
        return [c.finding for c in row.cells.values() if c.finding is not None]

    @property
    def budget(self) -> int | None:
        """The most rounds the design plans ('auto'); None for a fixed count."""
        d = self.design
        return d.last_look if d is not None and d.first_look != d.last_look else None


@dataclass
class Source:
    """The campaigns a table is built from; column names are already unique."""

    columns: list[str]
    cells: dict[CellKey, Samples]  # target part of the key is the column name
    failed: set[tuple[str, str, str]] = field(default_factory=set)  # (column, workload, label)
    design: Design | None = None  # the plan's; None: one look at the end (several campaigns)
    results_dir: Path | None = None  # where its bootstrap intervals are cached (stats/ci_cache.py)


def campaign_source(campaign: Campaign) -> Source:
    columns = [t.name for t in campaign.targets if t.status != "skipped"]
    return Source(
        columns,
        collect(campaign),
        failed_measurements(campaign),
        design_for(campaign.plan, campaign.schedule),
        campaign.results_dir,
    )


# A loaded campaign does not change, and the bootstrap behind a table costs
# about a second on a verdict run; the terminal, the report and its charts
# share one table per campaign and settings. Callers must not modify it.
_tables: WeakKeyDictionary[Campaign, dict[tuple, Table]] = WeakKeyDictionary()


def comparison_table(
    campaign: Campaign,
    baseline: str | None = None,
    alpha: float | None = None,
    noise: float | None = None,
    headline_only: bool = False,
) -> Table:
    """The table of one campaign; its plan's [verdicts] settings unless overridden.

    ``headline_only``: the headline rows alone, each exactly as in the whole table (the
    headline family is decided apart from the other rows): what the verdict lines need,
    for a tenth of the work (a listing of many campaigns)."""
    verdicts = campaign.plan.get("verdicts") or {}
    key = (
        baseline or verdicts.get("baseline"),
        alpha if alpha is not None else verdicts.get("alpha", DEFAULT.alpha),
        noise if noise is not None else verdicts.get("noise", DEFAULT.noise),
        verdicts.get("equivalence"),
    )
    known = _tables.setdefault(campaign, {})
    if key in known:  # the whole table holds the headline rows too
        return known[key]
    if headline_only:
        if (key, "headline") not in known:
            known[key, "headline"] = build_table(campaign_source(campaign), *key, True)
        return known[key, "headline"]
    known[key] = build_table(campaign_source(campaign), *key)
    return known[key]


def build_table(
    source: Source,
    baseline: str | None,
    alpha: float,
    noise: float,
    margin: float | None = None,
    headline_only: bool = False,
) -> Table:
    with kept_in(source.results_dir):
        return _build_table(source, baseline, alpha, noise, margin, headline_only)


def _build_table(
    source: Source,
    baseline: str | None,
    alpha: float,
    noise: float,
    margin: float | None,
    headline_only: bool = False,
) -> Table:
    columns = list(source.columns)
    if baseline is None or baseline not in columns:
        baseline = columns[0] if columns else None
    else:
        columns.remove(baseline)
        columns.insert(0, baseline)
    shown = {key: samples for key, samples in source.cells.items() if key.target in columns}
    headline_rows = _headline_rows(source.cells, shown)
    rows: dict[tuple[str, str, str], Row] = {}
    for key, samples in shown.items():
        row_key = (key.workload, key.label, key.metric)
        if headline_only and row_key not in headline_rows:
            continue
        row = rows.setdefault(
            row_key,
            Row(key.workload, key.label, key.metric, samples.unit, samples.higher_is_better, {}),
        )
        row.note = row.note or samples.note
        row.headline = row_key in headline_rows
        row.cells[key.target] = _cell(samples)
    failed = source.failed
    for row in rows.values():
        if any(c.centre == MEDIAN for c in row.cells.values() if c.value is not None):
            # A value at or below zero has no logarithm: the whole row by its medians,
            # as its comparisons then are (stats.compare).
            row.cells = {
                t: _cell(shown[CellKey(t, row.workload, row.label, row.metric)], geometric=False)
                for t in row.cells
            }
        for t in columns:
            if t not in row.cells:
                status = "failed" if (t, row.workload, row.label) in failed else "missing"
                row.cells[t] = Cell(None, False, status)
        row.cells = {t: row.cells[t] for t in columns}
    scales: dict[str, float] = {}
    for row in rows.values():
        for c in row.cells.values():
            if c.value is not None and math.isfinite(c.value):
                scales[row.metric] = max(scales.get(row.metric, 0.0), abs(c.value))
    for row in rows.values():
        row.scale = scales.get(row.metric)
    table = Table(columns, baseline, list(rows.values()), alpha, noise, margin=margin)
    # Of every row, shown or not: a headline-only table decides as the whole one does.
    table.repeated = any(len(samples.values) >= 2 for samples in shown.values())
    table.measured = bool(shown)
    planned = source.design or Design.fixed(alpha, noise, 1)
    design = table.design = replace(planned, alpha=alpha, noise=noise, margin=margin)  # looks kept
    _compare_with_baseline(table, design)
    for row in table.rows:
        if (best := _best(table, row)) is not None:
            row.cells[best].best = True
    return table


def _headline_rows(
    cells: dict[CellKey, Samples], shown: dict[CellKey, Samples]
) -> set[tuple[str, str, str]]:
    """(workload, label, metric) of every row that is some shown target's headline."""
    names: dict[tuple[str, str, str], list[str]] = {}  # what each measurement stored
    for key in cells:
        names.setdefault((key.target, key.workload, key.label), []).append(key.metric)
    headlines: dict[tuple[str, str, str], str | None] = {}
    for key, samples in shown.items():
        measurement = (key.target, key.workload, key.label)
        if measurement not in headlines:  # once per measurement, not per metric
            headlines[measurement] = headline_metric(
                key.workload, samples.params, names[measurement]
            )
    return {
        (key.workload, key.label, key.metric)
        for key in shown
        if key.metric == headlines[(key.target, key.workload, key.label)]
    }


def _cell(samples: Samples, geometric: bool = True) -> Cell:
    """The cell's centre: the geometric mean (its comparisons are ratios of geometric
    means, within rounds or across campaigns), or the median (``geometric`` False, or a
    value at or below zero)."""
    if not samples.values:
        return Cell(None, False, "unsupported" if samples.unsupported else "failed")
    by_logs = summarize_geometric(samples.values) if geometric else None
    s = by_logs or summarize(samples.values)
    ci = (s.ci_low, s.ci_high) if s.ci_low is not None and s.ci_high is not None else None
    return Cell(
        s.centre,
        False,
        "ok",
        s.n,
        ci,
        s.half_width,
        s.cv,
        list(samples.values),
        rounds=list(samples.rounds),
        block=samples.block,
        settling=samples.settling,
        centre=GEOMETRIC if by_logs is not None else MEDIAN,
    )


def _best(table: Table, row: Row) -> str | None:
    """The target a decided verdict says is best in this row, or None.

    The highest centre alone is not "best": a tie, a zero, or a difference within
    the noise would earn it too. Headline rows: the target decided better than every
    other (the verdict's winner). Other rows, where only contender-vs-baseline is
    tested: the baseline when every contender is decided worse; a contender decided
    better than the baseline while every other contender is decided worse or
    equivalent to it.
    """
    if row.higher_is_better is None or table.baseline is None:
        return None
    present = [t for t, c in row.cells.items() if c.value is not None]
    if len(present) < 2:
        return None
    if row.headline and table.pairs:
        best = next(
            (
                t
                for t in present
                if all(
                    (f := table.pair(row, t, o)) is not None and f.outcome == WORSE
                    for o in present
                    if o != t
                )
            ),
            None,
        )
    else:
        kinds = {
            t: (c.finding.outcome if c.finding else None)
            for t, c in row.cells.items()
            if t in present and t != table.baseline
        }
        if table.baseline in present and all(k == WORSE for k in kinds.values()):
            best = table.baseline
        else:
            best = next(
                (
                    t
                    for t, k in kinds.items()
                    if k == BETTER
                    and all(o in (WORSE, EQUIVALENT) for u, o in kinds.items() if u != t)
                ),
                None,
            )
    # A zero is never a win: no time spent, nothing written, no errors is a fact, not a
    # contest (and ratios to zero are undefined).
    return None if best is None or row.cells[best].value == 0 else best


def _compare_with_baseline(table: Table, design: Design) -> None:
    """Every pair of targets on the headline rows decided by ``design`` (the table's),
    every contender against the baseline on the others at alpha: one finding each."""
    if table.baseline is None:
        return
    compared: list[tuple[Row, str, Comparison]] = []
    for row in table.rows:
        base = row.cells[table.baseline]
        for t in table.targets[1:]:
            cell = row.cells[t]
            if base.value is not None and cell.value is not None:
                c = compare_cells(base, cell, table.alpha, table.noise, table.margin)
                compared.append((row, t, c))
                table.paired |= c.paired is not None
                table.unpaired |= c.paired is None
    if not table.repeated:  # one run per cell: ratios only; a "?" on every cell says nothing
        for row, t, c in compared:
            one = Judged(NA, c, note="one run each: no test")
            row.cells[t].finding = finding_of(table, row, table.baseline, t, one, None)
        return
    headline = [r for r in table.rows if r.headline]
    decided = decide_headlines(headline, table.targets, design)
    by_measurement = {(r.workload, r.label): r for r in headline}
    table.pairs = {
        k: finding_of(table, by_measurement[k[:2]], k[2], k[3], j, decided.level(k))
        for k, j in decided.judged.items()
    }
    table.headline_tests = len(decided.judged)
    described = design.descriptive
    untested = {(r.workload, r.label, t): c for r, t, c in compared if r.headline}
    for row in headline:
        for t in table.targets[1:]:
            row.cells[t].finding = table.pair(row, table.baseline, t)
            untested_one = untested.get((row.workload, row.label, t))
            if untested_one is not None and (row.workload, row.label) in described:
                # For the advice, not tested: its ratio, no interval, no outcome.
                one = Judged(NA, untested_one, note="not tested: described for the advice")
                row.cells[t].finding = finding_of(table, row, table.baseline, t, one, None)
    _judge_others([(r, t, c) for r, t, c in compared if not r.headline], table)
    for row, t, _ in compared:  # one run on each side (repetitions = 1): a ratio, no test
        cell, base = row.cells[t], row.cells[table.baseline]
        if cell.finding is not None and max(cell.n, base.n) < 2:
            cell.finding = replace(
                cell.finding, outcome=NA, low=None, high=None, level=None, note="one run each"
            )


def _judge_others(family: list[tuple[Row, str, Comparison]], table: Table) -> None:
    """Every non-headline contender cell at alpha, Benjamini-Hochberg over the rows."""
    assert table.baseline is not None  # the family is made against it
    p = benjamini_hochberg([c.p_value for _, _, c in family])
    p_eq = benjamini_hochberg([c.p_equivalent for _, _, c in family])
    for (row, t, c), q, q_eq in zip(family, p, p_eq):
        if c.paired is not None:
            j = judge_paired(c, q, q_eq, table.alpha, table.noise)
        else:
            j = judge_unpaired(c, q, table.alpha, table.noise, margin=table.margin)
        conf = j.confidence()
        level = (
            None
            if conf is None
            else Level(conf, table.alpha, tost=j.outcome == SAME, adjusted=False)
        )
        row.cells[t].finding = finding_of(table, row, table.baseline, t, j, level, False)


def params_key(params: dict) -> str:
    """Parameters that make two measurements comparable (not how often they ran)."""
    return json.dumps({k: v for k, v in params.items() if k != "repetitions"}, sort_keys=True)
