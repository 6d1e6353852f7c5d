"""What every CSV the program writes (export, compare, history) shares so that a
spreadsheet opens it cleanly: a minus is always ASCII (U+2212, the marks' and reasons'
minus, reads as text, not as a sign); ``bom`` starts the file with a UTF-8 byte order
mark (Excel reads a file without one in the locale's code page: "Âµs" for "µs");
``ascii`` writes units and marks in ASCII (``us`` for ``µs``, ``~`` for ``≈``).
"""

from __future__ import annotations

from typing import TextIO, cast

BOM = "\ufeff"
MINUS = str.maketrans({"\u2212": "-"})
# Units and marks: µs and the compare marks, the ratio's × and a CI's ±.
ASCII = str.maketrans(
    {
        "\u2212": "-",
        "\u00b5": "u",  # micro sign
        "\u03bc": "u",  # Greek mu
        "≈": "~",
        "≠": "!=",
        "×": "x",
        "±": "+/-",
        "→": "->",
        "·": ".",
        "—": "-",
        "–": "-",
    }
)


class CsvText:
    """``out`` as csv.writer writes to it, each line translated; the BOM first."""

    def __init__(self, out: TextIO, bom: bool = False, ascii: bool = False) -> None:
        self.out = out
        self.table = ASCII if ascii else MINUS
        if bom:
            out.write(BOM)

    def write(self, text: str) -> int:
        return self.out.write(text.translate(self.table))


def csv_out(out: TextIO, bom: bool = False, ascii: bool = False) -> TextIO:
    """What a CSV writer writes to instead of ``out`` (all csv.writer needs is write)."""
    return cast("TextIO", CsvText(out, bom, ascii))
