"""The formats of ``advise``, ``list`` and ``history`` (formats/registry.py's table).

Declared here, light: the CLI reads them for its help. Each writer imports the module
that renders (advice.py, listing.py, history.py) when it writes.
"""

from __future__ import annotations

from typing import Any, TextIO

from pgfsbench.formats.registry import ADVICE, HISTORY, LIST, OutputFormat


def _console(out: TextIO) -> Any:
    from rich.console import Console

    return Console(file=out, highlight=False)


def _advice(render: str):
    def write(advice: Any, out: TextIO) -> None:
        from pgfsbench.formats import advice as module

        out.write(getattr(module, render)(advice))

    return write


def _list_text(summaries: Any, out: TextIO) -> None:
    from pgfsbench.formats.listing import list_text

    list_text(summaries, _console(out))


def _list_json(summaries: Any, out: TextIO) -> None:
    from pgfsbench.formats.listing import list_json

    list_json(summaries, out)


def _history_text(series: Any, out: TextIO) -> None:
    from pgfsbench.formats.history import write_text

    write_text(series, _console(out))


def _history_json(series: Any, out: TextIO) -> None:
    from pgfsbench.formats.history import write_json

    write_json(series, out)


def _history_csv(series: Any, out: TextIO, bom: bool = False, ascii: bool = False) -> None:
    from pgfsbench.formats.csv_text import csv_out
    from pgfsbench.formats.history import write_csv

    write_csv(series, csv_out(out, bom, ascii))


TEXT = OutputFormat(
    "text",
    "txt",
    "text/plain",
    {ADVICE: _advice("advice_text"), LIST: _list_text, HISTORY: _history_text},
    order=10,
)
CONF = OutputFormat(
    "conf",
    "conf",
    "text/plain",
    {ADVICE: _advice("advice_conf")},
    order=20,
    description="a postgresql.conf snippet",
)
JSON = OutputFormat(
    "json",
    "json",
    "application/json",
    {ADVICE: _advice("advice_json"), LIST: _list_json, HISTORY: _history_json},
    order=30,
)
CSV = OutputFormat(
    "csv", "csv", "text/csv", {HISTORY: _history_csv}, order=40, options=("bom", "ascii")
)
