"""What differs between targets: the plan's knobs and what the machine reported.

Each target's plan entry and key provenance facts are flattened into dotted
keys (``plan.mount``, ``mount.logbsize``, ``geometry.data.sunit``,
``sysctl.vm.dirty_ratio``); only keys whose values are not the same on every
target are kept. Values that name this run's plumbing (loop numbers, paths,
ports) are left out or masked, or every pair of targets would differ.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from pgfsbench.store.read import StoredTarget

GROUPS = ("plan", "mount", "geometry", "device", "backing_device", "sysctl", "postgres")

# The plan entry's own name is what tells columns apart, not a difference.
_SPEC_SKIP = {"name"}
# Device facts that identify rather than describe (loop0 vs loop3, a backing image path).
_DEVICE_SKIP = {
    "device",
    "name",
    "dev",
    "loop_backing_file",
    "path",
    "mount_point",
    "partition_of",
    "slaves",
}
# PostgreSQL settings every cluster gets its own value of.
_PG_SKIP = {
    "port",
    "unix_socket_directories",
    "data_directory",
    "config_file",
    "hba_file",
    "ident_file",
    "external_pid_file",
}
_LOOP = re.compile(r"/dev/loop\d+")


@dataclass
class DiffRow:
    key: str
    values: dict[str, str | None] = field(default_factory=dict)  # target name → value

    @property
    def group(self) -> str:
        return self.key.split(".", 1)[0]


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value)
    # Loop device numbers are handed out at random on every run.
    return _LOOP.sub("/dev/loopN", str(value))


def _flatten(prefix: str, value: object, out: dict[str, str]) -> None:
    if value is None or value == {} or value == []:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
    else:
        out[prefix] = _text(value)


def _spec_keys(spec: dict) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in spec.items():
        if key in _SPEC_SKIP or value in (None, "", [], {}):
            continue
        if key == "mkfs" and isinstance(value, list):
            out["plan.mkfs"] = shlex.join(str(v) for v in value)
        else:
            _flatten(f"plan.{key}", value, out)
    return out


def _mount_keys(options: list) -> dict[str, str]:
    """One key per effective option, so 'logbsize 32k vs 256k' is one row."""
    out: dict[str, str] = {}
    for opt in options:
        name, sep, value = str(opt).partition("=")
        if name:
            out[f"mount.{name}"] = _text(value) if sep else "on"
    return out


def _facts_keys(
    prefix: str, facts: object, skip: frozenset[str] | set[str] = frozenset()
) -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(facts, dict):
        for key, value in facts.items():
            if key not in skip and key != "error":
                _flatten(f"{prefix}.{key}", value, out)
    return out


def target_keys(target: StoredTarget) -> dict[str, str]:
    """Everything about one target that could tell it apart, as dotted keys."""
    p = target.provenance or {}
    keys = _spec_keys(target.spec or {})
    keys.update(_mount_keys(p.get("effective_mount_options") or []))
    geometry = p.get("geometry")
    if isinstance(geometry, dict):
        keys.update(_facts_keys("geometry", geometry.get("facts")))
    keys.update(_facts_keys("device", p.get("device_facts"), _DEVICE_SKIP))
    keys.update(
        _facts_keys(
            "backing_device", p.get("backing_device"), _DEVICE_SKIP | {"source", "filesystem"}
        )
    )
    memory = p.get("memory")
    if isinstance(memory, dict) and memory.get("limit"):  # the plan's or its own
        keys["plan.memory"] = _text(memory["limit"])
    keys.update(_facts_keys("sysctl", p.get("sysctls")))
    if p.get("postgres_version"):
        keys["postgres.version"] = _text(p["postgres_version"])
    if p.get("data_checksums") is not None:
        keys["postgres.data_checksums"] = _text(p["data_checksums"])
    # Every durability and I/O setting the server ran with, defaults included where the
    # campaign recorded them (so "synchronous_commit: off vs on", not "off vs (unset)"),
    # and the other settings it changed; both read with current_setting(), one format.
    settings = {**(p.get("postgres_io_settings") or {}), **(p.get("postgres_settings") or {})}
    keys.update(_facts_keys("postgres.settings", settings, _PG_SKIP))
    return keys


def _fs_of(target: StoredTarget) -> str:
    return str((target.provenance or {}).get("mounted_fs_type") or target.fs)


def provenance_diff(targets: list[StoredTarget]) -> list[DiffRow]:
    """The keys whose values are not the same on every target, one row each.

    Targets that never got provenance (skipped, failed before mounting) are
    left out: all their facts would look different. Geometry keys are
    compared among targets of the same filesystem only: xfs has no "RAID
    stride", and "ext4 vs xfs" is already the ``plan.fs`` row.
    """
    compared = [t for t in targets if t.provenance]
    if len(compared) < 2:
        return []
    keys = {t.name: target_keys(t) for t in compared}
    order: list[str] = []
    for t in compared:
        order += [k for k in keys[t.name] if k not in order]
    rows = []
    for key in order:
        values = {t.name: keys[t.name].get(key) for t in compared}
        if key.startswith("geometry."):
            differs = False
            for fs in {_fs_of(t) for t in compared}:
                same_fs = {values[t.name] for t in compared if _fs_of(t) == fs}
                differs |= len(same_fs) > 1
        else:
            differs = len(set(values.values())) > 1
        if differs:
            rows.append(DiffRow(key, values))
    rows.sort(key=lambda r: GROUPS.index(r.group) if r.group in GROUPS else len(GROUPS))
    return rows
