"""Charts for the report: Plotly figure specs built as plain dicts, drawn in the browser.

Why Plotly (plotly.js: MIT, actively maintained since 2015, stable JSON figure
schema): the report must be one file that works offline, and a reader wants hover
values, zoom and series toggled from the legend. The report inlines the library
once and fetches nothing: a partial bundle of a pinned plotly.js with the only two
trace types the charts use, scatter and bar (``vendor/README.md``), packed
(``plotly_js.py``). A chart that needs another type adds it to the bundle
(``vendor/entry.js``) and to ``plotly_js.BUNDLED_TRACES``. We build the figures as
dicts, not with plotly's Python figure API: no validation pass per trace, so
rendering a report stays fast, and the spec a chart sends is exactly what is written
here. Alternatives weighed: matplotlib SVG (what we had: no interaction), Vega-Lite
(needs three scripts and a compiler in the page), uPlot (about 50 kB, but no error
bars, grouped bars or annotations of its own) and Chart.js (error bars and zoom only
as plugins): every chart rewritten against a new schema, for a smaller library.

Conventions every chart follows, which tests and the browser test rely on:
- every trace that draws a target's data has ``meta.target`` = the target's name
  and its colour from ``target_colors`` (the same in every chart and the table);
- a target's representative run is drawn, its other runs are traces hidden until
  clicked in the legend (``visible: "legendonly"``);
- axes and hover texts carry human units; nothing prints a Python repr.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from markupsafe import Markup, escape

from pgfsbench.analysis.cells import CellKey, Samples, collect
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.analysis.stats.medians import summarize
from pgfsbench.render.values import format_value
from pgfsbench.store.read import Campaign, StoredRun

# Colour-blind-safe Okabe-Ito palette, then tab10 for larger campaigns.
_PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
)
DASHES = ("solid", "dash", "dot", "dashdot")
FALLBACK_COLOR = "#444444"
WHISKER_COLOR = "#333333"

# The sentence every figure with medians and whiskers adds to its caption.
WHISKERS_CAPTION = (
    "{what} are medians over repetitions; whiskers are 95 % confidence "
    "intervals of the median (bootstrap) where a cell was measured at least "
    "twice."
)

T = TypeVar("T")
Figure = dict[str, Any]  # {"data": [trace, ...], "layout": {...}}: plotly.js's own schema


class Estimate(NamedTuple):
    """What a chart plots for one cell: the median over repetitions and its 95 % CI."""

    median: float
    lo: float | None  # 95 % CI of the median (bootstrap); None when n < 2
    hi: float | None
    n: int  # repetitions with a finite value

    @property
    def has_ci(self) -> bool:
        return self.lo is not None and self.hi is not None

    @property
    def ci(self) -> tuple[float, float] | None:
        """The CI as (lo, hi), or None."""
        return (self.lo, self.hi) if self.lo is not None and self.hi is not None else None

    @classmethod
    def of(cls, median: float, ci: tuple[float, float] | None, n: int) -> Estimate:
        """The estimate of a median, its CI (None: none) and its number of values."""
        lo, hi = ci if ci is not None else (None, None)
        return cls(median, lo, hi, n)


def estimate(values: Iterable[float | None]) -> Estimate | None:
    """Median and CI of one cell's values (stats.summarize); None without any value."""
    s = summarize(values)
    if s.centre is None:
        return None
    return Estimate(s.centre, s.ci_low, s.ci_high, s.n)


def whiskers(estimates: Sequence[Estimate], horizontal: bool = False) -> dict | None:
    """Plotly ``error_y`` (``error_x``) for the estimates' CIs: lengths below and above.

    None where no cell has a CI, so an unrepeated campaign draws no whiskers; a
    cell without one gets a null length (plotly draws nothing there).
    """
    if not any(e.has_ci for e in estimates):
        return None
    # Clamped at 0: a percentile interval need not contain the sample median.
    return {
        "type": "data",
        "symmetric": False,
        "visible": True,
        "array": [max(0.0, ci[1] - e.median) if (ci := e.ci) else None for e in estimates],
        "arrayminus": [max(0.0, e.median - ci[0]) if (ci := e.ci) else None for e in estimates],
        "color": WHISKER_COLOR,
        "thickness": 1.2,
        "width": 3,
    }


