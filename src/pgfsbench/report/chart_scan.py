"""Charts for the parallel count(*) sweep (the parallel-scan study) and pg_basebackup throughput (the XFS-vs-ext4 study)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pgfsbench.report.charts import (
    DASHES,
    FALLBACK_COLOR,
    WHISKERS_CAPTION,
    Estimate,
    Figure,
    axis,
    cells_of,
    describe,
    estimate,
    grouped_bars,
    hover_text,
    in_plan_order,
    layout,
    target_colors,
    target_trace,
    whiskers,
)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.scaling import knee_workers
from pgfsbench.store.read import Campaign

_WORKERS_MS = re.compile(r"^parallel_scan\.workers_(\d+)\.ms$")


@dataclass
class ScanCurve:
    target: str
    label: str
    # max_parallel_workers_per_gather → median over repetitions of each run's median
    # time, with its CI
    ms: dict[int, Estimate]
    knee: int  # of the median curve


def scan_curves(campaign: Campaign) -> list[ScanCurve]:
    """One curve per target and measurement (label), medians over repetitions.

    The knee is recomputed from the plotted medians (the same rule the workload
    applies to each run), so the ring sits on the curve that is drawn.
    """
    sweeps: dict[tuple[str, str], tuple[dict, dict[int, Estimate]]] = {}
    for key, cell in cells_of(campaign, "parallel-scan").items():
        m = _WORKERS_MS.match(key.metric)
        est = estimate(cell.values) if m else None
        if m is not None and est is not None:
            _, ms = sweeps.setdefault((key.target, key.label), (cell.params, {}))
            ms[int(m.group(1))] = est
    per_target: dict[str, int] = {}
    for target, _ in sweeps:
        per_target[target] = per_target.get(target, 0) + 1
    position = {t.name: t.position for t in campaign.targets}
    curves = []
    # Plan order of targets; a target's sweeps in the order first measured (stable sort).
    for (target, _), (params, ms) in sorted(
        sweeps.items(), key=lambda kv: position.get(kv[0][0], 0)
    ):
        knee = knee_workers({w: e.median for w, e in ms.items()})
        # Several sweeps on one target (e.g. two table sizes): tell them apart by rows.
        name = target if per_target[target] == 1 else f"{target} rows={params.get('rows')}"
        curves.append(ScanCurve(target, name, dict(sorted(ms.items())), knee))
    return curves


def scan_chart(campaign: Campaign) -> Figure | None:
    """count(*) time vs max_parallel_workers_per_gather, one line per target, knee ringed."""
    curves = scan_curves(campaign)
    if not curves:
        return None
    colors = target_colors(campaign)
    traces = []
    seen: dict[str, int] = {}
    for c in curves:
        n = seen[c.target] = seen.get(c.target, -1) + 1
        color = colors.get(c.target, FALLBACK_COLOR)
        ests = list(c.ms.values())
        has_knee = c.knee in c.ms
        name = f"{c.label} (knee: {c.knee})" if has_knee else c.label
        trace = target_trace(
            c.target,
            color,
            "scatter",
            mode="lines+markers",
            x=list(c.ms),
            y=[e.median for e in ests],
            legendgroup=c.label,
        )
        trace["name"] = name
        trace["line"]["dash"] = DASHES[n % len(DASHES)]
        if (err := whiskers(ests)) is not None:
            trace["error_y"] = {**err, "color": color}
        traces.append(
            hover_text(trace, [f"{w} workers: {describe(e, 'ms')}" for w, e in c.ms.items()])
        )
        if has_knee:  # a hollow ring around the knee's point, toggled with its line
            ring = target_trace(
                c.target,
                color,
                "scatter",
                mode="markers",
                x=[c.knee],
                y=[c.ms[c.knee].median],
                legendgroup=c.label,
                showlegend=False,
            )
            ring["name"] = name
            ring["marker"] = {
                "symbol": "circle-open",
                "size": 16,
                "color": color,
                "line": {"width": 2, "color": color},
            }
            traces.append(hover_text(ring, [f"knee: {c.knee} workers"]))
    counts = sorted({w for c in curves for w in c.ms})
    return {
        "data": traces,
        "layout": layout(
            380,
            axis("max_parallel_workers_per_gather", tickvals=counts),
            axis("ms per count(*) (median)", rangemode="tozero"),
        ),
    }


def basebackup_rates(campaign: Campaign) -> dict[str, Estimate]:
    """Median MB/s over repetitions, with its CI, per target in plan order.

    With several basebackup measurements (labels) on one target the later wins.
    """
    rates: dict[str, Estimate] = {}
    for key, cell in cells_of(campaign, "basebackup").items():
        if key.metric == "basebackup.mb_per_s" and (est := estimate(cell.values)):
            rates[key.target] = est
    return in_plan_order(campaign, rates)


def basebackup_chart(campaign: Campaign) -> Figure | None:
    """pg_basebackup MB/s, one bar per target."""
    rates = basebackup_rates(campaign)
    if not rates:
        return None
    traces = grouped_bars(
        campaign,
        [("rate", "pg_basebackup")],
        {t: {"rate": e} for t, e in rates.items()},
        "MB/s",
        labels=True,
    )
    return {
        "data": traces,
        "layout": layout(340, axis(""), axis("MB/s", rangemode="tozero"), barmode="group"),
    }


FIGURES = [
    FigureSpec(
        "scan-chart",
        50,
        "Parallel count(*) over a cached table: time vs workers",
        "Parallel count(*) over a cached unlogged table: time (per "
        "run, the median of its scans) for each max_parallel_workers_per_gather (lower "
        "is better); the ring marks the "
        "knee of the median curve, the fewest workers after which more gain less than "
        "10 %. " + WHISKERS_CAPTION.format(what="Points"),
        scan_chart,
    ),
    FigureSpec(
        "basebackup-chart",
        55,
        "pg_basebackup (plain, WAL streamed)",
        "pg_basebackup of the cluster onto the same filesystem: backup size over time, in MB/s (higher is better). "
        + WHISKERS_CAPTION.format(what="Bars"),
        basebackup_chart,
    ),
]
