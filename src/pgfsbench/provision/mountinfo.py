"""Reading back what the kernel really mounted (/proc/self/mountinfo)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MountEntry:
    mount_point: str
    fs_type: str
    source: str
    mount_options: str  # per-mount options (rw,noatime,...)
    super_options: str  # filesystem options (the ones that say barrier, logbsize, ...)
    root: str = "/"  # the part of the filesystem mounted there (a bind or cgroup subtree)

    @property
    def options(self) -> list[str]:
        """Per-mount and filesystem options together, as the kernel reports them."""
        seen: list[str] = []
        for opt in (self.mount_options + "," + self.super_options).split(","):
            if opt and opt not in seen:
                seen.append(opt)
        return seen


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal.
    return (field.replace("\\040", " ").replace("\\011", "\t")
            .replace("\\012", "\n").replace("\\134", "\\"))


def parse_mountinfo(text: str) -> list[MountEntry]:
    entries = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields = left.split()
        tail = right.split()
        if len(fields) < 6 or len(tail) < 2:
            continue
        entries.append(MountEntry(
            mount_point=_unescape(fields[4]),
            fs_type=tail[0],
            source=_unescape(tail[1]),
            mount_options=fields[5],
            super_options=tail[2] if len(tail) > 2 else "",
            root=_unescape(fields[3]),
        ))
    return entries


def read_mounts() -> list[MountEntry]:
    return parse_mountinfo(Path("/proc/self/mountinfo").read_text())


def mount_points() -> set[str]:
    return {e.mount_point for e in read_mounts()}


def mount_of(path: str | Path) -> MountEntry:
    """The mount that holds ``path`` (the longest mount point prefix; last wins)."""
    real = os.path.realpath(path)
    best: MountEntry | None = None
    for entry in read_mounts():
        mp = entry.mount_point
        if real == mp or real.startswith(mp.rstrip("/") + "/") or mp == "/":
            if best is None or len(mp) >= len(best.mount_point):
                best = entry
    if best is None:
        raise LookupError(f"no mount holds {path}")
    return best
