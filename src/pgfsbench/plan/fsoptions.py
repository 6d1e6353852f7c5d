"""Mount options each filesystem understands, so a typo is a plan error, not a failed mount.

The lists hold the option *names* (``logbsize`` for ``logbsize=262144``); the
kernel still judges the values, and the report says when it changed one.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable

# Options of the VFS layer, valid for every filesystem.
GENERIC = {
    "defaults", "ro", "rw", "sync", "async", "dirsync", "atime", "noatime", "diratime",
    "nodiratime", "relatime", "norelatime", "strictatime", "nostrictatime", "lazytime",
    "nolazytime", "suid", "nosuid", "dev", "nodev", "exec", "noexec", "mand", "nomand",
    "iversion", "noiversion", "discard", "nodiscard",
}

_EXT = {
    "barrier", "nobarrier", "data", "journal_checksum", "nojournal_checksum",
    "journal_async_commit", "commit", "errors", "user_xattr", "nouser_xattr", "acl", "noacl",
    "stripe", "delalloc", "nodelalloc", "auto_da_alloc", "noauto_da_alloc", "dioread_nolock",
    "dioread_lock", "max_batch_time", "min_batch_time", "journal_ioprio", "inode_readahead_blks",
    "init_itable", "noinit_itable", "block_validity", "noblock_validity", "quota", "noquota",
    "usrquota", "grpquota", "resuid", "resgid", "sb", "dax", "journal_dev", "journal_path",
    "nombcache", "prjquota", "orlov", "oldalloc", "bsddf", "minixdf", "grpid", "bsdgroups",
    "nogrpid", "sysvgroups", "debug",
}

BY_FS: dict[str, set[str]] = {
    "f2fs": {
        "background_gc", "disable_roll_forward", "norecovery", "discard", "nodiscard",
        "no_heap", "heap", "user_xattr", "nouser_xattr", "acl", "noacl", "active_logs",
        "disable_ext_identify", "inline_xattr", "noinline_xattr", "inline_data",
        "noinline_data", "inline_dentry", "noinline_dentry", "flush_merge", "nobarrier",
        "barrier", "fastboot", "extent_cache", "noextent_cache", "data_flush", "mode",
        "io_bits", "fsync_mode", "compress_algorithm", "compress_extension", "checkpoint",
        "checkpoint_merge", "nocheckpoint_merge", "atgc", "gc_merge", "nogc_merge", "errors",
    },
    "ext2": _EXT, "ext3": _EXT, "ext4": _EXT,
    "xfs": {
        "allocsize", "attr2", "noattr2", "dax", "filestreams", "ikeep", "noikeep", "inode32",
        "inode64", "largeio", "nolargeio", "logbufs", "logbsize", "logdev", "rtdev", "noalign",
        "norecovery", "nouuid", "noquota", "uquota", "usrquota", "quota", "uqnoenforce",
        "qnoenforce", "gquota", "grpquota", "gqnoenforce", "pquota", "prjquota", "pqnoenforce",
        "sunit", "swidth", "swalloc", "wsync", "discard", "nodiscard",
        # barrier/nobarrier were removed in Linux 4.19: the kernel refuses them.
    },
    "btrfs": {
        "acl", "noacl", "autodefrag", "noautodefrag", "barrier", "nobarrier", "check_int",
        "clear_cache", "commit", "compress", "compress-force", "datacow", "nodatacow",
        "datasum", "nodatasum", "degraded", "device", "discard", "nodiscard", "enospc_debug",
        "fatal_errors", "flushoncommit", "noflushoncommit", "max_inline", "metadata_ratio",
        "rescan_uuid_tree", "rescue", "skip_balance", "space_cache", "nospace_cache", "ssd",
        "ssd_spread", "nossd", "nossd_spread", "subvol", "subvolid", "thread_pool",
        "treelog", "notreelog", "usebackuproot", "user_subvol_rm_allowed",
    },
}


def unknown_mount_options(fs: str, options: str) -> list[str]:
    known = GENERIC | BY_FS.get(fs, set())
    names = [o.split("=", 1)[0].strip() for o in options.split(",") if o.strip()]
    return [n for n in names if n not in known]


# Options that name a device: mkfs would write to it too (an external log or
# journal; mkfs.btrfs formats every device it is given), and mount would use it.
DEVICE_KEYS = ("logdev=", "rtdev=", "device=", "journal_path=", "journal_dev=")


def _is_block_device(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def device_options(options: Iterable[str]) -> list[str]:
    """The mkfs or mount options that name a device other than the target's own: by a
    key that takes a device, a /dev path, or any path that is a block device here."""
    found = []
    for option in options:
        pieces = re.split(r"[=,:]", option)
        if (any(key in option for key in DEVICE_KEYS) or "/dev/" in option
                or any(p.startswith("/") and _is_block_device(p) for p in pieces)):
            found.append(option)
    return found
