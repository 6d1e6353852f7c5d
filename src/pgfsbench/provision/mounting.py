"""Mounting a freshly made filesystem on a private mount point, the same for every target.

The mount is in the ledger before it happens; its releaser unmounts it, also
after a crash (ending what a killed run left holding files there).
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.filesystems.registry import recipe
from pgfsbench.ledger import releaser
from pgfsbench.provision.mountinfo import MountEntry, mount_of, mount_points
from pgfsbench.provision.target import Provisioning


def mount_private(
    name: str, fs: str, device: str, options: str, p: Provisioning, owner: proc.RunAs
) -> tuple[Path, MountEntry]:
    """Mount ``device`` under a new private directory; returns (workdir, mount read back).

    The mount is in the ledger before it happens and unmounted by the undo stack.
    """

    def mount(mount_point: str) -> str:
        p.hold("mount", path=mount_point, device=device)
        p.commands.append(proc.run(recipe(fs).mount_argv(device, mount_point, options)))
        return "mount"

    return on_private_mount(name, fs, mount, owner)


def on_private_mount(
    name: str, fs: str, mount: Callable[[str], str], owner: proc.RunAs
) -> tuple[Path, MountEntry]:
    """Make a new private directory, have ``mount(directory)`` put target ``name``'s
    filesystem there (it holds what it makes in the ledger first, and returns the name
    of the tool that did it, for a message), check the kernel's own account of it, not
    the tool's exit code alone, and make the workdir PostgreSQL's ``owner`` owns in it.
    Returns (workdir, mount read back). Every target's filesystem goes through here:
    mkfs + mount, and a ZFS dataset alike."""
    mount_point = tempfile.mkdtemp(prefix=f"pgfsbench-{name}-")
    os.chmod(mount_point, 0o755)  # the PostgreSQL user must reach its data dir
    tool = mount(mount_point)
    entry = mount_of(mount_point)
    if entry.mount_point != os.path.realpath(mount_point):
        raise UserError(
            f"target '{name}': {tool} reported success but {mount_point} is not a mount point"
        )
    if entry.fs_type not in (recipe(fs).mount_types or {fs}):
        raise UserError(
            f"target '{name}': asked for {fs} but the kernel mounted "
            f"{entry.fs_type} at {mount_point}"
        )
    workdir = Path(mount_point) / "pgfsbench"
    workdir.mkdir()
    os.chown(workdir, owner.uid, owner.gid)
    return workdir, entry


def _mounted(path: str) -> bool:
    return os.path.realpath(path) in mount_points()


def users_of(path: str) -> set[int]:
    """Processes with their cwd or an open file under ``path``."""
    prefix = os.path.realpath(path).rstrip("/") + "/"
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = [entry / "cwd", *(entry / "fd").iterdir()]
            for link in links:
                if (os.readlink(link) + "/").startswith(prefix):
                    pids.add(int(entry.name))
                    break
        except OSError:
            continue
    return pids


def release_busy(
    gone: Callable[[], bool],
    release: Callable[[], bool],
    attempts: int,
    path: str | None = None,
    kill_from: int = 0,
) -> bool:
    """Take apart something of ours that may be busy (an unmount, a ZFS dataset's or
    pool's destroy): until ``gone()``, try ``release()``, and wait a little longer after
    each failed try. With ``path`` (where it is mounted), from attempt ``kill_from`` on,
    a failed try also ends the processes holding files under ``path`` (a tool orphaned
    by a killed run, pgbench or pg_test_fsync: nothing else can be on our own mount).
    False if still there after ``attempts`` tries."""
    for attempt in range(attempts):
        if gone() or release():
            return True
        if path is not None and attempt >= kill_from:
            for pid in users_of(path):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.5 * (attempt + 1))
    return False


@releaser("mount")
def unmount_recorded(res: dict) -> list[str]:
    path = res["path"]
    if not release_busy(
        lambda: not _mounted(path),
        lambda: proc.run(["umount", path], check=False).ok,
        attempts=8,
        path=path,
        kill_from=1,
    ):
        return [f"could not unmount {path}: still busy"]
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return [f"could not remove mount point {path}: {exc}"]
    return []
