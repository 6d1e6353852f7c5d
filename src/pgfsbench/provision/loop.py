"""Loop-image targets: sparse image → loop device → mkfs → private mount.

Every step is put in the ledger before it happens, so teardown (or
``pgfsbench cleanup`` after a crash) can undo exactly what was done.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.filesystems.recipe import Recipe
from pgfsbench.filesystems.registry import recipe
from pgfsbench.ledger import Ledger, releaser
from pgfsbench.plan.fsoptions import device_options
from pgfsbench.plan.model import Target
from pgfsbench.provision.filesystems import tool_path, unavailable_reason
from pgfsbench.provision.members import member_record
from pgfsbench.provision.mounting import mount_private
from pgfsbench.provision.target import PreparedTarget, Provisioning
from pgfsbench.provision.volume import join
from pgfsbench.provision.volume import unavailable_reason as volume_unavailable
from pgfsbench.provision.zfs_pool import make_pool
from pgfsbench.units import size_to_mb


def _attach(image: Path, direct_io: bool, commands: list) -> str:
    # Direct I/O on the loop device keeps the host page cache from double-caching
    # (and flattering) the target; older kernels or odd backing filesystems refuse it,
    # so asking for it falls back to buffered (the effective state is noted).
    attempts = [["losetup", "--find", "--show", str(image)]]
    if direct_io:
        attempts.insert(0, ["losetup", "--find", "--show", "--direct-io=on", str(image)])
    for argv in attempts:
        result = proc.run(argv, check=False)
        commands.append(result)
        if result.ok:
            return result.stdout.strip()
    raise CommandFailed(result)


def _image_on_loop(
    image: Path, size_bytes: int, direct_io: bool, p: Provisioning, keep: bool
) -> str:
    """A sparse image attached to a loop device, both in the ledger before they exist."""
    if not keep:  # a kept image stays out of the ledger: cleanup must not take it
        p.hold("file", path=str(image))
    with open(image, "wb") as f:
        f.truncate(size_bytes)  # sparse: costs only what is written
    res = p.hold("loop", image=str(image))
    device = _attach(image, direct_io, p.commands)
    res["device"] = device
    p.ledger.save()
    return device


def _refuse_device_options(spec: Target) -> None:
    # The plan refuses these already; checked again on the machine that formats.
    if named := device_options([*spec.mkfs, *spec.mount.split(",")]):
        raise UserError(
            f"target '{spec.name}': '{named[0]}' names a device; pgfsbench makes "
            "the log device itself: remove it and set log_size instead"
        )


def _mkfs_with_log(
    spec: Target,
    fs_recipe: Recipe,
    device: str,
    mkfs_options: list[str],
    log_device: str,
    log_bytes: int,
    commands: list,
) -> str:
    """mkfs ``device`` with its log on ``log_device``; returns the mount options to use."""
    if fs_recipe.log_device is None:  # the plan refuses it already
        raise UserError(f"target '{spec.name}': {spec.fs} cannot use an external log device")
    setup = fs_recipe.log_device(mkfs_options, log_device, log_bytes)
    for argv in setup.before_mkfs:
        commands.append(proc.run(tool_path(argv)))
    commands.append(proc.run(tool_path(fs_recipe.mkfs_argv(device, setup.mkfs_options))))
    return ",".join([*(o for o in spec.mount.split(",") if o), *setup.mount_options])


def attach_images(spec: Target, images_dir: Path, p: Provisioning, keep: bool) -> list[dict]:
    """The target's ``images`` loop images of ``size`` each, attached; member records
    (device + image), in the ledger before each exists and undone by the undo stack."""
    images_dir.mkdir(parents=True, exist_ok=True)
    names = (
        [f"{spec.name}.img"]
        if spec.images == 1
        else [f"{spec.name}-{i}.img" for i in range(1, spec.images + 1)]
    )
    members = []
    for image_name in names:
        image = images_dir / image_name
        device = _image_on_loop(image, spec.size_mb * 2**20, spec.direct_io, p, keep)
        members.append(member_record(device, str(image)))
    return members


def images_free_mb_needed(spec: Target) -> int:
    log_mb = size_to_mb(spec.log_size) if spec.log_size else 0
    return spec.size_mb * spec.images + log_mb


def loop_direct_io(device: str) -> bool | None:
    flag = Path(f"/sys/block/{Path(device).name}/loop/dio")
    try:
        return flag.read_text().strip() == "1"
    except OSError:
        return None


def _direct_io_note(label: str, device: str, asked: bool) -> str:
    dio = loop_direct_io(device)
    state = "on" if dio else "off" if dio is False else "unknown"
    refused = (
        " (asked on: refused by the kernel or the backing filesystem)"
        if asked and dio is False
        else ""
    )
    return f"{label} direct I/O: {state}{refused}"


@contextlib.contextmanager
def loop_target(
    spec: Target, images_dir: Path, ledger: Ledger, keep: bool, owner: proc.RunAs
) -> Iterator[PreparedTarget]:
    name, fs, size_mb = spec.name, spec.fs, spec.size_mb
    assert fs is not None  # a loop target names its filesystem (the plan model checks)
    mount_options = spec.mount
    reason = unavailable_reason(fs)
    if reason:
        raise UserError(f"target '{name}': {reason}")
    fs_recipe = recipe(fs)
    if size_mb < fs_recipe.min_size_mb:
        raise UserError(
            f"target '{name}': {fs} needs an image of at least "
            f"{fs_recipe.min_size_mb} MB, the plan gives {size_mb} MB"
        )
    _refuse_device_options(spec)
    log_mb = size_to_mb(spec.log_size) if spec.log_size else 0
    if spec.log_size is not None and log_mb < 1:
        raise UserError(f"target '{name}': log_size {spec.log_size} is under 1 MB")
    if reason := volume_unavailable(spec.volume):
        raise UserError(f"target '{name}': {reason}")
    images_dir.mkdir(parents=True, exist_ok=True)
    free_mb = os.statvfs(images_dir).f_bavail * os.statvfs(images_dir).f_frsize // 2**20
    if free_mb < (need_mb := images_free_mb_needed(spec)):
        raise UserError(
            f"target '{name}': {images_dir} has {free_mb} MB free, the image"
            f"{'s need' if need_mb > size_mb else ' needs'} {need_mb} MB; free "
            "space or make the plan's image smaller"
        )
    with contextlib.ExitStack() as undo:
        p = Provisioning(ledger, undo)
        commands = p.commands
        members = attach_images(spec, images_dir, p, keep)
        joined = join(spec, fs_recipe, members, p)
        device = joined.device
        log_device = None
        notes: list[str] = []
        if fs_recipe.pooled:  # ZFS: a pool on every member and a dataset, not mkfs + mount
            workdir, mount, notes = make_pool(spec, [device, *joined.more_devices], p, owner)
        else:
            if spec.log_size is not None:
                log_device = _image_on_loop(
                    images_dir / f"{name}-log.img", log_mb * 2**20, spec.direct_io, p, keep
                )
                mount_options = _mkfs_with_log(
                    spec,
                    fs_recipe,
                    device,
                    joined.mkfs_options,
                    log_device,
                    log_mb * 2**20,
                    commands,
                )
            else:
                commands.append(
                    proc.run(
                        tool_path(
                            fs_recipe.mkfs_argv(device, joined.mkfs_options, joined.more_devices)
                        )
                    )
                )
            for argv in fs_recipe.before_mount([device, *joined.more_devices]):
                commands.append(proc.run(tool_path(argv)))

            # Unmounted first by undo: before any volume is taken apart or loop detached.
            workdir, mount = mount_private(name, fs, device, mount_options, p, owner)
        target = PreparedTarget(
            name=name,
            kind="loop",
            fs=fs,
            workdir=workdir,
            device=device,
            mount=mount,
            commands=commands,
            log_device=log_device,
            devices=[m["device"] for m in members],
            layout=joined.layout,
            notes=notes,
        )
        for i, member in enumerate(members):
            label = "loop" if len(members) == 1 else f"loop {i + 1}"
            target.notes.append(_direct_io_note(label, member["device"], spec.direct_io))
        if log_device is not None:
            target.notes.append(_direct_io_note("log loop", log_device, spec.direct_io))
        yield target


@releaser("file")
def remove_image(res: dict) -> list[str]:
    Path(res["path"]).unlink(missing_ok=True)
    return []


def _attached_loops(image: str) -> list[str]:
    result = proc.run(["losetup", "-j", image, "-O", "NAME", "-n"], check=False)
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


@releaser("loop")
def detach_recorded(res: dict, pending_wait: float = 5.0) -> list[str]:
    failed = []
    # The device may not have been recorded yet if we crashed right after attach:
    # find every loop device backed by the image.
    for device in _attached_loops(res["image"]):
        for attempt in range(10):
            if proc.run(["losetup", "-d", device], check=False).ok:
                break
            time.sleep(0.3 * (attempt + 1))
        else:
            failed.append(device)
    # A device someone still holds open (udev probing it after a umount, say) is only
    # marked for detaching, and goes at the last close: wait for that, briefly.
    deadline = time.monotonic() + pending_wait
    while (
        held := [d for d in _attached_loops(res["image"]) if d not in failed]
    ) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [f"could not detach {d}" for d in failed] + [
        f"{d} is still backed by {res['image']} {pending_wait:g} s after detaching: "
        "something holds it open"
        for d in held
    ]
