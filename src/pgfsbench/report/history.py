"""``pgfsbench history``: each series as a table (text), or as JSON or CSV data.

One line per campaign: when it started, its campaign id, host, median ± 95% CI, n,
and against the previous campaign of the same plan the ratio with its CI and the
mark ``compare`` would print (``+`` better, ``−`` worse, ``≈`` equivalent,
``?`` inconclusive), or why it was not compared.
"""

from __future__ import annotations

import csv
import json
import time
from typing import TYPE_CHECKING, Any, TextIO, cast

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from pgfsbench import __version__
from pgfsbench.analysis.history import Point, Series
from pgfsbench.render.compare import diff_text
from pgfsbench.render.values import MARK_STYLE, csv_cell, format_value

if TYPE_CHECKING:
    from pgfsbench.report.documents import (
        Direction,
        HistoryDocument,
        HistoryPoint,
        HistorySeries,
    )

CSV_COLUMNS = [
    "target",
    "host",
    "workload",
    "label",
    "metric",
    "unit",
    "direction",
    "campaign",
    "uuid",
    "plan",
    "started",
    "source",
    "median",
    "ci_low",
    "ci_high",
    "n",
    "previous",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_adjusted",
    "mark",
    "decision",
    "reason",
    "note",
]


def when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def write_text(series: list[Series], console: Console) -> None:
    campaigns = {p.campaign.uuid for s in series for p in s.points}
    if len(campaigns) < 2:  # a history of one point is no history: say so in a line
        found = "no campaign" if not campaigns else "one campaign"
        console.print(
            Text(
                f"a history needs two campaigns or more; found {found} "
                "(give more results directories, or --store URL)"
            )
        )
        return
    for s in series:
        scale = max(p.value for p in s.points)
        plans = {p.campaign.plan_name for p in s.points}
        # Holds at 80 columns: no box, ids and dates never broken, the plan in the title
        # when there is one.
        title = f"{s.title} [{s.unit}]" + (f", plan {next(iter(plans))}" if len(plans) == 1 else "")
        rt = RichTable(
            title=title,
            title_justify="left",
            box=None,
            padding=(0, 1),
            pad_edge=False,
            show_edge=False,
        )
        columns = [
            "started",
            "campaign",
            *(["plan"] if len(plans) > 1 else []),
            "median [95% CI]",
            "n",
            "vs previous",
        ]
        for name in columns:
            rt.add_column(
                name,
                justify="right" if name == "n" else "left",
                no_wrap=name in ("started", "campaign", "n"),
                overflow="fold",
            )
        for p in s.points:
            ratio, mark = diff_text(p.against, short=True) if p.against is not None else ("", "")
            versus = f"{ratio} {mark}".strip() or p.note or ("" if p.previous else "—")
            plan = [p.campaign.plan_name] if len(plans) > 1 else []
            rt.add_row(
                when(p.campaign.started),
                p.campaign.id,
                *plan,
                _value(p, scale),
                str(p.cell.n),
                Text(versus, style=MARK_STYLE.get(mark[:1], "")),
            )
        console.print(rt)
    console.print(
        Text(
            "Medians over each campaign's rounds with the 95% CI of the median "
            "(bootstrap). Each campaign is compared with the previous one of the "
            "same plan as compare does across two campaigns: independent samples "
            "(rounds of two campaigns do not correspond), ratio of medians with a "
            "bootstrap CI, Mann-Whitney U; + better, − worse, ≈ equivalent, "
            "? inconclusive.",
            style="dim",
        )
    )


def _value(p: Point, scale: float) -> str:
    text = format_value(p.value, scale)
    if p.cell.ci is not None:
        text += f" [{format_value(p.cell.ci[0], scale)}, {format_value(p.cell.ci[1], scale)}]"
    return text


def point_data(p: Point) -> HistoryPoint:
    c = p.against.comparison if p.against is not None else None
    v = p.against.verdict if p.against is not None else None
    return {
        "campaign": p.campaign.id,
        "uuid": p.campaign.uuid,
        "plan": p.campaign.plan_name,
        "started": p.campaign.started,
        "source": p.source,
        "median": p.cell.value,
        "ci95": list(p.cell.ci) if p.cell.ci else None,
        "n": p.cell.n,
        "previous": p.previous.campaign.id if p.previous is not None else None,
        # ratio_ci95's items are typed float | None: both are set together
        "vs_previous": None  # type: ignore[typeddict-item]
        if c is None
        else {
            "ratio": c.ratio,
            "ratio_ci95": [c.ci_low, c.ci_high] if c.ci_low is not None else None,
            "p_value": c.p_value,
            "p_adjusted": p.against.p_adjusted if p.against is not None else None,
            "verdict": v.kind if v else None,
            "mark": v.mark if v else None,
            "reason": v.reason if v else None,
        },
        "note": p.note or None,
    }


def series_data(s: Series) -> HistorySeries:
    return {
        "target": s.target,
        "host": s.host,
        "workload": s.workload,
        "label": s.label,
        "metric": s.metric,
        "unit": s.unit,
        "direction": cast(
            "Direction", {True: "higher", False: "lower", None: "none"}[s.higher_is_better]
        ),
        "points": [point_data(p) for p in s.points],
    }


def write_json(series: list[Series], out: TextIO) -> None:
    document: HistoryDocument = {
        "pgfsbench_version": __version__,
        "kind": "history",
        "series": [series_data(s) for s in series],
    }
    json.dump(
        document,
        out,
        indent=2,
        default=_plain,
    )
    out.write("\n")


def _plain(value: object) -> object:
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


def write_csv(series: list[Series], out: TextIO) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in series:
        direction = series_data(s)["direction"]
        for p in s.points:
            d = point_data(p)
            vs: dict[str, Any] = dict(d["vs_previous"] or {})
            ci: list[Any] = d["ci95"] or [None, None]
            rci = vs.get("ratio_ci95") or [None, None]
            w.writerow(
                csv_cell(v)
                for v in [
                    s.target,
                    s.host,
                    s.workload,
                    s.label,
                    s.metric,
                    s.unit,
                    "" if direction == "none" else direction,
                    d["campaign"],
                    d["uuid"],
                    d["plan"],
                    d["started"],
                    d["source"],
                    d["median"],
                    ci[0],
                    ci[1],
                    d["n"],
                    d["previous"],
                    vs.get("ratio"),
                    rci[0],
                    rci[1],
                    vs.get("p_adjusted"),
                    vs.get("mark"),
                    vs.get("verdict"),
                    vs.get("reason"),
                    d["note"],
                ]
            )


def point_texts(s: Series) -> list[dict[str, str]]:
    """Each point's cells as the text table shows them (the report's history section)."""
    scale = max(p.value for p in s.points)
    out = []
    for p in s.points:
        ratio, mark = diff_text(p.against) if p.against is not None else ("", "")
        out.append(
            {
                "started": when(p.campaign.started),
                "campaign": p.campaign.id,
                "value": _value(p, scale),
                "n": str(p.cell.n),
                "versus": f"{ratio} {mark}".strip() or p.note or ("" if p.previous else "—"),
                "mark": mark[:1],
            }
        )
    return out
