"""ext2, ext3 and ext4: one family, made by mke2fs, described by dumpe2fs."""

from __future__ import annotations

from pgfsbench.filesystems.optionvalues import integer, one_of, power_of_two_or_zero
from pgfsbench.filesystems.recipe import (
    CLONE,
    GeometryReader,
    LogSetup,
    Offer,
    Recipe,
    StripeOptions,
    no_snapshot_no_compression,
)
from pgfsbench.filesystems.textfacts import number, snake

# --- making it ---------------------------------------------------------------------

# A fresh ext* filesystem otherwise zeroes its inode tables and journal in the
# background after mounting (ext4lazyinit), writing to the device in the middle of
# the measurements. Added unless the plan sets them itself.
NO_LAZY_INIT = ("lazy_itable_init=0", "lazy_journal_init=0")


def _extended(options: list[str]) -> tuple[int | None, list[str]]:
    """(index of the last -E, its comma-separated list); mke2fs keeps only the last."""
    where = max((i for i, o in enumerate(options[:-1]) if o == "-E"), default=None)
    return where, options[where + 1].split(",") if where is not None else []


def _with_extended(options: list[str], extra: list[str]) -> list[str]:
    """``extra`` joined to the plan's own -E list (or a new one)."""
    options = list(options)
    where, given = _extended(options)
    if not extra:
        return options
    if where is None:
        return [*options, "-E", ",".join(extra)]
    options[where + 1] = ",".join([*given, *extra])
    return options


def without_lazy_init(options: list[str]) -> list[str]:
    given = {g.split("=")[0] for g in _extended(options)[1]}
    return _with_extended(options, [d for d in NO_LAZY_INIT if d.split("=")[0] not in given])


# --- stripe geometry (RAID, LVM stripes) -------------------------------------------------

_STRIPE_KEYS = ("stride", "stripe-width", "stripe_width")


def stripe_given(options: list[str]) -> list[str]:
    return [g for g in _extended(options)[1] if g.split("=")[0] in _STRIPE_KEYS]


def with_stripe(options: list[str], stripe_bytes: int, data_disks: int) -> list[str]:
    """stride = stripe / block size; stripe-width = stride × data disks (in blocks).

    The block size is made explicit: mke2fs would pick 1024 for a small image on its
    own, and the stride is counted in blocks.
    """
    if stripe_given(options) or data_disks < 2:
        return list(options)
    block = int(_block_size(options) or 4096)
    if stripe_bytes < block:
        return list(options)
    stride = stripe_bytes // block
    options = list(options) if _block_size(options) else [*options, "-b", str(block)]
    return _with_extended(options, [f"stride={stride}", f"stripe-width={stride * data_disks}"])


def _block_size(mkfs_options: list[str]) -> str | None:
    """The block size the plan's mke2fs options give, if any."""
    for i, option in enumerate(mkfs_options):
        if option == "-b" and i + 1 < len(mkfs_options):
            return mkfs_options[i + 1]
        if option.startswith("-b") and option[2:].isdigit():
            return option[2:]
    return None


def journal_device(mkfs_options: list[str], log_device: str, log_bytes: int) -> LogSetup:
    """A journal device first, then the filesystem that uses it."""
    # The journal's block size must be the filesystem's: make both explicit, as
    # mke2fs would pick 1024 for a small image on its own. The journal takes the
    # whole log device, so log_bytes is its size already.
    given = _block_size(mkfs_options)
    block_size = given or "4096"
    return LogSetup(
        before_mkfs=[["mke2fs", "-F", "-O", "journal_dev", "-b", block_size, log_device]],
        mkfs_options=[
            *mkfs_options,
            *([] if given else ["-b", block_size]),
            "-J",
            f"device={log_device}",
        ],
        # No journal_path mount option: the superblock records the journal device's
        # number, which is this loop device's for as long as the target lives.
        mount_options=[],
    )


# --- mounting it -------------------------------------------------------------------

MOUNT_OPTIONS = frozenset(
    {
        "barrier",
        "nobarrier",
        "data",
        "journal_checksum",
        "nojournal_checksum",
        "journal_async_commit",
        "commit",
        "errors",
        "user_xattr",
        "nouser_xattr",
        "acl",
        "noacl",
        "stripe",
        "delalloc",
        "nodelalloc",
        "auto_da_alloc",
        "noauto_da_alloc",
        "dioread_nolock",
        "dioread_lock",
        "max_batch_time",
        "min_batch_time",
        "journal_ioprio",
        "inode_readahead_blks",
        "init_itable",
        "noinit_itable",
        "block_validity",
        "noblock_validity",
        "quota",
        "noquota",
        "usrquota",
        "grpquota",
        "resuid",
        "resgid",
        "sb",
        "dax",
        "journal_dev",
        "journal_path",
        "nombcache",
        "prjquota",
        "orlov",
        "oldalloc",
        "bsddf",
        "minixdf",
        "grpid",
        "bsdgroups",
        "nogrpid",
        "sysvgroups",
        "debug",
    }
)

