"""Block-device targets: a device the plan names → safety check → mkfs → private mount.

The device is formatted only after ``check_formattable`` says it may be
(DESIGN §5). Only the mount goes in the ledger: the device itself is the
user's and is never detached, removed or wiped beyond what they allowed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.filesystems.registry import recipe
from pgfsbench.ledger import Ledger
from pgfsbench.plan.fsoptions import device_options
from pgfsbench.plan.model import Target
from pgfsbench.plan.stripe import stripe_mkfs_options
from pgfsbench.provision.filesystems import tool_path, unavailable_reason
from pgfsbench.provision.members import member_record
from pgfsbench.provision.mounting import mount_private
from pgfsbench.provision.safety import CheckedDevice, check_formattable, opened_for_formatting
from pgfsbench.provision.target import PreparedTarget, Provisioning
from pgfsbench.provision.volume import Joined, join
from pgfsbench.provision.volume import unavailable_reason as volume_unavailable
from pgfsbench.provision.zfs_pool import make_pool


def _sysfs(device: str) -> Path:
    rdev = os.stat(device).st_rdev
    return Path(os.path.realpath(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}"))


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def device_size_mb(device: str) -> int:
    sectors = _read(_sysfs(device) / "size")  # always in 512-byte units
    return int(sectors) * 512 // 2**20 if sectors else 0


def _describe(device: str) -> list[str]:
    """What kind of storage this is, for the record."""
    node = _sysfs(device)
    notes = [f"device size: {device_size_mb(device)} MB"]
    queue = node / "queue" if (node / "queue").is_dir() else node.parent / "queue"  # partition
    if (rotational := _read(queue / "rotational")) is not None:
        notes.append(f"device rotational: {'yes' if rotational == '1' else 'no'}")
    if model := _read(node / "device" / "model"):
        notes.append(f"device model: {model}")
    return notes


def checked_members(
    spec: Target, allowed: Iterable[str], wipe_signatures: bool
) -> list[CheckedDevice]:
    """Every device the target names, each passing the safety check (DESIGN §5)."""
    checked = []
    for given in map(str, spec.member_devices):
        try:
            checked.append(check_formattable(given, allowed, wipe_signatures))
        except UserError as exc:
            raise UserError(f"target '{spec.name}': {exc}") from None
    if len({c.rdev for c in checked}) != len(checked):
        raise UserError(
            f"target '{spec.name}': devices names one device twice (by two "
            "names): name each device once"
        )
    return checked


@contextlib.contextmanager
def device_target(
    spec: Target, ledger: Ledger, owner: proc.RunAs, allowed: Iterable[str], wipe_signatures: bool
) -> Iterator[PreparedTarget]:
    name, fs = spec.name, spec.fs
    if not spec.member_devices or fs is None:
        raise ValueError(f"target '{name}' is not a device target")
    # Safety first: nothing below may run on a device that fails it.
    checked = checked_members(spec, allowed, wipe_signatures)
    if named := device_options([*spec.mkfs, *spec.mount.split(",")]):
        raise UserError(
            f"target '{name}': option '{named[0]}' names another device, which "
            "mkfs could write to; a device target formats only its own device: "
            "remove the option"
        )
    if reason := unavailable_reason(fs) or volume_unavailable(spec.volume):
        raise UserError(f"target '{name}': {reason}")
    fs_recipe = recipe(fs)
    for c in checked:  # resolved once, by the check: the plan's name is not looked up again
        if (size_mb := device_size_mb(c.path)) < fs_recipe.min_size_mb:
            raise UserError(
                f"target '{name}': {c.given} has {size_mb} MB, {fs} needs at "
                f"least {fs_recipe.min_size_mb} MB; name a larger device"
            )

    commands: list[proc.CommandResult] = []
    notes = []
    for c in checked:
        notes += [f"device: {c.shown}", *_describe(c.path)]
    if fs_recipe.pooled:
        with contextlib.ExitStack() as undo:
            yield _pool_on_devices(
                spec, checked, Provisioning(ledger, undo, commands), owner, notes
            )
        return
    with contextlib.ExitStack() as undo:
        p = Provisioning(ledger, undo, commands)
        try:
            with contextlib.ExitStack() as held:
                fds = [held.enter_context(opened_for_formatting(c)) for c in checked]
                joined = _format(spec, fs_recipe, checked, fds, p, notes)
        except UserError as exc:
            raise UserError(f"target '{name}': {exc}") from None

        for argv in fs_recipe.before_mount(
            [c.path for c in checked] if spec.volume is None else [joined.device]
        ):
            commands.append(proc.run(tool_path(argv)))
        device = checked[0].path if spec.volume is None else joined.device
        workdir, mount = mount_private(name, fs, device, spec.mount, p, owner)
        target = PreparedTarget(
            name=name,
            kind="device",
            fs=fs,
            workdir=workdir,
            device=device,
            mount=mount,
            commands=commands,
            notes=notes,
            devices=[c.path for c in checked],
            layout=joined.layout,
        )
        yield target


def _pool_on_devices(
    spec: Target, checked: list[CheckedDevice], p: Provisioning, owner: proc.RunAs, notes: list[str]
) -> PreparedTarget:
    """ZFS on the checked devices. The zfs-fuse daemon, not a child of ours, opens them,
    so it gets the paths the check resolved, verified once more to be the checked
    devices."""
    paths = [c.path for c in checked]
    assert spec.fs is not None  # a device target names its filesystem (the plan model checks)
    try:
        with contextlib.ExitStack() as held:
            fds = [held.enter_context(opened_for_formatting(c)) for c in checked]
            for c, fd in zip(checked, fds):
                if c.signatures:
                    notes.append(
                        f"signatures wiped on {c.path} before zpool create "
                        f"(--wipe-signatures): {'; '.join(c.signatures)}"
                    )
                    p.commands.append(
                        proc.run(
                            [proc.which("wipefs") or "wipefs", "--all", f"/proc/self/fd/{fd}"],
                            pass_fds=(fd,),
                        )
                    )
    except UserError as exc:
        raise UserError(f"target '{spec.name}': {exc}") from None
    notes.append(
        "the pool was made on the checked paths (the ZFS daemon opens them by "
        "name), verified by device number just before"
    )
    workdir, mount, more = make_pool(spec, paths, p, owner)
    layout = {"members": paths, **({"spanned_by": "zfs"} if len(paths) > 1 else {})}
    return PreparedTarget(
        name=spec.name,
        kind="device",
        fs=spec.fs,
        workdir=workdir,
        device=paths[0],
        mount=mount,
        commands=p.commands,
        notes=[*notes, *more],
        devices=paths,
        layout=layout,
    )


def _format(
    spec: Target,
    fs_recipe,
    checked: list[CheckedDevice],
    fds: list[int],
    p: Provisioning,
    notes: list[str],
) -> Joined:
    """Wipe (if allowed), join and mkfs the checked devices while their descriptors,
    verified to be the checked devices, are held open."""
    # The tools open a device through our descriptor, verified just now to be the
    # device that was checked: no path is resolved in between.
    nodes = [f"/proc/self/fd/{fd}" for fd in fds]
    several = len(checked) > 1
    for c, node in zip(checked, nodes):
        notes.append(
            f"formatted through {node}: a descriptor on {c.path}, checked to be "
            f"device {os.major(c.rdev)}:{os.minor(c.rdev)} just before"
        )
        if c.signatures:
            notes.append(
                "signatures wiped before mkfs (--wipe-signatures)"
                + (f" on {c.path}" if several else "")
                + ": "
                + "; ".join(c.signatures)
            )
            p.commands.append(
                proc.run([proc.which("wipefs") or "wipefs", "--all", node], pass_fds=tuple(fds))
            )
    if spec.volume is None:
        options, _ = stripe_mkfs_options(spec)
        layout: dict = {"members": [c.path for c in checked]}  # as PreparedTarget.layout
        if len(checked) > 1:
            layout["spanned_by"] = spec.fs
        # The recipe's force flags are safe here: the check above is stricter than
        # mkfs's own (single -F of mke2fs still refuses a mounted device).
        p.commands.append(
            proc.run(
                tool_path(fs_recipe.mkfs_argv(nodes[0], options, nodes[1:])), pass_fds=tuple(fds)
            )
        )
        return Joined(nodes[0], nodes[1:], options, layout)
    # mdadm and LVM find their members by /dev path (LVM filters devices by name), not
    # through a descriptor: they get the paths the check resolved, which the descriptors
    # opened just now (without following links) showed to be the checked devices.
    notes.append(
        "the volume was made on the checked paths (mdadm and LVM look devices "
        "up by name), verified by device number just before"
    )
    joined = join(spec, fs_recipe, [member_record(c.path, None) for c in checked], p)
    p.commands.append(proc.run(tool_path(fs_recipe.mkfs_argv(joined.device, joined.mkfs_options))))
    return joined
