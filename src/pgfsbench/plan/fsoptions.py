"""Mount options each filesystem understands, so a typo is a plan error, not a failed mount.

The lists hold the option *names* (``logbsize`` for ``logbsize=262144``); the
kernel still judges the values, and the report says when it changed one.
"""

from __future__ import annotations

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
