"""Filesystem recipes: how each filesystem is made, and whether this machine can.

A recipe knows its mkfs tool and the flags that make mkfs non-interactive;
everything else (user mkfs options, mount options) comes from the plan.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

from pgfsbench import proc


@dataclass(frozen=True)
class Recipe:
    fs: str
    mkfs_tool: str
    force_flags: tuple[str, ...]  # overwrite without asking: we created the image
    apt_package: str
    min_size_mb: int  # below this mkfs refuses (or the result is useless)
    # Written but never run on a machine whose kernel has the filesystem: the report
    # and doctor say so until someone runs it.
    untested: bool = False

    def mkfs_argv(self, device: str, options: list[str]) -> list[str]:
        tool = proc.which(self.mkfs_tool) or self.mkfs_tool
        return [tool, *self.force_flags, *options, device]


RECIPES: dict[str, Recipe] = {
    r.fs: r
    for r in (
        Recipe("ext2", "mkfs.ext2", ("-F",), "e2fsprogs", 16),
        Recipe("ext3", "mkfs.ext3", ("-F",), "e2fsprogs", 16),
        Recipe("ext4", "mkfs.ext4", ("-F",), "e2fsprogs", 16),
        Recipe("xfs", "mkfs.xfs", ("-f",), "xfsprogs", 300),
        Recipe("btrfs", "mkfs.btrfs", ("-f",), "btrfs-progs", 128),
        Recipe("f2fs", "mkfs.f2fs", ("-f",), "f2fs-tools", 64, untested=True),
    )
}


def kernel_filesystems() -> set[str]:
    """Filesystems the running kernel can mount now or by loading its module."""
    names = set()
    for line in Path("/proc/filesystems").read_text().splitlines():
        names.add(line.split()[-1])
    moddir = Path("/lib/modules") / platform.release() / "kernel/fs"
    if moddir.is_dir():
        names.update(p.name for p in moddir.iterdir())
    # ext2/ext3 are served by the ext4 driver on modern kernels.
    if "ext4" in names:
        names.update({"ext2", "ext3"})
    return names


def unavailable_reason(fs: str) -> str | None:
    """Why ``fs`` cannot be used on this machine, with the fix; None if it can."""
    recipe = RECIPES.get(fs)
    if recipe is None:
        return f"no recipe for filesystem '{fs}' (known: {', '.join(sorted(RECIPES))})"
    if fs not in kernel_filesystems():
        return f"the running kernel ({platform.release()}) does not support {fs}"
    if proc.which(recipe.mkfs_tool) is None:
        return f"{recipe.mkfs_tool} is missing: apt-get install {recipe.apt_package}"
    return None


def can_use_loop_devices() -> bool:
    return os.geteuid() == 0 and Path("/dev/loop-control").exists() \
        and proc.which("losetup") is not None
