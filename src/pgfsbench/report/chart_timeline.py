"""Timelines: what the machine did during each run, every target on one time axis.

The pgbench timeline stacks panels that share the x axis (seconds since the
run started): whole-second tps, the target device's write MB/s and await,
dirty memory and CPU iowait, from the campaign's monitors; triangles under
the tps mark finished checkpoints. The seqwrite timeline draws the seqwrite
workload's own monitor (sampled SEQWRITE_INTERVAL apart, since a write lasts
a second or two): device write MB/s, dirty memory and iowait per tool.

One line per run and panel, coloured by target; every target's representative
run (the median-headline repetition) is drawn, its other rounds are in the
legend, hidden until clicked. A legend entry toggles the run in every panel.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgfsbench.metrics import SEQWRITE_SAMPLE_INTERVAL, Series
from pgfsbench.render.values import format_value
from pgfsbench.report.charts import (
    DASHES,
    FALLBACK_COLOR,
    Figure,
    axis,
    hover_text,
    joined,
    layout,
    run_groups,
    stacked_rows,
    target_colors,
    target_trace,
    warmup_band,
    warmup_seconds,
    whole_seconds,
)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign, StoredRun

CHECKPOINTS = "mon.pg.checkpoints"


@dataclass(frozen=True)
class Panel:
    title: str
    unit: str
    series: tuple[tuple[str, str], ...]  # (series name, what it is); later ones dotted
    height: int = 120


PGBENCH_PANELS = (
    Panel("transactions per second (whole seconds)", "tx/s", (("pgbench.tps", "tps"),), 150),
    Panel("target device writes (MB/s)", "MB/s", (("mon.disk.target.write_mb_per_s", "write"),)),
    Panel("target device await (ms)", "ms", (("mon.disk.target.await_ms", "await"),)),
    Panel(
        "dirty memory, writeback dotted (MB)",
        "MB",
        (("mon.mem.dirty_mb", "dirty"), ("mon.mem.writeback_mb", "writeback")),
    ),
    Panel(
        "CPU iowait, system dotted (% of all CPUs)",
        "%",
        (("mon.cpu.iowait_pct", "iowait"), ("mon.cpu.system_pct", "system")),
    ),
)
SEQWRITE_PANELS = (
    Panel("target device writes (MB/s)", "MB/s", (("disk.target.write_mb_per_s", "write"),), 150),
    Panel(
        "dirty memory, writeback dotted (MB)",
        "MB",
        (("mem.dirty_mb", "dirty"), ("mem.writeback_mb", "writeback")),
    ),
    Panel(
        "CPU iowait, system dotted (% of all CPUs)",
        "%",
        (("cpu.iowait_pct", "iowait"), ("cpu.system_pct", "system")),
    ),
)


def _has_monitor(run: StoredRun, prefix: str) -> bool:
    return any(name.startswith(prefix) and s.points for name, s in run.series.items())


def pgbench_timeline_runs(campaign: Campaign) -> list[StoredRun]:
    """Ok pgbench runs that carry monitor series."""
    return [
        r
        for r in campaign.runs
        if r.workload == "pgbench" and r.status == "ok" and _has_monitor(r, "mon.")
    ]


def seqwrite_timeline_runs(campaign: Campaign) -> list[StoredRun]:
    """Ok seqwrite runs with the workload's own per-tool monitor series."""
    return [
        r
        for r in campaign.runs
        if r.workload == "seqwrite" and r.status == "ok" and _has_monitor(r, "seqwrite.")
    ]


def _points(run: StoredRun, name: str) -> list[tuple[float, float]]:
    if name == "pgbench.tps":
        return whole_seconds(run)
    series: Series | None = run.series.get(name)
    return full_intervals([(t, v) for t, v in series.points if v is not None] if series else [])


