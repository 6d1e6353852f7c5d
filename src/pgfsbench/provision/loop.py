"""Loop-image targets: sparse image → loop device → mkfs → private mount.

Every step is put in the ledger before it happens, so teardown (or
``pgfsbench cleanup`` after a crash) can undo exactly what was done.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Target
from pgfsbench.provision.filesystems import RECIPES, unavailable_reason
from pgfsbench.provision.mountinfo import mount_of
from pgfsbench.provision.target import PreparedTarget


def _attach(image: Path, commands: list) -> str:
    # Direct I/O on the loop device keeps the host page cache from double-caching
    # (and flattering) the target; older kernels or odd backing filesystems refuse it.
    for argv in (["losetup", "--find", "--show", "--direct-io=on", str(image)],
                 ["losetup", "--find", "--show", str(image)]):
        result = proc.run(argv, check=False)
        commands.append(result)
        if result.ok:
            return result.stdout.strip()
    raise CommandFailed(result)


def loop_direct_io(device: str) -> bool | None:
    flag = Path(f"/sys/block/{Path(device).name}/loop/dio")
    try:
        return flag.read_text().strip() == "1"
    except OSError:
        return None


@contextlib.contextmanager
def loop_target(spec: Target, images_dir: Path, ledger: Ledger, keep: bool,
                owner: proc.RunAs) -> Iterator[PreparedTarget]:
    name, fs, size_mb = spec.name, spec.fs, spec.size_mb
    mkfs_options, mount_options = spec.mkfs, spec.mount
    reason = unavailable_reason(fs)
    if reason:
        raise UserError(f"target '{name}': {reason}")
    recipe = RECIPES[fs]
    if size_mb < recipe.min_size_mb:
        raise UserError(f"target '{name}': {fs} needs an image of at least "
                        f"{recipe.min_size_mb} MB, the plan gives {size_mb} MB")
    images_dir.mkdir(parents=True, exist_ok=True)
    free_mb = os.statvfs(images_dir).f_bavail * os.statvfs(images_dir).f_frsize // 2**20
    if free_mb < size_mb:
        raise UserError(f"target '{name}': {images_dir} has {free_mb} MB free, the image "
                        f"needs {size_mb} MB; free space or make the plan's image smaller")
    commands: list[proc.CommandResult] = []
    with contextlib.ExitStack() as undo:
        image = images_dir / f"{name}.img"
        if not keep:  # a kept image stays out of the ledger: cleanup must not take it
            undo.callback(ledger.release, ledger.add("file", path=str(image)))
        with open(image, "wb") as f:
            f.truncate(size_mb * 2**20)  # sparse: costs only what is written

        res = ledger.add("loop", image=str(image))
        undo.callback(ledger.release, res)
        device = _attach(image, commands)
        res["device"] = device
        ledger.save()

        commands.append(proc.run(recipe.mkfs_argv(device, mkfs_options)))

        mount_point = tempfile.mkdtemp(prefix=f"pgfsbench-{name}-")
        os.chmod(mount_point, 0o755)  # the PostgreSQL user must reach its data dir
        res = ledger.add("mount", path=mount_point)
        undo.callback(ledger.release, res)
        argv = ["mount", "-t", fs]
        if mount_options:
            argv += ["-o", mount_options]
        commands.append(proc.run([*argv, device, mount_point]))

        workdir = Path(mount_point) / "pgfsbench"
        workdir.mkdir()
        os.chown(workdir, owner.uid, owner.gid)
        target = PreparedTarget(name=name, kind="loop", fs=fs, workdir=workdir,
                                device=device, mount=mount_of(mount_point),
                                commands=commands)
        dio = loop_direct_io(device)
        target.notes.append(f"loop direct I/O: {'on' if dio else 'off' if dio is False else 'unknown'}")
        if target.mount.fs_type != fs:
            raise UserError(f"target '{name}': asked for {fs} but the kernel mounted "
                            f"{target.mount.fs_type}")
        yield target
