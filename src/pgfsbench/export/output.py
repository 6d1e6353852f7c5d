"""What an output format is: a name, a file type, and a writer per kind of output.

Two kinds of output exist: ``EXPORT``, one stored campaign with every run (what
``pgfsbench export`` prints), and ``COMPARISON``, the medians, ratios and verdicts
``pgfsbench compare`` prints. A format writes the kinds it has a writer for; the
table of formats is ``formats.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # only for the annotations: analysis imports scipy, slow to load
    from pgfsbench.analysis.table import Row, Table
    from pgfsbench.analysis.verdicts import Durabilities, VerdictLine

EXPORT = "export"
COMPARISON = "comparison"
KINDS = (EXPORT, COMPARISON)

# Writes one output (a store.read.Campaign for EXPORT, a Comparison for COMPARISON).
Writer = Callable[[Any, TextIO], None]


@dataclass(frozen=True)
class Comparison:
    """What ``compare`` shows: the table, the rows chosen from it, the verdicts."""

    table: Table
    rows: list[Row]
    verdicts: list[VerdictLine]
    title: str = ""  # the plans compared, for a format that shows a title
    # Across campaigns (a baseline vs contenders): each side's facts (role, column,
    # uuid, id, plan, host, started, source), the target pairs (baseline target,
    # contender target, contender column), key differences that were allowed (every
    # format shows them) and other differences noted.
    campaigns: tuple[dict, ...] = ()
    pairs: tuple[tuple[str, str, str], ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    # A row's columns' crash safety (across campaigns each row is a pair of its own).
    durability: Callable[[Row], Durabilities] = lambda row: {}


@dataclass(frozen=True)
class OutputFormat:
    name: str  # what --format takes
    extension: str  # of a file in this format, without the dot
    media_type: str
    writers: Mapping[str, Writer]  # kind -> writer, for each kind it writes

    def __post_init__(self) -> None:
        if unknown := set(self.writers) - set(KINDS):
            raise ValueError(f"format {self.name!r}: no output kind {sorted(unknown)}")

    def writes(self, kind: str) -> bool:
        return kind in self.writers

    def write(self, kind: str, subject: Any, out: TextIO) -> None:
        self.writers[kind](subject, out)
