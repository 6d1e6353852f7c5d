"""XFS: made by mkfs.xfs, described by xfs_info; its log can live on another device."""

from __future__ import annotations

import re

from pgfsbench.filesystems.optionvalues import integer, one_of, size
from pgfsbench.filesystems.recipe import (
    CLONE,
    GeometryReader,
    LogSetup,
    Offer,
    Recipe,
    StripeOptions,
    geometry_facts,
    no_snapshot_no_compression,
)
from pgfsbench.filesystems.textfacts import number


def external_log(mkfs_options: list[str], log_device: str, log_bytes: int) -> LogSetup:
    return LogSetup(
        before_mkfs=[],
        mkfs_options=[*mkfs_options, "-l", f"logdev={log_device},size={log_bytes}"],
        mount_options=[f"logdev={log_device}"],
    )


# --- stripe geometry (RAID, LVM stripes) -------------------------------------------------

_STRIPE_KEYS = ("sunit", "swidth", "su", "sw")


def _data_options(options: list[str]) -> list[str]:
    return [
        sub for i, o in enumerate(options[:-1]) if o == "-d" for sub in options[i + 1].split(",")
    ]


def stripe_given(options: list[str]) -> list[str]:
    return [sub for sub in _data_options(options) if sub.split("=")[0] in _STRIPE_KEYS]


def with_stripe(options: list[str], stripe_bytes: int, data_disks: int) -> list[str]:
    """sunit = stripe in 512-byte sectors, swidth = sunit × data disks (mkfs.xfs -d).

    The XFS-vs-ext4 study's 8 KiB × 3 stripe is sunit=16,swidth=48. Joined to the plan's last -d
    (mkfs.xfs refuses a suboption given twice, not two -d).
    """
    if stripe_given(options) or data_disks < 2:
        return list(options)
    sunit = stripe_bytes // 512
    extra = f"sunit={sunit},swidth={sunit * data_disks}"
    options = list(options)
    where = max((i for i, o in enumerate(options[:-1]) if o == "-d"), default=None)
    if where is None:
        return [*options, "-d", extra]
    options[where + 1] = f"{options[where + 1]},{extra}"
    return options


MOUNT_OPTIONS = frozenset(
    {
        "allocsize",
        "attr2",
        "noattr2",
        "dax",
        "filestreams",
        "ikeep",
        "noikeep",
        "inode32",
        "inode64",
        "largeio",
        "nolargeio",
        "logbufs",
        "logbsize",
        "logdev",
        "rtdev",
        "noalign",
        "norecovery",
        "nouuid",
        "noquota",
        "uquota",
        "usrquota",
        "quota",
        "uqnoenforce",
        "qnoenforce",
        "gquota",
        "grpquota",
        "gqnoenforce",
        "pquota",
        "prjquota",
        "pqnoenforce",
        "sunit",
        "swidth",
        "swalloc",
        "wsync",
        "discard",
        "nodiscard",
        "grpid",
        "bsdgroups",
        "nogrpid",
        "sysvgroups",
        # barrier/nobarrier were removed in Linux 4.19: the kernel refuses them.
    }
)

# The values the xfs driver parses (Documentation/admin-guide/xfs.rst).
MOUNT_OPTION_VALUES = {
    "logbsize": size(choices=(16384, 32768, 65536, 131072, 262144)),
    "logbufs": integer(2, 8),
    "allocsize": size(),
    "sunit": integer(what="a whole number of 512-byte sectors"),
    "swidth": integer(what="a whole number of 512-byte sectors"),
    "dax": one_of("always", "never", "inode"),
}

# From Documentation/admin-guide/xfs.rst, checked on kernel 6.18. attr2 is always on
# for v5 (crc=1) filesystems, and this kernel no longer lists it.
KERNEL_DEFAULTS = frozenset(
    {"nolargeio", "noikeep", "inode64", "logbufs=8", "noquota", "nogrpid", "attr2"}
)

_XFS_LINE = re.compile(r"^(\S+)?\s*=(.*)$")
_XFS_PAIR = re.compile(r"([a-z][\w-]*)=(\S+?)(?:,|\s|$)")


def parse_xfs_info(text: str) -> dict:
    """``xfs_info`` → ``{"meta-data.agcount": 4, "data.sunit": 2, "log.internal": True, ...}``.

    Keys are prefixed with their section because ``bsize``, ``sunit`` and
    ``sectsz`` appear in several. sunit/swidth are in filesystem blocks there
    (the mount options count 512-byte sectors): ``*_bytes`` says it plainly.
    """
    facts: dict = {}
    section = ""
    for line in text.splitlines():
        m = _XFS_LINE.match(line)
        if not m:
            continue
        section = m.group(1) or section
        rest = m.group(2)
        head = rest.split("  ")[0].strip()  # what follows "section=" before the pairs
        if m.group(1) and head and "=" not in head:
            if section == "log":
                # "internal log" (older xfsprogs: "internal") or the log device
                facts["log.internal"] = head.startswith("internal")
                if not facts["log.internal"]:
                    facts["log.device"] = head
            elif section == "naming" and head.startswith("version"):
                facts["naming.version"] = number(head.split()[-1])
            elif section == "realtime" and head != "none":
                facts["realtime.device"] = head
        for key, value in _XFS_PAIR.findall(rest):
            facts[f"{section}.{key}"] = number(value)
    for section in ("data", "log"):
        bsize = facts.get(f"{section}.bsize")
        for key in ("sunit", "swidth"):
            value = facts.get(f"{section}.{key}")
            if isinstance(value, int) and isinstance(bsize, int):
                facts[f"{section}.{key}_bytes"] = value * bsize
    return facts


def geometry(device: str | None, mount_point: str | None) -> list[GeometryReader]:
    where = mount_point or device
    return [GeometryReader(["xfs_info", str(where)], parse_xfs_info)] if where else []


def offers(provenance: dict) -> dict[str, Offer]:
    """XFS shares blocks when made with reflink=1 (xfs_info says; mkfs's default since
    xfsprogs 5.1); no snapshots, no compression."""
    reflink = geometry_facts(provenance).get("meta-data.reflink")
    return {
        CLONE: (
            Offer(None, "XFS shares blocks only when made with reflink=1 (not recorded)")
            if reflink is None
            else Offer(True, "XFS made with reflink=1 shares blocks")
            if reflink == 1
            else Offer(False, "XFS made with reflink=0 cannot share blocks")
        ),
        **no_snapshot_no_compression("XFS"),
    }


RECIPES = (
    Recipe(
        fs="xfs",
        mkfs_tool="mkfs.xfs",
        force_flags=("-f",),
        dry_run_flag="-N",
        apt_package="xfsprogs",
        min_size_mb=300,
        device_option_keys=frozenset({"logdev=", "rtdev="}),
        log_device=external_log,
        mount_options=MOUNT_OPTIONS,
        mount_option_values=MOUNT_OPTION_VALUES,
        kernel_defaults=KERNEL_DEFAULTS,
        geometry=geometry,
        atomic_writes=None,
        durability_notes={},
        stripe=StripeOptions(given=stripe_given, add=with_stripe),
        offers=offers,
    ),
)
