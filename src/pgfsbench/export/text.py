"""The text format: a comparison as a table for the terminal (colour when it is one)."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from pgfsbench.export.output import COMPARISON, Comparison, OutputFormat

MARK_STYLE = {"+": "green", "−": "red", "≠": "yellow", "~": "dim", "?": "yellow"}


def write_comparison(comparison: Comparison, out: TextIO) -> None:
    print_comparison(comparison, Console(file=out, highlight=False))


FORMAT = OutputFormat("text", "txt", "text/plain", {COMPARISON: write_comparison})


def print_comparison(comparison: Comparison, console: Console) -> None:
    # Here, not at the top: the CLI loads this module to list the formats in its help.
    from pgfsbench.report.compare import diff_text, footer, row_title, value_text
    from pgfsbench.report.terminal import direction_arrow, row_scale

    from pgfsbench.analysis.answer import campaign_answer

    table, title = comparison.table, comparison.title
    if comparison.verdicts:  # the answer first
        console.print(Text("answer: ", style="bold")
                      + Text(campaign_answer(comparison.verdicts)))
    for warning in comparison.warnings:  # before the numbers they qualify
        console.print(Text(f"⚠ {warning}", style="red bold"))
    rt = RichTable(title=title or None, title_justify="left")
    rt.add_column("measurement · metric", overflow="fold")
    rt.add_column("", justify="center")
    for t in table.targets:
        rt.add_column(t + (" (baseline)" if t == table.baseline else ""), justify="right")
        if t != table.baseline:
            rt.add_column(f"{t} vs base", overflow="fold")
    for row in comparison.rows:
        scale = row_scale(row)
        cells: list[Text] = []
        for t in table.targets:
            cells.append(Text(value_text(row.cells[t], scale)))
            if t != table.baseline:
                ratio, mark = diff_text(row.cells[t], short=True)
                style = MARK_STYLE.get(mark[:1], "")
                cells.append(Text(f"{ratio} {mark}".strip(), style=style))
        rt.add_row(Text(f"{row_title(row)} [{row.unit}]"),
                   Text(direction_arrow(row.higher_is_better)), *cells)
    console.print(rt)
    for v in comparison.verdicts:
        console.print(Text(f"{v.title}: ", style="bold") + Text(v.text))
        if v.warning:
            console.print(Text(f"  ⚠ {v.warning}", style="red bold"))
        for caveat in v.caveats:
            console.print(Text(f"  ⓘ {caveat}", style="yellow"))
    for note in comparison.notes:
        console.print(Text(f"ⓘ {note}", style="yellow"))
    console.print(Text(footer(table), style="dim"))
