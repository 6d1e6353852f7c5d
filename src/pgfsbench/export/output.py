"""What an output format is: a name, a file type, and a writer per kind of output.

Two kinds of output exist: ``EXPORT``, one stored campaign with every run (what
``pgfsbench export`` prints), and ``COMPARISON``, the medians, ratios and verdicts
``pgfsbench compare`` prints. A format writes the kinds it has a writer for; the
table of formats is ``formats.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

EXPORT = "export"
COMPARISON = "comparison"
KINDS = (EXPORT, COMPARISON)

# Writes one output (a store.read.Campaign for EXPORT, a render.comparison.Comparison
# for COMPARISON).
Writer = Callable[[Any, TextIO], None]


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
