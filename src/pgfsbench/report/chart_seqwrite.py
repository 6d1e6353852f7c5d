"""Charts of the seqwrite workload: MB/s per target, and where the CPU time went (the seqwrite study)."""

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
)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign

TOOLS = ("dd", "fio")
_METRIC = re.compile(r"^seqwrite\.([a-z]+)\.(mb_per_s|cpu_(?:user|system|iowait)_pct)$")
CPU_PARTS = (("user", "user"), ("system", "system"), ("iowait", "iowait"))  # vmstat's us/sy/wa

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


def throughput_chart(campaign: Campaign) -> Figure | None:
    """Bars of MB/s per tool (x) and target (colour); None without data."""
    data = {
        t: {tool: fields["mb_per_s"] for tool, fields in tools.items() if "mb_per_s" in fields}
        for t, tools in seqwrite_values(campaign).items()
    }
    data = {t: v for t, v in data.items() if v}
    if not data:
        return None
    groups = [(tool, _tool_label(tool)) for tool in _tools(seqwrite_values(campaign))]
    return {
        "data": grouped_bars(campaign, groups, data, "MB/s", labels=True),
        "layout": layout(360, axis("tool"), axis("MB/s", rangemode="tozero"), barmode="group"),
    }


def cpu_chart(campaign: Campaign) -> Figure | None:
    """Median user/system/iowait % per target (colour) and part (x), per tool when
    several; None without data."""
    values = seqwrite_values(campaign)
    tools = _tools(values)
    several = len(tools) > 1
    groups = [
        (f"{tool}.{part}", f"{tool} {label}" if several else label)
        for tool in tools
        for part, label in CPU_PARTS
    ]
    data = {
        target: {
            f"{tool}.{part}": fields[f"cpu_{part}_pct"]
            for tool, fields in by_tool.items()
            for part, _ in CPU_PARTS
            if f"cpu_{part}_pct" in fields
        }
        for target, by_tool in values.items()
    }
    data = {t: v for t, v in data.items() if v}
    if not data:
        return None
    return {
        "data": grouped_bars(campaign, groups, data, "% of all CPUs"),
        "layout": layout(
            360,
            axis("CPU time" + (" per tool" if several else "")),
            axis("% of all CPUs during the write", rangemode="tozero"),
            barmode="group",
        ),
    }


def _tool_label(tool: str) -> str:
    return {"dd": "dd conv=fdatasync", "fio": "fio end_fsync=1"}.get(tool, tool)


FIGURES = [
    FigureSpec(
        "seqwrite-chart",
        60,
        "Sequential write of one file, data synced to disk",
        "Sequential write of one file (the seqwrite study's dd): MB/s "
        "including the final fdatasync; higher is better. " + WHISKERS_CAPTION.format(what="Bars"),
        throughput_chart,
    ),
    FigureSpec(
        "seqwrite-cpu-chart",
        61,
        "Where the CPU time went while writing",
        "CPU time during the sequential write, as vmstat's us/sy/wa columns: user, "
        "system (incl. irq), iowait; % of all CPUs over the write, from /proc/stat (the "
        "rest was idle). " + WHISKERS_CAPTION.format(what="Bars"),
        cpu_chart,
    ),
]
