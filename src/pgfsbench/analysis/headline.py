"""The one metric per workload that verdicts and 'auto' repetitions are about.

A workload reports dozens of figures; a claim like "xfs is faster" is about
one of them, chosen up front (not after looking at which one differs, which
would be a garden of forking paths). Each workload kind declares its own
(``WorkloadKind.headline``), and the metric's human name for sentences a DBA reads
("TPC-B tps", not ``pgbench.tps``); a metric without one is shown by its id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pgfsbench.workloads import registry


def headline_metric(workload: str, params: dict, names: Iterable[str] = ()) -> str | None:
    """The headline metric's name for a run of ``workload`` with (stored) ``params``.

    ``names`` (the metrics the run stored) settles the workloads whose headline
    depends on what was measured; None when there is none, or when the run's
    type or params are not this version's (old results: no verdict, never a crash).
    """
    kind = registry.find(workload)
    if kind is None:
        return None
    if isinstance(kind.headline, str):  # needs no params: old params cannot spoil it
        return kind.headline
    validated = registry.stored_params(kind, params)
    return None if validated is None else kind.headline(validated, list(names))


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
