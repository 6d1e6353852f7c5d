"""fs-snapshot and compression for real: a btrfs snapshot of the running
cluster measured against pg_basebackup and removed; ext4 offers none. The same campaign
measures the on-disk size of the loaded data: btrfs mounted compress=zstd stores it in
fewer physical bytes (ratio > 1), ext4 as written (ratio 1). ZFS (zfs-fuse) where it
runs, with gzip compression (this zfs has no lz4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.provision import zfs_pool as zfs
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
type = "compression"

[[workloads]]
type = "fs-snapshot"
"""


def _metrics(results, workload="fs-snapshot"):
    found = {}
    for r in export(results)["runs"]:
        assert r["status"] == "ok", r
        if r["workload"] == workload:
            found[r["target"]] = {m["name"]: m["value"] for m in r["metrics"]}
    return found


def _check_compression(results, name):
    m = _metrics(results, "compression")
    packed, ext4 = m[name], m["ext4"]
    assert packed["compression.compressed"] == 1.0 and ext4["compression.compressed"] == 0.0
    assert ext4["compression.ratio"] == 1.0
    assert ext4["compression.physical_mb"] == ext4["compression.logical_mb"]
    assert packed["compression.ratio"] > 1.5  # pgbench's blank-padded rows compress well
    assert packed["compression.physical_mb"] < 0.7 * ext4["compression.physical_mb"]
    # the same data on both: scale 3 is about 50 MB of tables, plus the load's WAL
    for target in (packed, ext4):
        assert target["compression.files_mb"] > 40
    assert packed["compression.logical_mb"] > 0.5 * ext4["compression.logical_mb"]


def _check(results, state_dir, name, compressed=False):
    m = _metrics(results)
    snap, ext4 = m[name], m["ext4"]
    assert snap["fs_snapshot.offered"] == 1.0 and snap["fs_snapshot.seconds"] > 0
    # a snapshot shares every block: far less space than the backup's copy
    assert snap["fs_snapshot.mb_used"] < 0.1 * snap["fs_snapshot.basebackup_mb_used"]
    assert ext4["fs_snapshot.offered"] == 0.0 and ext4["fs_snapshot.seconds"] is None
    # scale 3: about 50 MB of tables (a compressing filesystem stores the copy in less)
    for target in [ext4] if compressed else m.values():
        assert target["fs_snapshot.basebackup_mb_used"] > 30
    kept = list(results.glob(f"artifacts/{name}/*fs-snapshot/fs-snapshot.txt"))
    argv = kept[0].read_text().split("\n", 1)[0].split()[1:3] if kept else []
    assert [Path(argv[0]).name, argv[1]] in (["btrfs", "subvolume"], ["zfs", "snapshot"])
    assert ledgers(state_dir) == []  # the snapshot released with everything else


def test_btrfs_snapshot_against_basebackup_and_compression(tmp_path, state_dir):
    results, _ = run_plan(
        tmp_path,
        PLAN.format(name="btrfs", fs="btrfs", size="1G", extra='mount = "compress=zstd"'),
        "--wait",
    )
    _check(results, state_dir, "btrfs", compressed=True)
    _check_compression(results, "btrfs")


@pytest.mark.skipif(zfs.unavailable_reason() is not None, reason=f"ZFS: {zfs.unavailable_reason()}")
def test_zfs_snapshot_against_basebackup(tmp_path, state_dir):
    results, _ = run_plan(
        tmp_path,
        PLAN.format(
            name="zfs",
            fs="zfs",
            size="512M",
            extra='zfs = { recordsize = "8K", compression = "gzip" }',
        ),
        "--wait",
    )
    _check(results, state_dir, "zfs", compressed=True)
    _check_compression(results, "zfs")
