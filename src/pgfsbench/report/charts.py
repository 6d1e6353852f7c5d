"""Charts for the report, as inline SVG strings.

Built on ``matplotlib.figure.Figure`` directly rather than pyplot: no figure
registry to leak into, no GUI backend ever touched, and no process-wide
backend switch for the rest of the program.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import NamedTuple, TypeVar

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from pgfsbench.analysis.cells import CellKey, Samples, collect
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.analysis.stats import summarize
from pgfsbench.store.read import Campaign, StoredRun

# Canonical pg_test_fsync order; methods not listed here follow in data order.
FSYNC_METHODS = ("open_datasync", "fdatasync", "fsync", "fsync_writethrough", "open_sync")
_FSYNC_8K = re.compile(r"^fsync\.([a-z_]+)_8k\.ops_per_s$")

# Colour-blind-safe Okabe-Ito palette, then tab10 for larger campaigns.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
            "#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
_LINESTYLES = ("-", "--", ":", "-.")

STYLE = {
    "svg.fonttype": "path",  # glyphs as paths: no font needed where the file is opened
    "font.family": "DejaVu Sans",  # ships with matplotlib, so output is the same everywhere
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
}

# The sentence every figure with medians and whiskers adds to its caption.
WHISKERS_CAPTION = ("{what} are medians over repetitions; whiskers are 95 % confidence "
                    "intervals of the median (bootstrap) where a cell was measured at least "
                    "twice.")
# Whiskers on bars: dark, whatever the bar's colour. Lines draw them in their own colour.
BAR_WHISKERS = {"ecolor": "#333333", "elinewidth": 0.9, "capsize": 2.5}
LINE_WHISKERS = {"elinewidth": 0.9, "capsize": 3}

T = TypeVar("T")


class Estimate(NamedTuple):
    """What a chart plots for one cell: the median over repetitions and its 95 % CI."""

    median: float
    lo: float | None  # 95 % CI of the median (bootstrap); None when n < 2
    hi: float | None
    n: int  # repetitions with a finite value

    @property
    def has_ci(self) -> bool:
        return self.lo is not None and self.hi is not None


def estimate(values: Iterable[float | None]) -> Estimate | None:
    """Median and CI of one cell's values (stats.summarize); None without any value."""
    s = summarize(values)
    if s.median is None:
        return None
    return Estimate(s.median, s.ci_low, s.ci_high, s.n)


def whiskers(estimates: Sequence[Estimate]) -> np.ndarray | None:
    """``yerr`` for matplotlib: 2 × N, [median - lo, hi - median].

    NaN where a cell has no CI (n = 1), which matplotlib skips; None when no
    cell has one, so an unrepeated campaign is drawn exactly as without whiskers.
    """
    if not any(e.has_ci for e in estimates):
        return None
    # Clamped at 0: a percentile interval need not contain the sample median.
    return np.array([[max(0.0, e.median - e.lo) if e.has_ci else np.nan for e in estimates],
                     [max(0.0, e.hi - e.median) if e.has_ci else np.nan for e in estimates]])


def line_with_whiskers(ax: Axes, xs: Sequence[float], estimates: Sequence[Estimate],
                       errorbar: bool = False, **kwargs: object) -> None:
    """A line through the medians, with CI whiskers where there are any (ax.errorbar).

    ``errorbar``: draw it as an error bar even without whiskers, so that in a
    chart where some line has whiskers the legend keeps the lines' order.
    """
    ys = [e.median for e in estimates]
    err = whiskers(estimates)
    if err is None and not errorbar:
        ax.plot(xs, ys, **kwargs)
    else:
        ax.errorbar(xs, ys, yerr=err, **LINE_WHISKERS, **kwargs)


def cells_of(campaign: Campaign, workload: str) -> dict[CellKey, Samples]:
    """One workload's cells (target × label × metric), as analysis.cells groups them."""
    return {k: v for k, v in collect(campaign).items() if k.workload == workload}


def in_plan_order(campaign: Campaign, data: Mapping[str, T]) -> dict[str, T]:
    """``data`` keyed by target name, sorted by the targets' plan positions."""
    order = {t.name: t.position for t in campaign.targets}
    return dict(sorted(data.items(), key=lambda kv: order.get(kv[0], 0)))


@contextmanager
def new_axes(salt: str, figsize: tuple[float, float],
             grid: str = "both") -> Iterator[tuple[Figure, Axes]]:
    """A figure with one axes in the report's style; call ``to_svg`` inside the block.

    ``salt`` seeds the SVG's hashed ids (svg.hashsalt), so identical input gives
    identical bytes; ``grid`` is "both" or "y" (bar charts).
    """
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt, "axes.grid.axis": grid}):
        fig = Figure(figsize=figsize)
        yield fig, fig.add_subplot()


def target_colors(campaign: Campaign) -> dict[str, str]:
    """One colour per target, by plan position, so every chart and the table agree."""
    return {t.name: _PALETTE[i % len(_PALETTE)] for i, t in enumerate(campaign.targets)}


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


