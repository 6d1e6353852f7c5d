"""Mount options of the VFS layer, valid for every filesystem, and the plan's check of
option names against them and the filesystem's recipe: a typo is a plan error, not a
failed mount.

The check is on option *names* (``logbsize`` for ``logbsize=262144``); the kernel
still judges the values, and the report says when it changed one.
"""

from __future__ import annotations

from pgfsbench.filesystems.registry import recipe

GENERIC = frozenset({
    "defaults", "ro", "rw", "sync", "async", "dirsync", "atime", "noatime", "diratime",
    "nodiratime", "relatime", "norelatime", "strictatime", "nostrictatime", "lazytime",
    "nolazytime", "suid", "nosuid", "dev", "nodev", "exec", "noexec", "mand", "nomand",
    "iversion", "noiversion", "discard", "nodiscard",
})

# Not listed by the kernel when they hold, whatever the filesystem.
GENERIC_DEFAULTS = frozenset({"rw", "async", "suid", "dev", "exec", "nomand", "atime",
                              "diratime", "relatime", "nolazytime", "nodiscard",
                              "noiversion"})

# Handled by mount(8) itself, never passed to the kernel.
USERSPACE = frozenset({"defaults", "auto", "noauto", "user", "nouser", "users", "owner",
                       "group", "nofail", "_netdev", "loop"})


def unknown_mount_options(fs: str, options: str) -> list[str]:
    known = GENERIC | recipe(fs).mount_options
    names = [o.split("=", 1)[0].strip() for o in options.split(",") if o.strip()]
    return [n for n in names if n not in known]
