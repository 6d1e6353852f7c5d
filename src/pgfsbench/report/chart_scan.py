"""Charts for the parallel count(*) sweep (seed 003) and pg_basebackup throughput (seed 000)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pgfsbench.report.charts import (BAR_WHISKERS, WHISKERS_CAPTION, Estimate, cells_of,
                                     estimate, in_plan_order, line_with_whiskers, new_axes,
                                     target_colors, to_svg, whiskers)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign
from pgfsbench.analysis.scaling import knee_workers

_WORKERS_MS = re.compile(r"^parallel_scan\.workers_(\d+)\.ms$")
_LINESTYLES = ("-", "--", ":", "-.")


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
        if est is not None:
            _, ms = sweeps.setdefault((key.target, key.label), (cell.params, {}))
            ms[int(m.group(1))] = est
    per_target: dict[str, int] = {}
    for target, _ in sweeps:
        per_target[target] = per_target.get(target, 0) + 1
    position = {t.name: t.position for t in campaign.targets}
    curves = []
    # Plan order of targets; a target's sweeps in the order first measured (stable sort).
    for (target, _), (params, ms) in sorted(sweeps.items(),
                                            key=lambda kv: position.get(kv[0][0], 0)):
        knee = knee_workers({w: e.median for w, e in ms.items()})
        # Several sweeps on one target (e.g. two table sizes): tell them apart by rows.
        name = target if per_target[target] == 1 else f"{target} rows={params.get('rows')}"
        curves.append(ScanCurve(target, name, dict(sorted(ms.items())), knee))
    return curves


def scan_chart(campaign: Campaign) -> str | None:
    """count(*) time vs max_parallel_workers_per_gather, one line per target, knee marked."""
    curves = scan_curves(campaign)
    if not curves:
        return None
    colors = target_colors(campaign)
    salt = "pgfsbench-scan"
    any_ci = any(e.has_ci for c in curves for e in c.ms.values())
    with new_axes(salt, (9, 3.6)) as (fig, ax):
        seen: dict[str, int] = {}
        for c in curves:
            n = seen[c.target] = seen.get(c.target, -1) + 1
            color = colors.get(c.target, "#444444")
            has_knee = c.knee in c.ms
            # The knee's count goes in the legend: text beside the points would collide
            # when targets share a knee.
            label = f"{c.label} (knee: {c.knee})" if has_knee else c.label
            line_with_whiskers(ax, list(c.ms), list(c.ms.values()), errorbar=any_ci,
                               color=color, marker="o", markersize=4, linewidth=1.4,
                               linestyle=_LINESTYLES[n % len(_LINESTYLES)], label=label)
            if has_knee:  # a hollow ring around the knee's point
                ax.plot([c.knee], [c.ms[c.knee].median], marker="o", markersize=11,
                        fillstyle="none", markeredgewidth=1.5, color=color, linestyle="none")
        counts = sorted({w for c in curves for w in c.ms})
        ax.set_xticks(counts)
        ax.set_xlabel("max_parallel_workers_per_gather")
        ax.set_ylabel("ms (median)")
        ax.set_ylim(bottom=0)
        ax.set_title("Parallel count(*) over a cached table: time vs workers", loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def basebackup_rates(campaign: Campaign) -> dict[str, Estimate]:
    """Median MB/s over repetitions, with its CI, per target in plan order.

    With several basebackup measurements (labels) on one target the later wins.
    """
    rates: dict[str, Estimate] = {}
    for key, cell in cells_of(campaign, "basebackup").items():
        if key.metric == "basebackup.mb_per_s" and (est := estimate(cell.values)):
            rates[key.target] = est
    return in_plan_order(campaign, rates)


def basebackup_chart(campaign: Campaign) -> str | None:
    """pg_basebackup MB/s, one bar per target."""
    rates = basebackup_rates(campaign)
    if not rates:
        return None
    colors = target_colors(campaign)
    salt = "pgfsbench-basebackup"
    with new_axes(salt, (max(3.5, 1.2 * len(rates) + 2), 3.2), grid="y") as (fig, ax):
        names, ests = list(rates), list(rates.values())
        bars = ax.bar(range(len(names)), [e.median for e in ests], 0.6,
                      color=[colors.get(n, "#444444") for n in names],
                      yerr=whiskers(ests), error_kw=BAR_WHISKERS)
        ax.bar_label(bars, fmt="%.0f", fontsize=8, padding=2)
        ax.set_xticks(range(len(names)), names)
        ax.set_ylabel("MB/s")
        ax.set_title("pg_basebackup (plain, WAL streamed)", loc="left")
        ax.set_axisbelow(True)
        return to_svg(fig, salt)


FIGURES = [
    FigureSpec("scan-chart", 50, "Parallel count(*) over a cached unlogged table: time (per "
               "run, the median of its scans) for each max_parallel_workers_per_gather (lower "
               "is better); the ring marks the "
               "knee of the median curve, the fewest workers after which more gain less than "
               "10 %. " + WHISKERS_CAPTION.format(what="Points"), scan_chart),
    FigureSpec("basebackup-chart", 55, "pg_basebackup of the cluster onto the same filesystem: "
               "backup size over time, in MB/s (higher is better). "
               + WHISKERS_CAPTION.format(what="Bars"), basebackup_chart),
]
