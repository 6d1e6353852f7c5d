"""f2fs: made by mkfs.f2fs. Never run on a kernel with f2fs yet (untested)."""

from __future__ import annotations

from pgfsbench.filesystems.optionvalues import integer, one_of
from pgfsbench.filesystems.recipe import Recipe

MOUNT_OPTIONS = frozenset(
    {
        "background_gc",
        "disable_roll_forward",
        "norecovery",
        "discard",
        "nodiscard",
        "no_heap",
        "heap",
        "user_xattr",
        "nouser_xattr",
        "acl",
        "noacl",
        "active_logs",
        "disable_ext_identify",
        "inline_xattr",
        "noinline_xattr",
        "inline_data",
        "noinline_data",
        "inline_dentry",
        "noinline_dentry",
        "flush_merge",
        "nobarrier",
        "barrier",
        "fastboot",
        "extent_cache",
        "noextent_cache",
        "data_flush",
        "mode",
        "io_bits",
        "fsync_mode",
        "compress_algorithm",
        "compress_extension",
        "checkpoint",
        "checkpoint_merge",
        "nocheckpoint_merge",
        "atgc",
        "gc_merge",
        "nogc_merge",
        "errors",
    }
)

# Documentation/filesystems/f2fs.rst; the options whose values are plain choices.
MOUNT_OPTION_VALUES = {
    "background_gc": one_of("on", "off", "sync"),
    "fsync_mode": one_of("posix", "strict", "nobarrier"),
    "active_logs": one_of("2", "4", "6"),
    "errors": one_of("continue", "remount-ro", "panic"),
    "io_bits": integer(),
}

RECIPES = (
    Recipe(
        fs="f2fs",
        mkfs_tool="mkfs.f2fs",
        force_flags=("-f",),
        apt_package="f2fs-tools",
        min_size_mb=64,
        device_option_keys=frozenset(),
        log_device=None,
        mount_options=MOUNT_OPTIONS,
        mount_option_values=MOUNT_OPTION_VALUES,
        # Not yet observed on a kernel with f2fs: any recipe's defaults count meanwhile.
        kernel_defaults=None,
        geometry=None,  # dump.f2fs exists, but its output has not been studied
        atomic_writes=None,
        durability_notes={},
        untested=True,
    ),
)
