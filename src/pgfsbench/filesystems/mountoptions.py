"""Mount options of the VFS layer, valid for every filesystem, and the plan's check of
option names against them and the filesystem's recipe: a typo is a plan error, not a
failed mount.

Names are checked (``logbsize`` for ``logbsize=262144``), and so are values: against the
type the filesystem's recipe gives the option (``data`` is ordered, journal or
writeback), and every value against the characters mount options are written in (a
``$``, ``;`` or space is in none). The kernel may still round a value; the report says
when it changed one.
"""

from __future__ import annotations

from pgfsbench.filesystems.optionvalues import VALUE_CHARS
from pgfsbench.filesystems.registry import recipe

GENERIC = frozenset(
    {
        "defaults",
        "ro",
        "rw",
        "sync",
        "async",
        "dirsync",
        "atime",
        "noatime",
        "diratime",
        "nodiratime",
        "relatime",
        "norelatime",
        "strictatime",
        "nostrictatime",
        "lazytime",
        "nolazytime",
        "suid",
        "nosuid",
        "dev",
        "nodev",
        "exec",
        "noexec",
        "mand",
        "nomand",
        "iversion",
        "noiversion",
        "discard",
        "nodiscard",
    }
)

# Not listed by the kernel when they hold, whatever the filesystem.
GENERIC_DEFAULTS = frozenset(
    {
        "rw",
        "async",
        "suid",
        "dev",
        "exec",
        "nomand",
        "atime",
        "diratime",
        "relatime",
        "nolazytime",
        "nodiscard",
        "noiversion",
    }
)

# Handled by mount(8) itself, never passed to the kernel.
USERSPACE = frozenset(
    {
        "defaults",
        "auto",
        "noauto",
        "user",
        "nouser",
        "users",
        "owner",
        "group",
        "nofail",
        "_netdev",
        "loop",
    }
)


def unknown_mount_options(fs: str, options: str) -> list[str]:
    known = GENERIC | recipe(fs).mount_options
    names = [o.split("=", 1)[0].strip() for o in options.split(",") if o.strip()]
    return [n for n in names if n not in known]


def mount_option_problems(fs: str, options: str) -> list[str]:
    """What is wrong with the values in ``options`` (known names), one line each."""
    types = recipe(fs).mount_option_values
    problems = []
    for option in (o.strip() for o in options.split(",") if o.strip()):
        name, sep, value = option.partition("=")
        kind = types.get(name)
        should = f"; {name} is {kind.what}" if kind else ""
        if not sep:
            continue
        if not value:
            problems.append(f"{option} gives no value{should}")
        elif not VALUE_CHARS.fullmatch(value):
            odd = ", ".join(
                map(repr, dict.fromkeys(c for c in value if not VALUE_CHARS.fullmatch(c)))
            )
            problems.append(
                f"{option}: no mount option takes {odd} in its value (a "
                f"separator or shell character){should}"
            )
        elif kind is not None and not kind.accepts(value):
            problems.append(f"{option}: {name} is {kind.what}")
        elif kind is None and name in GENERIC:
            problems.append(f"{option}: {name} takes no value")
    return problems
