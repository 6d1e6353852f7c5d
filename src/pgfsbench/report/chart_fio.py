"""Charts of the fio workloads: fdatasync latency percentiles and the fileio matrix."""

from __future__ import annotations

import re

import matplotlib
from matplotlib.figure import Figure

from pgfsbench.report.charts import STYLE, target_colors, to_svg
from pgfsbench.report.figures import FigureSpec
from pgfsbench.report.terminal import format_value
from pgfsbench.store.read import Campaign

SYNC_PERCENTILES = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9"))
_FILEIO_MBPS = re.compile(r"^fileio\.([a-z]+_[0-9]+[kmgb]?)\.mb_per_s$")

Values = dict[str, dict[str, float]]  # target -> key -> value


def _collect(campaign: Campaign, workload: str, key_of) -> Values:
    """target → key → value over ok runs, targets in plan order.

    ``key_of`` maps a metric name to its key, or None to skip it. A later
    run overwrites an earlier one, as in the comparison table.
    """
    order = {t.name: t.position for t in campaign.targets}
    data: Values = {}
    for run in campaign.runs:
        if run.workload != workload or run.status != "ok":
            continue
        for m in run.metrics:
            key = key_of(m.name)
            if key is not None and m.value is not None and m.value > 0:  # log axis
                data.setdefault(run.target, {})[key] = m.value
    return dict(sorted(data.items(), key=lambda kv: order.get(kv[0], 0)))


def _grouped_bars(campaign: Campaign, data: Values, groups: list[tuple[str, str]],
                  salt: str, ylabel: str, title: str, width_in: float) -> str:
    """Bars per group (x) and target (colour) on a log axis: values span decades."""
    colors = target_colors(campaign)
    targets = list(data)
    width = 0.8 / len(targets)
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt, "axes.grid.axis": "y"}):
        fig = Figure(figsize=(width_in, 3.6))
        ax = fig.add_subplot()
        for j, target in enumerate(targets):
            xs, heights = [], []
            for i, (key, _) in enumerate(groups):
                if key in data[target]:  # not measured: leave the slot empty
                    xs.append(i - 0.4 + width * (j + 0.5))
                    heights.append(data[target][key])
            bars = ax.bar(xs, heights, width * 0.92, color=colors.get(target, "#444444"),
                          label=target)
            # A log axis has no zero baseline to compare bar lengths by: print the values.
            ax.bar_label(bars, [format_value(h) for h in heights], padding=1.5, fontsize=6.5,
                         rotation=90 if len(targets) > 3 else 0)
        ax.set_yscale("log")
        ax.margins(y=0.12)  # headroom for the labels above the tallest bar
        ax.set_xticks(range(len(groups)), [label for _, label in groups])
        ax.set_ylabel(ylabel)
        ax.set_title(title, loc="left")
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def fsync_latency_chart(campaign: Campaign) -> str | None:
    """fdatasync latency p50/p90/p99/p99.9 per target; None without data."""
    keys = {f"fsync_latency.sync_{k}_us": k for k, _ in SYNC_PERCENTILES}
    data = _collect(campaign, "fsync-latency", keys.get)
    if not data:
        return None
    return _grouped_bars(campaign, data, list(SYNC_PERCENTILES), "pgfsbench-fsync-latency",
                         "µs per fdatasync (log scale)",
                         "fio: latency of fdatasync after each sequential write", 9)


def fileio_chart(campaign: Campaign) -> str | None:
    """MB/s of each fileio cell (pattern × block size) per target; None without data."""
    def key_of(name: str) -> str | None:
        match = _FILEIO_MBPS.match(name)
        return match.group(1) if match else None

    data = _collect(campaign, "fileio", key_of)
    if not data:
        return None
    cells = list(dict.fromkeys(c for vals in data.values() for c in vals))  # run order
    groups = [(c, c.replace("_", " ")) for c in cells]
    return _grouped_bars(campaign, data, groups, "pgfsbench-fileio", "MB/s (10^6 B/s, log scale)",
                         "fio with O_DIRECT: throughput per access pattern and block size",
                         max(9.0, 0.9 * len(cells) + 2))


FIGURES = [
    FigureSpec("fsync-latency-chart", 30, "fio, sequential writes each followed by fdatasync "
               "(the WAL's pattern): sync latency percentiles, log scale; lower is "
               "better.", fsync_latency_chart),
    FigureSpec("fileio-chart", 40, "fio with O_DIRECT: MB/s per access pattern and block size "
               "(one time-based run per cell), log scale; higher is better.", fileio_chart),
]
