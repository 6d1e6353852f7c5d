"""Charts for the parallel count(*) sweep (seed 003) and pg_basebackup throughput (seed 000)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import matplotlib
from matplotlib.figure import Figure

from pgfsbench.report.charts import STYLE, target_colors, to_svg
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign

_WORKERS_MS = re.compile(r"^parallel_scan\.workers_(\d+)\.ms$")
_LINESTYLES = ("-", "--", ":", "-.")


@dataclass
class ScanCurve:
    target: str
    label: str
    ms: dict[int, float]  # max_parallel_workers_per_gather → median time
    knee: int | None


def scan_curves(campaign: Campaign) -> list[ScanCurve]:
    """One curve per ok parallel-scan run, in run order."""
    runs = [r for r in campaign.runs if r.workload == "parallel-scan" and r.status == "ok"]
    per_target: dict[str, int] = {}
    for r in runs:
        per_target[r.target] = per_target.get(r.target, 0) + 1
    curves = []
    for r in runs:
        ms = {int(m.group(1)): x.value for x in r.metrics
              if (m := _WORKERS_MS.match(x.name)) and x.value is not None}
        if not ms:
            continue
        knee = next((int(x.value) for x in r.metrics
                     if x.name == "parallel_scan.knee_workers" and x.value is not None), None)
        # Several sweeps on one target (e.g. two table sizes): tell them apart by rows.
        label = r.target if per_target[r.target] == 1 else f"{r.target} rows={r.params.get('rows')}"
        curves.append(ScanCurve(r.target, label, dict(sorted(ms.items())), knee))
    return curves


def scan_chart(campaign: Campaign) -> str | None:
    """count(*) time vs max_parallel_workers_per_gather, one line per target, knee marked."""
    curves = scan_curves(campaign)
    if not curves:
        return None
    colors = target_colors(campaign)
    salt = "pgfsbench-scan"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):
        fig = Figure(figsize=(9, 3.6))
        ax = fig.add_subplot()
        seen: dict[str, int] = {}
        for c in curves:
            n = seen[c.target] = seen.get(c.target, -1) + 1
            color = colors.get(c.target, "#444444")
            has_knee = c.knee is not None and c.knee in c.ms
            # The knee's count goes in the legend: text beside the points would collide
            # when targets share a knee.
            label = f"{c.label} (knee: {c.knee})" if has_knee else c.label
            ax.plot(list(c.ms), list(c.ms.values()), color=color, marker="o", markersize=4,
                    linewidth=1.4, linestyle=_LINESTYLES[n % len(_LINESTYLES)], label=label)
            if has_knee:  # a hollow ring around the knee's point
                ax.plot([c.knee], [c.ms[c.knee]], marker="o", markersize=11, fillstyle="none",
                        markeredgewidth=1.5, color=color, linestyle="none")
        counts = sorted({w for c in curves for w in c.ms})
        ax.set_xticks(counts)
        ax.set_xlabel("max_parallel_workers_per_gather")
        ax.set_ylabel("ms (median)")
        ax.set_ylim(bottom=0)
        ax.set_title("Parallel count(*) over a cached table: time vs workers", loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def basebackup_rates(campaign: Campaign) -> dict[str, float]:
    """MB/s per target in plan order; a later run overwrites, as in the comparison table."""
    order = {t.name: t.position for t in campaign.targets}
    rates: dict[str, float] = {}
    for r in campaign.runs:
        if r.workload != "basebackup" or r.status != "ok":
            continue
        for m in r.metrics:
            if m.name == "basebackup.mb_per_s" and m.value is not None:
                rates[r.target] = m.value
    return dict(sorted(rates.items(), key=lambda kv: order.get(kv[0], 0)))


def basebackup_chart(campaign: Campaign) -> str | None:
    """pg_basebackup MB/s, one bar per target."""
    rates = basebackup_rates(campaign)
    if not rates:
        return None
    colors = target_colors(campaign)
    salt = "pgfsbench-basebackup"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt, "axes.grid.axis": "y"}):
        fig = Figure(figsize=(max(3.5, 1.2 * len(rates) + 2), 3.2))
        ax = fig.add_subplot()
        names = list(rates)
        bars = ax.bar(range(len(names)), list(rates.values()), 0.6,
                      color=[colors.get(n, "#444444") for n in names])
        ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
        ax.set_xticks(range(len(names)), names)
        ax.set_ylabel("MB/s")
        ax.set_title("pg_basebackup (plain, WAL streamed)", loc="left")
        ax.set_axisbelow(True)
        return to_svg(fig, salt)


FIGURES = [
    FigureSpec("scan-chart", 50, "Parallel count(*) over a cached unlogged table: median time "
               "for each max_parallel_workers_per_gather (lower is better); the ring marks the "
               "knee, the fewest workers after which more gain less than 10 %.", scan_chart),
    FigureSpec("basebackup-chart", 55, "pg_basebackup of the cluster onto the same filesystem: "
               "backup size over time, in MB/s (higher is better).", basebackup_chart),
]
