"""Capacity at a latency target: each probe's latency percentile against its rate, one
line per target and round, the target as a dashed line. One chart per search:
pgbench-capacity (transactions at --rate) and fsync-capacity (fio's writes each followed
by fdatasync at --rate_iops)."""

from __future__ import annotations

from dataclasses import dataclass

from pgfsbench.report.charts import (
    FALLBACK_COLOR,
    Figure,
    axis,
    hover_text,
    in_plan_order,
    layout,
    target_colors,
    target_trace,
)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign, StoredRun


@dataclass(frozen=True)
class Search:
    """What one capacity search's chart reads: its runs' curve and capacity metric."""

    workload: str
    curve: str  # x: the rate asked for; y: the percentile
    capacity: str
    unit: str
    latency: str  # what the percentile is of, in the headline ("" or " fdatasync")
    x_title: str
    y_title: str


PGBENCH = Search(
    "pgbench-capacity",
    "pgbench_capacity.curve_latency_ms",
    "pgbench_capacity.tps",
    "tx/s",
    "",
    "rate asked for (pgbench --rate, tx/s; the rightmost point: unthrottled)",
    "latency percentile, ms (schedule lag included)",
)
FSYNC = Search(
    "fsync-capacity",
    "fsync_capacity.curve_latency_ms",
    "fsync_capacity.syncs_per_s",
    "syncs/s",
    " fdatasync",
    "rate asked for (fio --rate_iops, writes each followed by fdatasync a second; the "
    "rightmost point: unthrottled)",
    "fdatasync latency percentile, ms",
)


def _measurements(
    campaign: Campaign, search: Search = PGBENCH
) -> dict[str, dict[str, list[StoredRun]]]:
    """label (e.g. "p99<=10ms") → target → its ok runs with a curve, in plan order."""
    out: dict[str, dict[str, list[StoredRun]]] = {}
    for run in campaign.runs:
        if run.workload == search.workload and run.status == "ok" and run.series.get(search.curve):
            out.setdefault(run.label, {}).setdefault(run.target, []).append(run)
    return {label: in_plan_order(campaign, by_target) for label, by_target in out.items()}


def _capacity(run: StoredRun, search: Search = PGBENCH) -> float | None:
    return next((m.value for m in run.metrics if m.name == search.capacity), None)


def headline(campaign: Campaign, search: Search = PGBENCH) -> list[str]:
    """One sentence a measurement: "ext4 holds 2,400 tx/s at p99 <= 10 ms; btrfs 900"
    (each target's median capacity over its rounds, in plan order); for fsync-capacity
    "ext4 holds 45 syncs/s at p99 fdatasync <= 50 ms"."""
    out = []
    for by_target in _measurements(campaign, search).values():
        parts = []
        params = next(iter(by_target.values()))[0].params
        for target, runs in by_target.items():
            values = sorted(v for r in runs if (v := _capacity(r, search)) is not None)
            n = len(values)
            if n:
                median = (values[n // 2] + values[(n - 1) // 2]) / 2
                parts.append(f"{target} {median:,.0f}")
            else:
                parts.append(f"{target} none")
        first, *rest = parts
        name, value = first.rsplit(" ", 1)
        out.append(
            f"{name} holds {value} {search.unit} at p{params.get('percentile', 99):g}"
            f"{search.latency} <= {params.get('latency_ms', 10):g} ms"
            + "".join(f"; {p}" for p in rest)
        )
    return out


def capacity_chart(campaign: Campaign, search: Search = PGBENCH) -> Figure | None:
    data = _measurements(campaign, search)
    if not data:
        return None
    colors = target_colors(campaign)
    traces: list[dict] = []
    shapes: list[dict] = []
    many = len(data) > 1
    for label, by_target in data.items():
        for target, runs in by_target.items():
            for n, run in enumerate(runs):
                pct = run.params.get("percentile", 99)
                points = sorted(run.series[search.curve].points)
                cap = _capacity(run, search)
                name = f"{target} {label}" if many else target
                trace = target_trace(
                    target,
                    colors.get(target, FALLBACK_COLOR),
                    "scatter",
                    mode="lines+markers",
                    x=[x for x, _ in points],
                    y=[y for _, y in points],
                    showlegend=n == 0,
                )
                trace["name"] = name
                hover_text(
                    trace,
                    [
                        f"{x:,.0f} {search.unit} asked: p{pct:g} {y:,.1f} ms"
                        + (
                            f" (round {run.repetition}, capacity {cap:,.0f} {search.unit})"
                            if cap is not None
                            else f" (round {run.repetition})"
                        )
                        for x, y in points
                    ],
                )
                traces.append(trace)
        target_ms = next(iter(next(iter(by_target.values())))).params.get("latency_ms")
        if target_ms is not None:
            shapes.append(
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "yref": "y",
                    "y0": target_ms,
                    "y1": target_ms,
                    "line": {"color": "#888", "dash": "dash", "width": 1},
                }
            )
    return {
        "data": traces,
        "layout": layout(
            400,
            axis(search.x_title, rangemode="tozero"),
            axis(search.y_title, type="log"),
            shapes=shapes,
            title={
                "text": "<br>".join(headline(campaign, search)),
                "x": 0,
                "font": {"size": 13},
            },
            margin={"l": 10, "r": 10, "t": 90, "b": 10},
        ),
    }


def fsync_capacity_chart(campaign: Campaign) -> Figure | None:
    return capacity_chart(campaign, FSYNC)


FIGURES = [
    FigureSpec(
        "capacity-chart",
        17,
        "pgbench: latency against rate (capacity search)",
        "Each point is one probe of the capacity search: a short pgbench run at a "
        "fixed rate, its latency percentile measured from each transaction's "
        "scheduled start (schedule lag included). The dashed line is the target; "
        "the capacity is the highest rate whose point lies under it. One line per "
        "target and round; the unthrottled probe sits at the rate it reached. "
        "Probes over the target by skipped or failed transactions have no point.",
        capacity_chart,
    ),
    FigureSpec(
        "fsync-capacity-chart",
        18,
        "fio: fdatasync latency against rate (capacity search)",
        "Each point is one probe of the capacity search: a short fio run of writes each "
        "followed by fdatasync (the WAL's pattern) at a fixed rate (--rate_iops), its "
        "percentile of the fdatasync latency. The dashed line is the target; the "
        "capacity is the highest rate whose point lies under it and whose rate fio "
        "delivered (at least 90% of it). One line per target and round; the unthrottled "
        "probe sits at the rate it reached.",
        fsync_capacity_chart,
    ),
]
