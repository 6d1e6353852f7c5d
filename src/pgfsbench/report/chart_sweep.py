"""tps against the number of clients, one line per target (seed 002)."""

from __future__ import annotations

from pgfsbench.report.charts import (WHISKERS_CAPTION, Estimate, cells_of, estimate,
                                     in_plan_order, line_with_whiskers, new_axes,
                                     target_colors, to_svg)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign


def sweep_points(campaign: Campaign) -> dict[str, list[tuple[int, Estimate]]]:
    """target → [(clients, median tps with its CI)], clients ascending.

    One point per measurement (label, e.g. "clients=8") over its ok runs; only
    targets with 2+ client counts, in plan order.
    """
    points: dict[str, dict[int, Estimate]] = {}
    for key, cell in cells_of(campaign, "pgbench").items():
        if key.metric != "pgbench.tps" or "clients" not in cell.params:
            continue
        est = estimate(cell.values)
        if est is not None:
            points.setdefault(key.target, {})[int(cell.params["clients"])] = est
    return in_plan_order(campaign, {t: sorted(p.items()) for t, p in points.items()
                                    if len(p) >= 2})


def clients_chart(campaign: Campaign) -> str | None:
    data = sweep_points(campaign)
    if not data:
        return None
    colors = target_colors(campaign)
    salt = "pgfsbench-clients"
    any_ci = any(e.has_ci for pts in data.values() for _, e in pts)
    with new_axes(salt, (9, 3.6)) as (fig, ax):
        for target, pts in data.items():
            line_with_whiskers(ax, [c for c, _ in pts], [e for _, e in pts], errorbar=any_ci,
                               marker="o", color=colors.get(target, "#444444"), label=target)
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
               "run per count and repetition, each with as many threads as clients unless the "
               "plan caps them). " + WHISKERS_CAPTION.format(what="Points"), clients_chart),
]
