"""A target's recorded provenance as export data: what the report's Targets section
shows, in the stored values (no units added, nothing rounded).

Every key is always there: a target recorded before a fact was kept, or one that
failed before it was made or before its server started, has null or empty values,
never a missing key, so a reader checks one shape.

The server's durability and I/O settings (pgsettings.py) are recorded in full from
pgfsbench 0.3; for a campaign recorded before, what it did record (the settings not at
their default, data checksums) is given and the rest is null, said by
``io_settings_recorded``. A stray ``application_name: psql`` that older campaigns
recorded among the server's settings (the session of the psql that read them) is left
out.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from pgfsbench.filesystems.mountcheck import changes_for
from pgfsbench.pgsettings import io_settings_of

if TYPE_CHECKING:
    from pgfsbench.formats.export_document import (
        Command,
        Geometry,
        MountOptionChange,
        Postgres,
        TargetProvenance,
    )

# The commands that made the filesystem itself, among the provisioning commands.
_MAKERS = ("mkfs", "mke2fs")
_POOL_VERBS = (("zpool", "create"), ("zfs", "create"))


def target_provenance(provenance: dict, spec: dict, fs: str) -> TargetProvenance:
    p = provenance or {}
    commands = [_command(c) for c in p.get("commands") or [] if isinstance(c, dict)]
    os_settings = p.get("os_settings") or {}
    return {
        "plan": spec or {},
        "device": p.get("device"),
        "devices": list(p.get("devices") or []),
        "log_device": p.get("log_device"),
        "layout": p.get("layout") or {},
        "mounted_fs_type": p.get("mounted_fs_type"),
        "mount_point": p.get("mount_point"),
        "workdir": p.get("workdir"),
        "notes": list(p.get("notes") or []),
        "mount_option_changes": cast(
            "list[MountOptionChange]", changes_for(p, spec or {}, fs) if p else []
        ),
        "mkfs": [c for c in commands if _makes_filesystem(c["argv"])],
        "commands": commands,
        "geometry": _geometry(p.get("geometry")),
        "device_facts": p.get("device_facts"),
        "backing_device": p.get("backing_device"),
        "sysctls_read": p.get("sysctls") or {},
        "sysctls": os_settings.get("sysctls") or {},
        "queue": os_settings.get("queue") or {},
        "restore_problems": list(os_settings.get("restore_problems") or []),
        "throttle": p.get("throttle") or {},
        "memory": p.get("memory") or {},
        "postgres": postgres_of(p),
        "remade": list(p.get("remade") or []),
    }


def _command(c: dict) -> Command:
    return {
        "argv": [str(a) for a in c.get("argv") or []],
        "exit_code": c.get("exit_code"),
        "stdout": c.get("stdout") or "",
        "stderr": c.get("stderr") or "",
    }


def _makes_filesystem(argv: list[str]) -> bool:
    if not argv:
        return False
    tool = Path(argv[0]).name
    return tool.startswith(_MAKERS) or (tool, *argv[1:2]) in _POOL_VERBS


def _geometry(g: object) -> Geometry | None:
    if not isinstance(g, dict):
        return None
    return {
        "tool": g.get("tool"),
        "facts": g.get("facts") or {},
        "raw": g.get("raw") or "",
        "error": g.get("error"),
        "extra": [x for e in g.get("extra") or [] if (x := _geometry(e)) is not None],
    }


def postgres_of(p: dict) -> Postgres | None:
    """The server as it ran on the target; None when it never started there."""
    if not p.get("postgres_version"):
        return None
    settings = dict(p.get("postgres_settings") or {})
    if settings.get("application_name") == "psql":  # the reading session's, not the server's
        del settings["application_name"]
    recorded = p.get("postgres_io_settings")
    return {
        "version": p["postgres_version"],
        "bindir": p.get("postgres_bindir"),
        "data_checksums": p.get("data_checksums"),
        "settings": settings,
        "io_settings": dict(recorded) if recorded else _io_settings_before(p, settings),
        "io_settings_recorded": bool(recorded),
        "commands": [list(map(str, argv)) for argv in p.get("postgres_commands") or []],
        "build_options": p.get("postgres_build_options"),
    }


def _io_settings_before(p: dict, settings: dict[str, str]) -> dict[str, str | None]:
    """A campaign recorded before the full set was kept: what it knew of each setting its
    server's version has (one not at its default, data checksums), else None."""
    try:
        major = int(str(p["postgres_version"]).split(".")[0])
    except ValueError:
        major = 0  # unknown: the settings every version has
    checksums = p.get("data_checksums")
    known: dict[str, str | None] = {}
    for name in io_settings_of(major):
        if name == "data_checksums" and checksums is not None:
            known[name] = "on" if checksums else "off"
        else:
            known[name] = settings.get(name)
    return known
