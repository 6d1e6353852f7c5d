"""mkfs judges a target's options before anything is made.

mkfs.xfs and mke2fs have a dry run (``-N``, ``-n``): they work out the filesystem
they would make and write nothing. Given a sparse file of the size the target
will format, they refuse what they would refuse then: a misspelt option
(``-m relink=1``), a stripe whose minimum log does not fit the image (``-d
su=8k,sw=3`` on 512 MB: "Log size must be at least 64MB"), an external log too
small. ``plan check`` and ``run`` ask before anything is made, so such a plan
fails in a second rather than as a failed target well into a campaign.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pgfsbench import proc
from pgfsbench.filesystems.recipe import Recipe
from pgfsbench.filesystems.registry import find
from pgfsbench.plan.model import Plan, Target
from pgfsbench.plan.stripe import data_disks, stripe_mkfs_options
from pgfsbench.provision.filesystems import tool_path
from pgfsbench.units import size_to_mb


def mkfs_problems(plan: Plan) -> list[str]:
    """What each target's mkfs refuses in its dry run, one line per target."""
    return [p for t in plan.targets if (p := target_problem(t))]


def target_problem(spec: Target) -> str | None:
    """Run the target's mkfs dry run on sparse files in a scratch directory; why it
    refuses, or None (also when it cannot be asked: no such tool here, a device not
    here)."""
    recipe = _dry_run_recipe(spec)
    size = formatted_bytes(spec) if recipe is not None else None
    if recipe is None or size is None or proc.which(recipe.mkfs_tool) is None:
        return None
    options, _ = stripe_mkfs_options(spec)
    with tempfile.TemporaryDirectory(prefix="pgfsbench-mkfs-check-") as scratch:
        device = Path(scratch) / f"{spec.name}.img"
        try:
            _sparse(device, size)
            if spec.log_size is not None and recipe.log_device is not None:
                log_bytes = size_to_mb(spec.log_size) * 2**20  # the log image provision makes
                log = Path(scratch) / f"{spec.name}-log.img"
                _sparse(log, log_bytes)
                setup = recipe.log_device(options, str(log), log_bytes)
                # A log that must be made first (an ext journal device) is not made for a
                # dry run: the filesystem's own options are still judged.
                if not setup.before_mkfs:
                    options = setup.mkfs_options
        except OSError:  # a size this scratch filesystem cannot hold as a file
            return None
        argv = recipe.mkfs_argv(str(device), options, dry_run=True)
        result = proc.run(tool_path(argv), check=False, timeout=60)
    if result.ok:
        return None
    shown = " ".join(a.replace(scratch, "…") for a in argv)
    return (
        f"target '{spec.name}': {recipe.mkfs_tool} refuses its options on "
        f"{_mb(size)}: {refusal(result.stdout + result.stderr)} (its dry run: {shown})"
    )


def formatted_bytes(spec: Target) -> int | None:
    """About the size of what mkfs formats: the image or device, or the volume made of
    them (data disks × the smallest member, metadata not counted). None: not known
    here (a device this machine does not have)."""
    if spec.kind == "loop":
        members = [spec.size_mb * 2**20] * spec.images
    else:
        sizes = [_device_bytes(d) for d in spec.member_devices]
        members = [s for s in sizes if s is not None]
        if not members or len(members) < len(sizes):
            return None
    if spec.volume is None:
        return members[0]
    return min(members) * max(data_disks(spec.volume, len(members)), 1)


def refusal(output: str) -> str:
    """mkfs's reason, without its version banner and the usage text it prints after."""
    lines = []
    for line in output.splitlines():
        if line.startswith("Usage:"):
            break
        if line.strip() and not line.startswith(("mke2fs ", "mkfs.xfs version")):
            lines.append(line.strip())
    return " ".join(lines) or "no reason given"


def _dry_run_recipe(spec: Target) -> Recipe | None:
    recipe = find(spec.fs) if spec.kind != "dir" else None
    if recipe is None or recipe.dry_run_flag is None or recipe.pooled:
        return None
    return recipe


def _device_bytes(device: Path) -> int | None:
    """A block device's size from sysfs (read only; None when it is not here)."""
    name = Path(os.path.realpath(device)).name
    try:
        return int(Path(f"/sys/class/block/{name}/size").read_text()) * 512
    except (OSError, ValueError):
        return None


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


def _mb(size: int) -> str:
    return (
        f"{size / 2**30:g} GB" if size >= 2**30 and size % 2**30 == 0 else f"{size / 2**20:.0f} MB"
    )
