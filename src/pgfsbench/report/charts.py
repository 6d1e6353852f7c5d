"""Charts for the report, as inline SVG strings.

Built on ``matplotlib.figure.Figure`` directly rather than pyplot: no figure
registry to leak into, no GUI backend ever touched, and no process-wide
backend switch for the rest of the program.
"""

from __future__ import annotations

import io
import re

import matplotlib
from matplotlib.figure import Figure

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


def target_colors(campaign: Campaign) -> dict[str, str]:
    """One colour per target, by plan position, so every chart and the table agree."""
    return {t.name: _PALETTE[i % len(_PALETTE)] for i, t in enumerate(campaign.targets)}


def tps_chart(campaign: Campaign) -> str | None:
    """Per-second tps of every ok pgbench run, one line per run; None without data."""
    colors = target_colors(campaign)
    runs = [r for r in campaign.runs
            if r.workload == "pgbench" and r.status == "ok" and r.series.get("pgbench.tps")
            and r.series["pgbench.tps"].points]
    if not runs:
        return None
    labels = _run_labels(runs)
    salt = "pgfsbench-tps"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):
        fig = Figure(figsize=(9, 3.6))
        ax = fig.add_subplot()
        seen: dict[str, int] = {}
        for run in runs:
            n = seen[run.target] = seen.get(run.target, -1) + 1
            t, v = zip(*run.series["pgbench.tps"].points)
            ax.plot(t, v, color=colors.get(run.target, "#444444"), linewidth=1.3,
                    linestyle=_LINESTYLES[n % len(_LINESTYLES)], label=labels[run.id])
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
    data = _fsync_values(campaign)  # target -> method -> value (None: unsupported)
    if not data:
        return None
    seen = [m for vals in data.values() for m in vals]
    methods = [m for m in FSYNC_METHODS if m in seen]
    methods += [m for m in dict.fromkeys(seen) if m not in methods]
    targets = list(data)
    width = 0.8 / len(targets)
    top = max((v for vals in data.values() for v in vals.values() if v), default=1.0)
    salt = "pgfsbench-fsync"
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt, "axes.grid.axis": "y"}):
        fig = Figure(figsize=(9, 3.6))
        ax = fig.add_subplot()
        labelled: set[str] = set()  # one legend entry per target
        for j, target in enumerate(targets):
            xs = [i - 0.4 + width * (j + 0.5) for i in range(len(methods))]
            for x, method in zip(xs, methods):
                if method not in data[target]:
                    continue  # not measured: nothing to say
                value = data[target][method]
                if value is None:
                    # Unsupported is not zero: leave the slot empty but say so.
                    ax.text(x, top * 0.02, "n/a", ha="center", va="bottom", rotation=90,
                            fontsize=8, color="#666666")
                    continue
                ax.bar(x, value, width * 0.92, color=colors.get(target, "#444444"),
                       label=None if target in labelled else target)
                labelled.add(target)
        ax.set_xticks(range(len(methods)), methods)
        ax.set_ylabel("ops/s (one 8 kB write + sync)")
        ax.set_title("pg_test_fsync: one 8 kB write per sync method", loc="left")
        ax.set_axisbelow(True)
        if labelled:  # all n/a: no bars, and an empty legend would only warn
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return to_svg(fig, salt)


def _fsync_values(campaign: Campaign) -> dict[str, dict[str, float | None]]:
    data: dict[str, dict[str, float | None]] = {}
    order = {t.name: t.position for t in campaign.targets}
    for run in campaign.runs:
        if run.workload != "fsync" or run.status != "ok":
            continue
        for m in run.metrics:
            match = _FSYNC_8K.match(m.name)
            if match:  # a later run overwrites, as in the comparison table
                data.setdefault(run.target, {})[match.group(1)] = m.value
    return dict(sorted(data.items(), key=lambda kv: order.get(kv[0], 0)))


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
               "transaction logs.", tps_chart),
    FigureSpec("fsync-chart", 20, "pg_test_fsync, one 8 kB write per sync: operations per "
               "second; n/a marks a method the target does not support.", fsync_chart),
]
