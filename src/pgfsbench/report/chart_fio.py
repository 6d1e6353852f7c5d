"""Charts of the fio workloads: fdatasync latency percentiles and the fileio matrix."""

from __future__ import annotations

import re

from pgfsbench.report.charts import (
    WHISKERS_CAPTION,
    Estimate,
    Figure,
    axis,
    cells_of,
    estimate,
    grouped_bars,
    in_plan_order,
    layout,
    log_ticks,
)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign

SYNC_PERCENTILES = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9"))
_FILEIO_MBPS = re.compile(r"^fileio\.([a-z]+)_([0-9]+[kmgb]?)\.mb_per_s$")
_PATTERNS = {
    "read": "sequential read",
    "write": "sequential write",
    "randread": "random read",
    "randwrite": "random write",
    "rw": "sequential read+write",
    "randrw": "random read+write",
}

Values = dict[str, dict[str, Estimate]]  # target -> key -> median and CI


def collect_values(campaign: Campaign, workload: str, key_of) -> Values:
    """target → key → median over repetitions with its CI; targets in plan order.

    ``key_of`` maps a metric name to its key, or None to skip it. Values at or
    below zero are left out (log axis). Keys in the order first measured; with
    several measurements (labels) of one workload on a target the later wins.
    """
    data: Values = {}
    for cell_key, cell in cells_of(campaign, workload).items():
        key = key_of(cell_key.metric)
        if key is None:
            continue
        est = estimate(v for v in cell.values if v > 0)
        if est is not None:
            data.setdefault(cell_key.target, {})[key] = est
    return in_plan_order(campaign, data)


def _log_bars(
    campaign: Campaign,
    data: Values,
    groups: list[tuple[str, str]],
    xtitle: str,
    ytitle: str,
    unit: str,
) -> Figure:
    """Bars per group (x) and target (colour) on a log axis: values span decades, so
    each bar is labelled with its value (a log axis has no baseline to compare by)."""
    ends = [
        v
        for vals in data.values()
        for e in vals.values()
        for v in (e.median, e.lo, e.hi)
        if v is not None
    ]
    return {
        "data": grouped_bars(campaign, groups, data, unit, labels=True),
        "layout": layout(
            400, axis(xtitle), axis(ytitle, type="log", **log_ticks(ends)), barmode="group"
        ),
    }


def fsync_latency_chart(campaign: Campaign) -> Figure | None:
    """fdatasync latency p50/p90/p99/p99.9 per target; None without data."""
    keys = {f"fsync_latency.sync_{k}_us": k for k, _ in SYNC_PERCENTILES}
    data = collect_values(campaign, "fsync-latency", keys.get)
    if not data:
        return None
    # Stored in µs (fio's unit); drawn in ms, the unit latencies are read in.
    ms = {
        t: {k: Estimate(e.median / 1000, _ms(e.lo), _ms(e.hi), e.n) for k, e in vals.items()}
        for t, vals in data.items()
    }
    return _log_bars(
        campaign,
        ms,
        list(SYNC_PERCENTILES),
        "percentile of fdatasync calls",
        "ms per fdatasync (log scale)",
        "ms",
    )


def fileio_label(key: str) -> str:
    """ "randread_8k" → "random read 8 kB"."""
    pattern, _, size = key.rpartition("_")
    unit = {"k": " kB", "m": " MB", "g": " GB", "b": " B"}.get(size[-1:], " B")
    number = size.rstrip("kmgb") or size
    return f"{_PATTERNS.get(pattern, pattern)} {number}{unit}"


def fileio_chart(campaign: Campaign) -> Figure | None:
    """MB/s of each fileio cell (pattern × block size) per target; None without data."""

    def key_of(name: str) -> str | None:
        match = _FILEIO_MBPS.match(name)
        return f"{match.group(1)}_{match.group(2)}" if match else None

    data = collect_values(campaign, "fileio", key_of)
    if not data:
        return None
    cells = list(dict.fromkeys(c for vals in data.values() for c in vals))  # run order
    return _log_bars(
        campaign,
        data,
        [(c, fileio_label(c)) for c in cells],
        "access pattern and block size",
        "MB/s (log scale)",
        "MB/s",
    )


def _ms(us: float | None) -> float | None:
    """A latency in µs, in ms."""
    return None if us is None else us / 1000


FIGURES = [
    FigureSpec(
        "fsync-latency-chart",
        30,
        "fio: latency of fdatasync after each sequential write",
        "fio, sequential writes each followed by fdatasync (the WAL's pattern): sync "
        "latency percentiles in ms (the table has them in µs), log scale; lower is "
        "better. " + WHISKERS_CAPTION.format(what="Bars"),
        fsync_latency_chart,
    ),
    FigureSpec(
        "fileio-chart",
        40,
        "fio with O_DIRECT: throughput per access pattern",
        "fio with O_DIRECT: MB/s (10^6 bytes per second) per access pattern and block "
        "size (one time-based run per cell and repetition), log scale; higher is "
        "better. " + WHISKERS_CAPTION.format(what="Bars"),
        fileio_chart,
    ),
]
