"""pgbench-init: pgbench -i load time, by phase (seed 000)."""

from __future__ import annotations

import time

from pgfsbench.plan.model import PgbenchInitWorkload
from pgfsbench.workloads.base import RunContext
from pgfsbench.workloads.pgbench_output import parse_init_output
from pgfsbench.metrics import Metric, WorkloadResult


def run(ctx: RunContext, params: PgbenchInitWorkload) -> WorkloadResult:
    result = WorkloadResult()
    # pgbench_accounts takes ~13 MB and its key ~2 MB per scale unit; WAL comes on top,
    # so this only refuses what cannot possibly fit.
    ctx.require_free(params.scale * 15 * 2**20, f"pgbench -i -s {params.scale}")
    out = ctx.tool([ctx.cluster.bins.tool("pgbench"), "-i", "-s", str(params.scale),
                    *ctx.cluster.conn_args(), "postgres"], "pgbench_init")
    # pgbench -i reports progress and its timing on stderr.
    times = parse_init_output(out.stderr + out.stdout)
    result.metrics.append(Metric("pgbench_init.elapsed_s", times.total_s, "s", False))
    for phase, seconds in times.phases.items():
        result.metrics.append(Metric(f"pgbench_init.{phase}_s", seconds, "s", False))
    # Flush the load now, timed on its own: otherwise the first measurement after the
    # load pays for writing it (bench_auto saw round 1 at ~60% of later rounds' tps).
    started = time.monotonic()
    ctx.cluster.sql("CHECKPOINT")
    result.metrics.append(Metric("pgbench_init.checkpoint_s", time.monotonic() - started, "s",
                                 False, "CHECKPOINT right after the load (not in elapsed_s)"))
    size = int(ctx.cluster.sql("SELECT pg_database_size('postgres')"))
    result.metrics.append(Metric("pgbench_init.db_size_mb", size / 2**20, "MB", None,
                                 "database size after the load"))
    return result
