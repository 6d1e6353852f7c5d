"""What ``pgfsbench compare`` shows, whatever the format: made by the CLI and
``compare/campaigns.py``, written by the output formats (``formats/``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only for the annotations: analysis imports scipy, slow to load
    from pgfsbench.analysis.table import Row, Table
    from pgfsbench.analysis.verdicts.verdict_lines import Durabilities, VerdictLine


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
