"""Whether this machine can make a filesystem: kernel support and the recipe's tools.

What each filesystem is (its mkfs, options, log device) is in its recipe
(``pgfsbench.filesystems``); this module asks the running system about it.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from pgfsbench import proc
from pgfsbench.filesystems.registry import UnknownFilesystem, recipe, recipes


def kernel_filesystems() -> set[str]:
    """Filesystems the running kernel can mount now or by loading its module."""
    names = set()
    for line in Path("/proc/filesystems").read_text().splitlines():
        names.add(line.split()[-1])
    moddir = Path("/lib/modules") / platform.release() / "kernel/fs"
    if moddir.is_dir():
        names.update(p.name for p in moddir.iterdir())
    # a driver may serve several (ext2 and ext3 by the ext4 driver on modern kernels)
    names.update(r.fs for r in recipes() if r.driver in names)
    return names


def unavailable_reason(fs: str) -> str | None:
    """Why ``fs`` cannot be used on this machine, with the fix; None if it can."""
    try:
        r = recipe(fs)
    except UnknownFilesystem as exc:
        return str(exc)
    if r.pooled:  # no mkfs, no kernel driver needed: zfs-fuse serves it in user space
        from pgfsbench.provision.zfs_pool import unavailable_reason as zfs_unavailable

        return zfs_unavailable()
    if fs not in kernel_filesystems():
        return f"the running kernel ({platform.release()}) does not support {fs}"
    if proc.which(r.mkfs_tool) is None:
        return f"{r.mkfs_tool} is missing: apt-get install {r.apt_package}"
    return None


def tool_path(argv: list[str]) -> list[str]:
    """A recipe's command with its tool found (also in the sbin dirs root's PATH may lack)."""
    return [proc.which(argv[0]) or argv[0], *argv[1:]]


def can_use_loop_devices() -> bool:
    return (
        os.geteuid() == 0
        and Path("/dev/loop-control").exists()
        and proc.which("losetup") is not None
    )
