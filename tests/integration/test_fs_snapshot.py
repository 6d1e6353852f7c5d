"""fs-snapshot for real (issue 25): a btrfs snapshot of the running cluster measured
against pg_basebackup and removed; ext4 offers none. ZFS (zfs-fuse) where it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.provision import zfs
from tests.integration.conftest import export, ledgers, run_plan

PLAN = """
name = "fs-snapshot"
[postgres.settings]
shared_buffers = "64MB"

[[targets]]
name = "{name}"
fs = "{fs}"
size = "{size}"
{extra}

[[targets]]
name = "ext4"
fs = "ext4"
size = "1G"

[[workloads]]
type = "pgbench-init"
scale = 3

[[workloads]]
type = "fs-snapshot"
"""


def _metrics(results):
    found = {}
    for r in export(results)["runs"]:
        assert r["status"] == "ok", r
        if r["workload"] == "fs-snapshot":
            found[r["target"]] = {m["name"]: m["value"] for m in r["metrics"]}
    return found


def _check(results, state_dir, name):
    m = _metrics(results)
    snap, ext4 = m[name], m["ext4"]
    assert snap["fs_snapshot.offered"] == 1.0 and snap["fs_snapshot.seconds"] > 0
    # a snapshot shares every block: far less space than the backup's copy
    assert snap["fs_snapshot.mb_used"] < 0.1 * snap["fs_snapshot.basebackup_mb_used"]
    assert ext4["fs_snapshot.offered"] == 0.0 and ext4["fs_snapshot.seconds"] is None
    for target in m.values():
        assert target["fs_snapshot.basebackup_mb_used"] > 30  # scale 3: about 50 MB of tables
    kept = list(results.glob(f"artifacts/{name}/*fs-snapshot/fs-snapshot.txt"))
    argv = kept[0].read_text().split("\n", 1)[0].split()[1:3] if kept else []
    assert [Path(argv[0]).name, argv[1]] in (["btrfs", "subvolume"], ["zfs", "snapshot"])
    assert ledgers(state_dir) == []  # the snapshot released with everything else


def test_btrfs_snapshot_against_basebackup(tmp_path, state_dir):
    results, _ = run_plan(
        tmp_path, PLAN.format(name="btrfs", fs="btrfs", size="1G", extra=""), "--wait"
    )
    _check(results, state_dir, "btrfs")


@pytest.mark.skipif(zfs.unavailable_reason() is not None, reason=f"ZFS: {zfs.unavailable_reason()}")
def test_zfs_snapshot_against_basebackup(tmp_path, state_dir):
    results, _ = run_plan(
        tmp_path,
        PLAN.format(name="zfs", fs="zfs", size="512M", extra='zfs = { recordsize = "8K" }'),
        "--wait",
    )
    _check(results, state_dir, "zfs")
