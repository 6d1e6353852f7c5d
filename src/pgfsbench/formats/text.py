"""The text format: a comparison as a table for the terminal (colour when it is one)."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from pgfsbench.compare.comparison import Comparison
from pgfsbench.formats.registry import COMPARISON, OutputFormat
from pgfsbench.render.values import MARK_STYLE
from pgfsbench.render.verdict_text import print_verdicts


def write_comparison(comparison: Comparison, out: TextIO) -> None:
    print_comparison(comparison, Console(file=out, highlight=False))


FORMAT = OutputFormat("text", "txt", "text/plain", {COMPARISON: write_comparison}, order=10)


def print_comparison(comparison: Comparison, console: Console) -> None:
    # Here, not at the top: the CLI loads this module to list the formats in its help.
    from pgfsbench.analysis.verdicts.answer import campaign_answer, glossary
    from pgfsbench.render.verdict_text import print_glossary

    if comparison.verdicts:  # the answer first, then its terms
        console.print(Text("answer: ", style="bold") + Text(campaign_answer(comparison.verdicts)))
        print_glossary(glossary(comparison.table), console)
    for warning in comparison.warnings:  # before the numbers they qualify
        console.print(Text(f"⚠ {warning}", style="red bold"))
    # Side by side where it fits; a block per measurement on a narrow terminal, where a
    # grid would break words mid-way.
    wide = 40 + 26 * len(comparison.table.targets)
    (_grid if console.width >= wide else _blocks)(comparison, console)
    _verdicts(comparison, console)


def _grid(comparison: Comparison, console: Console) -> None:
    from pgfsbench.compare.row_texts import diff_text, row_title, value_text
    from pgfsbench.render.values import direction_arrow, row_scale, row_unit

    table, title = comparison.table, comparison.title
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
            cells.append(Text(value_text(row.cells[t], scale, row.unit)))
            if t != table.baseline:
                ratio, mark = diff_text(row.cells[t], short=True)
                style = MARK_STYLE.get(mark[:1], "")
                cells.append(Text(f"{ratio} {mark}".strip(), style=style))
        rt.add_row(
            Text(f"{row_title(row)} [{row_unit(row)}]"),
            Text(direction_arrow(row.higher_is_better)),
            *cells,
        )
    console.print(rt)


def _blocks(comparison: Comparison, console: Console) -> None:
    """A measurement a block: its title, then a line per target (value, ratio, mark)."""
    from pgfsbench.analysis.headline import metric_label
    from pgfsbench.compare.row_texts import diff_text, value_text
    from pgfsbench.render.values import direction_arrow, row_scale, row_unit

    table = comparison.table
    if comparison.title:
        console.print(Text(comparison.title, style="bold"))
    for row in comparison.rows:
        label = metric_label(row.metric, row.workload)
        name = f"{label} ({row.metric})" if label != row.metric else row.metric
        console.print(
            Text(
                f"{row.workload} {row.label}".strip()
                + f" · {name} [{row_unit(row)}] "
                + direction_arrow(row.higher_is_better),
                style="bold",
            )
        )
        rt = RichTable(box=None, padding=(0, 1), pad_edge=False, show_edge=False, show_header=False)
        rt.add_column(no_wrap=True)
        rt.add_column(justify="right")
        rt.add_column(overflow="fold")
        scale = row_scale(row)
        for t in table.targets:
            if t == table.baseline:
                versus = Text("baseline", style="dim")
            else:
                ratio, mark = diff_text(row.cells[t], short=True)
                versus = Text(f"{ratio} {mark}".strip(), style=MARK_STYLE.get(mark[:1], ""))
            rt.add_row(Text(f"  {t}"), Text(value_text(row.cells[t], scale, row.unit)), versus)
        console.print(rt)


def _verdicts(comparison: Comparison, console: Console) -> None:
    """The verdict lines; a caveat every verdict shares is said once, at the end."""
    from pgfsbench.compare.row_texts import footer

    print_verdicts(comparison.verdicts, console)
    for note in comparison.notes:
        console.print(Text(f"ⓘ {note}", style="yellow"))
    console.print(Text(footer(comparison.table), style="dim"))
