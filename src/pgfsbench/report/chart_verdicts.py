"""The verdicts at a glance: each measurement's headline metric, one bar per target.

Bars are medians over repetitions with 95% CI whiskers of each target alone;
the verdicts compare within rounds, so two overlapping whiskers can still be a
decided difference (round drift widens each whisker, not the paired
comparison): the marks and verdict lines say what is decided. A target that
is not crash-safe is hatched.
"""

from __future__ import annotations

from pgfsbench.analysis.caveats.durability import SAFE, durabilities
from pgfsbench.analysis.headline import metric_label
from pgfsbench.analysis.table import Row, comparison_table
from pgfsbench.render.values import format_value
from pgfsbench.report.charts import (
    FALLBACK_COLOR,
    Estimate,
    Figure,
    axis,
    describe,
    hover_text,
    layout,
    stacked_rows,
    target_colors,
    target_trace,
    whiskers,
    wrap_title,
)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.store.read import Campaign

MAX_PANELS = 12


def headline_rows(campaign: Campaign) -> list[Row]:
    """Headline rows with a direction and a value on at least two targets."""
    table = comparison_table(campaign)
    return [
        r
        for r in table.rows
        if r.headline
        and r.higher_is_better is not None
        and sum(c.value is not None for c in r.cells.values()) >= 2
    ][:MAX_PANELS]


# A panel title's line, in characters: a phone's plot area, right of the targets' names
# and values (about 200 px of a 375 px screen).
TITLE_WIDTH = 28


def row_title(row: Row) -> str:
    """ "TPC-B tps clients=8": the metric as a person names it (its id when it has no
    name); the unit and the direction are a line of their own under it."""
    return f"{metric_label(row.metric, row.workload)} {row.label}".strip()


def row_unit_line(row: Row) -> str:
    """ "tx/s, higher is better"."""
    unit = row.unit.split(" (")[0]  # "MB/s (10^6 B/s)": the axis needs only "MB/s"
    better = "higher" if row.higher_is_better else "lower"
    return f"{unit}, {better} is better" if unit else f"{better} is better"


def verdicts_chart(campaign: Campaign) -> Figure | None:
    rows = headline_rows(campaign)
    if not rows:
        return None
    colors = target_colors(campaign)
    unsafe = {t for t, d in durabilities(campaign).items() if d and d.level != SAFE}
    heights = [22 * len(row.cells) + 16 for row in rows]
    titles = [row_title(r) for r in rows]
    lines = 1 + max(len(wrap_title(t, TITLE_WIDTH)) for t in titles)  # + the unit's line
    # Between two panels: the upper one's tick labels, the lower one's title lines.
    height, domains, notes = stacked_rows(
        heights,
        titles,
        gap=38 + 15 * lines,
        top=8 + 15 * lines,
        bottom=24,
        wrap=TITLE_WIDTH,
        subtitles=[row_unit_line(r) for r in rows],
    )
    traces: list[dict] = []
    axes: dict[str, dict] = {}
    legend_done: set[str] = set()
    for i, (row, domain) in enumerate(zip(rows, domains), 1):
        suffix = "" if i == 1 else str(i)
        names = [t for t, c in row.cells.items() if c.value is not None]
        ests = {
            t: Estimate.of(value, c.ci, c.n)
            for t, c in row.cells.items()
            if (value := c.value) is not None
        }
        ends = [max(e.median, ci[1]) if (ci := e.ci) else e.median for e in ests.values()]
        scale = max(abs(e.median) for e in ests.values())
        for t, est in ests.items():
            trace = target_trace(
                t,
                colors.get(t, FALLBACK_COLOR),
                "bar",
                orientation="h",
                x=[est.median],
                y=[t],
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
                showlegend=t not in legend_done,
            )
            legend_done.add(t)
            if t in unsafe:
                trace["marker"]["pattern"] = {"shape": "/", "fgcolor": "#a32424"}
            if (err := whiskers([est])) is not None:
                trace["error_x"] = err
            note = " · not crash-safe" if t in unsafe else ""
            traces.append(hover_text(trace, [describe(est, row.unit.split(" (")[0]) + note]))
        axes[f"xaxis{suffix}"] = axis(
            "", anchor=f"y{suffix}", rangemode="tozero", range=[0, max(ends) * 1.05]
        )
        # Each value beside its target's name, not at the bar's end where the whisker
        # would cross it.
        ticks = [
            f"{t}  {format_value(e.median, scale)}" + (f" (n={e.n})" if e.n > 1 else "")
            for t, e in ests.items()
        ]
        axes[f"yaxis{suffix}"] = axis(
            "",
            anchor=f"x{suffix}",
            domain=list(domain),
            autorange="reversed",  # the first target on top
            categoryorder="array",
            categoryarray=names,
            tickvals=names,
            ticktext=ticks,
        )
    return {"data": traces, "layout": layout(height, annotations=notes, barmode="overlay", **axes)}


FIGURES = [
    FigureSpec(
        "verdicts-chart",
        5,
        "Headline metric of each measurement",
        "Each measurement's headline metric, the one its verdict "
        "is about (↑: higher is better, ↓: lower is better): bars are medians over repetitions, whiskers 95% confidence "
        "intervals (bootstrap) where a cell was measured at least twice; hatched bars "
        "are targets that are not crash-safe.",
        verdicts_chart,
    ),
]
