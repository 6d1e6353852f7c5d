"""A filesystem recipe: ``toyfs``, made by ``mkfs.toy`` (plan check needs no such tool)."""

from __future__ import annotations

from pgfsbench.filesystems.recipe import Recipe

RECIPES = (
    Recipe(
        fs="toyfs",
        mkfs_tool="mkfs.toy",
        force_flags=("--yes",),
        apt_package="toy-tools",
        min_size_mb=8,
        log_device=None,
        device_option_keys=frozenset(),
        mount_options=frozenset({"toyopt"}),
        kernel_defaults=None,
        geometry=None,
        atomic_writes=None,
        durability_notes={},
    ),
)
