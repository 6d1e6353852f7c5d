"""``pgfsbench history``: each series as a table (text), or as JSON or CSV data.

One line per campaign: when it started, its campaign id, host, its geometric mean with
its 95% CI (the median where a value is at or below zero), n, and against the previous
campaign of the same plan the finding ``compare PREVIOUS THIS`` makes (the ratio of the
two values, its interval at the level of the decision, the mark (``+`` better, ``−`` worse, ``≈`` equivalent,
``?`` inconclusive), or why it was not compared.
"""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING, Any, TextIO, cast

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from pgfsbench import __version__
from pgfsbench.compare.row_texts import finding_diff, point_value, when
from pgfsbench.compare.series import Point, Series
from pgfsbench.render.values import MARK_STYLE, csv_cell, human_unit

if TYPE_CHECKING:
    from pgfsbench.formats.list_history_documents import (
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
    "centre",
    "ci_low",
    "ci_high",
    "n",
    "previous",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "mark",
    "decision",
    "reason",
    "note",
]


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
    scales = _scales(series)
    for s in series:
        scale = scales[s.metric]
        plans = {p.campaign.plan_name for p in s.points}
        unit = human_unit(s.unit, scale)[0]  # as show prints it: 3.46 ms, not 3,460 µs
        # Holds at 80 columns: no box, ids and dates never broken, the plan in the title
        # when there is one. A Text: "[tx/s]" is no markup.
        title = f"{s.title} [{unit}]" + (f", plan {next(iter(plans))}" if len(plans) == 1 else "")
        rt = RichTable(
            title=Text(title, style="italic"),
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
            _centre_name(s) + " [95% CI]",
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
            ratio, mark = finding_diff(p.finding, short=True)
            versus = f"{ratio} {mark}".strip() or p.note or ("" if p.previous else "—")
            plan = [p.campaign.plan_name] if len(plans) > 1 else []
            rt.add_row(
                when(p.campaign.started),
                p.campaign.id,
                *plan,
                point_value(p, scale, s.unit),
                str(p.cell.n),
                Text(versus, style=MARK_STYLE.get(mark[:1], "")),
            )
        console.print(rt)
    console.print(
        Text(
            "Each campaign's geometric mean over its rounds with its 95% CI. Each "
            "campaign is compared with the previous one of the same plan exactly as "
            "compare PREVIOUS THIS does (every target of the same name in one family): "
            "independent samples (rounds of two campaigns do not correspond), the ratio "
            "of the two geometric means with its interval at the level of the decision "
            "(Welch's t on the logs); + better, − worse, ≈ equivalent, ? not told apart.",
            style="dim",
        )
    )


def _scales(series: list[Series]) -> dict[str, float]:
    """Each metric's largest value over every series: its unit and precision, alike on
    every series of it (as a campaign's table chooses them)."""
    out: dict[str, float] = {}
    for s in series:
        out[s.metric] = max(out.get(s.metric, 0.0), *(abs(p.value) for p in s.points))
    return out


def _centre_name(s: Series) -> str:
    geometric = all(p.cell.centre == "geometric mean" for p in s.points)
    return "geo. mean" if geometric else "median"


def point_data(p: Point) -> HistoryPoint:
    f = p.finding
    return {
        "campaign": p.campaign.id,
        "uuid": p.campaign.uuid,
        "plan": p.campaign.plan_name,
        "started": p.campaign.started,
        "source": p.source,
        "centre": p.cell.value,
        "centre_kind": p.cell.centre,
        "ci95": list(p.cell.ci) if p.cell.ci else None,
        "n": p.cell.n,
        "previous": p.previous.campaign.id if p.previous is not None else None,
        "vs_previous": None
        if f is None
        else {
            "ratio": f.ratio,
            "interval": list(f.interval) if f.interval is not None else None,
            "confidence": f.level.confidence if f.level is not None else None,
            "p_value": f.p,
            "outcome": f.outcome,
            "mark": f.mark,
            "reason": f.sentence(),
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
            rci = vs.get("interval") or [None, None]
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
                    d["centre"],
                    ci[0],
                    ci[1],
                    d["n"],
                    d["previous"],
                    vs.get("ratio"),
                    rci[0],
                    rci[1],
                    vs.get("p_value"),
                    vs.get("mark"),
                    vs.get("outcome"),
                    vs.get("reason"),
                    d["note"],
                ]
            )