# The values the ext4 driver parses (fs/ext4/super.c, Documentation/admin-guide/ext4.rst).
MOUNT_OPTION_VALUES = {
    "data": one_of("ordered", "journal", "writeback"),
    "errors": one_of("continue", "remount-ro", "panic"),
    "commit": integer(what="a whole number of seconds"),
    "barrier": integer(what="a whole number (0: off)"),
    "auto_da_alloc": integer(what="a whole number (0: off)"),
    "journal_ioprio": integer(0, 7),
    "max_batch_time": integer(what="a whole number of microseconds"),
    "min_batch_time": integer(what="a whole number of microseconds"),
    "inode_readahead_blks": power_of_two_or_zero(1 << 30),
    "init_itable": integer(),
    "stripe": integer(what="a whole number of blocks"),
    "resuid": integer(),
    "resgid": integer(),
    "sb": integer(),
    "dax": one_of("always", "never", "inode"),
}

# From Documentation/admin-guide/ext4.rst, checked on kernel 6.18; the ext4 driver
# serves ext2 and ext3 too.
KERNEL_DEFAULTS = frozenset(
    {
        "barrier",
        "delalloc",
        "auto_da_alloc",
        "data=ordered",
        "commit=5",
        "journal_checksum",
        "user_xattr",
        "acl",
        "block_validity",
        "dioread_nolock",
        "inode_readahead_blks=32",
        "max_batch_time=15000",
        "min_batch_time=0",
        "journal_ioprio=3",
        "init_itable",
        "stripe=0",
        "errors=continue",
        "nogrpid",
        "orlov",
        "bsddf",
    }
)

# --- describing it -----------------------------------------------------------------

# The settled properties of an ext2/3/4 filesystem; counters, times, UUIDs and
# checksums are left out so two targets built alike compare equal.
DUMPE2FS_KEYS = (
    "Filesystem revision #",
    "Filesystem features",
    "Filesystem flags",
    "Default mount options",
    "Mount options",
    "Errors behavior",
    "Inode count",
    "Block count",
    "Reserved block count",
    "First block",
    "Block size",
    "Fragment size",
    "Group descriptor size",
    "Reserved GDT blocks",
    "Blocks per group",
    "Inodes per group",
    "Inode blocks per group",
    "RAID stride",
    "RAID stripe width",
    "Flex block group size",
    "Inode size",
    "Required extra isize",
    "Desired extra isize",
    "Default directory hash",
    "Checksum type",
    "Journal backup",
    "Journal features",
    "Total journal size",
    "Total journal blocks",
    "Max transaction length",
    "Fast commit length",
    "Journal checksum type",
)
_STATE_FEATURES = {"needs_recovery"}  # set while mounted: state, not a choice made at mkfs


def parse_dumpe2fs(text: str) -> dict:
    """``dumpe2fs -h`` → ``{"block_size": 4096, "raid_stride": 2, "journal": "internal"}``."""
    raw: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            raw.setdefault(key.strip(), value.strip())
    facts: dict = {}
    for key in DUMPE2FS_KEYS:
        if key in raw:
            value = raw[key]
            if key == "Filesystem features":
                value = " ".join(f for f in value.split() if f not in _STATE_FEATURES)
            facts[snake(key)] = number(value)
    if "filesystem_features" not in facts:
        return facts  # not a superblock dump (an error message)
    features = str(facts["filesystem_features"]).split()
    if "journal_dev" in features:
        facts["journal"] = "is an external journal device"
    elif "has_journal" not in features:
        facts["journal"] = "none"
    elif "Journal device" in raw:
        facts["journal"] = "external"
    else:
        facts["journal"] = "internal"
    return facts


def geometry(device: str | None, mount_point: str | None) -> list[GeometryReader]:
    return [GeometryReader(["dumpe2fs", "-h", str(device)], parse_dumpe2fs)] if device else []


# --- the recipes -------------------------------------------------------------------


def offers(provenance: dict) -> dict[str, Offer]:
    fs = provenance.get("fs") or "ext"
    return {
        CLONE: Offer(False, f"{fs} cannot share blocks: a clone is a copy"),
        **no_snapshot_no_compression(fs),
    }


def _ext(fs: str, log_device) -> Recipe:
    return Recipe(
        fs=fs,
        mkfs_tool=f"mkfs.{fs}",
        force_flags=("-F",),
        dry_run_flag="-n",
        apt_package="e2fsprogs",
        min_size_mb=16,
        mkfs_defaults=without_lazy_init,
        log_device=log_device,
        # -J device= at mkfs; journal_path=, journal_dev= at mount
        device_option_keys=frozenset({"device=", "journal_path=", "journal_dev="}),
        mount_options=MOUNT_OPTIONS,
        mount_option_values=MOUNT_OPTION_VALUES,
        kernel_defaults=KERNEL_DEFAULTS,
        geometry=geometry,
        atomic_writes=None,
        durability_notes={},
        kernel_driver="ext4",
        fsck=lambda device: ["e2fsck", "-fn", device],
        stripe=StripeOptions(given=stripe_given, add=with_stripe),
        offers=offers,
    )


# ext2 has no journal to put elsewhere.
RECIPES = (_ext("ext2", None), _ext("ext3", journal_device), _ext("ext4", journal_device))
