"""What a provisioned target looks like to the stages after it, and what every step of
making one shares."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench.ledger import Ledger
from pgfsbench.proc import CommandResult
from pgfsbench.provision.mountinfo import MountEntry


@dataclass
class Provisioning:
    """What every step of making one target shares, passed as one: the ledger each
    resource goes in before it exists, the undo stack that takes them apart in reverse
    (on failure, or when the target is done with), and the commands run so far (the
    target's provenance)."""

    ledger: Ledger
    undo: contextlib.ExitStack
    commands: list[CommandResult] = field(default_factory=list)

    def hold(self, kind: str, **info) -> dict:
        """A resource in the ledger before it exists, released by the undo stack; returns
        its ledger record (to complete once more is known)."""
        res = self.ledger.add(kind, **info)
        self.undo.callback(self.ledger.release, res)
        return res


@dataclass
class PreparedTarget:
    name: str
    kind: str  # "loop", "device" or "dir"
    fs: str  # the filesystem asked for, or the one found under a directory target
    workdir: Path  # a directory on the target's filesystem that pgfsbench owns
    device: str | None
    mount: MountEntry  # read back from the kernel after mounting
    commands: list[CommandResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    log_device: str | None = None  # an external log/journal device (xfs logdev, ext4 journal)
    # Every member the target is made on (loop devices or named devices), in order;
    # ``device`` is what was formatted and mounted (the first member, an md array, an LV).
    devices: list[str] = field(default_factory=list)
    # How the members were joined: the volume and its stripe geometry, the computed mkfs
    # options (provision/volume.py).
    layout: dict = field(default_factory=dict)

    @property
    def io_devices(self) -> list[str]:
        """The devices whose counters are this target's I/O: every member when the
        filesystem itself spans them (btrfs over several, a ZFS pool), else the one
        formatted (a single device, or an md array or LV over the members)."""
        if self.device in self.devices and len(self.devices) > 1:
            return list(self.devices)
        return [self.device] if self.device else []

    def provenance(self) -> dict:
        return {
            "kind": self.kind,
            "fs": self.fs,
            "device": self.device,
            "log_device": self.log_device,
            "devices": self.devices
            or ([self.device] if self.device and self.kind != "dir" else []),
            "layout": self.layout,
            "workdir": str(self.workdir),
            "mounted_fs_type": self.mount.fs_type,
            "mount_point": self.mount.mount_point,
            "effective_mount_options": self.mount.options,
            "commands": [
                {
                    "argv": list(c.argv),
                    "exit_code": c.exit_code,
                    "stdout": c.stdout,
                    "stderr": c.stderr,
                }
                for c in self.commands
            ],
            "notes": self.notes,
        }
