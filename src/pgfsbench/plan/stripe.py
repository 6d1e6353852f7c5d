"""The stripe under a target's filesystem, and the mkfs options that follow from it.

A volume (LVM stripe, md RAID) spreads each stripe over its data disks; mkfs aligns
to it when told (ext stride/stripe-width, xfs sunit/swidth: the filesystem's
recipe knows its own options). Pure arithmetic on the plan: ``plan check`` shows
the result and provisioning passes it to mkfs.
"""

from __future__ import annotations

from pgfsbench.filesystems.registry import find
from pgfsbench.plan.model import Target, Volume


def data_disks(volume: Volume, members: int) -> int:
    """Members whose chunks hold distinct data in one stripe (what mkfs aligns to):
    every one for a stripe or RAID 0, one for a mirror, half for RAID 10 (near 2)."""
    return {"lvm-stripe": members, "md-raid0": members, "md-raid1": 1, "md-raid10": members // 2}[
        volume.kind
    ]


def stripe_mkfs_options(spec: Target) -> tuple[list[str], dict]:
    """The plan's mkfs options with the volume's stripe geometry added, and what was
    done: ``{"stripe_bytes", "data_disks", "stripe_width_bytes", "mkfs", ...}``."""
    options = list(spec.mkfs)
    volume, fs_recipe = spec.volume, find(spec.fs)
    if volume is None or fs_recipe is None:
        return options, {}
    disks = data_disks(volume, spec.member_count)
    geometry = {
        "stripe_bytes": volume.stripe_bytes,
        "data_disks": disks,
        "stripe_width_bytes": volume.stripe_bytes * disks,
    }
    if fs_recipe.stripe is None:
        return options, {**geometry, "mkfs": f"{spec.fs} takes no stripe geometry"}
    if given := fs_recipe.stripe.given(options):
        return options, {**geometry, "mkfs": f"the plan's own: {','.join(given)}"}
    if disks < 2:
        return options, {**geometry, "mkfs": "none: a mirror has no stripe to align to"}
    added = fs_recipe.stripe.add(options, volume.stripe_bytes, disks)
    return added, {
        **geometry,
        "mkfs": "computed",
        "computed_options": fs_recipe.stripe.given(added),
    }


def idle_stripe_options(spec: Target) -> str | None:
    """A warning when the plan sets stripe options with no stripe under the filesystem."""
    fs_recipe = find(spec.fs)
    if fs_recipe is None or fs_recipe.stripe is None:
        return None
    given = fs_recipe.stripe.given(list(spec.mkfs))
    if not given:
        return None
    if spec.volume is None:
        on = f"{spec.member_count} {'loop image' if spec.kind == 'loop' else 'device'}"
        return (
            f"target '{spec.name}': mkfs sets {','.join(given)}, which does nothing "
            f"without a stripe under the filesystem (it is on {on}"
            f"{'s' if spec.member_count > 1 else ''}, no volume): to measure a "
            'striped layout set images = 3 and volume = { kind = "lvm-stripe", '
            'stripe = "8K" } (or md-raid0), or remove the options'
        )
    if data_disks(spec.volume, spec.member_count) < 2:
        return (
            f"target '{spec.name}': mkfs sets {','.join(given)}, but a "
            f"{spec.volume.kind} volume is a mirror with no stripe to align to"
        )
    return None
