"""The workload catalogue: plan ``type`` → the module whose ``run(ctx, params)`` measures it."""

from __future__ import annotations

import importlib
from collections.abc import Callable

MODULES = {
    "fsync": "fsync",
    "fsync-latency": "fsync_latency",
    "pgbench-init": "pgbench_init",
    "pgbench": "pgbench_tpcb",
    "parallel-scan": "parallel_scan",
    "basebackup": "basebackup",
    "seqwrite": "seqwrite",
    "fileio": "fileio",
}


def runner(workload_type: str) -> Callable:
    return importlib.import_module(f"pgfsbench.workloads.{MODULES[workload_type]}").run