def describe(est: Estimate, unit: str) -> str:
    """A hover line: "1,450 ops/s · median of 3, 95 % CI 1,400–1,500"."""
    text = f"{format_value(est.median)} {unit}".strip()
    if est.has_ci:
        text += (
            f" · median of {est.n}, 95 % CI {format_value(est.lo, est.median)}"
            f"–{format_value(est.hi, est.median)}"
        )
    return text


def cells_of(campaign: Campaign, workload: str) -> dict[CellKey, Samples]:
    """One workload's cells (target × label × metric), as analysis.cells groups them."""
    return {k: v for k, v in collect(campaign).items() if k.workload == workload}


def in_plan_order(campaign: Campaign, data: Mapping[str, T]) -> dict[str, T]:
    """``data`` keyed by target name, sorted by the targets' plan positions."""
    order = {t.name: t.position for t in campaign.targets}
    return dict(sorted(data.items(), key=lambda kv: order.get(kv[0], 0)))


def target_colors(campaign: Campaign) -> dict[str, str]:
    """One colour per target, by plan position, so every chart and the table agree."""
    return {t.name: _PALETTE[i % len(_PALETTE)] for i, t in enumerate(campaign.targets)}


# --- figure building blocks ---------------------------------------------------------

FONT = {
    "family": 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif',
    "size": 12,
    "color": "#1d2330",
}
GRID = "#e3e7ec"


def axis(title: str, **extra: Any) -> dict:
    """An axis in the report's style; ``extra`` overrides (type, range, tickvals...)."""
    return {
        "title": {"text": title},
        "gridcolor": GRID,
        "zeroline": False,
        "automargin": True,
        **extra,
    }


