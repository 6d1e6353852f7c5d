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
    # mke2fs -E options added unless the plan sets them itself. A fresh ext* filesystem
    # otherwise zeroes its inode tables and journal in the background after mounting
    # (ext4lazyinit), writing to the device in the middle of the measurements.
    extended_defaults: tuple[str, ...] = ()

    def mkfs_argv(self, device: str, options: list[str]) -> list[str]:
        tool = proc.which(self.mkfs_tool) or self.mkfs_tool
        return [tool, *self.force_flags, *self._with_extended_defaults(options), device]

    def _with_extended_defaults(self, options: list[str]) -> list[str]:
        if not self.extended_defaults:
            return list(options)
        options = list(options)
        # mke2fs keeps only the last -E, so defaults join the plan's own -E list.
        where = max((i for i, o in enumerate(options[:-1]) if o == "-E"), default=None)
        given = options[where + 1].split(",") if where is not None else []
        extra = [d for d in self.extended_defaults if d.split("=")[0] not in
                 {g.split("=")[0] for g in given}]
        if not extra:
            return options
        if where is None:
            return [*options, "-E", ",".join(extra)]
        options[where + 1] = ",".join([*given, *extra])
        return options


_NO_LAZY_INIT = ("lazy_itable_init=0", "lazy_journal_init=0")

RECIPES: dict[str, Recipe] = {
    r.fs: r
    for r in (
        Recipe("ext2", "mkfs.ext2", ("-F",), "e2fsprogs", 16, extended_defaults=_NO_LAZY_INIT),
        Recipe("ext3", "mkfs.ext3", ("-F",), "e2fsprogs", 16, extended_defaults=_NO_LAZY_INIT),
        Recipe("ext4", "mkfs.ext4", ("-F",), "e2fsprogs", 16, extended_defaults=_NO_LAZY_INIT),
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
