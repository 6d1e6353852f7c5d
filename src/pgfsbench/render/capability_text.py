"""What each filesystem offers PostgreSQL (analysis/advice/capabilities.py) in the words every
text output shares: ``advise`` (text and conf) and ``export --format markdown``.

Targets whose capabilities read the same are one group ("ext4 (a, b, c)"); a group
nothing measured is one short line ("no reflink clone, no snapshot, no compression"),
a group with a measurement has a line per capability; the workloads that would measure
what was not are named once, and each capability's note once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pgfsbench.analysis.advice.capabilities import MEASURED, offered_notes, unmeasured_workloads

if TYPE_CHECKING:
    from pgfsbench.analysis.advice.capabilities import Capability, TargetCapabilities

TITLE = "What each filesystem offers PostgreSQL"
EXAMPLE = "examples/fs-features.toml"


@dataclass
class OfferGroup:
    who: str  # "ext4 (a, b, c)", or "ext4" for a target named after its filesystem
    short: str | None  # nothing measured: the capabilities in one phrase
    details: list[str]  # something measured: a line per capability


def heading(found: list[TargetCapabilities]) -> str:
    if measured_any(found):
        return f"{TITLE} (measured, or from its facts)"
    return f"{TITLE} (from its facts; not measured)"


def groups(found: list[TargetCapabilities]) -> list[OfferGroup]:
    """The targets whose capabilities read the same, together, in plan order; where
    others were measured, an unmeasured group's ``who`` says so ("xfs, not measured")."""
    by_lines: dict[tuple, list[TargetCapabilities]] = {}
    for t in found:
        key = (t.fs, tuple((c.name, c.offered, c.status, c.text) for c in t.capabilities))
        by_lines.setdefault(key, []).append(t)
    mixed = measured_any(found)
    out = []
    for members in by_lines.values():
        first = members[0]
        fs = first.fs or "directory"
        names = [t.target for t in members]
        who = fs if names == [fs] else f"{fs} ({', '.join(names)})"
        caps = first.capabilities
        if any(c.status == MEASURED for c in caps):
            out.append(OfferGroup(who, None, [f"{c.name}: {c.summary()}" for c in caps]))
        else:
            short = ", ".join(_phrase(c, fs) for c in caps)
            out.append(OfferGroup(who + (", not measured" if mixed else ""), short, []))
    return out


def hint(found: list[TargetCapabilities]) -> str | None:
    """Which workloads would measure what only the facts say, and the plan that runs them."""
    workloads = unmeasured_workloads(found)
    if not workloads:
        return None
    plural = len(workloads) > 1
    named = " and ".join([", ".join(workloads[:-1]), workloads[-1]] if plural else workloads)
    if plural:
        return f"the {named} workloads measure them; {EXAMPLE} runs them"
    return f"the {named} workload measures it; {EXAMPLE} runs it"


def notes(found: list[TargetCapabilities]) -> dict[str, str]:
    """What to know first about each capability some target offers (or may)."""
    return offered_notes(found)


def _phrase(c: Capability, fs: str) -> str:
    """'no snapshot', 'reflink clone', 'compression not known (...)': with the fact where
    it says more than the filesystem's nature ('mounted without compress=', not 'ext4
    does not compress')."""
    word = {True: c.name, False: f"no {c.name}", None: f"{c.name} not known"}[c.offered]
    generic = c.offered is not None and c.text.lower().startswith(fs.lower() + " ")
    return word if generic or not c.text else f"{word} ({c.text})"


def measured_any(found: list[TargetCapabilities]) -> bool:
    return any(c.status == MEASURED for t in found for c in t.capabilities)
