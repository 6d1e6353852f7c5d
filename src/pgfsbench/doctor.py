"""What this machine can do, and the command that fixes each missing piece."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.filesystems.registry import recipes
from pgfsbench.metrics import Series
from pgfsbench.postgres.binaries import find_binaries
from pgfsbench.provision import lvm, md
from pgfsbench.provision.filesystems import unavailable_reason
from pgfsbench.provision.host import tool_versions

DEFAULT_CAMPAIGN_FS = ("ext4", "xfs", "btrfs")  # what `make demo` compares


@dataclass
class Check:
    what: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True  # by the default campaign; doctor exits 1 when one is missing
    state: str = ""  # what a check that is not ok shows instead of missing/optional


def checks() -> list[Check]:
    out = [
        Check(
            "root",
            os.geteuid() == 0,
            "running as root" if os.geteuid() == 0 else "not root",
            "" if os.geteuid() == 0 else "run as root (sudo) to make filesystems",
        )
    ]
    loop_ok = Path("/dev/loop-control").exists() and proc.which("losetup") is not None
    out.append(
        Check(
            "loop devices",
            loop_ok,
            "/dev/loop-control and losetup present"
            if loop_ok
            else "no /dev/loop-control or losetup",
            "" if loop_ok else "apt-get install util-linux; modprobe loop",
        )
    )
    for recipe in recipes():
        fs = recipe.fs
        reason = unavailable_reason(fs)
        untested = " (recipe untested)" if recipe.untested else ""
        out.append(
            Check(
                f"filesystem {fs}{untested}",
                reason is None,
                (
                    "zpool and zfs (see ZFS below)"
                    if recipe.pooled
                    else f"kernel support and {recipe.mkfs_tool}"
                )
                if reason is None
                else reason,
                ""
                if reason is None or "kernel" in reason
                else f"apt-get install {recipe.apt_package}",
                required=fs in DEFAULT_CAMPAIGN_FS,
            )
        )
    out.append(zfs_check())
    out.append(recording_check())
    out += volume_checks()
    bins = None
    try:
        bins = find_binaries()
        out.append(Check("PostgreSQL (embedded)", True, f"{bins.version} at {bins.bindir}"))
    except UserError as exc:
        out.append(Check("PostgreSQL (embedded)", False, str(exc), "make setup"))
    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin")):
        try:
            system = find_binaries(Path(bindir))
            out.append(
                Check(
                    f"PostgreSQL (system {system.version})",
                    True,
                    f"use with --pg-bin {bindir}",
                    required=False,
                )
            )
        except UserError as exc:
            out.append(Check(f"PostgreSQL ({bindir})", False, str(exc), required=False))
    for tool, version in tool_versions(bins).items():
        package = {
            "fio": "fio",
            "mkfs.xfs": "xfsprogs",
            "mkfs.btrfs": "btrfs-progs",
            "mke2fs": "e2fsprogs",
        }.get(tool, "")
        out.append(
            Check(
                tool,
                version is not None,
                version or "not found",
                f"apt-get install {package}" if version is None and package else "",
            )
        )
    out.append(compsize_check())
    out.append(quiet_check())
    return out


def compsize_check() -> Check:
    """compsize reads btrfs's extents for the compression workload (it prints no version)."""
    found = proc.which("compsize")
    return Check(
        "compsize",
        found is not None,
        f"at {found} (btrfs compression sizes)" if found else "not found",
        "" if found else "apt-get install btrfs-compsize",
        required=False,
    )


def recording_check() -> Check:
    """The crash workload's recording layer: /dev/fuse and libfuse (crash/recorder.py)."""
    from pgfsbench.crash.recording import unavailable_reason

    reason = unavailable_reason()
    return Check(
        "crash recording layer (FUSE)",
        reason is None,
        "/dev/fuse and libfuse" if reason is None else reason,
        "" if reason is None else "apt-get install libfuse2 (make setup); modprobe fuse",
        required=False,
    )


