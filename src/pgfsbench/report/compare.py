"""``pgfsbench compare``: baseline against contenders, benchstat style.

Each row: median ± CI half-width (n) per column, and per contender the ratio
of medians with its 95% CI and a mark: ``+`` better, ``−`` worse, ``≠``
different (no direction), ``~`` no difference, ``?`` too few samples.
The same rows render for the terminal and as Markdown (JSON: ``export/comparison.py``).
"""

from __future__ import annotations

import fnmatch

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from pgfsbench.analysis.table import Cell, Row, Table
from pgfsbench.analysis.verdicts import VerdictLine
from pgfsbench.report.terminal import cell_text, direction_arrow, row_scale

MARK_STYLE = {"+": "green", "−": "red", "≠": "yellow", "~": "dim", "?": "yellow"}


def select_rows(table: Table, metric: str | None) -> list[Row]:
    """Rows whose metric matches the glob; by default each measurement's headline."""
    if metric is None:
        return [r for r in table.rows if r.headline]
    return [r for r in table.rows if fnmatch.fnmatchcase(r.metric, metric)]


def value_text(cell: Cell, scale: float | None) -> str:
    text = cell_text(cell, scale)
    if cell.status != "ok":
        return text
    if cell.half_width is not None:
        text += f" ±{cell.half_width:.0%}"
    cv = f", cv {cell.cv:.0%}" if cell.cv is not None else ""
    return f"{text} (n={cell.n}{cv})"


def diff_text(cell: Cell, short: bool = False) -> tuple[str, str]:
    """(ratio with CI, mark with its reason) of a contender's cell; ``short`` keeps only
    the adjusted p-value of the reason (the terminal is narrow, the footer explains)."""
    c = cell.comparison
    if c is None or c.ratio is None:
        return "", ""
    ratio = f"×{c.ratio:.3f}"
    if c.ci_low is not None:
        ratio += f" [{c.ci_low:.3f}, {c.ci_high:.3f}]"
    v = cell.verdict
    if v is None:
        return ratio, ""
    if short:
        return ratio, v.mark + (f" p={cell.p_adjusted:.2g}" if cell.p_adjusted is not None
                                else "")
    return ratio, f"{v.mark} {v.reason}"


def _title(row: Row) -> str:
    return f"{row.workload} {row.label} {row.metric}".replace("  ", " ")


def render_terminal(table: Table, rows: list[Row], verdicts: list[VerdictLine],
                    console: Console, title: str = "") -> None:
    rt = RichTable(title=title or None, title_justify="left")
    rt.add_column("measurement · metric", overflow="fold")
    rt.add_column("", justify="center")
    for t in table.targets:
        rt.add_column(t + (" (baseline)" if t == table.baseline else ""), justify="right")
        if t != table.baseline:
            rt.add_column(f"{t} vs base", overflow="fold")
    for row in rows:
        scale = row_scale(row)
        cells: list[Text] = []
        for t in table.targets:
            cells.append(Text(value_text(row.cells[t], scale)))
            if t != table.baseline:
                ratio, mark = diff_text(row.cells[t], short=True)
                style = MARK_STYLE.get(mark[:1], "")
                cells.append(Text(f"{ratio} {mark}".strip(), style=style))
        rt.add_row(Text(f"{_title(row)} [{row.unit}]"), Text(direction_arrow(row.higher_is_better)),
                   *cells)
    console.print(rt)
    for v in verdicts:
        console.print(Text(f"{v.title}: ", style="bold") + Text(v.text))
        if v.warning:
            console.print(Text(f"  ⚠ {v.warning}", style="red bold"))
    console.print(Text(footer(table), style="dim"))


def footer(table: Table) -> str:
    return (f"Medians ± 95% CI half-width (bootstrap), n and the coefficient of variation; ratios are contender/baseline medians "
            f"with 95% CIs. Marks: + better, − worse, ~ no difference (p ≥ {table.alpha} or "
            f"within ±{table.noise:.0%} noise), ? too few samples. Headline rows: Mann-Whitney "
            f"U, Holm-corrected over {table.headline_tests} test(s); other rows: "
            "Benjamini-Hochberg.")


def to_markdown(table: Table, rows: list[Row], verdicts: list[VerdictLine]) -> str:
    head = ["measurement", "metric", "unit"]
    for t in table.targets:
        head.append(t + (" (baseline)" if t == table.baseline else ""))
        if t != table.baseline:
            head.append(f"{t} vs base")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        scale = row_scale(row)
        cols = [f"{row.workload} {row.label}".strip(), f"`{row.metric}`", row.unit]
        for t in table.targets:
            cols.append(value_text(row.cells[t], scale))
            if t != table.baseline:
                cols.append(" ".join(diff_text(row.cells[t])).strip())
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |")
    if verdicts:
        out += ["", "**Verdicts**", ""]
        for v in verdicts:
            out.append(f"- **{v.title}**: {v.text}" + (f" ⚠ **{v.warning}**" if v.warning
                                                         else ""))
    out += ["", f"_{footer(table)}_", ""]
    return "\n".join(out)
