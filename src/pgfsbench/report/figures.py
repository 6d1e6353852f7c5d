"""The report's figures: each chart module declares its own, the report finds them.

A chart module declares a ``FIGURES`` list and names it as an entry point of the
``pgfsbench.charts`` group (extensions.py; the shipped ones in pyproject.toml); adding a
workload's chart never edits this file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pgfsbench import extensions
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


def contract(name: str, obj: object) -> str | None:
    """What an entry of the group must name: a list of FigureSpecs."""
    if not isinstance(obj, (list, tuple)):
        return f"not a list of FigureSpecs but {type(obj).__name__}"
    if wrong := [type(f).__name__ for f in obj if not isinstance(f, FigureSpec)]:
        return f"holds {', '.join(wrong)}, not FigureSpecs"
    return None


def all_figures() -> list[FigureSpec]:
    specs = [
        spec
        for figures in extensions.load_all(extensions.CHARTS, contract).values()
        for spec in figures
    ]
    return sorted(specs, key=lambda s: s.order)


def render_figures(campaign: Campaign) -> list[Chart]:
    """Every figure that has data in this campaign, in report order."""
    from pgfsbench.report.charts import Chart, targets_drawn

    rendered = []
    for spec in all_figures():
        figure = spec.render(campaign)
        if figure and figure.get("data"):
            rendered.append(
                Chart(
                    spec.id,
                    spec.kind,
                    spec.title,
                    spec.caption,
                    targets_drawn(campaign, figure),
                    figure,
                )
            )
    return rendered
