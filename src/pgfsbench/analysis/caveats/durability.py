"""Is a target crash-safe? Computed from what the kernel and PostgreSQL report.

The client-scaling study shows ``barrier=0`` winning on tps; a DBA must see in the same place
that it can lose the database on power loss. The inputs are the *effective*
mount options (read back from the kernel) and PostgreSQL's changed settings,
so a setting the kernel ignored does not count. What a filesystem adds (atomic
page writes, options with a cost) comes from its recipe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pgfsbench.filesystems.registry import find

if TYPE_CHECKING:
    from pgfsbench.store.read import Campaign

SAFE, MAY_LOSE_COMMITS, UNSAFE = "safe", "may lose recent commits", "not crash-safe"
_RANK = {SAFE: 0, MAY_LOSE_COMMITS: 1, UNSAFE: 2}


@dataclass
class Durability:
    level: str = SAFE
    reasons: list[str] = field(default_factory=list)

    def add(self, level: str, reason: str) -> None:
        self.reasons.append(reason)
        if _RANK[level] > _RANK[self.level]:
            self.level = level


# The class in a sentence about a target: "ext4-nobarrier is not crash-safe".
_PHRASE = {
    SAFE: "is crash-safe",
    MAY_LOSE_COMMITS: "may lose its most recent commits on a crash",
    UNSAFE: "is not crash-safe",
}


def phrase(level: str) -> str:
    """'is not crash-safe', 'may lose its most recent commits on a crash'."""
    return _PHRASE.get(level, f"is {level}")


def stated(target: str, d: Durability) -> str:
    """'ext4-seed may lose its most recent commits on a crash: synchronous_commit=off:
    ...': the class and its first reason, in English."""
    reason = f": {d.reasons[0]}" if d.reasons else ""
    return f"{target} {_PHRASE[d.level]}{reason}"


def _off(value: str | None) -> bool:
    return value is not None and value.lower() in ("off", "false", "0", "no")


def classify(
    fs: str, mount_options: list[str], pg_settings: dict[str, str], facts: dict | None = None
) -> Durability:
    """``facts``: what the filesystem's own tools report of it (the geometry), for the
    properties that are not mount options (zfs sync=disabled)."""
    d = Durability()
    opts = set(mount_options)
    recipe = find(fs)  # None for a directory target on a filesystem pgfsbench does not make
    if "nobarrier" in opts or "barrier=0" in opts:
        d.add(
            UNSAFE,
            "mount option nobarrier/barrier=0: the device's write cache is never "
            "flushed, so a power loss can corrupt the filesystem and the database",
        )
    if _off(pg_settings.get("fsync")):
        d.add(
            UNSAFE,
            "fsync=off: PostgreSQL never forces data to disk; a crash can corrupt the cluster",
        )
    if _off(pg_settings.get("full_page_writes")):
        atomic = recipe.atomic_writes if recipe else None
        turned_off = sorted(opts & atomic.unless) if atomic else []
        if atomic and not turned_off:
            d.reasons.append(
                f"full_page_writes=off relies on {atomic.how} for atomic 8 kB page writes"
            )
        else:
            with_ = f" with {', '.join(turned_off)}" if turned_off else ""
            d.add(
                UNSAFE,
                "full_page_writes=off without an atomic-write filesystem "
                f"({fs}{with_}): a torn page after a crash cannot be repaired",
            )
    if _off(pg_settings.get("synchronous_commit")):
        d.add(
            MAY_LOSE_COMMITS,
            "synchronous_commit=off: the last few hundred ms of commits "
            "can be lost on a crash; the database stays consistent",
        )
    for option, note in recipe.durability_notes.items() if recipe else ():
        if option in opts:
            d.reasons.append(note)
    for reason in recipe.not_crash_safe(facts or {}) if recipe else ():
        d.add(UNSAFE, reason)
    return d


def durabilities(campaign: Campaign) -> dict[str, Durability | None]:
    """Each target of a stored campaign classified, by name."""
    return {t.name: target_durability(t.provenance, t.fs) for t in campaign.targets}


def target_durability(provenance: dict, fs: str) -> Durability | None:
    """Classify a stored target; None when it never got as far as being mounted."""
    if "effective_mount_options" not in provenance:
        return None
    geometry = provenance.get("geometry")
    facts = geometry.get("facts") if isinstance(geometry, dict) else None
    return classify(
        fs,
        list(provenance.get("effective_mount_options") or []),
        dict(provenance.get("postgres_settings") or {}),
        facts if isinstance(facts, dict) else None,
    )
