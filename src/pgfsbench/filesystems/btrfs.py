"""btrfs: made by mkfs.btrfs, described by btrfs inspect-internal and filesystem df."""

from __future__ import annotations

import re

from pgfsbench.filesystems.optionvalues import integer, level, one_of, size, words
from pgfsbench.filesystems.recipe import (
    CLONE,
    COMPRESSION,
    SNAPSHOT,
    AtomicWrites,
    GeometryReader,
    Offer,
    Recipe,
    mount_options,
)
from pgfsbench.filesystems.textfacts import number

MOUNT_OPTIONS = frozenset(
    {
        "acl",
        "noacl",
        "autodefrag",
        "noautodefrag",
        "barrier",
        "nobarrier",
        "check_int",
        "clear_cache",
        "commit",
        "compress",
        "compress-force",
        "datacow",
        "nodatacow",
        "datasum",
        "nodatasum",
        "degraded",
        "device",
        "discard",
        "nodiscard",
        "enospc_debug",
        "fatal_errors",
        "flushoncommit",
        "noflushoncommit",
        "max_inline",
        "metadata_ratio",
        "rescan_uuid_tree",
        "rescue",
        "skip_balance",
        "space_cache",
        "nospace_cache",
        "ssd",
        "ssd_spread",
        "nossd",
        "nossd_spread",
        "subvol",
        "subvolid",
        "thread_pool",
        "treelog",
        "notreelog",
        "usebackuproot",
        "user_subvol_rm_allowed",
    }
)

# The values the btrfs driver parses (fs/btrfs/super.c, btrfs(5)).
_COMPRESS = level("zlib", "lzo", "zstd", "no", "none", leveled=("zlib", "zstd"))
MOUNT_OPTION_VALUES = {
    "commit": integer(what="a whole number of seconds"),
    "compress": _COMPRESS,
    "compress-force": _COMPRESS,
    "space_cache": one_of("v1", "v2"),
    "discard": one_of("sync", "async"),
    "fatal_errors": one_of("bug", "panic"),
    "max_inline": size(),
    "metadata_ratio": integer(),
    "thread_pool": integer(1),
    "subvolid": integer(),
    "rescue": words(
        ":",
        "usebackuproot",
        "nologreplay",
        "ignorebadroots",
        "ibadroots",
        "ignoredatacsums",
        "idatacsums",
        "ignoremetacsums",
        "imetacsums",
        "ignoresuperflags",
        "isuperflags",
        "all",
    ),
}

# From Documentation/admin-guide/btrfs.rst, checked on kernel 6.18.
KERNEL_DEFAULTS = frozenset(
    {
        "compress=no",
        "compress-force=no",
        "datacow",
        "datasum",
        "barrier",
        "commit=30",
        "noautodefrag",
        "treelog",
        "noflushoncommit",
        "acl",
        "space_cache=v2",
        "nossd_spread",
    }
)

# The kernel lists only the stronger option.
IMPLIED_BY: dict[str, tuple[str, ...]] = {
    "nodatasum": ("nodatacow",),
    "ssd": ("ssd_spread",),
    "compress": ("compress-force",),
}

_BTRFS_KEYS = (
    "csum_type",
    "csum_size",
    "sectorsize",
    "nodesize",
    "stripesize",
    "num_devices",
    "total_bytes",
    "compat_flags",
    "compat_ro_flags",
    "incompat_flags",
)


def parse_btrfs_super(text: str) -> dict:
    """``dump-super`` → ``{"nodesize": 4096, "csum_type": "crc32c", "incompat_flags": "..."}``.

    Flag words come on the lines after their hex value, inside ``( ... | ... )``.
    """
    facts: dict = {}
    last: str | None = None
    for line in text.splitlines():
        if line.startswith(("\t", " ")) and last in (
            "compat_flags",
            "compat_ro_flags",
            "incompat_flags",
        ):
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


# --- profiles over several devices ----------------------------------------------------

# The fewest devices mkfs.btrfs (btrfs-progs 6.2) accepts for each profile: what its
# "have N devices but M devices are required" errors say (tests/fixtures/mkfs_btrfs_error_*).
PROFILE_MIN_DEVICES = {
    "single": 1,
    "dup": 1,
    "raid0": 1,
    "raid1": 2,
    "raid1c3": 3,
    "raid1c4": 4,
    "raid10": 2,
    "raid5": 2,
    "raid6": 3,
}
_PROFILE_FLAGS = {"-d": "data", "--data": "data", "-m": "metadata", "--metadata": "metadata"}


