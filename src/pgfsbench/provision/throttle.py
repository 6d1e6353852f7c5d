"""Throttled targets: emulate a slower disk with cgroup block-I/O limits.

A target's ``throttle`` caps the IOPS and bytes per second that pgfsbench's own
processes may do on the target's block device. For the duration of the target's
visit pgfsbench moves *itself* into a fresh cgroup carrying the limits, so every
process it starts afterwards (PostgreSQL, pgbench, fio, dd, ...) inherits it;
the limits name only that one device, so the results database and other files
on other disks are unaffected. On exit pgfsbench moves back to the cgroup it
came from and the cgroup is removed (anything still in it is moved out first).

The cgroup goes into the ledger before it is created: normal exit and
``pgfsbench cleanup`` after a crash remove it through the same releaser
(``cgroups.remove_recorded``).

Two mechanisms, cgroup v1 preferred when present:

- cgroup v1 ``blkio``: ``blkio.throttle.{read,write}_{iops,bps}_device`` files,
  one ``MAJ:MIN VALUE`` line each;
- cgroup v2 ``io``: one ``io.max`` line ``MAJ:MIN riops=.. wiops=.. rbps=.. wbps=..``;
  the ``io`` controller must be enabled in the parent's ``cgroup.subtree_control``
  (pgfsbench writes ``+io`` there when it is available but not enabled, and leaves
  it enabled: disabling it could strip the limits of another run). pgfsbench moves
  into a leaf under the limited cgroup (``pgfsbench-<pid>-<n>/pgfsbench``), not into
  it, so that a memory limit on the same target can put the server beside the leaf,
  under the same ``io.max`` (cgroups.py: v2 has one cgroup per process).

Only cgroup v1 was exercised on our CI machine; the v2 path is covered by unit
tests of the lines it writes, not by a real kernel.

What is throttled: block I/O that pgfsbench's processes submit themselves. With
cgroup v1 that is direct I/O, reads, and writeback started by their own
fsync/fdatasync; the kernel's background writeback (flusher threads) and
filesystem journal threads are not attributed to the cgroup and so are not
limited. cgroup v2 with the memory and io controllers also attributes buffered
writeback.

The cgroup is made at the top of the hierarchy (``pgfsbench-<pid>-<n>``): in
cgroup v2 only the root may hold processes and enable controllers for its
children at once, and v1 throttling is not hierarchical anyway.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Throttle
from pgfsbench.provision import cgroups
from pgfsbench.provision.cgroups import THROTTLE_LEAF, locate_hierarchies, move_to_cgroup, write
from pgfsbench.units import size_to_bytes

SYS_DEV_BLOCK = Path("/sys/dev/block")

# limit → its cgroup v1 file, and its cgroup v2 io.max key
V1_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}
V2_KEYS = {"read_iops": "riops", "write_iops": "wiops", "read_bps": "rbps", "write_bps": "wbps"}

_FIX = "remove 'throttle' from the target, or run where it is possible"
_numbers = itertools.count()


# --- what gets written --------------------------------------------------------------


def limit_values(limits: Throttle) -> dict[str, int]:
    """The limits that are set, sizes in bytes: ``{"write_iops": 200, "read_bps": 20971520}``."""
    values = {
        "read_iops": limits.read_iops,
        "write_iops": limits.write_iops,
        "read_bps": size_to_bytes(limits.read_bps) if limits.read_bps else None,
        "write_bps": size_to_bytes(limits.write_bps) if limits.write_bps else None,
    }
    return {key: value for key, value in values.items() if value}


def v1_lines(majmin: str, limits: Throttle) -> dict[str, str]:
    """cgroup v1: ``{file name: "MAJ:MIN VALUE"}``, one file per limit set."""
    return {V1_FILES[key]: f"{majmin} {value}" for key, value in limit_values(limits).items()}


def v2_line(majmin: str, limits: Throttle) -> str:
    """cgroup v2: the one ``io.max`` line, e.g. ``7:3 wiops=200 wbps=20971520``."""
    return " ".join(
        [majmin, *(f"{V2_KEYS[key]}={value}" for key, value in limit_values(limits).items())]
    )


def writes_for(version: int, majmin: str, limits: Throttle) -> dict[str, str]:
    """The cgroup files to write, and what, for a hierarchy of ``version`` (1 or 2)."""
    return v1_lines(majmin, limits) if version == 1 else {"io.max": v2_line(majmin, limits)}


# --- which device ----------------------------------------------------------------------


def device_number(device: str, sys_dev_block: Path = SYS_DEV_BLOCK) -> tuple[str, str | None]:
    """``MAJ:MIN`` to throttle for ``device``, and a note when it is not the device itself.

    The kernel throttles whole disks only: for a partition the limit goes on its disk
    (which then also covers pgfsbench's own I/O to that disk's other partitions).
    """
    try:
        st = os.stat(device)
    except OSError as exc:
        raise UserError(f"throttle: cannot use {device}: {exc.strerror}") from exc
    if not stat.S_ISBLK(st.st_mode):
        raise UserError(
            f"throttle: {device} is not a block device; throttling needs the "
            f"target's own block device (a loop or device target)"
        )
    majmin = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    whole, disk = whole_disk(majmin, sys_dev_block)
    if disk is None:
        return majmin, None
    return whole, (
        f"{device} ({majmin}) is a partition; the kernel throttles whole "
        f"disks, so the limits are on {disk} ({whole})"
    )


def whole_disk(majmin: str, sys_dev_block: Path = SYS_DEV_BLOCK) -> tuple[str, str | None]:
    """For a partition its disk's ``MAJ:MIN`` and name; else ``(majmin, None)``."""
    node = sys_dev_block / majmin
    if not (node / "partition").exists():
        return majmin, None
    disk = node.resolve().parent
    return (disk / "dev").read_text().strip(), disk.name


