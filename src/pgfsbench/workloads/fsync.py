"""fsync: pg_test_fsync on the target's filesystem (the btrfs-fsync study)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.metrics import WorkloadResult
from pgfsbench.workloads.kind import MB, WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

TESTS = 18  # tests pg_test_fsync runs, each for --secs-per-test
FILE_BYTES = 16 * MB  # it writes one WAL-segment-sized file


class FsyncWorkload(WorkloadBase):
    """pg_test_fsync in the target's filesystem, every section (the btrfs-fsync study)."""

    type: Literal["fsync"]
    seconds: int = Field(2, ge=1, le=600, description="seconds per test (-s)")


def run(ctx: RunContext, params: FsyncWorkload) -> WorkloadResult:
    from pgfsbench.workloads.pg_test_fsync_output import fsync_metrics, parse_pg_test_fsync

    result = WorkloadResult()
    test_file = ctx.target.workdir / "pg_test_fsync.out"
    ctx.require_free(FILE_BYTES, "pg_test_fsync")
    try:
        # A bound like every other tool's: a filesystem that stops answering (zfs-fuse
        # left a write waiting 6 minutes in one test run) fails this run, not the campaign.
        out = ctx.tool(
            [
                ctx.cluster.bins.tool("pg_test_fsync"),
                "-s",
                str(params.seconds),
                "-f",
                str(test_file),
            ],
            "pg_test_fsync",
            cwd=ctx.target.workdir,
            timeout=TESTS * params.seconds * 3 + 120,
        )
    finally:
        test_file.unlink(missing_ok=True)
    # Every section: one and two 8 kB writes, open_sync sizes, non-write fd, no sync.
    result.metrics = fsync_metrics(parse_pg_test_fsync(out.stdout), sections=None)
    return result


KIND = WorkloadKind(
    params=FsyncWorkload,
    run=run,
    order=10,  # where plan errors and the schema list the type
    headline="fsync.fdatasync_8k.ops_per_s",  # Linux's default wal_sync_method
    labels={
        "fsync.{method}_8k.ops_per_s": "pg_test_fsync {method} ops/s",
        "fsync.{method}_2x8k.ops_per_s": "pg_test_fsync {method} ops/s, two 8 kB writes",
    },
    seconds=lambda p: TESTS * p.seconds + 1,
    disk_bytes=lambda p, tables: FILE_BYTES,
)
