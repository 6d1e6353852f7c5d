"""``pgfsbench compare``: baseline against contenders, benchstat style.

Each row: median ± CI half-width (n) per column, and per contender the ratio
with its 95% CI and a mark: ``+`` better, ``−`` worse, ``≠`` different (no
direction), ``≈`` equivalent (shown by an equivalence test), ``?`` inconclusive.
Here: which rows, and the texts of their cells and footer; the output formats
(``formats/text.py``, ``formats/markdown.py``, ``formats/json.py``) lay them out.
"""

from __future__ import annotations

import fnmatch
import time
from typing import TYPE_CHECKING

from pgfsbench.analysis.table import Cell, Row, Table

if TYPE_CHECKING:
    from pgfsbench.analysis.findings import Finding
    from pgfsbench.compare.series import Point, Series
from pgfsbench.ratios import change_text
from pgfsbench.render.values import cell_text, format_value


def select_rows(table: Table, metric: str | None) -> list[Row]:
    """Rows whose metric matches the glob; by default each measurement's headline."""
    if metric is None:
        return [r for r in table.rows if r.headline]
    return [r for r in table.rows if fnmatch.fnmatchcase(r.metric, metric)]


def value_text(cell: Cell, scale: float | None, unit: str | None = None) -> str:
    """'1.09 ±131% (n=15, cv 136%)': the centre (in ``human_unit(unit, scale)`` with a
    unit, as every command shows the row), its CI half-width, n and cv."""
    text = cell_text(cell, scale, unit)
    if cell.status != "ok":
        return text
    if cell.half_width is not None:
        text += f" ±{cell.half_width:.0%}"
    cv = f", cv {cell.cv:.0%}" if cell.cv is not None else ""
    return f"{text} (n={cell.n}{cv})"


def diff_text(cell: Cell, short: bool = False) -> tuple[str, str]:
    """(the finding's ratio with its interval, its mark with what it is) of a contender's
    cell; ``short``: the mark and the outcome in words alone (the footer explains)."""
    return finding_diff(cell.finding, short)


def finding_diff(f: Finding | None, short: bool = False) -> tuple[str, str]:
    """``diff_text`` of a finding (a history point's against the previous one)."""
    if f is None or f.ratio is None:
        return "", ""
    ratio = change_text(f.ratio, f.interval)
    if f.outcome == "na":
        return ratio, f"({f.note})" if f.note and not short else ""
    if short:
        return ratio, f"{f.mark} {f.outcome_words()}"
    when = f", decided at round {f.through}" if f.early else ""
    return ratio, f"{f.mark} {f.outcome_words()} ({f.rests_on()}{when})"


def row_title(row: Row) -> str:
    return f"{row.workload} {row.label} {row.metric}".replace("  ", " ")


def looks_text(d) -> str:
    """When the headline comparisons were tested: 'once, at the last round', 'at rounds
    6 and 12 (alpha spent across the looks)', 'after every round from 3 to 12 (...)'."""
    if d is None or d.first_look == d.last_look:
        return "once, at the last round"
    looks = d.planned_looks()
    budget = " (or at the last round the time budget allowed)"
    if d.every_round:
        return (
            f"after every round from {d.first_look} to {d.last_look} (alpha spent across the looks)"
        )
    if len(looks) == 1:
        return f"once, at round {looks[0]}{budget}"
    return (
        f"at rounds {', '.join(map(str, looks[:-1]))} and {looks[-1]}{budget}, "
        "alpha spent across the looks"
    )


def footer(table: Table) -> str:
    """The legend: what the numbers are, the marks, paired or not, and the design."""
    how = []
    if table.paired:
        how.append(
            "paired: targets measured in the same rounds are compared within rounds "
            "(the ratio is the geometric mean of the per-round ratios, a paired t on their "
            "logs)"
        )
    if table.unpaired:
        how.append(
            "unpaired: runs whose rounds do not correspond (two campaigns) are compared as "
            "independent samples (the ratio of the two geometric means, Welch's t on the "
            "logs)"
        )
    design = f"decided {looks_text(table.design)}, alpha {table.alpha} shared by all of them"
    how_text = "; ".join(how)
    return (
        "Values: each target's geometric mean (the median where a row holds a value at or "
        "below zero) ± its 95% CI half-width, n and the coefficient of variation; each "
        f"contender against the baseline ({table.baseline}): the ratio of the two values "
        "with its interval at the level of the decision. "
        + (how_text[:1].upper() + how_text[1:] + ". " if how else "")
        + f"Marks: + better, − worse (its interval excludes 1 and the change is beyond "
        f"±{table.noise:.0%}), ≈ equivalent (its interval lies within "
        f"±{table.equivalence:.0%}), ? not told apart. Headline rows: all "
        f"{table.headline_tests} pair(s) of targets {design}, so one false claim of any "
        "kind stays below alpha; other rows: each at alpha with Benjamini-Hochberg (95% "
        "intervals, unadjusted)."
    )


def when(seconds: float) -> str:
    """A campaign's start as history shows it: '2026-05-01 14:03', local time."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def point_value(p: Point, scale: float, unit: str) -> str:
    """A history point's value with its 95% CI, in ``scale``'s unit."""
    text = format_value(p.value, scale, unit)
    if p.cell.ci is not None:
        low, high = (format_value(v, scale, unit) for v in p.cell.ci)
        text += f" [{low}, {high}]"
    return text


def point_texts(s: Series, scale: float | None = None) -> list[dict[str, str]]:
    """Each point's cells as the text table shows them (the report's history section)."""
    scale = scale if scale is not None else max(abs(p.value) for p in s.points)
    out = []
    for p in s.points:
        ratio, mark = finding_diff(p.finding)
        out.append(
            {
                "started": when(p.campaign.started),
                "campaign": p.campaign.id,
                "value": point_value(p, scale, s.unit),
                "n": str(p.cell.n),
                "versus": f"{ratio} {mark}".strip() or p.note or ("" if p.previous else "—"),
                "mark": mark[:1],
            }
        )
    return out
