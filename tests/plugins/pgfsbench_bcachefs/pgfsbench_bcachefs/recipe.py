"""bcachefs: made by ``mkfs.bcachefs`` (bcachefs-tools), mounted with ``mount -t bcachefs``.

Every field a ``Recipe`` requires is given, saying what bcachefs has or that it has
none: no external journal device, no dry run of mkfs, no geometry reader yet (a reader
is a command and a parser tested on the tool's captured output; none was captured), and
``untested``: written from bcachefs's documentation, never run on a kernel that has it,
which ``pgfsbench doctor`` and the report say until someone does.
"""

from __future__ import annotations

from pgfsbench.filesystems.recipe import Recipe

RECIPES = (
    Recipe(
        fs="bcachefs",
        mkfs_tool="mkfs.bcachefs",
        force_flags=("--force",),
        apt_package="bcachefs-tools",
        min_size_mb=64,
        log_device=None,  # its journal lives on its own devices
        device_option_keys=frozenset(),
        # Its own mount options (bcachefs's manual, "Options"), beyond the VFS ones.
        mount_options=frozenset(
            {
                "compression",
                "background_compression",
                "data_checksum",
                "metadata_checksum",
                "nocow",
                "journal_flush_delay",
                "journal_flush_disabled",
                "degraded",
                "fsck",
                "fix_errors",
            }
        ),
        kernel_defaults=None,  # not known yet: no kernel here has it
        geometry=None,
        atomic_writes=None,  # not relied on: full_page_writes=off stays unsafe on it
        durability_notes={
            "journal_flush_disabled": "journal_flush_disabled: fsync returns before "
            "bcachefs's journal reaches the disk, so a crash can lose the last commits",
            "nocow": "nocow turns off bcachefs's copy-on-write and data checksums",
        },
        untested=True,
    ),
)
