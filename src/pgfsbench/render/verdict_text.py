"""The verdict lines as the terminal shows them, for ``show`` (report/terminal.py) and
``compare`` (formats/text.py); which caveats they all share, for the Markdown too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from pgfsbench.analysis.verdicts.verdict_lines import VerdictLine


def shared_caveats(verdicts: Sequence[VerdictLine]) -> list[str]:
    """The caveats every one of several verdicts has (the loop device, the virtual disk):
    said once after them, not under each."""
    return [
        c
        for c in (verdicts[0].caveats if verdicts else [])
        if len(verdicts) > 1 and all(c in v.caveats for v in verdicts)
    ]


def print_glossary(terms: Sequence[str], console: Console) -> None:
    """The terms the verdicts use (the intervals' levels, a round, a tier), once."""
    for term in terms:
        console.print(Text(f"  {term}", style="dim"))


def print_verdicts(verdicts: Sequence[VerdictLine], console: Console) -> None:
    """Each verdict with its warning and caveats; a caveat every verdict shares is said
    once, at the end."""
    shared = shared_caveats(verdicts)
    for v in verdicts:
        console.print(Text(f"{v.title}: ", style="bold") + Text(v.text))
        if v.warning:
            console.print(Text(f"  ⚠ {v.warning}", style="red bold"))
        for caveat in v.caveats:
            if caveat not in shared:
                console.print(Text(f"  ⓘ {caveat}", style="yellow"))
    for caveat in shared:
        console.print(Text(f"ⓘ every measurement: {caveat}", style="yellow"))
