"""What the throttle (throttle.py) and the memory limit (memory.py) share about cgroups.

Finding the hierarchies this process can see, writing a cgroup file so the kernel's
refusal comes back at once, moving a process into a cgroup, switching a controller on
for a cgroup v2 subtree, and the one releaser of the cgroups both make (ledger kind
``cgroup``).

With cgroup v2 a process is in one cgroup of one hierarchy, so a throttle and a memory
limit on the same target must share: the throttle's cgroup carries ``io.max`` and holds
no process itself (pgfsbench and its tools are in a leaf under it, ``THROTTLE_LEAF``);
the memory cgroup the server starts in is made beside that leaf, under the throttle's
cgroup, whose ``io.max`` then covers the server too (v2 limits are hierarchical). With
cgroup v1 each controller is its own hierarchy and a process is in one cgroup of each,
so the two never meet.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from pgfsbench.errors import UserError
from pgfsbench.ledger import releaser
from pgfsbench.provision.mountinfo import parse_mountinfo

PROC_CGROUP = Path("/proc/self/cgroup")
MOUNTINFO = Path("/proc/self/mountinfo")
# cgroup v2: the throttle's cgroup holds no process (so a memory cgroup may be made
# under it); pgfsbench and the tools it starts go into this child of it.
THROTTLE_LEAF = "pgfsbench"

H = TypeVar("H")


def _inside(path: str, root: str) -> str | None:
    """``path`` (a cgroup as /proc/self/cgroup names it) relative to a mount's root."""
    if root == "/":
        return path.lstrip("/")
    if path == root or path.startswith(root.rstrip("/") + "/"):
        return path[len(root) :].lstrip("/")
    return None


def locate_hierarchies(
    proc_cgroup: str, mountinfo: str, controller: str
) -> list[tuple[int, Path, Path]]:
    """(version, mount point, this process's cgroup in it) of the v1 hierarchy that
    carries ``controller`` and of the v2 one, as this process sees them, v1 first."""
    v1_path: str | None = None
    v2_path: str | None = None
    for line in proc_cgroup.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if controller in controllers.split(","):
            v1_path = path
        elif number == "0" and controllers == "":
            v2_path = path
    found: list[tuple[int, Path, Path]] = []
    for m in parse_mountinfo(mountinfo):
        if m.fs_type not in ("cgroup", "cgroup2"):
            continue
        version, ours = (1, v1_path) if m.fs_type == "cgroup" else (2, v2_path)
        if version == 1 and controller not in m.super_options.split(","):
            continue
        if ours is None or any(v == version for v, _, _ in found):
            continue
        relative = _inside(ours, m.root)
        if relative is None:  # a mount of another part of the hierarchy
            continue
        found.append((version, Path(m.mount_point), Path(m.mount_point) / relative))
    return sorted(found, key=lambda place: place[0])


def v2_lacks(mount: Path, controller: str) -> str | None:
    """Why the cgroup v2 hierarchy at ``mount`` cannot serve: it has no ``controller``
    (one line naming those it has), else None."""
    try:
        controllers = (mount / "cgroup.controllers").read_text().split()
    except OSError:
        controllers = []
    if controller not in controllers:
        return (
            f"cgroup v2 at {mount} has no {controller} controller (it has: "
            f"{', '.join(controllers) or 'none'})"
        )
    return None


def first_usable(
    feature: str,
    needs_root: str,
    find: Callable[[str, str], Sequence[H]],
    usable: Callable[[H], str | None],
    with_unmounted: Callable[[Sequence[H], list[str]], list[str]],
    fix: str,
) -> H | str:
    """The first hierarchy ``find`` gives (from this process's cgroups and mounts) that
    ``usable`` finds no fault with, or why there is none, one line naming ``feature``
    and ending with ``fix``: root is needed (``needs_root`` says why), the cgroups could
    not be read, or every reason ``usable`` gave, to which ``with_unmounted(found,
    reasons)`` adds those of the hierarchies that are not mounted."""
    if os.geteuid() != 0:
        return f"{feature} needs root ({needs_root}): {fix}"
    try:
        hierarchies = find(PROC_CGROUP.read_text(), MOUNTINFO.read_text())
    except OSError as exc:
        return f"{feature}: cannot read this process's cgroups: {exc}: {fix}"
    reasons = []
    for h in hierarchies:
        if (reason := usable(h)) is None:
            return h
        reasons.append(reason)
    reasons = with_unmounted(hierarchies, reasons)
    return f"{feature} is not possible here: {'; '.join(reasons)}: {fix}"


def support(found: object) -> str | None:
    """None when ``found`` is a usable hierarchy, else the one-line reason it is."""
    return found if isinstance(found, str) else None


def write(path: Path, text: str) -> None:
    """One write(2) on an unbuffered fd: the kernel's refusal comes back right here."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def enable_controller(cgroup: Path, controller: str, what: str, fix: str) -> str | None:
    """cgroup v2: ``+controller`` in ``cgroup``'s ``cgroup.subtree_control`` unless it
    is there (left on afterwards: switching it off could strip another run's limits).
    Returns what was done (for the provenance), None when nothing was needed; raises
    UserError naming ``what`` (the feature) and ``fix`` when the kernel refuses."""
    control = cgroup / "cgroup.subtree_control"
    if controller in control.read_text().split():
        return None
    try:
        write(control, f"+{controller}")
    except OSError as exc:
        raise UserError(
            f"{what}: cannot enable the {controller} controller in {control}: {exc.strerror}: {fix}"
        ) from exc
    return f"+{controller} in {control}"


def move_to_cgroup(pid: int, procs: str | Path) -> None:
    """Move process ``pid`` (all its threads) into the cgroup whose ``cgroup.procs`` is
    ``procs``: one write(2), so the kernel's refusal is raised here as OSError."""
    write(Path(procs), str(pid))


@releaser("cgroup")
def remove_recorded(res: dict) -> list[str]:
    """Remove a cgroup pgfsbench made (throttling or memory): whatever is still in it (an
    orphaned tool, or the crashed run's children) goes back to ``home`` (the
    cgroup.procs it came from, else the parent's), then the empty directory is removed."""
    path = res["path"]
    homes = [res.get("home"), os.path.join(os.path.dirname(path), "cgroup.procs")]
    problem = ""
    for attempt in range(10):
        try:
            pids = [int(p) for p in Path(path, "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            return []  # never made, or already removed
        except OSError as exc:
            return [f"could not read {path}/cgroup.procs: {exc.strerror}"]
        for pid in pids:
            for home in filter(None, homes):
                try:
                    move_to_cgroup(pid, home)
                    break
                except ProcessLookupError:
                    break  # it has exited meanwhile
                except OSError as exc:
                    problem = f"could not move pid {pid} to {home}: {exc.strerror}"
        try:
            os.rmdir(path)
            return []
        except FileNotFoundError:
            return []
        except OSError as exc:
            problem = f"could not remove cgroup {path}: {exc.strerror}" + (
                f" (pids found in it: {', '.join(map(str, pids))})" if pids else ""
            )
        time.sleep(0.1 * (attempt + 1))
    return [problem]