def full_intervals(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """A monitor series without its last point when that closes a short interval.

    A monitor samples every interval and once more at stop(); that last
    interval can be a few milliseconds long, and a rate over it is mostly
    noise (a "drop" in MB/s that did not happen). Left out when it is under
    half the typical interval.
    """
    if len(points) < 3:
        return points
    gaps = sorted(b[0] - a[0] for a, b in zip(points, points[1:]))
    typical = gaps[len(gaps) // 2]
    if points[-1][0] - points[-2][0] < typical / 2:
        return points[:-1]
    return points


def _timeline(
    campaign: Campaign,
    runs: list[StoredRun],
    panels: tuple[Panel, ...],
    tools: dict[int, list[str]],
) -> Figure:
    """``tools``: run id → the series-name prefixes to draw for it ("" for mon.*
    names as they are, "seqwrite.dd." ...), each a line style of its own."""
    colors = target_colors(campaign)
    groups = run_groups(campaign, runs)
    repeated = any(g.others for g in groups)
    height, domains, notes = stacked_rows([p.height for p in panels], [p.title for p in panels])
    traces: list[dict] = []
    for g in groups:
        color = colors.get(g.target, FALLBACK_COLOR)
        for n, prefix in enumerate(tools[g.median.id]):
            tool = prefix.removeprefix("seqwrite.").rstrip(".")
            for runs_, base in zip(([g.median], g.others), g.names(repeated)):
                name = f"{base} {tool}" if tool else base
                hidden = runs_ is g.others
                first = True
                for p, panel in enumerate(panels):
                    for k, (series, what) in enumerate(panel.series):
                        xs, ys, owners = joined(
                            runs_, lambda r, key=prefix + series: _points(r, key)
                        )
                        if not xs:
                            continue
                        trace = target_trace(
                            g.target,
                            color,
                            "scatter",
                            mode="lines+markers",
                            x=xs,
                            y=ys,
                            legendgroup=name,
                            showlegend=first,
                            yaxis=f"y{p + 1 if p else ''}",
                        )
                        trace["name"] = name
                        trace["line"].update(
                            dash=DASHES[(n + (2 if k else 0)) % len(DASHES)],
                            width=1 if hidden else 1.4,
                        )
                        trace["marker"]["size"] = 3
                        what_ = f" {what}" if len(panel.series) > 1 else ""
                        texts = [
                            f"{x:.1f} s: {format_value(y)} {panel.unit}{what_}"
                            if x is not None
                            else ""
                            for x, y in zip(xs, ys)
                        ]
                        if hidden:
                            trace.update(visible="legendonly", opacity=0.6)
                            texts = [
                                f"round {o.repetition} · {t}" if o else ""
                                for o, t in zip(owners, texts)
                            ]
                        traces.append(hover_text(trace, texts))
                        first = False
                if g.median.workload == "pgbench":
                    traces += _checkpoint_marks(runs_, color, name, hidden)
    axes = {
        "xaxis": axis(
            "seconds since the run started",
            rangemode="tozero",
            anchor=f"y{len(panels)}" if len(panels) > 1 else "y",
        )
    }
    for p, (panel, domain) in enumerate(zip(panels, domains)):
        key = f"yaxis{p + 1 if p else ''}"
        axes[key] = axis(panel.unit, domain=list(domain), rangemode="tozero", anchor="x")
    shapes = []
    warm = max((warmup_seconds(g.median) for g in groups), default=0.0)
    if warm:
        shapes.append(warmup_band(warm, "y domain"))
    return {
        "data": traces,
        "layout": layout(height, annotations=notes, shapes=shapes, hovermode="x", **axes),
    }


def _checkpoint_marks(runs: list[StoredRun], color: str, name: str, hidden: bool) -> list[dict]:
    """Triangles on the tps panel's zero line where a checkpoint finished."""
    times, texts = [], []
    for run in runs:
        cp = run.series.get(CHECKPOINTS)
        for t in [t for t, v in cp.points if v] if cp else []:
            times.append(t)
            texts.append(
                (f"round {run.repetition} · " if hidden else "")
                + f"checkpoint finished by {t:.1f} s"
            )
    if not times:
        return []
    trace = target_trace(
        runs[0].target,
        color,
        "scatter",
        mode="markers",
        x=times,
        y=[0] * len(times),
        legendgroup=name,
        showlegend=False,
        yaxis="y",
        cliponaxis=False,
    )
    trace["name"] = name
    trace["marker"] = {
        "symbol": "triangle-up",
        "size": 10,
        "color": color,
        "line": {"width": 1, "color": "#ffffff"},
    }
    if hidden:
        trace["visible"] = "legendonly"
    return [hover_text(trace, texts)]


def timeline_chart(campaign: Campaign) -> Figure | None:
    runs = pgbench_timeline_runs(campaign)
    if not runs:
        return None
    return _timeline(campaign, runs, PGBENCH_PANELS, {r.id: [""] for r in runs})


def seqwrite_timeline_chart(campaign: Campaign) -> Figure | None:
    runs = seqwrite_timeline_runs(campaign)
    if not runs:
        return None
    tools = {}
    for r in runs:
        seen = dict.fromkeys(
            name.split(".")[1] for name in r.series if name.startswith("seqwrite.")
        )
        tools[r.id] = [f"seqwrite.{tool}." for tool in seen]
    return _timeline(campaign, runs, SEQWRITE_PANELS, tools)


FIGURES = [
    FigureSpec(
        "timeline-chart",
        12,
        "pgbench runs over time, with the machine beside them",
        "What the machine did during each pgbench run, every target on the run's time "
        "axis: whole-second throughput (a run's partial first and last seconds are left "
        "out), the target device's write MB/s and await, dirty and writeback memory, "
        "and CPU iowait and system time; triangles mark finished checkpoints. With "
        "repetitions, the median-tps run of each target and client count is drawn and "
        "the other rounds are in the legend, hidden until clicked; a legend entry "
        "toggles a run in every panel.",
        timeline_chart,
    ),
    FigureSpec(
        "seqwrite-timeline-chart",
        62,
        "Sequential write over time",
        "The sequential write as the machine saw it, sampled every "
        f"{SEQWRITE_SAMPLE_INTERVAL:g} s by the "
        "workload's own monitor (a write lasts a second or two): the target device's "
        "write MB/s, dirty and writeback memory, and CPU iowait and system time; "
        "dd solid, fio dashed. With repetitions, the median run of each target is "
        "drawn and the other rounds are in the legend, hidden until clicked.",
        seqwrite_timeline_chart,
    ),
]
