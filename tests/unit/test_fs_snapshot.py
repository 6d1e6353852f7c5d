"""fs-snapshot's decisions: which mount holds the data directory (from a captured
/proc/self/mounts: the root on ext4 and a btrfs loop mount), whether a snapshot is
offered and the commands that take and remove it."""

from __future__ import annotations

from pathlib import Path

from pgfsbench.ledger import RELEASERS
from pgfsbench.workloads.fs_snapshot import (
    mount_of,
    remove_recorded,
    snapshot_argv,
    snapshot_metrics,
    why_not_offered,
)

MOUNTS = (Path(__file__).parent.parent / "fixtures" / "proc_mounts_btrfs_loop.txt").read_text()
POINT = "/tmp/snapfix-YZwD/mnt"


def test_the_longest_mount_point_holding_the_path_wins():
    assert mount_of(Path(POINT) / "pgfsbench", MOUNTS) == ("/dev/loop2", POINT, "btrfs")
    assert mount_of(Path("/tmp/snapfix-YZwD"), MOUNTS) == ("/dev/vda", "/", "ext4")
    # a sibling whose name starts like the mount point is not under it
    assert mount_of(Path(POINT + "2/x"), MOUNTS)[1] == "/"


def test_a_snapshot_only_inside_our_own_btrfs_or_zfs_mount(tmp_path):
    workdir = Path(POINT) / "pgfsbench"
    mount = mount_of(workdir, MOUNTS)
    pgdata = tmp_path / "pgdata"
    (pgdata / "pg_wal").mkdir(parents=True)
    assert why_not_offered("loop", mount, workdir, pgdata) == ""
    assert "directory target" in why_not_offered("dir", mount, workdir, pgdata)
    assert "not on the mount" in why_not_offered("loop", mount, tmp_path, pgdata)
    ext4 = ("/dev/loop0", POINT, "ext4")
    assert why_not_offered("loop", ext4, workdir, pgdata) == "not offered: ext4 has no snapshots"


def test_wal_elsewhere_is_refused(tmp_path):
    workdir = Path(POINT) / "pgfsbench"
    pgdata = tmp_path / "pgdata"
    pgdata.mkdir()
    (pgdata / "pg_wal").symlink_to(tmp_path)
    why = why_not_offered("loop", mount_of(workdir, MOUNTS), workdir, pgdata)
    assert why.startswith("refused") and "crash-consistent" in why


def test_the_commands_name_only_our_snapshot():
    take, remove, name = snapshot_argv("btrfs", "/dev/loop2", POINT)
    assert take == ["btrfs", "subvolume", "snapshot", "-r", POINT, POINT + "/pgfsbench-snapshot"]
    assert remove == ["btrfs", "subvolume", "delete", POINT + "/pgfsbench-snapshot"]
    take, remove, name = snapshot_argv("fuse.zfs", "pgfsb-1/data", "/m")
    assert take == ["zfs", "snapshot", "pgfsb-1/data@pgfsbench-snapshot"]
    assert remove == ["zfs", "destroy", "pgfsb-1/data@pgfsbench-snapshot"]


def test_a_gone_btrfs_snapshot_is_released(tmp_path):
    assert RELEASERS["fs-snapshot"] is remove_recorded
    assert remove_recorded({"name": str(tmp_path / "gone"), "remove": ["false"]}) == []


def test_metrics_where_not_offered():
    m = {
        x.name: x
        for x in snapshot_metrics(None, (1.48, 83.2 * 2**20), "not offered: ext4 has no snapshots")
    }
    assert m["fs_snapshot.offered"].value == 0.0 and m["fs_snapshot.seconds"].value is None
    assert round(m["fs_snapshot.basebackup_mb_used"].value, 1) == 83.2
    m = {x.name: x for x in snapshot_metrics((0.0044, 0.0), (0.88, 74.3 * 2**20), "")}
    assert (
        m["fs_snapshot.offered"].value == 1.0
        and "crash-consistent" in m["fs_snapshot.offered"].note
    )
