"""fs-snapshot: a filesystem snapshot of the running cluster against pg_basebackup, in
time and space.

btrfs: ``btrfs subvolume snapshot -r`` of the subvolume mounted at the target's mount
point (the one pgfsbench mounted: the data directory lives in it); ZFS: ``zfs snapshot``
of the target's dataset. Both only inside a mount pgfsbench made itself (a loop or
device target), never a directory target's filesystem. The snapshot is recorded in the
ledger before it is taken and removed afterwards (``btrfs subvolume delete``, ``zfs
destroy``), also after a crash (``pgfsbench cleanup``). Elsewhere (ext4, xfs) the
snapshot is not offered: its time is None, ``fs_snapshot.offered`` 0.

Space: the filesystem's free bytes (statvfs, after a sync) before and after each of the
two; the backup is removed again too.

Crash safety and restore: a snapshot of a running cluster is crash-consistent (restored,
PostgreSQL replays its WAL as after a power cut) only when the data directory and its
WAL are in the one snapshot: a pg_wal that is a symbolic link to elsewhere is refused
(not offered, with the reason). To restore, stop the server and roll back to (ZFS) or
copy out of (btrfs) the snapshot; it holds no backup label, so it is not a base backup
for point-in-time recovery unless taken between pg_backup_start and pg_backup_stop.
pg_basebackup's copy with its streamed WAL is a backup that restores anywhere.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.ledger import releaser
from pgfsbench.metrics import Artifact, Metric, WorkloadResult
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

MB = 2**20
SNAPSHOT = "pgfsbench-snapshot"
BACKUP_DIR = "snapshot-basebackup"
WAL_ALLOWANCE = 64 * MB


class FsSnapshotWorkload(WorkloadBase):
    """A filesystem snapshot of the running cluster (btrfs, ZFS) against pg_basebackup."""

    type: Literal["fs-snapshot"]


def mount_of(path: Path, mounts_text: str) -> tuple[str, str, str] | None:
    """(source, mount point, fs type) of the mount holding ``path``, from /proc/self/mounts
    (the longest mount point that is a prefix of it)."""
    best = None
    target = os.path.realpath(path)
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        source, point, fstype = (f.replace("\\040", " ") for f in fields[:3])
        if (target == point or target.startswith(point.rstrip("/") + "/")) and (
            best is None or len(point) > len(best[1])
        ):
            best = (source, point, fstype)
    return best


def snapshot_argv(fstype: str, source: str, point: str) -> tuple[list[str], list[str], str]:
    """(take, remove, name) of the snapshot for a btrfs or ZFS mount."""
    if fstype == "btrfs":
        path = str(Path(point) / SNAPSHOT)
        return (
            ["btrfs", "subvolume", "snapshot", "-r", point, path],
            ["btrfs", "subvolume", "delete", path],
            path,
        )
    name = f"{source}@{SNAPSHOT}"
    return ["zfs", "snapshot", name], ["zfs", "destroy", name], name


def why_not_offered(
    target_kind: str, mount: tuple[str, str, str] | None, workdir: Path, pgdata: Path
) -> str:
    """Why this target gets no snapshot ('' when it does)."""
    if target_kind not in ("loop", "device"):
        return "not offered: a directory target's filesystem is not pgfsbench's to snapshot"
    if mount is None or Path(mount[1]) != workdir.parent:
        return "not offered: the data directory is not on the mount pgfsbench made"
    if mount[2] not in ("btrfs", "zfs", "fuse.zfs"):
        return f"not offered: {mount[2]} has no snapshots"
    if (pgdata / "pg_wal").is_symlink():
        return (
            "refused: pg_wal is a link to another filesystem, so a snapshot of the data "
            "directory alone is not crash-consistent"
        )
    return ""


def snapshot_metrics(
    snap: tuple[float, float] | None, backup: tuple[float, float], why_not: str
) -> list[Metric]:
    """(seconds, bytes used) of the snapshot (None: not offered) and of pg_basebackup."""
    note = why_not or "crash-consistent: data and WAL in one snapshot"
    return [
        Metric(
            "fs_snapshot.offered",
            float(snap is not None),
            "",
            None,
            "informational: 1 when the filesystem took a snapshot; " + note,
        ),
        Metric(
            "fs_snapshot.seconds",
            snap[0] if snap else None,
            "s",
            False,
            "snapshot of the running cluster" + ("" if snap else f" ({why_not})"),
        ),
        Metric(
            "fs_snapshot.mb_used",
            snap[1] / MB if snap else None,
            "MB",
            None,
            "informational: filesystem space the snapshot took when taken",
        ),
        Metric(
            "fs_snapshot.basebackup_s",
            backup[0],
            "s",
            False,
            "pg_basebackup -Fp -Xstream -c fast onto the same filesystem",
        ),
        Metric(
            "fs_snapshot.basebackup_mb_used",
            backup[1] / MB,
            "MB",
            None,
            "informational: filesystem space the backup took",
        ),
    ]


def _free(path: Path) -> int:
    os.sync()
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def _take_snapshot(ctx: RunContext, fstype: str, source: str, point: str) -> tuple[float, float]:
    take, remove, name = snapshot_argv(fstype, source, point)
    take[0] = proc.which(take[0]) or take[0]
    remove[0] = proc.which(remove[0]) or remove[0]
    res = ctx.ledger.add("fs-snapshot", remove=remove, name=name)
    before = _free(ctx.target.workdir)
    try:
        result = proc.run(take, check=False)
        path = proc.save(result, ctx.artifacts_dir, "fs-snapshot")
        ctx.kept.append(Artifact("command", path, result.argv, result.exit_code))
        if not result.ok:
            raise CommandFailed(result)
        used = max(0, before - _free(ctx.target.workdir))
        return result.seconds, float(used)
    finally:
        problems = ctx.ledger.release(res)
        if problems:
            raise UserError("; ".join(problems))


@releaser("fs-snapshot")
def remove_recorded(res: dict) -> list[str]:
    """Remove a snapshot the workload took (gone already: nothing to do)."""
    name = res["name"]
    if name.startswith("/") and not os.path.exists(name):
        return []
    for attempt in range(5):
        result = proc.run(res["remove"], check=False)
        if result.ok or "does not exist" in result.stderr or "No such" in result.stderr:
            return []
        time.sleep(0.5 * (attempt + 1))
    return [f"could not remove snapshot {name}: {' '.join(res['remove'])} keeps failing"]


def _basebackup(ctx: RunContext) -> tuple[float, float]:
    dest = ctx.target.workdir / BACKUP_DIR
    shutil.rmtree(dest, ignore_errors=True)
    before = _free(ctx.target.workdir)
    try:
        from pgfsbench.workloads.basebackup import take_basebackup

        out = take_basebackup(ctx, dest, "fs-snapshot-basebackup")
        used = max(0, before - _free(ctx.target.workdir))
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    return out.seconds, float(used)


def run(ctx: RunContext, params: FsSnapshotWorkload) -> WorkloadResult:
    from pgfsbench.workloads.basebackup import tree_bytes

    ctx.require_free(tree_bytes(ctx.cluster.pgdata) + WAL_ALLOWANCE, "fs-snapshot")
    mount = mount_of(ctx.target.workdir, Path("/proc/self/mounts").read_text())
    why_not = why_not_offered(ctx.target.kind, mount, ctx.target.workdir, ctx.cluster.pgdata)
    backup = _basebackup(ctx)
    snap = None if why_not or mount is None else _take_snapshot(ctx, mount[2], mount[0], mount[1])
    return WorkloadResult(metrics=snapshot_metrics(snap, backup, why_not))


KIND = WorkloadKind(
    params=FsSnapshotWorkload,
    run=run,
    order=66,
    headline="fs_snapshot.basebackup_s",
    labels={
        "fs_snapshot.seconds": "filesystem snapshot time",
        "fs_snapshot.basebackup_s": "pg_basebackup time",
    },
    seconds=lambda p: 6,
    disk_bytes=lambda p, tables: tables + WAL_ALLOWANCE,
)
