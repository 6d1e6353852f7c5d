"""Which block device is under a loop device's image file (the "backing" disk)."""

from __future__ import annotations

import os
from pathlib import Path


def device_of(path: Path, sys: Path = Path("/sys")) -> str | None:
    """The /dev node of the block device holding ``path``, or None (not a block device:
    tmpfs, overlayfs, NFS)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _devname(sys / "dev" / "block" / f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}")


def _devname(node: Path) -> str | None:
    try:
        for line in (node / "uevent").read_text().splitlines():
            key, _, value = line.partition("=")
            if key == "DEVNAME" and value:
                return f"/dev/{value}"
    except OSError:
        return None
    return None


def backing_device(loop_device: str, sys: Path = Path("/sys")) -> str | None:
    """'/dev/loop3' → the /dev node of the block device holding its image file
    ('/dev/vda1'), or None when that is not a block device (tmpfs, overlayfs, NFS)
    or the loop device has no backing file."""
    name = os.path.basename(os.path.realpath(loop_device))
    try:
        image = (sys / "block" / name / "loop" / "backing_file").read_text().strip()
        st = os.stat(image)
    except OSError:
        return None
    return _devname(sys / "dev" / "block" / f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
