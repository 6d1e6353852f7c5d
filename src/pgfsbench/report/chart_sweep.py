"""tps against the number of clients, one line per target (seed 002)."""

from __future__ import annotations

import matplotlib
from matplotlib.figure import Figure

from pgfsbench.report.charts import STYLE, target_colors, to_svg
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign


def sweep_points(campaign: Campaign) -> dict[str, list[tuple[int, float]]]:
    """target → [(clients, tps)] of ok pgbench runs; only targets with 2+ client counts."""
    points: dict[str, dict[int, float]] = {}
    for run in campaign.runs:
        if run.workload != "pgbench" or run.status != "ok":
            continue
        tps = next((m.value for m in run.metrics if m.name == "pgbench.tps"), None)
        if tps is not None:
            points.setdefault(run.target, {})[int(run.params["clients"])] = tps
    return {t: sorted(p.items()) for t, p in points.items() if len(p) >= 2}


def clients_chart(campaign: Campaign) -> str | None:
    data = sweep_points(campaign)
    if not data:
        return None
    colors = target_colors(campaign)
    salt = "pgfsbench-clients"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):
        fig = Figure(figsize=(9, 3.6))
        ax = fig.add_subplot()
        for target, pts in data.items():
            x, y = zip(*pts)
            ax.plot(x, y, marker="o", color=colors.get(target, "#444444"), label=target)
        counts = sorted({c for pts in data.values() for c, _ in pts})
        ax.set_xscale("log", base=2)  # sweeps double the clients
        ax.set_xticks(counts, [str(c) for c in counts])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.set_xlabel("clients (pgbench -c, -j)")
        ax.set_ylabel("tx/s")
        ax.set_title("pgbench: throughput vs clients", loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


FIGURES = [
    FigureSpec("clients-chart", 15, "Throughput against the number of clients (one pgbench "
               "run per count, each with as many threads as clients unless the plan caps them).",
               clients_chart),
]
