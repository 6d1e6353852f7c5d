"""Reading back what the kernel really mounted (/proc/self/mountinfo).

The one parser of mountinfo: mounting reads its options back, the device safety
check its device numbers.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MountEntry:
    mount_point: str
    fs_type: str
    source: str
    mount_options: str  # per-mount options (rw,noatime,...)
    super_options: str  # filesystem options (the ones that say barrier, logbsize, ...)
    dev: int  # st_dev of the mounted filesystem (field 3; anonymous for btrfs)
    root: str = "/"  # the part of the filesystem mounted there (a bind or cgroup subtree)

    @property
    def options(self) -> list[str]:
        """Per-mount and filesystem options together, as the kernel reports them."""
        seen: list[str] = []
        for opt in (self.mount_options + "," + self.super_options).split(","):
            if opt and opt not in seen:
                seen.append(opt)
        return seen


def unescape(field: str) -> str:
    # mountinfo (and /proc/swaps) escape space, tab, newline and backslash as octal.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


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
        major, _, minor = fields[2].partition(":")
        if not (major.isdigit() and minor.isdigit()):
            continue
        entries.append(
            MountEntry(
                mount_point=unescape(fields[4]),
                fs_type=tail[0],
                source=unescape(tail[1]),
                mount_options=fields[5],
                super_options=tail[2] if len(tail) > 2 else "",
                dev=os.makedev(int(major), int(minor)),
                root=unescape(fields[3]),
            )
        )
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
