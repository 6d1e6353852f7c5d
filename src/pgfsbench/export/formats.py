"""The table of output formats that ``export --format`` and ``compare --format`` take.

One module per format in this package, each defining ``FORMAT`` (an ``OutputFormat``).
Adding a format is one module plus its line below. The CLI reads this table to build
its help, so format modules keep their top-level imports light (no analysis, no scipy).
"""

from __future__ import annotations

from pgfsbench.errors import UserError
from pgfsbench.export import csv, json, markdown, text
from pgfsbench.export.output import KINDS, OutputFormat

FORMATS: dict[str, OutputFormat] = {}  # by name, in the order the help lists them


def register(fmt: OutputFormat) -> OutputFormat:
    if fmt.name in FORMATS:
        raise ValueError(f"output format {fmt.name!r} is registered twice")
    FORMATS[fmt.name] = fmt
    return fmt


def names(kind: str) -> list[str]:
    """The formats that write ``kind``."""
    _check_kind(kind)
    return [name for name, fmt in FORMATS.items() if fmt.writes(kind)]


def pick(name: str, kind: str) -> OutputFormat:
    """The format ``name`` for ``kind``; a UserError (exit 2) when there is none."""
    _check_kind(kind)
    choices = ", ".join(names(kind))
    fmt = FORMATS.get(name)
    if fmt is None:
        raise UserError(f"unknown {kind} format '{name}' (available: {choices})")
    if not fmt.writes(kind):
        raise UserError(f"the {name} format does not write {_article(kind)} {kind} "
                        f"({kind} formats: {choices})")
    return fmt


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"no output kind {kind!r} (kinds: {', '.join(KINDS)})")


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


for _module in (text, markdown, json, csv):
    register(_module.FORMAT)