def profiles(options: list[str]) -> dict[str, str]:
    """The -d/-m profiles mkfs options ask for: ``{"data": "raid0", "metadata": "raid1"}``."""
    found = {}
    for i, option in enumerate(options):
        flag, eq, value = option.partition("=")
        if flag in _PROFILE_FLAGS and (eq or i + 1 < len(options)):
            found[_PROFILE_FLAGS[flag]] = (value if eq else options[i + 1]).lower()
    return found


def profile_problems(options: list[str], members: int) -> list[str]:
    problems = []
    for what, profile in profiles(options).items():
        need = PROFILE_MIN_DEVICES.get(profile)
        if need is None:
            problems.append(
                f"btrfs has no {what} profile '{profile}' (it has {', '.join(PROFILE_MIN_DEVICES)})"
            )
        elif members < need:
            problems.append(
                f"btrfs {what} profile {profile} needs {need} devices, the target "
                f"has {members}: give it {need} or more images (or devices)"
            )
    return problems


def scan_members(devices: list[str]) -> list[list[str]]:
    """mkfs.btrfs registers the members under the names it was given (for a device
    target, /proc/self/fd/N); a scan registers them by their real paths for mount."""
    return [["btrfs", "device", "scan", *devices]] if len(devices) > 1 else []


def parse_btrfs_show(text: str) -> dict:
    """``btrfs filesystem show`` → ``{"total_devices": 3, "devices": "/dev/loop3 ..."}``."""
    facts: dict = {}
    paths = []
    for line in text.splitlines():
        if m := re.search(r"Total devices (\d+)", line):
            facts["total_devices"] = int(m.group(1))
        if m := re.match(r"\s*devid\s+(\d+)\s+size\s+(\S+)\s+used\s+(\S+)\s+path\s+(\S+)", line):
            paths.append(m.group(4))
            facts[f"devid.{m.group(1)}.size"] = m.group(2)
    if paths:
        facts["devices"] = " ".join(paths)
    return facts


def geometry(device: str | None, mount_point: str | None) -> list[GeometryReader]:
    if not device:
        return []
    readers = [
        GeometryReader(["btrfs", "inspect-internal", "dump-super", str(device)], parse_btrfs_super)
    ]
    if mount_point:  # the chunk profiles live in the trees, not the superblock
        readers.append(
            GeometryReader(["btrfs", "filesystem", "df", str(mount_point)], parse_btrfs_df)
        )
        # every member device, by path, as the kernel has them now
        readers.append(
            GeometryReader(["btrfs", "filesystem", "show", str(mount_point)], parse_btrfs_show)
        )
    return readers


def offers(provenance: dict) -> dict[str, Offer]:
    """btrfs shares extents (reflink) and snapshots subvolumes; it compresses when mounted
    with compress= (copy-on-write files only: not with nodatacow)."""
    options = mount_options(provenance)
    compress = next(
        (o for o in options if o.split("=")[0] in ("compress", "compress-force") and "=" in o),
        None,
    )
    nodatacow = "nodatacow" in options
    if compress and compress.endswith("=no"):
        compress = None
    return {
        CLONE: Offer(True, "btrfs shares extents (reflink)"),
        SNAPSHOT: Offer(True, "btrfs snapshots the subvolume holding the data directory"),
        COMPRESSION: (
            Offer(False, f"{compress} has no effect with nodatacow")
            if compress and nodatacow
            else Offer(True, f"mounted {compress}")
            if compress
            else Offer(False, "mounted without compress=")
        ),
    }


RECIPES = (
    Recipe(
        fs="btrfs",
        mkfs_tool="mkfs.btrfs",
        force_flags=("-f",),
        apt_package="btrfs-progs",
        min_size_mb=128,
        spans_devices=True,
        mkfs_problems=profile_problems,
        before_mount=scan_members,
        device_option_keys=frozenset({"device="}),
        log_device=None,
        mount_options=MOUNT_OPTIONS,
        mount_option_values=MOUNT_OPTION_VALUES,
        kernel_defaults=KERNEL_DEFAULTS,
        implied_by=IMPLIED_BY,
        geometry=geometry,
        atomic_writes=AtomicWrites("btrfs copy-on-write", unless=frozenset({"nodatacow"})),
        durability_notes={"nodatacow": "nodatacow turns off btrfs data checksums for these files"},
        fsck=lambda device: ["btrfs", "check", "--readonly", device],
        forget_device=lambda device: ["btrfs", "device", "scan", "--forget", device],
        offers=offers,
    ),
)
