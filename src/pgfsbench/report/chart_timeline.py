"""Per-run timeline: the workload's curve with the monitors underneath, on one time axis.

Each run gets one block of four panels sharing the x axis (seconds since the
workload started): throughput, dirty/writeback memory, the target device's
write MB/s and await, and the CPU split; checkpoints that finished are drawn
as vertical lines through all four. Blocks are stacked vertically in one SVG,
at most MAX_RUNS of them, so the figure stays readable.
"""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

from pgfsbench.report.charts import (STYLE, representative_runs, target_colors, to_svg,
                                     warmup_seconds)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign, StoredRun
from pgfsbench.metrics import Series

MAX_RUNS = 6
PANELS = 4
WORKLOADS = ("pgbench", "seqwrite")
CPU_PARTS = (("mon.cpu.user_pct", "user", "#0072B2"), ("mon.cpu.system_pct", "system", "#D55E00"),
             ("mon.cpu.iowait_pct", "iowait", "#E69F00"))
CHECKPOINT_COLOR = "#7f3fbf"
PANEL_TITLES = {
    "pgbench": "transactions per second",
    "seqwrite": "target device writes (MB/s)",
    "memory": "dirty and writeback memory (MB)",
    "device": "target device: write MB/s and await (ms)",
    "cpu": "CPU: user / system / iowait (% of all CPUs)",
}


def timeline_runs(campaign: Campaign) -> list[StoredRun]:
    """Ok pgbench and seqwrite runs that carry monitor series, in target (plan) order;
    with repetitions, the median repetition of each target and measurement."""
    order = {t.name: t.position for t in campaign.targets}
    runs = [r for r in campaign.runs
            if r.workload in WORKLOADS and r.status == "ok"
            and any(name.startswith("mon.") and s.points for name, s in r.series.items())]
    runs = representative_runs(runs)
    return sorted(runs, key=lambda r: (order.get(r.target, 0), r.id))


def timeline_chart(campaign: Campaign) -> str | None:
    runs = timeline_runs(campaign)
    if not runs:
        return None
    shown = runs[:MAX_RUNS]
    colors = target_colors(campaign)
    salt = "pgfsbench-timeline"
    panel_h, title_h = 1.35, 0.45
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):
        fig = Figure(figsize=(9, len(shown) * (PANELS * panel_h + title_h)))
        grid = fig.add_gridspec(len(shown) * PANELS, 1)  # tight_layout spaces the rows
        for i, run in enumerate(shown):
            axes = []
            for p in range(PANELS):
                ax = fig.add_subplot(grid[i * PANELS + p],
                                     sharex=axes[0] if axes else None)
                axes.append(ax)
            _block(run, axes, colors.get(run.target, "#444444"))
        if len(runs) > len(shown):
            fig.suptitle(f"first {len(shown)} of {len(runs)} runs", x=0.99, ha="right",
                         fontsize=8, color="#666666")
        return to_svg(fig, salt)


def _block(run: StoredRun, axes: list, color: str) -> None:
    s = run.series
    top, mem, dev, cpu = axes
    name = f"{run.target} · {run.label or run.workload}"
    if run.repetition > 1 or run.params.get("repetitions"):
        name += f" · round {run.repetition}"
    if run.workload == "pgbench":
        _line(top, s.get("pgbench.tps"), color, "tx/s")
        top.set_ylabel("tx/s")
        if warm := warmup_seconds(run):
            top.axvspan(0, warm, color="#bbbbbb", alpha=0.35, linewidth=0)
        first = PANEL_TITLES["pgbench"]
    else:
        _line(top, s.get("mon.disk.target.write_mb_per_s"), color, "MB/s")
        top.set_ylabel("MB/s")
        first = PANEL_TITLES["seqwrite"]
    top.set_title(f"{name}: {first}", loc="left", fontweight="bold")

    _line(mem, s.get("mon.mem.dirty_mb"), "#D55E00", "dirty")
    _line(mem, s.get("mon.mem.writeback_mb"), "#0072B2", "writeback")
    mem.set_ylabel("MB")
    mem.set_title(PANEL_TITLES["memory"], loc="left")

    _line(dev, s.get("mon.disk.target.write_mb_per_s"), "#009E73", "write MB/s")
    dev.set_ylabel("MB/s")
    twin = dev.twinx()
    twin.spines["right"].set_visible(True)
    twin.grid(False)
    _line(twin, s.get("mon.disk.target.await_ms"), "#CC79A7", "await ms", linestyle="--")
    twin.set_ylabel("await ms")
    twin.set_ylim(bottom=0)
    dev.set_title(PANEL_TITLES["device"], loc="left")
    handles = dev.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    if handles:
        dev.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.06, 1.0),
                   frameon=False, fontsize=7)

    _cpu(cpu, s)
    cpu.set_ylabel("%")
    cpu.set_title(PANEL_TITLES["cpu"], loc="left")
    cpu.set_xlabel("seconds since the workload started")

    for ax in (top, mem, dev, cpu):
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
    for ax in (mem, cpu):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", bbox_to_anchor=(1.06, 1.0), frameon=False, fontsize=7)
    for ax in (top, mem, dev):
        ax.tick_params(labelbottom=False)
    _checkpoints(run, axes)


def _line(ax, series: Series | None, color: str, label: str, linestyle: str = "-") -> None:
    points = [(t, v) for t, v in series.points if v is not None] if series else []
    if points:
        t, v = zip(*points)
        ax.plot(t, v, color=color, linewidth=1.1, linestyle=linestyle, label=label)


def _cpu(ax, series: dict[str, Series]) -> None:
    """user/system/iowait stacked on the user series' timeline; a missing part counts as 0."""
    parts = [(series.get(name), label, color) for name, label, color in CPU_PARTS]
    base = next((s for s, _, _ in parts if s and s.points), None)
    if base is None:
        return
    times = [t for t, _ in base.points]
    stacks, labels, colors = [], [], []
    for s, label, color in parts:
        if s is None or not s.points:
            continue
        by_t = {t: v for t, v in s.points}
        stacks.append([by_t.get(t) or 0.0 for t in times])
        labels.append(label)
        colors.append(color)
    ax.stackplot(times, *stacks, labels=labels, colors=colors, alpha=0.85, linewidth=0)


def _checkpoints(run: StoredRun, axes: list) -> None:
    """A vertical line through every panel where a checkpoint finished (mon.pg.checkpoints > 0)."""
    cp = run.series.get("mon.pg.checkpoints")
    times = [t for t, v in cp.points if v] if cp else []
    for n, t in enumerate(times):
        for p, ax in enumerate(axes):
            ax.axvline(t, color=CHECKPOINT_COLOR, linewidth=0.9, linestyle=":",
                       gid=f"checkpoint-{run.id}-{n}-{p}",
                       label="checkpoint" if n == 0 and p == 1 else None)
    if times:  # the memory panel's legend says what the lines are
        axes[1].legend(loc="upper left", bbox_to_anchor=(1.06, 1.0), frameon=False, fontsize=7)


FIGURES = [
    FigureSpec("timeline-chart", 12, "What the machine did during each run, on the run's "
               "time axis: throughput, dirty/writeback memory, the target device's write MB/s "
               "and await, and the CPU split; dotted vertical lines mark finished checkpoints. "
               f"At most {MAX_RUNS} runs are shown (pgbench and seqwrite runs with monitor "
               "series, in target order).", timeline_chart),
]
