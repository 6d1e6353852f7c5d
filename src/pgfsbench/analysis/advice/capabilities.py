"""What each target's filesystem offers PostgreSQL: a reflink clone of a database
(``CREATE DATABASE ... STRATEGY = FILE_COPY`` with ``file_copy_method = clone``), a
snapshot of the running cluster, and transparent compression.

From what the campaign measured where it has it (the clone-db, fs-snapshot and
compression workloads' stored metrics), else from the filesystem's recipe (its
``offers``: what the filesystem as made offers, read from its mount options and
geometry), marked "not measured". Each capability carries what a DBA must know before
relying on it: its crash-safety and restore note.

A pure function of the stored campaign, for the report and ``advise`` (every format).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pgfsbench.filesystems.recipe import CAPABILITIES, CLONE, COMPRESSION, SNAPSHOT
from pgfsbench.filesystems.registry import find

if TYPE_CHECKING:
    from pgfsbench.store.read import Campaign, StoredRun, StoredTarget

MEASURED, NOT_MEASURED = "measured", "not measured"

# What a DBA must know before relying on each (the workloads' docstrings say the same).
NOTES = {
    CLONE: "a cloned database is an ordinary database (the CREATE DATABASE is WAL-logged "
    "and checkpointed); its shared blocks are copied on the first write to them, so later "
    "writes take the space then",
    SNAPSHOT: "crash-consistent (restored, PostgreSQL replays its WAL as after a power cut) "
    "only with the data directory and its WAL in the one snapshot; it holds no backup "
    "label, so it is no base backup for point-in-time recovery unless taken between "
    "pg_backup_start and pg_backup_stop",
    COMPRESSION: "transparent to PostgreSQL: crash safety is unchanged; a backup or "
    "restore moves the logical bytes, so the place it lands needs room for them",
}
# The workload that measures each.
WORKLOADS = {CLONE: "clone-db", SNAPSHOT: "fs-snapshot", COMPRESSION: "compression"}


@dataclass
class Capability:
    name: str  # CLONE, SNAPSHOT or COMPRESSION
    offered: bool | None  # None: not known
    status: str  # MEASURED or NOT_MEASURED
    text: str  # what was measured, or the recipe's fact
    note: str  # its crash-safety and restore note
    workload: str  # the workload that measures it

    def summary(self) -> str:
        """'yes, measured: ...' / 'no, not measured: ...' in one phrase."""
        word = {True: "yes", False: "no", None: "not known"}[self.offered]
        return f"{word} ({self.status}): {self.text}"


@dataclass
class TargetCapabilities:
    target: str
    fs: str | None
    capabilities: list[Capability] = field(default_factory=list)

    def get(self, name: str) -> Capability | None:
        return next((c for c in self.capabilities if c.name == name), None)


def _last_values(runs: list[StoredRun], workload: str) -> dict[str, float | None] | None:
    """The metric values of the target's last counted run of ``workload``, or None."""
    done = [r for r in runs if r.workload == workload and r.status == "ok" and r.metrics]
    if not done:
        return None
    last = max(done, key=lambda r: (r.repetition, r.id))
    return {m.name: m.value for m in last.metrics}


def _notes(runs: list[StoredRun], workload: str, metric: str) -> str:
    for r in sorted(runs, key=lambda r: (r.repetition, r.id), reverse=True):
        if r.workload == workload:
            for m in r.metrics:
                if m.name == metric and m.note:
                    return m.note
    return ""


def _mb(x: float | None) -> str:
    return "?" if x is None else f"{x:,.1f} MB"


def _seconds(x: float | None) -> str:
    if x is None:
        return "?"
    return f"{x * 1000:.3g} ms" if x < 1 else f"{x:.3g} s"


def _clone(v: dict[str, float | None], note: str) -> tuple[bool | None, str]:
    reflink = v.get("clone_db.reflink")
    used, template = v.get("clone_db.clone_mb_used"), v.get("clone_db.template_mb")
    if reflink is None:
        why = note.split("; ", 1)[-1] if note else "the server refused file_copy_method=clone"
        return False, why
    if reflink:
        return True, f"clone worked: {_mb(used)} for a {_mb(template)} template (blocks shared)"
    return False, f"fell back to copy: {_mb(used)} for a {_mb(template)} template"


def _snapshot(v: dict[str, float | None], note: str) -> tuple[bool | None, str]:
    if not v.get("fs_snapshot.offered"):
        why = note.split("; ", 1)[-1] if note else "not offered"
        return False, why
    seconds, backup = v.get("fs_snapshot.seconds"), v.get("fs_snapshot.basebackup_s")
    versus = f" against pg_basebackup's {_seconds(backup)}" if backup is not None else ""
    used = _mb(v.get("fs_snapshot.mb_used"))
    return True, f"snapshot of the running cluster in {_seconds(seconds)}, {used}{versus}"


def _compression(v: dict[str, float | None], note: str) -> tuple[bool | None, str]:
    ratio = v.get("compression.ratio")
    physical, logical = v.get("compression.physical_mb"), v.get("compression.logical_mb")
    if ratio is None:
        return None, "no ratio recorded"
    stored = f"ratio {ratio:.2f}x: {_mb(physical)} on disk for {_mb(logical)}"
    if not v.get("compression.compressed"):
        why = note.split("; ", 1)[-1] if note else "no compression"
        return False, f"{stored} ({why})"
    return True, stored


_MEASURE = {CLONE: _clone, SNAPSHOT: _snapshot, COMPRESSION: _compression}
# The metric whose note says why a capability was not offered.
_NOTE_METRIC = {
    CLONE: "clone_db.reflink",
    SNAPSHOT: "fs_snapshot.offered",
    COMPRESSION: "compression.compressed",
}


def target_capabilities(t: StoredTarget, runs: list[StoredRun]) -> TargetCapabilities:
    recipe = find(t.fs)
    facts = recipe.offers(t.provenance or {}) if recipe else {}
    out = TargetCapabilities(t.name, t.fs)
    for name in CAPABILITIES:
        workload = WORKLOADS[name]
        values = _last_values(runs, workload)
        if values is not None:
            offered, text = _MEASURE[name](values, _notes(runs, workload, _NOTE_METRIC[name]))
            out.capabilities.append(
                Capability(name, offered, MEASURED, text, NOTES[name], workload)
            )
            continue
        fact = facts.get(name)
        if fact is not None:
            offered, text = fact.offered, fact.how
        else:
            offered = None
            text = f"{t.fs} says nothing of it" if recipe else "a filesystem pgfsbench did not make"
        out.capabilities.append(
            Capability(name, offered, NOT_MEASURED, text, NOTES[name], workload)
        )
    return out


def unmeasured_workloads(found: list[TargetCapabilities]) -> list[str]:
    """The workloads that would measure what ``found`` only has from the recipes."""
    return list(
        dict.fromkeys(c.workload for t in found for c in t.capabilities if c.status != MEASURED)
    )


def offered_notes(found: list[TargetCapabilities]) -> dict[str, str]:
    """The note of each capability some target offers (or may): what to know first."""
    return {c.name: c.note for t in found for c in t.capabilities if c.offered is not False}


def capabilities(campaign: Campaign) -> list[TargetCapabilities]:
    """Per target that was made (not skipped), what its filesystem offers PostgreSQL."""
    by_target: dict[str, list[StoredRun]] = {}
    for r in campaign.runs:
        by_target.setdefault(r.target, []).append(r)
    return [
        target_capabilities(t, by_target.get(t.name, []))
        for t in campaign.targets
        if t.provenance or by_target.get(t.name)
    ]
