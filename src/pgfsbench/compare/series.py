"""A metric of a target over campaigns (``pgfsbench history``), oldest first.

One series per target × host × measurement × metric: each campaign's median, 95% CI
and n (the campaign's own table, ``table.py``). Between two consecutive campaigns
of a series that ran the same plan, the later one is marked against the earlier
with exactly what ``compare EARLIER LATER --pair T=T`` decides (``pairing.py``:
independent samples, Mann-Whitney U and the bootstrap CI of the ratio, the same
marks). A pair whose key provenance differs (PostgreSQL version, workloads, the
target's recipe) is not marked: the point says why instead.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from pgfsbench.analysis.findings import Finding
from pgfsbench.analysis.table import Cell, Table, comparison_table
from pgfsbench.compare.comparable import differences
from pgfsbench.compare.pairing import pair_label, paired_table, pairing
from pgfsbench.errors import UserError
from pgfsbench.store.read import Campaign


@dataclass
class Point:
    campaign: Campaign
    source: str  # where it was read from (a directory, or the store)
    cell: Cell  # its centre, CI, n in that campaign
    value: float  # the cell's centre: a point is made of a cell with a value
    # Against the previous point: the finding ``compare PREVIOUS THIS`` makes of the pair.
    finding: Finding | None = None
    previous: Point | None = None
    note: str = ""  # why it is not compared with the previous point, if it is not

    @property
    def mark(self) -> str:
        return self.finding.mark if self.finding is not None else ""

    @property
    def kind(self) -> str | None:
        return self.finding.outcome if self.finding is not None else None


@dataclass
class Series:
    target: str
    host: str
    workload: str
    label: str
    metric: str
    unit: str
    higher_is_better: bool | None
    points: list[Point] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.target} @ {self.host}: {self.workload} {self.label} {self.metric}".replace(
            "  ", " "
        )


def host_name(campaign: Campaign) -> str:
    h = campaign.host
    return str(h.get("hostname") or (h.get("machine_id") or "")[:8] or "?")


def history(
    campaigns: list[tuple[Campaign, str]],
    target: str | None = None,
    metric: str | None = None,
    plan: str | None = None,
) -> list[Series]:
    """Every series the filters select (``metric``: a glob; default each measurement's
    headline), campaigns ordered by start time, marks between consecutive ones."""
    # A campaign read from its directory and from the store: once.
    unique: dict[str | int, tuple[Campaign, str]] = {}
    for c, src in campaigns:
        unique.setdefault(c.uuid or id(c), (c, src))
    chosen = sorted(
        (cs for cs in unique.values() if plan is None or cs[0].plan_name == plan),
        key=lambda cs: cs[0].started,
    )
    if not chosen:
        raise UserError(f"no campaign of plan '{plan}'" if plan else "no campaigns")
    series: dict[tuple, Series] = {}
    for campaign, source in chosen:
        table = comparison_table(campaign, headline_only=metric is None)
        for row in table.rows:
            if not (fnmatch.fnmatchcase(row.metric, metric) if metric else row.headline):
                continue
            for name, cell in row.cells.items():
                if (target is not None and name != target) or cell.value is None:
                    continue
                key = (name, host_name(campaign), row.workload, row.label, row.metric)
                s = series.setdefault(key, Series(*key, row.unit, row.higher_is_better))
                s.points.append(Point(campaign, source, cell, cell.value))
    if not series:
        what = f"target '{target}'" if target else "any target"
        raise UserError(
            f"no values of {metric or 'the headline metrics'} for {what} in "
            f"{len(chosen)} campaign(s)"
        )
    tables: dict[tuple[int, int], Table] = {}
    for s in series.values():
        for prev, point in zip(s.points, s.points[1:]):
            point.previous = prev
            _mark(s, prev, point, tables, headline_only=metric is None)
    return list(series.values())


def _mark(
    s: Series,
    prev: Point,
    point: Point,
    tables: dict[tuple[int, int], Table],
    headline_only: bool,
) -> None:
    """The point's finding against the previous one: from the table ``compare PREVIOUS
    THIS`` makes (every target of the same name in both, one family), so both give the
    same figure and mark; not where the pair's key provenance differs (compare refuses)."""
    if prev.campaign.plan_name != point.campaign.plan_name:
        point.note = f"another plan than the previous ({prev.campaign.plan_name})"
        return
    pair = [(s.target, s.target)]
    refused = [d for d in differences(prev.campaign, point.campaign, pair) if d.key]
    if refused:
        point.note = "not compared: " + "; ".join(d.text() for d in refused)
        return
    key = (id(prev.campaign), id(point.campaign))
    if key not in tables:
        # Key differences of other targets do not keep this one from its mark; the
        # family is compare's all the same (its --allow-different), and so are its
        # settings (the baseline campaign's [verdicts]).
        tables[key] = paired_table(
            pairing(prev.campaign, point.campaign, allow_different=True),
            headline_only=headline_only,  # the default series are the headline rows
        )
    table = tables[key]
    label = f"{pair_label((s.target, s.target))} {s.label}".strip()
    row = next(
        (r for r in table.rows if (r.workload, r.label, r.metric) == (s.workload, label, s.metric)),
        None,
    )
    if row is not None:
        point.finding = row.cells[table.targets[1]].finding