def layout(height: int, xaxis: dict | None = None, yaxis: dict | None = None, **extra: Any) -> dict:
    """A layout that fills its container's width (the page sets it, phone to desktop);
    the legend sits above the plot, horizontal, so it never eats a narrow plot's width."""
    out = {
        "height": height,
        "autosize": True,
        "font": FONT,
        # t: room above the plot for the legend (plotly pushes it up for a legend
        # of several rows). plotly's toolbar (zoom, pan, reset, PNG) stands upright
        # at the top right, where it covers no legend entry: on a wide screen the
        # page's script widens the right margin for it (plotly_js.CHARTS_INIT_JS); a
        # phone gets no toolbar and keeps the width.
        "margin": {"l": 10, "r": 10, "t": 56, "b": 10},
        "modebar": {"orientation": "v"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "legend": {"orientation": "h", "x": 0, "xanchor": "left", "y": 1, "yanchor": "bottom"},
        "hovermode": "closest",
        "hoverlabel": {"namelength": -1},
    }
    if xaxis is not None:
        out["xaxis"] = xaxis
    if yaxis is not None:
        out["yaxis"] = yaxis
    return {**out, **extra}


def target_trace(target: str, color: str, kind: str, **extra: Any) -> dict:
    """A trace that draws ``target``'s data: name, colour and ``meta.target`` set."""
    trace: dict[str, Any] = {
        "type": kind,
        "name": target,
        "meta": {"target": target},
        "legendgroup": target,
    }
    if kind == "bar":
        trace["marker"] = {"color": color}
    else:
        trace["line"] = {"color": color, "width": 1.6}
        trace["marker"] = {"color": color, "size": 6}
    trace.update(extra)
    return trace


def log_ticks(values: Iterable[float]) -> dict:
    """Axis ticks at 1, 2 and 5 of each decade the values span, labelled 1,000 rather
    than 1k or 1e3, for a log axis; {} when plotly's own ticks will do."""
    positive = [v for v in values if v is not None and v > 0]
    if not positive or max(positive) / min(positive) < 10:
        return {}  # within a decade plotly's own ticks read well
    lo, hi = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
    ticks = [m * 10.0**e for e in range(lo, hi + 1) for m in (1, 2, 5)]
    ticks = [t for t in ticks if min(positive) / 2 <= t <= max(positive) * 2]
    return {"tickvals": ticks, "ticktext": [f"{t:,.0f}" if t >= 1 else f"{t:.1g}" for t in ticks]}


def hover_text(trace: dict, texts: Sequence[str]) -> dict:
    """Hover shows exactly ``texts`` (already in human units), one per point."""
    trace["hovertext"] = list(texts)
    trace["hovertemplate"] = "%{hovertext}<extra>" + str(escape(trace["name"])) + "</extra>"
    return trace


def grouped_bars(
    campaign: Campaign,
    groups: Sequence[tuple[str, str]],
    data: Mapping[str, Mapping[str, Estimate | None]],
    unit: str,
    labels: bool = False,
) -> list[dict]:
    """One bar trace per target over the x categories ``groups`` (key, label).

    ``data``: target → key → estimate; a key the target lacks leaves its slot
    empty; None (unsupported) draws an empty bar labelled n/a, which is not zero.
    ``labels`` prints each value above its bar (log axes have no baseline to
    compare lengths by).
    """
    colors = target_colors(campaign)
    traces = []
    for target, values in data.items():
        xs, ests, texts, marks = [], [], [], []
        for key, label in groups:
            if key not in values:
                continue
            est = values[key]
            xs.append(label)
            if est is None:
                ests.append(Estimate(0.0, None, None, 0))
                texts.append(f"{label}: not supported on {target}")
                marks.append("n/a")
            else:
                ests.append(est)
                texts.append(f"{label}: {describe(est, unit)}")
                marks.append(format_value(est.median) if labels else "")
        if not xs:
            continue
        trace = target_trace(
            target, colors.get(target, FALLBACK_COLOR), "bar", x=xs, y=[e.median for e in ests]
        )  # n/a: an empty slot at 0
        if any(marks):
            # Values inside the bar at its base, clear of the whisker; n/a (no bar)
            # above the empty slot.
            trace.update(
                text=marks,
                cliponaxis=False,
                insidetextanchor="start",
                textangle=0,
                textfont={"size": 10},
                textposition=["outside" if m == "n/a" else "inside" for m in marks],
            )
        if (err := whiskers(ests)) is not None:
            trace["error_y"] = err
        traces.append(hover_text(trace, texts))
    return traces


def wrap_title(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces (a longer word,
    a metric id, after its dots): plotly never wraps a title, it lets the chart cut it."""
    pieces: list[tuple[str, str]] = []  # (what joins it to the piece before, the piece)
    for word in text.split():
        glue = " "
        while len(word) > width and "." in word[1:width]:
            cut = word.rindex(".", 1, width) + 1
            pieces.append((glue, word[:cut]))
            word, glue = word[cut:], ""
        pieces.append((glue, word))
    lines: list[str] = []
    for glue, piece in pieces:
        if lines and len(lines[-1]) + len(glue) + len(piece) <= width:
            lines[-1] += glue + piece
        else:
            lines.append(piece)
    return lines or [""]


SUBTITLE = '<span style="font-size:11px;color:#555555">{}</span>'


def stacked_rows(
    heights: Sequence[int],
    titles: Sequence[str],
    gap: int = 34,
    top: int = 40,
    bottom: int = 50,
    wrap: int | None = None,
    subtitles: Sequence[str] | None = None,
) -> tuple[int, list[tuple[float, float]], list[dict]]:
    """Panels stacked top to bottom: the figure's height in px, each panel's y
    domain (paper fractions) and an annotation per panel with its title above it,
    in lines of at most ``wrap`` characters when given (a phone's width), and a
    subtitle line under it when given (smaller, grey: a unit)."""
    total = top + bottom + sum(heights) + gap * (len(heights) - 1)
    domains, notes, y = [], [], bottom
    subs = list(subtitles) if subtitles is not None else [""] * len(titles)
    for h, title, sub in reversed(list(zip(heights, titles, subs))):
        domains.append((y / total, (y + h) / total))
        text = (
            "<br>".join(str(escape(line)) for line in wrap_title(title, wrap))
            if wrap
            else str(escape(title))
        )
        if sub:
            text += "<br>" + SUBTITLE.format(escape(sub))
        notes.append(
            {
                "text": text,
                "xref": "paper",
                "yref": "paper",
                "x": 0,
                "xanchor": "left",
                "y": (y + h) / total,
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 12},
                "align": "left",
            }
        )
        y += h + gap
    return total, domains[::-1], notes[::-1]


# --- runs and their per-second series --------------------------------------------------


def representative_runs(runs: list[StoredRun]) -> list[StoredRun]:
    """With repetitions, one run per target and measurement: the one whose headline
    metric is the median (the lower middle one for an even count), so a curve drawn
    from it is typical rather than the luckiest or the first."""
    groups: dict[tuple[str, str, str], list[StoredRun]] = {}
    for r in runs:
        groups.setdefault((r.target, r.workload, r.label), []).append(r)
    chosen = []
    for group in groups.values():

        def value(r: StoredRun) -> float:
            metric = headline_metric(r.workload, r.params, [m.name for m in r.metrics])
            v = next((m.value for m in r.metrics if m.name == metric), None)
            return float("-inf") if v is None else v

        ranked = sorted(group, key=value)
        chosen.append(ranked[(len(ranked) - 1) // 2])
    return sorted(chosen, key=lambda r: r.id)


def warmup_seconds(run: StoredRun) -> float:
    return next((m.value or 0.0 for m in run.metrics if m.name == "pgbench.warmup_s"), 0.0)


def whole_seconds(run: StoredRun, name: str = "pgbench.tps") -> list[tuple[float, float]]:
    """The points of a pgbench per-second series that stand for a whole second.

    pgbench's series count completions per wall-clock second from the whole
    second of the first start, so second 0 begins before the run and the last
    second (at ``duration`` or later: pgbench -T stops starting transactions
    after ``duration`` s and the second it stops in is cut short) ends after it.
    Both hold a fraction of a second's transactions: drawn, they look like a
    ramp and a stall that never happened. Without a recorded duration (old
    results), the first and the last point are those two.
    """
    series = run.series.get(name)
    points = [(t, v) for t, v in series.points if v is not None] if series else []
    duration = run.params.get("duration")
    if isinstance(duration, (int, float)) and not isinstance(duration, bool) and duration > 0:
        return [(t, v) for t, v in points if 1 <= t < duration]
    return [(t, v) for t, v in points[:-1] if t >= 1]


def params_text(value: object) -> str:
    """A param as a person writes it: lists joined, no quotes or brackets."""
    if isinstance(value, (list, tuple)):
        return ",".join(params_text(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "" if value is None else str(value)


def measurement_labels(runs: list[StoredRun]) -> dict[int, str]:
    """Target name, plus the params that tell a target's measurements apart (clients=8)."""
    by_target: dict[str, list[StoredRun]] = {}
    for r in runs:
        by_target.setdefault(r.target, []).append(r)
    labels: dict[int, str] = {}
    for target, group in by_target.items():
        measurements = {(r.workload, r.label) for r in group}
        if len(measurements) == 1:
            labels |= {r.id: target for r in group}
            continue
        keys = sorted({k for r in group for k in r.params})
        varying = [
            k
            for k in keys
            if len({params_text(r.params.get(k)) for r in group}) > 1 and k != "repetitions"
        ]
        for r in group:
            extra = " ".join(f"{k}={params_text(r.params.get(k))}" for k in varying)
            labels[r.id] = f"{target} {extra or r.label or r.workload}".strip()
    return labels


@dataclass
class RunGroup:
    """One target's runs of one measurement: the one to draw, and its other rounds."""

    target: str
    name: str  # the target, plus what tells its measurements apart ("ext4 clients=8")
    median: StoredRun  # the median-headline repetition
    others: list[StoredRun] = field(default_factory=list)

    def names(self, repeated: bool) -> tuple[str, str]:
        """Legend names of the drawn run and of the other rounds' trace."""
        if not repeated:
            return self.name, self.name
        return (f"{self.name} (median run)", f"{self.name} · other rounds ({len(self.others)})")


def run_groups(campaign: Campaign, runs: list[StoredRun]) -> list[RunGroup]:
    """Every target and measurement of ``runs``: the median-headline run to draw and
    the other repetitions (drawn hidden, one legend entry for all of them, so twelve
    rounds of three targets do not bury the plot under 36 legend entries); targets in
    plan order."""
    order = {t.name: t.position for t in campaign.targets}
    labels = measurement_labels(runs)
    groups = []
    for median in representative_runs(runs):
        others = sorted(
            (
                r
                for r in runs
                if r.id != median.id
                and r.target == median.target
                and (r.workload, r.label) == (median.workload, median.label)
            ),
            key=lambda r: (r.repetition, r.id),
        )
        groups.append(RunGroup(median.target, labels[median.id], median, others))
    return sorted(groups, key=lambda g: (order.get(g.target, 0), g.median.label, g.median.id))


def joined(runs: Sequence[StoredRun], points_of) -> tuple[list, list, list[StoredRun | None]]:
    """The runs' points in one trace: x, y and each point's run, a gap (None) between
    runs so plotly draws them as separate lines."""
    xs: list = []
    ys: list = []
    owners: list[StoredRun | None] = []
    for run in runs:
        points = points_of(run)
        if not points:
            continue
        if xs:
            xs.append(None)
            ys.append(None)
            owners.append(None)
        for t, v in points:
            xs.append(t)
            ys.append(v)
            owners.append(run)
    return xs, ys, owners


# --- the two charts this module owns -------------------------------------------------


def tps_chart(campaign: Campaign) -> Figure | None:
    """Per-second tps of ok pgbench runs (whole seconds only): one line per target and
    measurement, the median repetition; the other rounds hidden. None without data."""
    colors = target_colors(campaign)
    runs = [
        r
        for r in campaign.runs
        if r.workload == "pgbench" and r.status == "ok" and len(whole_seconds(r)) >= 1
    ]
    if not runs:
        return None
    groups = run_groups(campaign, runs)
    repeated = any(g.others for g in groups)
    dash_of: dict[str, dict[str, str]] = {}
    traces = []
    for g in groups:
        dashes = dash_of.setdefault(g.target, {})
        dash = dashes.setdefault(g.median.label, DASHES[len(dashes) % len(DASHES)])
        shown_name, others_name = g.names(repeated)
        for runs_, name in (([g.median], shown_name), (g.others, others_name)):
            xs, ys, owners = joined(runs_, whole_seconds)
            if not xs:
                continue
            trace = target_trace(
                g.target,
                colors.get(g.target, FALLBACK_COLOR),
                "scatter",
                mode="lines",
                x=xs,
                y=ys,
                legendgroup=name,
            )
            trace["name"] = name
            trace["line"]["dash"] = dash
            texts = [
                f"{x:g} s: {format_value(y)} tx/s" if x is not None else "" for x, y in zip(xs, ys)
            ]
            if runs_ is g.others:
                trace.update(visible="legendonly", opacity=0.6)
                trace["line"]["width"] = 1
                texts = [f"round {o.repetition} · {t}" if o else "" for o, t in zip(owners, texts)]
            traces.append(hover_text(trace, texts))
    shapes = []
    warm = max((warmup_seconds(g.median) for g in groups), default=0.0)
    if warm:  # left out of tps and latency: the reader sees what was dropped
        shapes.append(warmup_band(warm))
    return {
        "data": traces,
        "layout": layout(
            380,
            axis("seconds since the run started", rangemode="tozero"),
            axis("transactions per second", rangemode="tozero"),
            shapes=shapes,
        ),
    }


def warmup_band(seconds: float, yref: str = "paper") -> dict:
    return {
        "type": "rect",
        "xref": "x",
        "yref": yref,
        "x0": 0,
        "x1": seconds,
        "y0": 0,
        "y1": 1,
        "fillcolor": "#bbbbbb",
        "opacity": 0.3,
        "line": {"width": 0},
        "layer": "below",
        "name": f"warm-up ({seconds:g} s, left out)",
    }


# Canonical pg_test_fsync order; methods not listed here follow in data order.
FSYNC_METHODS = ("open_datasync", "fdatasync", "fsync", "fsync_writethrough", "open_sync")


def fsync_points(campaign: Campaign) -> dict[str, dict[str, Estimate | None]]:
    """target → sync method → median ops/s over repetitions with its CI.

    None marks a method the target does not support (no repetition gave a
    value). Targets in plan order, methods in the order first measured; when
    one target has several fsync measurements (labels), the later one wins.
    """
    data: dict[str, dict[str, Estimate | None]] = {}
    for key, cell in cells_of(campaign, "fsync").items():
        name = key.metric
        if name.startswith("fsync.") and name.endswith("_8k.ops_per_s"):
            method = name[len("fsync.") : -len("_8k.ops_per_s")]
            if method.isidentifier():
                data.setdefault(key.target, {})[method] = estimate(cell.values)
    return in_plan_order(campaign, data)


def fsync_chart(campaign: Campaign) -> Figure | None:
    """Grouped bars of one-8 kB-write ops/s per sync method and target; None without data."""
    data = fsync_points(campaign)
    if not data:
        return None
    seen = [m for vals in data.values() for m in vals]
    methods = [m for m in FSYNC_METHODS if m in seen]
    methods += [m for m in dict.fromkeys(seen) if m not in methods]
    traces = grouped_bars(campaign, [(m, m) for m in methods], data, "ops/s")
    return {
        "data": traces,
        "layout": layout(
            380,
            axis("sync method"),
            axis("operations per second (one 8 kB write + sync)", rangemode="tozero"),
            barmode="group",
        ),
    }


# --- the HTML fragment the template inlines ------------------------------------------


@dataclass(frozen=True)
class Chart:
    """One rendered chart: what the template needs, and nothing about how it was drawn."""

    id: str  # the chart div's HTML id; its spec's script is ``{id}-spec``
    kind: str  # data-chart: which chart this is (the FigureSpec id without "-chart")
    title: str
    caption: str
    targets: tuple[str, ...]  # the targets it draws (data-targets), plan order
    figure: Figure

    def spec_json(self) -> str:
        """The figure as JSON that is safe inside a <script> element."""
        text = json.dumps(
            _finite(self.figure), separators=(",", ":"), allow_nan=False, default=_json_default
        )
        # No "</script>" or "<!--" can end the element early: escape <, > and &.
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

    @property
    def html(self) -> Markup:
        targets = escape(json.dumps(list(self.targets)))
        return Markup(
            f'<div class="chart" data-chart="{escape(self.kind)}" id="{escape(self.id)}" '
            f'data-targets="{targets}"></div>'
            f'<script type="application/json" class="chart-spec" id="{escape(self.id)}-spec">'
            f"{self.spec_json()}</script>"
        )


def _finite(value: Any) -> Any:
    """NaN and ±inf as null: JSON has neither, and plotly leaves a gap for null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _json_default(value: object) -> object:
    raise TypeError(f"not JSON: {type(value).__name__}")


def targets_drawn(campaign: Campaign, figure: Figure) -> tuple[str, ...]:
    """The targets a figure's traces draw (``meta.target``), in plan order."""
    names = {t.get("meta", {}).get("target") for t in figure["data"]} - {None}
    order = {t.name: t.position for t in campaign.targets}
    return tuple(sorted(names, key=lambda n: (order.get(n, math.inf), n)))


from pgfsbench.report.figures import FigureSpec  # noqa: E402  (after the chart functions)

FIGURES = [
    FigureSpec(
        "tps-chart",
        10,
        "pgbench: transactions per second",
        "Per-second throughput of each pgbench run, from its transaction logs, whole "
        "seconds only (the first and last second of a run are partial and left out). "
        "With repetitions, the run with the median tps of each target and client count "
        "is drawn; the other rounds are in the legend, hidden until clicked. A grey band "
        "marks a warm-up left out of tps and latency.",
        tps_chart,
    ),
    FigureSpec(
        "fsync-chart",
        20,
        "pg_test_fsync: one 8 kB write per sync method",
        "pg_test_fsync, one 8 kB write per sync: operations per second; n/a marks a "
        "method the target does not support. " + WHISKERS_CAPTION.format(what="Bars"),
        fsync_chart,
    ),
]
