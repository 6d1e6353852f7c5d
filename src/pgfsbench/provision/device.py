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
from pgfsbench.provision.filesystems import tool_path, unavailable_reason
from pgfsbench.provision.mounting import mount_private
from pgfsbench.provision.safety import check_formattable, opened_for_formatting
from pgfsbench.provision.target import PreparedTarget
from pgfsbench.provision.zfs import make_pool


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


def _pool_on_device(spec: Target, checked, ledger: Ledger, owner: proc.RunAs,
                    undo: contextlib.ExitStack, commands: list, notes: list[str]
                    ) -> PreparedTarget:
    """ZFS on the checked device. The zfs-fuse daemon, not a child of ours, opens it, so
    it gets the path the check resolved, verified once more to be the checked device."""
    try:
        with opened_for_formatting(checked) as fd:
            if checked.signatures:
                notes.append("signatures wiped before zpool create (--wipe-signatures): "
                             + "; ".join(checked.signatures))
                commands.append(proc.run([proc.which("wipefs") or "wipefs", "--all",
                                          f"/proc/self/fd/{fd}"], pass_fds=(fd,)))
    except UserError as exc:
        raise UserError(f"target '{spec.name}': {exc}") from None
    workdir, mount, more = make_pool(spec, [checked.path], ledger, undo, owner, commands)
    return PreparedTarget(name=spec.name, kind="device", fs=spec.fs, workdir=workdir,
                          device=checked.path, mount=mount, commands=commands,
                          notes=[*notes, *more])


@contextlib.contextmanager
def device_target(spec: Target, ledger: Ledger, owner: proc.RunAs, allowed: Iterable[str],
                  wipe_signatures: bool) -> Iterator[PreparedTarget]:
    name, fs = spec.name, spec.fs
    if spec.device is None or fs is None:
        raise ValueError(f"target '{name}' is not a device target")
    given = str(spec.device)
    # Safety first: nothing below may run on a device that fails it.
    try:
        checked = check_formattable(given, allowed, wipe_signatures)
    except UserError as exc:
        raise UserError(f"target '{name}': {exc}") from None
    if named := device_options([*spec.mkfs, *spec.mount.split(",")]):
        raise UserError(f"target '{name}': option '{named[0]}' names another device, which "
                        "mkfs could write to; a device target formats only its own device: "
                        "remove the option")
    if reason := unavailable_reason(fs):
        raise UserError(f"target '{name}': {reason}")
    fs_recipe = recipe(fs)
    device = checked.path  # resolved once, by the check: the plan's name is not looked up again
    if (size_mb := device_size_mb(device)) < fs_recipe.min_size_mb:
        raise UserError(f"target '{name}': {given} has {size_mb} MB, {fs} needs at least "
                        f"{fs_recipe.min_size_mb} MB; name a larger device")

    commands: list[proc.CommandResult] = []
    notes = [f"device: {checked.shown}", *_describe(device)]
    if fs_recipe.pooled:
        with contextlib.ExitStack() as undo:
            yield _pool_on_device(spec, checked, ledger, owner, undo, commands, notes)
        return
    with contextlib.ExitStack() as undo:
        try:
            with opened_for_formatting(checked) as fd:
                # The tools open the device through our descriptor, verified just now to
                # be the device that was checked: no path is resolved in between.
                node = f"/proc/self/fd/{fd}"
                notes.append(f"formatted through {node}: a descriptor on {device}, checked "
                             f"to be device {os.major(checked.rdev)}:{os.minor(checked.rdev)} "
                             "just before")
                if checked.signatures:
                    notes.append("signatures wiped before mkfs (--wipe-signatures): "
                                 + "; ".join(checked.signatures))
                    commands.append(proc.run([proc.which("wipefs") or "wipefs", "--all", node],
                                             pass_fds=(fd,)))
                # The recipe's force flags are safe here: the check above is stricter than
                # mkfs's own (single -F of mke2fs still refuses a mounted device).
                commands.append(proc.run(tool_path(fs_recipe.mkfs_argv(node, spec.mkfs)),
                                         pass_fds=(fd,)))
        except UserError as exc:
            raise UserError(f"target '{name}': {exc}") from None

        workdir, mount = mount_private(name, fs, device, spec.mount, ledger, undo, owner,
                                       commands)
        target = PreparedTarget(name=name, kind="device", fs=fs, workdir=workdir,
                                device=device, mount=mount, commands=commands, notes=notes)
        yield target
