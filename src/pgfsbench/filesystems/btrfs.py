"""btrfs: made by mkfs.btrfs, described by btrfs inspect-internal and filesystem df."""

from __future__ import annotations

import re

from pgfsbench.filesystems.recipe import AtomicWrites, GeometryReader, Recipe
from pgfsbench.filesystems.textfacts import number

MOUNT_OPTIONS = frozenset({
    "acl", "noacl", "autodefrag", "noautodefrag", "barrier", "nobarrier", "check_int",
    "clear_cache", "commit", "compress", "compress-force", "datacow", "nodatacow",
    "datasum", "nodatasum", "degraded", "device", "discard", "nodiscard", "enospc_debug",
    "fatal_errors", "flushoncommit", "noflushoncommit", "max_inline", "metadata_ratio",
    "rescan_uuid_tree", "rescue", "skip_balance", "space_cache", "nospace_cache", "ssd",
    "ssd_spread", "nossd", "nossd_spread", "subvol", "subvolid", "thread_pool",
    "treelog", "notreelog", "usebackuproot", "user_subvol_rm_allowed",
})

# From Documentation/admin-guide/btrfs.rst, checked on kernel 6.18.
KERNEL_DEFAULTS = frozenset({
    "compress=no", "compress-force=no", "datacow", "datasum", "barrier", "commit=30",
    "noautodefrag", "treelog", "noflushoncommit", "acl", "space_cache=v2", "nossd_spread",
})

# The kernel lists only the stronger option.
IMPLIED_BY = {"nodatasum": ("nodatacow",), "ssd": ("ssd_spread",),
              "compress": ("compress-force",)}

_BTRFS_KEYS = ("csum_type", "csum_size", "sectorsize", "nodesize", "stripesize",
               "num_devices", "total_bytes", "compat_flags", "compat_ro_flags",
               "incompat_flags")


def parse_btrfs_super(text: str) -> dict:
    """``dump-super`` → ``{"nodesize": 4096, "csum_type": "crc32c", "incompat_flags": "..."}``.

    Flag words come on the lines after their hex value, inside ``( ... | ... )``.
    """
    facts: dict = {}
    last: str | None = None
    for line in text.splitlines():
        if line.startswith(("\t", " ")) and last in ("compat_flags", "compat_ro_flags",
                                                     "incompat_flags"):
            words = re.findall(r"[A-Z][A-Z0-9_]+", line)
            if words:
                facts[last] = " ".join(filter(None, [str(facts[last]), *words]))
            continue
        parts = line.split("\t")
        key, value = parts[0].strip(), " ".join(p for p in parts[1:] if p).strip()
        last = key
        if key not in _BTRFS_KEYS:
            continue
        if key == "csum_type":  # "0 (crc32c)"
            m = re.search(r"\((\w+)\)", value)
            facts[key] = m.group(1) if m else value
        elif key.endswith("flags"):
            facts[key] = ""  # the hex value says nothing a reader can use; words follow
        else:
            facts[key] = number(value)
    return facts


def parse_btrfs_df(text: str) -> dict:
    """``btrfs filesystem df`` → ``{"profile.data": "single", "profile.metadata": "DUP"}``."""
    facts: dict = {}
    for line in text.splitlines():
        m = re.match(r"^([\w+]+),\s*([\w-]+):", line.strip())
        if m and m.group(1) != "GlobalReserve":
            facts[f"profile.{m.group(1).lower()}"] = m.group(2)
    return facts


def geometry(device: str | None, mount_point: str | None) -> list[GeometryReader]:
    if not device:
        return []
    readers = [GeometryReader(["btrfs", "inspect-internal", "dump-super", str(device)],
                              parse_btrfs_super)]
    if mount_point:  # the chunk profiles live in the trees, not the superblock
        readers.append(GeometryReader(["btrfs", "filesystem", "df", str(mount_point)],
                                      parse_btrfs_df))
    return readers


RECIPES = (Recipe(
    fs="btrfs", mkfs_tool="mkfs.btrfs", force_flags=("-f",), apt_package="btrfs-progs",
    min_size_mb=128, device_option_keys=frozenset({"device="}),
    log_device=None, mount_options=MOUNT_OPTIONS,
    kernel_defaults=KERNEL_DEFAULTS, implied_by=IMPLIED_BY, geometry=geometry,
    atomic_writes=AtomicWrites("btrfs copy-on-write", unless=frozenset({"nodatacow"})),
    durability_notes={"nodatacow": "nodatacow turns off btrfs data checksums for these "
                                   "files"}),)
