"""The report's figures: each chart module declares its own, the report finds them.

A chart module is ``pgfsbench.report.charts`` or any ``pgfsbench.report.chart_*``
module with a ``FIGURES`` list; adding a workload's chart never edits this file.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from pgfsbench.store.read import Campaign


@dataclass(frozen=True)
class FigureSpec:
    id: str  # the HTML id, also the SVG id prefix
    order: int  # position in the report: lower first
    caption: str
    render: Callable[[Campaign], str | None]  # inline SVG, or None without data


def all_figures() -> list[FigureSpec]:
    import pgfsbench.report as package

    names = ["charts"] + sorted(m.name for m in pkgutil.iter_modules(package.__path__)
                                if m.name.startswith("chart_"))
    specs: list[FigureSpec] = []
    for name in names:
        specs += getattr(importlib.import_module(f"pgfsbench.report.{name}"), "FIGURES", [])
    return sorted(specs, key=lambda s: s.order)


def render_figures(campaign: Campaign) -> list[tuple[FigureSpec, str]]:
    """Every figure that has data in this campaign, in report order."""
    rendered = []
    for spec in all_figures():
        svg = spec.render(campaign)
        if svg:
            rendered.append((spec, svg))
    return rendered
