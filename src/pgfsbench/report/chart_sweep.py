"""tps against the number of clients, one line per target (the client-scaling study)."""

from __future__ import annotations

from pgfsbench.report.charts import (
    FALLBACK_COLOR,
    WHISKERS_CAPTION,
    Estimate,
    Figure,
    axis,
    cells_of,
    describe,
    estimate,
    hover_text,
    in_plan_order,
    layout,
    target_colors,
    target_trace,
    whiskers,
)
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
    return in_plan_order(campaign, {t: sorted(p.items()) for t, p in points.items() if len(p) >= 2})


def clients_chart(campaign: Campaign) -> Figure | None:
    data = sweep_points(campaign)
    if not data:
        return None
    colors = target_colors(campaign)
    traces = []
    for target, pts in data.items():
        ests = [e for _, e in pts]
        trace = target_trace(
            target,
            colors.get(target, FALLBACK_COLOR),
            "scatter",
            mode="lines+markers",
            x=[c for c, _ in pts],
            y=[e.median for e in ests],
        )
        if (err := whiskers(ests)) is not None:
            trace["error_y"] = {**err, "color": trace["line"]["color"]}
        traces.append(hover_text(trace, [f"{c} clients: {describe(e, 'tx/s')}" for c, e in pts]))
    counts = sorted({c for pts in data.values() for c, _ in pts})
    return {
        "data": traces,
        "layout": layout(
            380,
            axis(
                "clients (pgbench -c, -j)",
                type="log",  # sweeps double
                tickvals=counts,
                ticktext=[str(c) for c in counts],
            ),
            axis("transactions per second", rangemode="tozero"),
        ),
    }


FIGURES = [
    FigureSpec(
        "clients-chart",
        15,
        "pgbench: throughput vs clients",
        "Throughput against the number of clients (one pgbench run per count and "
        "repetition, each with as many threads as clients unless the plan caps them). "
        + WHISKERS_CAPTION.format(what="Points"),
        clients_chart,
    ),
]