def tps_chart(campaign: Campaign) -> str | None:
    """Per-second tps of ok pgbench runs, one line per target and measurement (the median
    repetition); None without data."""
    colors = target_colors(campaign)
    runs = representative_runs(
        [r for r in campaign.runs
         if r.workload == "pgbench" and r.status == "ok" and r.series.get("pgbench.tps")
         and r.series["pgbench.tps"].points])
    if not runs:
        return None
    labels = _run_labels(runs)
    salt = "pgfsbench-tps"
    with new_axes(salt, (9, 3.6)) as (fig, ax):
        seen: dict[str, int] = {}
        for run in runs:
            n = seen[run.target] = seen.get(run.target, -1) + 1
            t, v = zip(*run.series["pgbench.tps"].points)
            ax.plot(t, v, color=colors.get(run.target, "#444444"), linewidth=1.3,
                    linestyle=_LINESTYLES[n % len(_LINESTYLES)], label=labels[run.id])
        warm = max((warmup_seconds(r) for r in runs), default=0.0)
        if warm:  # left out of tps and latency: the reader sees what was dropped
            ax.axvspan(0, warm, color="#bbbbbb", alpha=0.35, linewidth=0,
                       label=f"warm-up (up to {warm:g} s, left out)")
        ax.set_xlabel("seconds since start")
        ax.set_ylabel("tx/s")
        ax.set_ylim(bottom=0)  # a zero baseline keeps dips honest
        ax.set_xlim(left=0)
        ax.set_title("pgbench: transactions per second", loc="left")
        # Outside the axes: inside, it would hide some run's line wherever it sits.
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def fsync_chart(campaign: Campaign) -> str | None:
    """Grouped bars of one-8 kB-write ops/s per sync method and target; None without data."""
    colors = target_colors(campaign)
    data = fsync_points(campaign)  # target -> method -> Estimate (None: unsupported)
    if not data:
        return None
    seen = [m for vals in data.values() for m in vals]
    methods = [m for m in FSYNC_METHODS if m in seen]
    methods += [m for m in dict.fromkeys(seen) if m not in methods]
    targets = list(data)
    width = 0.8 / len(targets)
    top = max((e.median for vals in data.values() for e in vals.values() if e and e.median),
              default=1.0)
    salt = "pgfsbench-fsync"
    with new_axes(salt, (9, 3.6), grid="y") as (fig, ax):
        labelled: set[str] = set()  # one legend entry per target
        for j, target in enumerate(targets):
            xs = [i - 0.4 + width * (j + 0.5) for i in range(len(methods))]
            for x, method in zip(xs, methods):
                if method not in data[target]:
                    continue  # not measured: nothing to say
                est = data[target][method]
                if est is None:
                    # Unsupported is not zero: leave the slot empty but say so.
                    ax.text(x, top * 0.02, "n/a", ha="center", va="bottom", rotation=90,
                            fontsize=8, color="#666666")
                    continue
                ax.bar(x, est.median, width * 0.92, color=colors.get(target, "#444444"),
                       label=None if target in labelled else target,
                       yerr=whiskers([est]), error_kw=BAR_WHISKERS)
                labelled.add(target)
        ax.set_xticks(range(len(methods)), methods)
        ax.set_ylabel("ops/s (one 8 kB write + sync)")
        ax.set_title("pg_test_fsync: one 8 kB write per sync method", loc="left")
        ax.set_axisbelow(True)
        if labelled:  # all n/a: no bars, and an empty legend would only warn
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def fsync_points(campaign: Campaign) -> dict[str, dict[str, Estimate | None]]:
    """target → sync method → median ops/s over repetitions with its CI.

    None marks a method the target does not support (no repetition gave a
    value). Targets in plan order, methods in the order first measured; when
    one target has several fsync measurements (labels), the later one wins.
    """
    data: dict[str, dict[str, Estimate | None]] = {}
    for key, cell in cells_of(campaign, "fsync").items():
        match = _FSYNC_8K.match(key.metric)
        if match:
            data.setdefault(key.target, {})[match.group(1)] = estimate(cell.values)
    return in_plan_order(campaign, data)


def _run_labels(runs: list[StoredRun]) -> dict[int, str]:
    """Target name, plus the params that tell a target's runs apart (e.g. clients=8)."""
    by_target: dict[str, list[StoredRun]] = {}
    for r in runs:
        by_target.setdefault(r.target, []).append(r)
    labels: dict[int, str] = {}
    for target, group in by_target.items():
        if len(group) == 1:
            labels[group[0].id] = target
            continue
        keys = sorted({k for r in group for k in r.params})
        varying = [k for k in keys if len({repr(r.params.get(k)) for r in group}) > 1]
        for i, r in enumerate(group, 1):
            extra = " ".join(f"{k}={r.params.get(k)}" for k in varying) or f"#{i}"
            labels[r.id] = f"{target} {extra}"
    return labels


def to_svg(fig: Figure, prefix: str) -> str:
    fig.tight_layout()
    buf = io.StringIO()
    # No Date/Creator: identical input gives identical bytes, and no URL in the output.
    fig.savefig(buf, format="svg",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and DOCTYPE: invalid inside HTML
    return _namespace_ids(svg, prefix)


def _namespace_ids(svg: str, prefix: str) -> str:
    """Prefix every id: several SVGs inlined in one page must not share ids.

    matplotlib numbers glyph ids per figure, so without this the second chart's
    text would borrow the first chart's glyphs.
    """
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)
    return re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)

from pgfsbench.report.figures import FigureSpec  # noqa: E402  (after the chart functions)

FIGURES = [
    FigureSpec("tps-chart", 10, "Per-second throughput of each pgbench run, from its "
               "transaction logs; with repetitions, the run with the median tps of each "
               "target and client count. A grey band marks a warm-up left out of tps and "
               "latency.", tps_chart),
    FigureSpec("fsync-chart", 20, "pg_test_fsync, one 8 kB write per sync: operations per "
               "second; n/a marks a method the target does not support. "
               + WHISKERS_CAPTION.format(what="Bars"), fsync_chart),
]
