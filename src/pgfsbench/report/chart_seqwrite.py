"""Charts of the seqwrite workload: MB/s per target, and where the CPU time went (seed 004)."""

from __future__ import annotations

import re

from pgfsbench.report.charts import (BAR_WHISKERS, WHISKERS_CAPTION, Estimate, cells_of,
                                     estimate, in_plan_order, new_axes, target_colors, to_svg,
                                     whiskers)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign

TOOLS = ("dd", "fio")
_METRIC = re.compile(r"^seqwrite\.([a-z]+)\.(mb_per_s|cpu_(?:user|system|iowait)_pct)$")
# vmstat's us / sy / wa; fixed colours, not the targets': the stack is one target's split.
CPU_PARTS = (("user", "user", "#0072B2"), ("system", "system", "#D55E00"),
             ("iowait", "iowait", "#E69F00"))

Values = dict[str, dict[str, dict[str, Estimate]]]  # target -> tool -> field -> median, CI


def seqwrite_values(campaign: Campaign) -> Values:
    """target → tool → field (mb_per_s, cpu_user_pct, ...) → median over repetitions and CI.

    Targets in plan order; with several seqwrite measurements (labels) on one
    target the later wins.
    """
    data: Values = {}
    for key, cell in cells_of(campaign, "seqwrite").items():
        match = _METRIC.match(key.metric)
        if match and (est := estimate(cell.values)):
            tool, field = match.groups()
            data.setdefault(key.target, {}).setdefault(tool, {})[field] = est
    return in_plan_order(campaign, data)


def _tools(data: Values) -> list[str]:
    seen = {tool for tools in data.values() for tool in tools}
    return [t for t in TOOLS if t in seen] + sorted(seen - set(TOOLS))


def throughput_chart(campaign: Campaign) -> str | None:
    """Bars of MB/s per tool (x) and target (colour); None without data."""
    data = {t: tools for t, tools in seqwrite_values(campaign).items()
            if any("mb_per_s" in f for f in tools.values())}
    if not data:
        return None
    colors = target_colors(campaign)
    tools, targets = _tools(data), list(data)
    width = 0.8 / len(targets)
    salt = "pgfsbench-seqwrite"
    width_in = min(10.0, max(6.0, 1.2 * len(targets) * len(tools) + 2.5))
    with new_axes(salt, (width_in, 3.6), grid="y") as (fig, ax):
        labelled: set[str] = set()  # one legend entry per target
        for j, target in enumerate(targets):
            for i, tool in enumerate(tools):
                est = data[target].get(tool, {}).get("mb_per_s")
                if est is None:
                    continue  # not measured: leave the slot empty
                x = i - 0.4 + width * (j + 0.5)
                bar = ax.bar(x, est.median, width * 0.92, color=colors.get(target, "#444444"),
                             label=None if target in labelled else target,
                             yerr=whiskers([est]), error_kw=BAR_WHISKERS)
                ax.bar_label(bar, fmt="%.0f", fontsize=7, padding=2)
                labelled.add(target)
        ax.set_xticks(range(len(tools)), [_tool_label(t) for t in tools])
        ax.set_ylabel("MB/s (10^6 B/s)")
        ax.set_ylim(bottom=0)
        ax.margins(y=0.12)  # room for the value labels
        ax.set_title("Sequential write of one file, data synced to disk", loc="left")
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def cpu_chart(campaign: Campaign) -> str | None:
    """Stacked median user/system/iowait % per target (and tool); None without data.

    Each segment's whisker is that part's CI, drawn at the segment's top.
    """
    data = seqwrite_values(campaign)
    bars = [(target, tool) for target, tools in data.items() for tool in _tools(data)
            if tool in tools and any(f"cpu_{p}_pct" in tools[tool] for p, _, _ in CPU_PARTS)]
    if not bars:
        return None
    several_tools = len({tool for _, tool in bars}) > 1
    salt = "pgfsbench-seqwrite-cpu"
    figsize = (min(10.0, max(6.0, 0.8 * len(bars) + 3.0)), 3.6)
    with new_axes(salt, figsize, grid="y") as (fig, ax):
        xs = range(len(bars))
        bottom = [0.0] * len(bars)
        for part, label, color in CPU_PARTS:
            # A part not measured stacks as 0 %, without a whisker.
            ests = [data[target][tool].get(f"cpu_{part}_pct", Estimate(0.0, None, None, 0))
                    for target, tool in bars]
            heights = [e.median for e in ests]
            ax.bar(xs, heights, 0.6, bottom=bottom, color=color, label=label,
                   yerr=whiskers(ests), error_kw=BAR_WHISKERS)
            bottom = [b + h for b, h in zip(bottom, heights)]
        ax.set_xticks(list(xs), [f"{target}\n{tool}" if several_tools else target
                                 for target, tool in bars])
        ax.set_ylabel("% of all CPUs during the write")
        ax.set_ylim(0, max(10.0, max(bottom) * 1.15))
        ax.set_title("Where the CPU time went while writing (the rest was idle)", loc="left")
        ax.set_axisbelow(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def _tool_label(tool: str) -> str:
    return {"dd": "dd conv=fdatasync", "fio": "fio end_fsync=1"}.get(tool, tool)


FIGURES = [
    FigureSpec("seqwrite-chart", 60, "Sequential write of one file (seed 004's dd): MB/s "
               "including the final fdatasync; higher is better. "
               + WHISKERS_CAPTION.format(what="Bars"), throughput_chart),
    FigureSpec("seqwrite-cpu-chart", 61, "CPU time during the sequential write, as vmstat's "
               "us/sy/wa columns: user, system (incl. irq), iowait; % of all CPUs, sampled "
               "from /proc/stat. Each segment is the median of that part over repetitions, "
               "stacked; its whisker, at the segment's top, is that part's 95 % confidence "
               "interval (bootstrap) where it was measured at least twice.", cpu_chart),
]
