"""Charts of the fio workloads: fdatasync latency percentiles and the fileio matrix."""

from __future__ import annotations

import re

from pgfsbench.report.charts import (BAR_WHISKERS, WHISKERS_CAPTION, Estimate, cells_of,
                                     estimate, in_plan_order, new_axes, target_colors, to_svg,
                                     whiskers)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.report.terminal import format_value
from pgfsbench.store.read import Campaign

SYNC_PERCENTILES = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99_9", "p99.9"))
_FILEIO_MBPS = re.compile(r"^fileio\.([a-z]+_[0-9]+[kmgb]?)\.mb_per_s$")

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


def _grouped_bars(campaign: Campaign, data: Values, groups: list[tuple[str, str]],
                  salt: str, ylabel: str, title: str, width_in: float) -> str:
    """Bars per group (x) and target (colour) on a log axis: values span decades."""
    colors = target_colors(campaign)
    targets = list(data)
    width = 0.8 / len(targets)
    with new_axes(salt, (width_in, 3.6), grid="y") as (fig, ax):
        for j, target in enumerate(targets):
            xs, ests = [], []
            for i, (key, _) in enumerate(groups):
                if key in data[target]:  # not measured: leave the slot empty
                    xs.append(i - 0.4 + width * (j + 0.5))
                    ests.append(data[target][key])
            heights = [e.median for e in ests]
            bars = ax.bar(xs, heights, width * 0.92, color=colors.get(target, "#444444"),
                          label=target, yerr=whiskers(ests), error_kw=BAR_WHISKERS)
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
    data = collect_values(campaign, "fsync-latency", keys.get)
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

    data = collect_values(campaign, "fileio", key_of)
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
               "better. " + WHISKERS_CAPTION.format(what="Bars"), fsync_latency_chart),
    FigureSpec("fileio-chart", 40, "fio with O_DIRECT: MB/s per access pattern and block size "
               "(one time-based run per cell and repetition), log scale; higher is better. "
               + WHISKERS_CAPTION.format(what="Bars"), fileio_chart),
]
