"""``pgfsbench history --html FILE``: the metric over campaigns, one small page.

One chart per measurement × metric; one trace per target × host: each campaign's
median at its start time, whiskers its 95% CI, and the point's symbol the mark
against the previous campaign of the same plan (a cross: worse, a triangle:
better). The page is self-contained like the report: plotly.js inlined once
(``plotly_js.py``), each chart a ``charts.Chart`` drawn by the same script.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from markupsafe import Markup, escape

from pgfsbench.compare.series import Series
from pgfsbench.report.charts import (
    _PALETTE,
    WHISKERS_CAPTION,
    Chart,
    Estimate,
    axis,
    describe,
    layout,
    target_trace,
    whiskers,
)
from pgfsbench.report.plotly_js import CHARTS_INIT_JS, plotly_js

SYMBOL = {"worse": "x", "better": "triangle-up"}


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat()


def history_charts(series: list[Series]) -> list[Chart]:
    groups: dict[tuple[str, str, str], list[Series]] = {}
    for s in series:
        groups.setdefault((s.workload, s.label, s.metric), []).append(s)
    names = sorted({(s.target, s.host) for s in series})
    colors = {n: _PALETTE[i % len(_PALETTE)] for i, n in enumerate(names)}
    charts = []
    for i, ((workload, label, metric), members) in enumerate(groups.items()):
        data = []
        for s in members:
            est = [Estimate.of(p.value, p.cell.ci, p.cell.n) for p in s.points]
            hover = [
                f"{p.campaign.id} ({p.campaign.plan_name})<br>{describe(e, s.unit)}"
                + (
                    f"<br>vs previous: {f.mark} {f.sentence()}"
                    if (f := p.finding) is not None
                    else (f"<br>{p.note}" if p.note else "")
                )
                for p, e in zip(s.points, est)
            ]
            trace = target_trace(
                f"{s.target} @ {s.host}",
                colors[(s.target, s.host)],
                "scatter",
                mode="lines+markers",
                x=[_iso(p.campaign.started) for p in s.points],
                y=[p.cell.value for p in s.points],
                text=hover,
                hovertemplate="%{text}<extra>%{fullData.name}</extra>",
            )
            trace["meta"] = {"target": s.target, "host": s.host}
            trace["marker"]["symbol"] = [SYMBOL.get(p.kind or "", "circle") for p in s.points]
            trace["marker"]["size"] = [11 if p.kind in SYMBOL else 7 for p in s.points]
            if (w := whiskers(est)) is not None:
                trace["error_y"] = w
            data.append(trace)
        title = f"{workload} {label} {metric}".replace("  ", " ")
        figure = {
            "data": data,
            "layout": layout(
                360,
                axis("campaign started (UTC)", type="date"),
                axis(f"{metric} [{members[0].unit}]"),
            ),
        }
        charts.append(
            Chart(
                f"history-{i}",
                "history",
                title,
                WHISKERS_CAPTION.format(what="Points") + " A cross marks a "
                "campaign worse than the previous one of the same plan, a triangle "
                "a better one (the marks of compare).",
                tuple(sorted({s.target for s in members})),
                figure,
            )
        )
    return charts


def write_history_page(series: list[Series], path: Path) -> Path:
    charts = history_charts(series)
    body = "\n".join(
        f'<section><h2>{escape(c.title)}</h2>{c.html}<p class="caption">{escape(c.caption)}'
        "</p></section>"
        for c in charts
    )
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>pgfsbench history</title><style>body{font-family:system-ui,sans-serif;"
        "margin:1rem auto;max-width:1100px;padding:0 1rem;color:#1d2330}"
        ".caption{color:#555;font-size:.9rem}</style></head><body>"
        "<h1>pgfsbench history</h1>"
        + body
        + f"<script>{plotly_js()}</script><script>{CHARTS_INIT_JS}</script></body></html>\n"
    )
    path.write_text(str(Markup(page)))
    return path
