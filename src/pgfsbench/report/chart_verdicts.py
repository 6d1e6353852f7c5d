"""The verdicts at a glance: each measurement's headline metric, one bar per target.

Bars are medians over repetitions with 95% CI whiskers of each target alone;
the verdicts compare within rounds, so two overlapping whiskers can still be a
decided difference (round drift widens each whisker, not the paired
comparison): the marks and verdict lines say what is decided. A target that
is not crash-safe is hatched.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from pgfsbench.analysis.durability import SAFE
from pgfsbench.analysis.table import Row, comparison_table
from pgfsbench.report.charts import (BAR_WHISKERS, STYLE, Estimate, target_colors, to_svg,
                                     whiskers)
from pgfsbench.report.figures import FigureSpec
from pgfsbench.report.terminal import durabilities, format_value
from pgfsbench.store.read import Campaign

MAX_PANELS = 12


def headline_rows(campaign: Campaign) -> list[Row]:
    """Headline rows with a direction and a value on at least two targets."""
    table = comparison_table(campaign)
    return [r for r in table.rows if r.headline and r.higher_is_better is not None
            and sum(c.value is not None for c in r.cells.values()) >= 2][:MAX_PANELS]


def verdicts_chart(campaign: Campaign) -> str | None:
    rows = headline_rows(campaign)
    if not rows:
        return None
    colors = target_colors(campaign)
    unsafe = {t for t, d in durabilities(campaign).items() if d and d.level != SAFE}
    salt = "pgfsbench-verdicts"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt, "axes.grid.axis": "x"}):
        n_targets = len(rows[0].cells)
        fig = Figure(figsize=(9, sum(0.55 + 0.28 * n_targets for _ in rows)))
        axes = fig.subplots(len(rows), 1, squeeze=False)[:, 0]
        for ax, row in zip(axes, rows):
            _panel(ax, row, colors, unsafe)
        return to_svg(fig, salt)


def _panel(ax, row: Row, colors: dict[str, str], unsafe: set[str]) -> None:
    names = [t for t, c in row.cells.items() if c.value is not None]
    estimates = [Estimate(c.value, *(c.ci or (None, None)), c.n)
                 for c in (row.cells[t] for t in names)]
    medians = [e.median for e in estimates]
    y = np.arange(len(names))[::-1]  # first target on top
    bars = ax.barh(y, medians, xerr=whiskers(estimates), height=0.7,
                   color=[colors.get(t, "#444444") for t in names], error_kw=BAR_WHISKERS)
    for bar, t in zip(bars, names):
        if t in unsafe:
            bar.set_hatch("///")
            bar.set_edgecolor("#a32424")
    scale = max(abs(m) for m in medians)
    ends = [max(e.median, e.hi) if e.has_ci else e.median for e in estimates]  # past whiskers
    for yi, m, end, t in zip(y, medians, ends, names):
        n = row.cells[t].n
        ax.text(end, yi, f"  {format_value(m, scale)}" + (f" (n={n})" if n > 1 else ""),
                va="center", fontsize=7)
    ax.set_yticks(y, names)
    ax.set_xlim(left=0, right=max(ends) * 1.3)
    better = "higher" if row.higher_is_better else "lower"
    title = f"{row.workload} {row.label}".strip()
    ax.set_title(f"{title}: {row.metric} ({row.unit}, {better} is better)", loc="left",
                 fontsize=8.5)


FIGURES = [
    FigureSpec("verdicts-chart", 5, "Each measurement's headline metric, the one its verdict "
               "is about: bars are medians over repetitions, whiskers 95% confidence "
               "intervals (bootstrap) where a cell was measured at least twice; hatched bars "
               "are targets that are not crash-safe.", verdicts_chart),
]
