"""The one metric per workload that verdicts and 'auto' repetitions are about.

A workload reports dozens of figures; a claim like "xfs is faster" is about
one of them, chosen up front (not after looking at which one differs, which
would be a garden of forking paths).
"""

from __future__ import annotations

from collections.abc import Iterable

# workload type → the metric name, or a rule on the workload's parameters.
_FIXED = {
    "fsync": "fsync.fdatasync_8k.ops_per_s",  # Linux's default wal_sync_method
    "fsync-latency": "fsync_latency.sync_p99_us",
    "pgbench-init": "pgbench_init.elapsed_s",
    "pgbench": "pgbench.tps",
    "basebackup": "basebackup.mb_per_s",
}


def headline_metric(workload: str, params: dict, names: Iterable[str] = ()) -> str | None:
    """The headline metric's name for a run of ``workload`` with ``params``.

    ``names`` (the metrics the run stored) settles the workloads whose headline
    depends on what was measured; None when there is none.
    """
    if workload in _FIXED:
        return _FIXED[workload]
    if workload == "seqwrite":
        tools = params.get("tools") or ["dd"]
        return f"seqwrite.{tools[0]}.mb_per_s"
    if workload == "parallel-scan":
        # The scan with the most workers asked: what parallelism buys on this filesystem.
        workers = params.get("workers") or [0]
        return f"parallel_scan.workers_{max(workers)}.ms"
    if workload == "fileio":
        return next((n for n in names if n.startswith("fileio.") and n.endswith(".mb_per_s")),
                    None)
    return None
