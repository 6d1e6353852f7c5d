"""fsync: pg_test_fsync on the target's filesystem (seed 001)."""

from __future__ import annotations

from pgfsbench.plan.model import FsyncWorkload
from pgfsbench.workloads.base import RunContext
from pgfsbench.workloads.pg_test_fsync_output import fsync_metrics, parse_pg_test_fsync
from pgfsbench.metrics import WorkloadResult


def run(ctx: RunContext, params: FsyncWorkload) -> WorkloadResult:
    result = WorkloadResult()
    test_file = ctx.target.workdir / "pg_test_fsync.out"
    ctx.require_free(16 * 2**20, "pg_test_fsync")  # it writes one 16 MB WAL-segment-sized file
    try:
        out = ctx.tool([ctx.cluster.bins.tool("pg_test_fsync"), "-s", str(params.seconds),
                        "-f", str(test_file)], "pg_test_fsync",
                       cwd=ctx.target.workdir)
    finally:
        test_file.unlink(missing_ok=True)
    # Every section: one and two 8 kB writes, open_sync sizes, non-write fd, no sync.
    result.metrics = fsync_metrics(parse_pg_test_fsync(out.stdout), sections=None)
    return result
