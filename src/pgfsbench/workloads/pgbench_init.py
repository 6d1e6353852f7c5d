"""pgbench-init: pgbench -i load time, by phase (the XFS-vs-ext4 study)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.workloads.kind import MB, WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

# pgbench_accounts takes ~13 MB and its key ~2 MB per scale unit; WAL comes on top.
BYTES_PER_SCALE = 15 * MB


class PgbenchInitWorkload(WorkloadBase):
    """pgbench -i: load time of the TPC-B tables, by phase (the XFS-vs-ext4 study)."""

    type: Literal["pgbench-init"]
    scale: int = Field(10, ge=1, le=100000, description="scaling factor (-s)")


def run(ctx: RunContext, params: PgbenchInitWorkload) -> WorkloadResult:
    from pgfsbench.workloads.pgbench_output import parse_init_output

    result = WorkloadResult()
    # Without the WAL: this only refuses what cannot possibly fit.
    ctx.require_free(params.scale * BYTES_PER_SCALE, f"pgbench -i -s {params.scale}")
    out = ctx.tool(
        [
            ctx.cluster.bins.tool("pgbench"),
            "-i",
            "-s",
            str(params.scale),
            *ctx.cluster.conn_args(),
            "postgres",
        ],
        "pgbench_init",
    )
    # pgbench -i reports progress and its timing on stderr.
    times = parse_init_output(out.stderr + out.stdout)
    result.metrics.append(Metric("pgbench_init.elapsed_s", times.total_s, "s", False))
    for phase, seconds in times.phases.items():
        result.metrics.append(Metric(f"pgbench_init.{phase}_s", seconds, "s", False))
    # Flush the load now, timed on its own: otherwise the first measurement after the
    # load pays for writing it (a reused target's first round ran at ~60% of later rounds' tps).
    started = time.monotonic()
    ctx.cluster.sql("CHECKPOINT")
    result.metrics.append(
        Metric(
            "pgbench_init.checkpoint_s",
            time.monotonic() - started,
            "s",
            False,
            "CHECKPOINT right after the load (not in elapsed_s)",
        )
    )
    size = int(ctx.cluster.sql("SELECT pg_database_size('postgres')"))
    result.metrics.append(
        Metric("pgbench_init.db_size_mb", size / 2**20, "MB", None, "database size after the load")
    )
    return result


KIND = WorkloadKind(
    params=PgbenchInitWorkload,
    run=run,
    order=30,  # where plan errors and the schema list the type
    headline="pgbench_init.elapsed_s",
    labels={"pgbench_init.elapsed_s": "pgbench load time"},
    seconds=lambda p: 1 + 0.25 * p.scale,
    disk_bytes=lambda p, tables: p.scale * BYTES_PER_SCALE,
    loads_tables=lambda p: p.scale * BYTES_PER_SCALE,
    writes_wal=True,
)
