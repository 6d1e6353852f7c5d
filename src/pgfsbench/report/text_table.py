"""The full table (`show --full`) laid out by hand, in one Text.

rich's Table measures and wraps every cell: ~0.13 s for the 380 rows of a 100-run
campaign, a third of the command. Here each column is as wide as its widest cell (the
cells are short, one line each) and the lines are joined once:

- where the table fits the console, the same box rich draws (HEAVY_HEAD, one space of
  padding), line for line;
- where it does not, the targets grow down, a line per target under each metric, as
  the summary does: a name or figure is never folded mid-word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

SECTION = None  # a rule across the table before the next row (a new measurement)


@dataclass(frozen=True)
class Column:
    header: str
    justify: str = "left"  # "left", "right" or "center"
    style: str = ""  # of every cell in the column


Row = Sequence[Text] | None  # None: SECTION


def _pad(text: Text, width: int, justify: str) -> Text:
    room = width - cell_len(text.plain)
    if room <= 0:
        return text
    if justify == "right":
        return Text(" " * room) + text
    if justify == "center":
        return Text(" " * (room // 2)) + text + Text(" " * (room - room // 2))
    return text + Text(" " * room)


def _widths(columns: Sequence[Column], rows: Sequence[Row]) -> list[int]:
    widths = [cell_len(c.header) for c in columns]
    for row in rows:
        for i, cell in enumerate(row or ()):
            widths[i] = max(widths[i], cell_len(cell.plain))
    return widths


def box_width(widths: Sequence[int]) -> int:
    """The box's width: each column's widest cell, padded, and the rules between."""
    return sum(w + 3 for w in widths) + 1


def box_table(
    title: str, columns: Sequence[Column], rows: Sequence[Row], width: int
) -> tuple[Text | None, int]:
    """The table as rich draws it, or None when it is wider than ``width``; and the
    width it takes."""
    widths = _widths(columns, rows)
    total = box_width(widths)
    if total > width:
        return None, total

    def rule(left: str, fill: str, cross: str, right: str) -> Text:
        return Text(left + cross.join(fill * (w + 2) for w in widths) + right)

    def line(cells: Sequence[Text], edge: str, header: bool = False) -> Text:
        out = Text(edge)
        for i, (col, w) in enumerate(zip(columns, widths, strict=True)):
            cell = cells[i] if i < len(cells) else Text()
            if col.style and not header:
                cell = cell.copy()
                cell.stylize(col.style)
            out += Text(" ") + _pad(cell, w, col.justify) + Text(" " + edge)
        return out

    title_line = Text(title, style="italic")
    if cell_len(title) < total:  # rich pads the title to the table's width
        title_line.append(" " * (total - cell_len(title)))
    lines = [
        title_line,
        rule("┏", "━", "┳", "┓"),
        line([Text(c.header, style="bold") for c in columns], "┃", header=True),
        rule("┡", "━", "╇", "┩"),
    ]
    for row in rows:
        lines.append(rule("├", "─", "┼", "┤") if row is SECTION else line(row, "│"))
    lines.append(rule("└", "─", "┴", "┘"))
    return Text("\n").join(lines), total


def stacked(
    title: str,
    heads: Sequence[str],
    rows: Sequence[tuple[Text, Sequence[Sequence[Text]]]],
    note: str = "",
) -> Text:
    """The narrow layout: each row's name line, then a line per target (``heads``) with
    the row's parts (value, spread, ratio) in columns: the first right-aligned, the
    others left. A row without parts is a heading; an empty one, a blank line. ``note``,
    under the title, says why this layout."""
    name_w = max((cell_len(h) for h in heads), default=0)
    lines = [Text(title, style="italic")] + ([Text(note, style="dim")] if note else [])
    for name, cells in rows:
        lines.append(name)
        if not cells:
            continue
        widths = [max(cell_len(c[i].plain) for c in cells) for i in range(len(cells[0]))]
        for head, parts in zip(heads, cells, strict=True):
            line = Text("  " + head.ljust(name_w))
            for i, (part, w) in enumerate(zip(parts, widths, strict=True)):
                if w:
                    line += Text("  " if i == 0 else " ") + _pad(
                        part, w, "right" if i == 0 else "left"
                    )
            line.rstrip()
            lines.append(line)
    return Text("\n").join(lines)
