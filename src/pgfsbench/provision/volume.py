"""Joining a target's members (loop images or devices) into what mkfs formats.

Three ways: one member as it is; several members given to a filesystem that spans
devices itself (btrfs profiles); or a volume under any filesystem: an md RAID array
or an LVM striped volume. The stripe geometry of a volume becomes mkfs options
(ext stride/stripe-width, xfs sunit/swidth; plan/stripe.py) unless the plan set its own.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from pgfsbench.filesystems.recipe import Recipe
from pgfsbench.plan.model import Target, Volume
from pgfsbench.plan.stripe import stripe_mkfs_options
from pgfsbench.provision import lvm, md
from pgfsbench.provision.target import Provisioning


@dataclass
class Joined:
    """What mkfs formats: ``device`` (+ ``more_devices`` for a spanning filesystem)."""

    device: str
    more_devices: list[str] = field(default_factory=list)
    mkfs_options: list[str] = field(default_factory=list)
    layout: dict = field(default_factory=dict)  # provenance: members, volume, geometry


def unavailable_reason(volume: Volume | None) -> str | None:
    """Why this machine cannot make the volume, with the fix; None if it can."""
    if volume is None:
        return None
    return lvm.unavailable_reason() if volume.kind == "lvm-stripe" else md.unavailable_reason()


def join(spec: Target, fs_recipe: Recipe, members: list[dict], p: Provisioning) -> Joined:
    """``members`` (member records, in order) made into what mkfs formats; a volume is
    in the ledger and undone by the undo stack like everything else."""
    devices = [m["device"] for m in members]
    layout: dict = {"members": devices}
    options, geometry = stripe_mkfs_options(spec)
    volume = spec.volume
    if volume is None:
        if len(devices) > 1:
            layout["spanned_by"] = spec.fs
        return Joined(devices[0], devices[1:], options, layout)
    token = secrets.token_hex(3)  # two campaigns may name a target alike
    if volume.kind == "lvm-stripe":
        vg = f"pgfsbench-{spec.name}-{token}"
        device = lvm.create_striped_volume(vg, "data", volume.stripe_bytes, members, p)
        layout["volume"] = {
            "kind": volume.kind,
            "vg": vg,
            "lv": "data",
            "path": lvm.lv_path(vg, "data"),
            "stripes": len(devices),
        }
    else:
        array = f"/dev/md/pgfsbench-{token}"
        device = md.create_array(array, volume.kind, volume.stripe_bytes, members, p)
        layout["volume"] = {"kind": volume.kind, "array": array, "level": md.LEVELS[volume.kind]}
    layout["volume"].update({"device": device, **geometry})
    return Joined(device, [], options, layout)