def zfs_check() -> Check:
    """Whether zpool and zfs answer: a kernel module, or the zfs-fuse daemon (running, or
    there for a campaign to start)."""
    from pgfsbench.provision import zfs_pool

    what = "ZFS (zpool, zfs)"
    if proc.which("zpool") is None or proc.which("zfs") is None:
        return Check(
            what, False, "zpool/zfs not installed", "apt-get install zfs-fuse", required=False
        )
    if zfs_pool.kernel_module():
        ok = zfs_pool.responds()
        return Check(
            what,
            ok,
            "kernel module" + ("" if ok else ", but 'zpool list' fails"),
            "" if ok else "check 'zpool list'",
            required=False,
        )
    pids = zfs_pool.daemon_pids()
    if zfs_pool.responds():
        return Check(
            what,
            True,
            f"zfs-fuse daemon running (pid {', '.join(map(str, pids))}) "
            "and answering; pgfsbench leaves a daemon it did not start running",
            required=False,
        )
    if pids:
        return Check(
            what,
            False,
            f"zfs-fuse runs (pid {', '.join(map(str, pids))}) but 'zpool list' gets no answer",
            f"kill {pids[0]} (a campaign starts a new one)",
            required=False,
        )
    if reason := zfs_pool.unavailable_reason():
        return Check(what, False, reason, "apt-get install zfs-fuse; modprobe fuse", required=False)
    return Check(
        what,
        True,
        "zfs-fuse installed, daemon not running: a campaign with a ZFS "
        "target starts it and stops it at the end (user space through FUSE: not "
        "kernel ZFS speed)",
        required=False,
    )


def volume_checks() -> list[Check]:
    """md RAID and LVM stripes (a target's ``volume``): kernel driver and tools. Only
    plans with such a volume need them; without, those targets are skipped."""
    out = []
    for what, module, package in (
        ("md RAID volumes", md, "mdadm"),
        ("LVM striped volumes", lvm, "lvm2"),
    ):
        reason = module.unavailable_reason()
        fix = (
            ""
            if reason is None
            else f"apt-get install {package}"
            if "missing" in reason
            else module.KERNEL_FIX + " (until then, targets with this volume are skipped)"
        )
        out.append(
            Check(
                what,
                reason is None,
                "kernel driver and tools present" if reason is None else reason.split(": ")[0],
                fix,
                required=False,
            )
        )
    return out


QUIET_SAMPLE_S = 3.0  # how long doctor watches the machine
# Busy this long in the sample: a burst, not a shell's moment (0.5 s intervals)
QUIET_BUSY_S = 1.0


def quiet_check(
    sample: Callable[[float], dict[str, Series]] | None = None, seconds: float = QUIET_SAMPLE_S
) -> Check:
    """Whether the machine looks quiet enough for a campaign now, from a few seconds of
    the system monitor (others' CPU, steal, the disk under the current directory), by
    the thresholds a campaign judges its visits with (``analysis/caveats/disturbance.py``)."""
    from pgfsbench.analysis.caveats.disturbance import (
        BUSY_OTHER_CPU,
        BUSY_OTHER_DISK_MB_S,
        BUSY_STEAL,
        busy,
        intervals,
    )

    spans = intervals((sample or _sample)(seconds), loop=False)
    total = sum(length for _, length, _ in spans)
    if not spans or total <= 0:
        return Check(
            "machine quiet now", False, "could not sample /proc", required=False, state="unknown"
        )

    def mean(cause: str) -> float:
        have = [(length, v[cause]) for _, length, v in spans if cause in v]
        covered = sum(length for length, _ in have)
        return sum(length * x for length, x in have) / covered if covered else 0.0

    def most(cause: str) -> float:
        return max((v[cause] for _, _, v in spans if cause in v), default=0.0)

    busy_s = sum(length for _, length, v in spans if busy(v))
    saw = (
        f"over {total:.0f} s: others used {mean('other_cpu'):.0f}% of the CPUs (at most "
        f"{most('other_cpu'):.0f}% in a moment), steal {mean('steal'):.0f}%, the disk here "
        f"{mean('other_disk'):,.0f} MB/s (at most {most('other_disk'):,.0f})"
    )
    if busy_s < QUIET_BUSY_S:
        return Check("machine quiet now", True, f"{saw}: quiet enough", required=False)
    return Check(
        "machine quiet now",
        False,
        f"{saw}: busy {busy_s:.1f} of {total:.0f} s (≥ {BUSY_OTHER_CPU:g}% of the CPUs, ≥ "
        f"{BUSY_STEAL:g}% steal or ≥ {BUSY_OTHER_DISK_MB_S:g} MB/s)",
        "a campaign now waits for quiet before its runs, runs the visits others disturb "
        "again (up to a third more time) and leaves out those it cannot: it decides "
        "soonest when the other work is done",
        required=False,
        state="busy",
    )


def _sample(seconds: float) -> dict[str, Series]:
    """The system monitor for ``seconds`` at 0.5 s, pgfsbench itself counted as ours."""
    import time

    from pgfsbench.monitor.devices import device_of
    from pgfsbench.monitor.system import SystemMonitor

    monitor = SystemMonitor(0.5, None, device_of(Path.cwd()))
    monitor.start(time.monotonic())
    try:
        time.sleep(seconds)
    finally:
        monitor.stop()
    return {s.name: s for s in monitor.series()}
