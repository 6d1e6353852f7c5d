"""Mkfs and mount options that name a device: a target formats only its own device.

Checked whatever the target's filesystem, with every recipe's device-naming keys
together: a misplaced option is refused too, not passed on to a tool that might
take it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable

from pgfsbench.filesystems.registry import recipes


def _is_block_device(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def device_options(options: Iterable[str]) -> list[str]:
    """The mkfs or mount options that name a device other than the target's own: by a
    key that takes a device, a /dev path, or any path that is a block device here."""
    keys = {k for r in recipes() for k in r.device_option_keys}
    found = []
    for option in options:
        pieces = re.split(r"[=,:]", option)
        if (
            any(key in option for key in keys)
            or "/dev/" in option
            or any(p.startswith("/") and _is_block_device(p) for p in pieces)
        ):
            found.append(option)
    return found
