"""The report's figures: each chart module declares its own, the report finds them.

A chart module is ``pgfsbench.report.charts`` or any ``pgfsbench.report.chart_*``
module with a ``FIGURES`` list; adding a workload's chart never edits this file.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pgfsbench.store.read import Campaign

if TYPE_CHECKING:
    from pgfsbench.report.charts import Chart


@dataclass(frozen=True)
class FigureSpec:
    id: str  # the chart's HTML id
    order: int  # position in the report: lower first
    title: str
    caption: str
    # A plotly.js figure ({"data": [...], "layout": {...}}), or None without data.
    render: Callable[[Campaign], dict[str, Any] | None]

    @property
    def kind(self) -> str:
        return self.id.removesuffix("-chart")


def all_figures() -> list[FigureSpec]:
    import pgfsbench.report as package

    names = ["charts"] + sorted(m.name for m in pkgutil.iter_modules(package.__path__)
                                if m.name.startswith("chart_"))
    specs: list[FigureSpec] = []
    for name in names:
        specs += getattr(importlib.import_module(f"pgfsbench.report.{name}"), "FIGURES", [])
    return sorted(specs, key=lambda s: s.order)


def render_figures(campaign: Campaign) -> list[Chart]:
    """Every figure that has data in this campaign, in report order."""
    from pgfsbench.report.charts import Chart, targets_drawn

    rendered = []
    for spec in all_figures():
        figure = spec.render(campaign)
        if figure and figure.get("data"):
            rendered.append(Chart(spec.id, spec.kind, spec.title, spec.caption,
                                  targets_drawn(campaign, figure), figure))
    return rendered
