"""The ledger: every resource a run acquires, on disk before it is acquired.

A run writes each resource (image, loop device, mount, PostgreSQL cluster,
scratch directory, sysctl, throttling cgroup) into a JSON state file *before*
acquiring it and removes it once released. Normal teardown and ``pgfsbench
cleanup`` after a crash go through the same releaser, so there is one way to
undo each thing.

The ledger is only the journal. How a kind of resource is undone lives with
the code that acquires it, registered here with ``@releaser("kind")``; the
``pgfsbench.releasers`` entry points name them (``releasers.py``) for a process
that releases a ledger it did not fill.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.paths import own_dir

STATE_ENV = "PGFSBENCH_STATE_DIR"

# A releaser undoes one recorded resource and returns its problems (empty: undone).
Releaser = Callable[[dict], list[str]]
RELEASERS: dict[str, Releaser] = {}  # resource kind -> its releaser


def releaser(*kinds: str) -> Callable[[Releaser], Releaser]:
    """Register the decorated function as the way to undo resources of ``kinds``."""

    def register(undo: Releaser) -> Releaser:
        for kind in kinds:
            known = RELEASERS.get(kind)
            if known is not None and _name(known) != _name(undo):
                raise ValueError(
                    f"two releasers for ledger kind '{kind}': {_name(known)} and {_name(undo)}"
                )
            RELEASERS[kind] = undo
        return undo

    return register


def _name(func: Callable) -> str:
    return f"{func.__module__}.{func.__qualname__}"


def state_dir() -> Path:
    """Where ledgers live."""
    return own_dir(STATE_ENV, "/var/lib/pgfsbench/state", "XDG_STATE_HOME", ".local/state")


@dataclass
class Ledger:
    path: Path
    pid: int
    results_dir: str
    resources: list[dict] = field(default_factory=list)

    @classmethod
    def create(cls, campaign_id: str, results_dir: Path) -> Ledger:
        directory = state_dir()
        ledger = cls(directory / f"{campaign_id}.json", os.getpid(), str(results_dir))
        try:
            directory.mkdir(parents=True, exist_ok=True)
            ledger.save()
        except OSError as exc:
            raise UserError(
                f"cannot write the state file in {directory}: {exc.strerror}; "
                "pgfsbench records there what it changes, to undo it after a "
                f"crash (set {STATE_ENV} to a writable directory)"
            ) from None
        return ledger

    @classmethod
    def load(cls, path: Path) -> Ledger:
        data = json.loads(path.read_text())
        return cls(path, data["pid"], data["results_dir"], data["resources"])

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps(
                {"pid": self.pid, "results_dir": self.results_dir, "resources": self.resources},
                indent=1,
            )
        )
        os.replace(tmp, self.path)

    def add(self, kind: str, **info) -> dict:
        resource = {"kind": kind, **info}
        self.resources.append(resource)
        self.save()
        return resource

    def release(self, resource: dict) -> list[str]:
        """Undo one resource; returns problems (empty when all went well).

        A resource that could not be undone stays in the ledger, so the campaign's
        final sweep and `pgfsbench cleanup` try it again.
        """
        undo = RELEASERS.get(resource["kind"])
        if undo is None:  # kept in the ledger: nothing is forgotten silently
            return [
                f"no releaser for ledger kind '{resource['kind']}' ({resource}): this "
                "pgfsbench does not know how to undo it; it stays in the state file "
                f"{self.path}"
            ]
        problems = undo(resource)
        if not problems and resource in self.resources:
            self.resources.remove(resource)
            self.save()
        return problems

    def release_all(self) -> list[str]:
        problems: list[str] = []
        for resource in reversed(list(self.resources)):
            problems += self.release(resource)
        return problems

    def close(self) -> None:
        """Forget the ledger once everything is released."""
        if not self.resources:
            self.path.unlink(missing_ok=True)

    def summary(self) -> str:
        """What the ledger still holds, for a person: "a mount, 2 loop devices, sysctl
        vm.dirty_ratio"."""
        counts: dict[str, int] = {}
        named: list[str] = []
        for res in self.resources:
            if res["kind"] in ("sysctl",):
                named.append(f"sysctl {res.get('name')}")
            elif res["kind"] == "sysfs":
                named.append(f"queue setting {res.get('path')}")
            elif res["kind"] != "lock":
                counts[res["kind"]] = counts.get(res["kind"], 0) + 1
        words = {
            "mount": "mount",
            "loop": "loop device",
            "file": "image",
            "dir": "directory",
            "postgres": "PostgreSQL server",
            "cgroup": "cgroup",
            "md": "md array",
            "lvm-pv": "LVM physical volume",
            "lvm-vg": "LVM volume group",
            "lvm-lv": "LVM logical volume",
            "zfs-daemon": "zfs-fuse daemon",
            "zfs-pool": "ZFS pool",
            "zfs-dataset": "ZFS dataset",
        }
        plurals = {"directory": "directories"}

        def word(kind: str, n: int) -> str:
            one = words.get(kind, kind)
            return one if n == 1 else plurals.get(one, one + "s")

        parts = [f"{n} {word(k, n)}" for k, n in counts.items()]
        return ", ".join(parts + named) or "nothing but its record"

    def owner_alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        # A recycled pid is possible; a pgfsbench process still owns it only if
        # its command line says so.
        try:
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return False
        return b"pgfsbench" in cmdline


def stale_ledgers() -> list[Ledger]:
    """Ledgers whose run is no longer alive (crashed or killed)."""
    directory = state_dir()
    if not directory.is_dir():
        return []
    ledgers = []
    for path in sorted(directory.glob("*.json")):
        try:
            ledger = Ledger.load(path)
        except (OSError, ValueError, KeyError):
            continue
        if not ledger.owner_alive():
            ledgers.append(ledger)
    return ledgers
