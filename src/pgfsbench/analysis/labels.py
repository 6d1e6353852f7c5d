"""Human names for headline metrics, for sentences a DBA reads ("TPC-B tps", not
``pgbench.tps``). A metric without one is shown by its id."""

from __future__ import annotations

import re

_EXACT = {
    "pgbench.tps": "TPC-B tps",
    "pgbench_capacity.tps": "tx/s held at the latency target",
    "fsync_capacity.syncs_per_s": "fdatasyncs/s held at the latency target",
    "fsync_latency.sync_p99_us": "fsync p99 latency",
    "basebackup.mb_per_s": "base backup MB/s",
    "pgbench_init.elapsed_s": "pgbench load time",
    "clone_db.clone_s": "CREATE DATABASE time (file_copy_method=clone)",
    "clone_db.copy_s": "CREATE DATABASE time (file_copy_method=copy)",
    "fs_snapshot.seconds": "filesystem snapshot time",
    "fs_snapshot.basebackup_s": "pg_basebackup time",
    "compression.ratio": "compression ratio (logical / physical bytes)",
    "cold_scan.seq.s": "cold sequential scan time",
    "cold_scan.bitmap.s": "cold bitmap heap scan time",
}
_PATTERNS = [
    # pg_test_fsync's wal_sync_method rows: one 8 kB write, or two, then the sync
    (re.compile(r"fsync\.(\w+?)_8k\.ops_per_s"), r"pg_test_fsync \1 ops/s"),
    (re.compile(r"fsync\.(\w+?)_2x8k\.ops_per_s"), r"pg_test_fsync \1 ops/s, two 8 kB writes"),
    (re.compile(r"iodepth\.qd(\d+)\.iops"), r"IOPS at queue depth \1"),
    (re.compile(r"parallel_scan\.workers_(\d+)\.ms"), r"parallel scan time, \1 workers"),
    (re.compile(r"seqwrite\.(\w+)\.mb_per_s"), r"\1 sequential write MB/s"),
    (re.compile(r"fileio\.([^.]+)\.mb_per_s"), r"fio \1 MB/s"),
]


def metric_label(metric: str) -> str:
    if metric in _EXACT:
        return _EXACT[metric]
    for pattern, label in _PATTERNS:
        if pattern.fullmatch(metric):
            return pattern.sub(label, metric)
    return metric