# --- where the cgroups are ---------------------------------------------------------------


@dataclass(frozen=True)
class Hierarchy:
    version: int  # 1: the v1 blkio hierarchy; 2: the unified hierarchy
    mount: Path  # its mount point: our cgroups are made here
    home: Path  # the cgroup this process is in now

    @property
    def mechanism(self) -> str:
        return "cgroup v1 blkio" if self.version == 1 else "cgroup v2 io.max"


def find_hierarchies(proc_cgroup: str, mountinfo: str) -> list[Hierarchy]:
    """The v1 blkio and the v2 hierarchy this process can see, v1 first."""
    return [Hierarchy(*place) for place in locate_hierarchies(proc_cgroup, mountinfo, "blkio")]


def _usable(h: Hierarchy) -> str | None:
    """Why ``h`` cannot throttle, or None."""
    if h.version == 1:
        if not (h.mount / V1_FILES["write_iops"]).exists():
            return (
                f"cgroup v1 blkio at {h.mount} has no throttling files (kernel built "
                "without CONFIG_BLK_DEV_THROTTLING)"
            )
    elif reason := cgroups.v2_lacks(h.mount, "io"):
        return reason
    if not h.home.is_dir():
        return f"cannot find this process's own cgroup ({h.home})"
    if not os.access(h.mount, os.W_OK):
        return f"{h.mount} is not writable (read-only cgroup mount?)"
    return None


def _hierarchy() -> Hierarchy | str:
    """The hierarchy to throttle in, or why there is none (one line)."""
    return cgroups.first_usable(
        "throttle",
        "it creates a cgroup and moves pgfsbench into it",
        find_hierarchies,
        _usable,
        _with_unmounted,
        _FIX,
    )


def _with_unmounted(found: Sequence[Hierarchy], reasons: list[str]) -> list[str]:
    """``reasons`` (v1's first), with a missing v1 hierarchy said first, a missing v2
    one last."""
    versions = {h.version for h in found}
    return (
        ([] if 1 in versions else ["no cgroup v1 blkio hierarchy is mounted"])
        + reasons
        + ([] if 2 in versions else ["no cgroup v2 hierarchy is mounted"])
    )


def throttle_support() -> str | None:
    """None when a target can be throttled on this machine, else a one-line reason."""
    return cgroups.support(_hierarchy())


# --- doing it ---------------------------------------------------------------------------


