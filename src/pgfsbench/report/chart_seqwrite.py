"""Charts of the seqwrite workload: MB/s per target, and where the CPU time went (seed 004)."""

from __future__ import annotations

import re

import matplotlib
from matplotlib.figure import Figure

from pgfsbench.report.charts import STYLE, target_colors, to_svg
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign

TOOLS = ("dd", "fio")
_METRIC = re.compile(r"^seqwrite\.([a-z]+)\.(mb_per_s|cpu_(?:user|system|iowait)_pct)$")
# vmstat's us / sy / wa; fixed colours, not the targets': the stack is one target's split.
CPU_PARTS = (("user", "user", "#0072B2"), ("system", "system", "#D55E00"),
             ("iowait", "iowait", "#E69F00"))

Values = dict[str, dict[str, dict[str, float]]]  # target -> tool -> field -> value


def _collect(campaign: Campaign) -> Values:
    """Values of ok seqwrite runs, targets in plan order; a later run overwrites."""
    order = {t.name: t.position for t in campaign.targets}
    data: Values = {}
    for run in campaign.runs:
        if run.workload != "seqwrite" or run.status != "ok":
            continue
        for m in run.metrics:
            match = _METRIC.match(m.name)
            if match and m.value is not None:
                tool, field = match.groups()
                data.setdefault(run.target, {}).setdefault(tool, {})[field] = m.value
    return dict(sorted(data.items(), key=lambda kv: order.get(kv[0], 0)))


def _tools(data: Values) -> list[str]:
    seen = {tool for tools in data.values() for tool in tools}
    return [t for t in TOOLS if t in seen] + sorted(seen - set(TOOLS))


def throughput_chart(campaign: Campaign) -> str | None:
    """Bars of MB/s per tool (x) and target (colour); None without data."""
    data = {t: tools for t, tools in _collect(campaign).items()
            if any("mb_per_s" in f for f in tools.values())}
    if not data:
        return None
    colors = target_colors(campaign)
    tools, targets = _tools(data), list(data)
    width = 0.8 / len(targets)
    salt = "pgfsbench-seqwrite"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt, "axes.grid.axis": "y"}):
        width_in = min(10.0, max(6.0, 1.2 * len(targets) * len(tools) + 2.5))
        fig = Figure(figsize=(width_in, 3.6))
        ax = fig.add_subplot()
        labelled: set[str] = set()  # one legend entry per target
        for j, target in enumerate(targets):
            for i, tool in enumerate(tools):
                value = data[target].get(tool, {}).get("mb_per_s")
                if value is None:
                    continue  # not measured: leave the slot empty
                x = i - 0.4 + width * (j + 0.5)
                bar = ax.bar(x, value, width * 0.92, color=colors.get(target, "#444444"),
                             label=None if target in labelled else target)
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
    """Stacked user/system/iowait % per target (and tool); None without data."""
    data = _collect(campaign)
    bars = [(target, tool) for target, tools in data.items() for tool in _tools(data)
            if tool in tools and any(f"cpu_{p}_pct" in tools[tool] for p, _, _ in CPU_PARTS)]
    if not bars:
        return None
    several_tools = len({tool for _, tool in bars}) > 1
    salt = "pgfsbench-seqwrite-cpu"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt, "axes.grid.axis": "y"}):
        fig = Figure(figsize=(min(10.0, max(6.0, 0.8 * len(bars) + 3.0)), 3.6))
        ax = fig.add_subplot()
        xs = range(len(bars))
        bottom = [0.0] * len(bars)
        for part, label, color in CPU_PARTS:
            heights = [data[target][tool].get(f"cpu_{part}_pct", 0.0) for target, tool in bars]
            ax.bar(xs, heights, 0.6, bottom=bottom, color=color, label=label)
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
               "including the final fdatasync; higher is better.", throughput_chart),
    FigureSpec("seqwrite-cpu-chart", 61, "CPU time during the sequential write, as vmstat's "
               "us/sy/wa columns: user, system (incl. irq), iowait; % of all CPUs, sampled "
               "from /proc/stat.", cpu_chart),
]
