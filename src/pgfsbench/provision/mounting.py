"""Mounting a freshly made filesystem on a private mount point, the same for every target."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.filesystems.registry import recipe
from pgfsbench.ledger import Ledger
from pgfsbench.provision.mountinfo import MountEntry, mount_of


def mount_private(name: str, fs: str, device: str, options: str, ledger: Ledger,
                  undo: contextlib.ExitStack, owner: proc.RunAs,
                  commands: list[proc.CommandResult]) -> tuple[Path, MountEntry]:
    """Mount ``device`` under a new private directory; returns (workdir, mount read back).

    The mount is in the ledger before it happens and unmounted by ``undo``; the
    kernel's own account of it is checked, not mount(8)'s exit code alone.
    """
    mount_point = tempfile.mkdtemp(prefix=f"pgfsbench-{name}-")
    os.chmod(mount_point, 0o755)  # the PostgreSQL user must reach its data dir
    res = ledger.add("mount", path=mount_point, device=device)
    undo.callback(ledger.release, res)
    commands.append(proc.run(recipe(fs).mount_argv(device, mount_point, options)))
    mount = mount_of(mount_point)
    if mount.mount_point != os.path.realpath(mount_point):
        raise UserError(f"target '{name}': mount reported success but {mount_point} is not "
                        "a mount point")
    if mount.fs_type != fs:
        raise UserError(f"target '{name}': asked for {fs} but the kernel mounted "
                        f"{mount.fs_type}")
    workdir = Path(mount_point) / "pgfsbench"
    workdir.mkdir()
    os.chown(workdir, owner.uid, owner.gid)
    return workdir, mount