@contextlib.contextmanager
def throttled(device: str | None, limits: Throttle | None, ledger: Ledger) -> Iterator[dict]:
    """Run the block with this process (and so everything it starts) limited on ``device``.

    ``limits`` None: nothing happens and ``{}`` is yielded. Otherwise yields the
    provenance record ``{"mechanism": "cgroup v1 blkio", "device": "7:3",
    "device_path": "/dev/loop3", "limits": {"write_iops": 200}, "cgroup": path,
    "written": {file: line}, "effective": {file: content read back},
    "release_problems": [...]}`` (``release_problems`` is filled on exit; ``note``
    appears when the limit is on a partition's disk, ``enabled`` when cgroup v2's io
    controller had to be switched on).

    Raises UserError when throttling is not possible here (see
    ``throttle_support``) or the kernel refuses the limits. Call it after the
    target's device exists and before anything that should be throttled starts.
    Nesting it does not combine limits (cgroup v1 throttling is not hierarchical).
    The record's ``procs`` is the cgroup.procs pgfsbench is in (cgroup v2: the leaf
    under ``cgroup``), ``version`` the cgroup version (memory.py reads both).
    """
    if limits is None:
        yield {}
        return
    if device is None:
        raise UserError(
            "throttle needs the target's own block device; this target has none "
            "(a dir target): remove 'throttle' or use a loop or device target"
        )
    found = _hierarchy()
    if isinstance(found, str):
        raise UserError(found)
    majmin, note = device_number(device)
    writes = writes_for(found.version, majmin, limits)
    path = found.mount / f"pgfsbench-{os.getpid()}-{next(_numbers)}"
    # cgroup v2: pgfsbench goes into a leaf under the limited cgroup, which then holds
    # no process and may take a memory cgroup beside the leaf (cgroups.py)
    inner = path / THROTTLE_LEAF if found.version == 2 else path
    record: dict = {
        "mechanism": found.mechanism,
        "version": found.version,
        "device": majmin,
        "device_path": device,
        "limits": limit_values(limits),
        "cgroup": str(path),
        "procs": str(inner / "cgroup.procs"),
        "written": writes,
        "effective": {},
        "release_problems": [],
    }
    if note:
        record["note"] = note
    if found.version == 2 and (
        done := cgroups.enable_controller(found.mount, "io", "throttle", _FIX)
    ):
        record["enabled"] = done
    home = found.home / "cgroup.procs"
    made = [ledger.add("cgroup", path=str(path), home=str(home))]
    entered = False
    try:
        try:
            os.mkdir(path)
        except OSError as exc:
            raise UserError(
                f"throttle: cannot create cgroup {path}: {exc.strerror}: {_FIX}"
            ) from exc
        for name, line in writes.items():
            try:
                write(path / name, line)
            except OSError as exc:
                hint = (
                    " (the kernel throttles whole disks, not partitions)"
                    if exc.errno in (errno.ENODEV, errno.EINVAL)
                    else ""
                )
                raise UserError(
                    f"throttle: the kernel refused '{line}' in {path / name} for "
                    f"{device}: {exc.strerror}{hint}: {_FIX}"
                ) from exc
        record["effective"] = {name: (path / name).read_text().strip() for name in writes}
        if inner != path:
            made.append(ledger.add("cgroup", path=str(inner), home=str(home)))
            try:
                os.mkdir(inner)
            except OSError as exc:
                raise UserError(
                    f"throttle: cannot create cgroup {inner}: {exc.strerror}: {_FIX}"
                ) from exc
        try:
            move_to_cgroup(os.getpid(), inner / "cgroup.procs")
        except OSError as exc:
            raise UserError(
                f"throttle: cannot move pgfsbench into {inner}: {exc.strerror}: {_FIX}"
            ) from exc
        entered = True
        yield record
    finally:
        if entered:
            try:
                move_to_cgroup(os.getpid(), home)
            except OSError as exc:  # the releaser moves us to the parent instead
                record["release_problems"].append(
                    f"could not move pgfsbench back to {home}: {exc.strerror}"
                )
        for res in reversed(made):  # the leaf before the cgroup it is in
            record["release_problems"] += ledger.release(res)
