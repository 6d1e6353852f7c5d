"""fsync-latency: the latency of each fdatasync after a sequential write, with fio (the btrfs-fsync study).

This is the WAL's pattern: PostgreSQL writes WAL blocks in order into
pre-zeroed segment files and flushes each commit with fdatasync (Linux's
default ``wal_sync_method``). pg_test_fsync gives the mean; fio gives the
distribution, and the tail (p99.9, max) is what a commit waits for under load.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.fields import Size
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads.kind import EST_WRITE_RATE, WorkloadBase, WorkloadKind, recorded

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

JOB = "fsync-latency"
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99_9": 99.9}


class FsyncLatencyWorkload(WorkloadBase):
    """fio, sequential writes each followed by fdatasync: WAL-like sync latency (the btrfs-fsync study)."""

    type: Literal["fsync-latency"]
    size: Size = Field("64M", description="size of the file written")
    block_size: Size = Field("8k", description="bytes per write, each followed by fdatasync")
    seconds: int = Field(10, ge=1, le=3600, description="seconds measured (fio --runtime)")
    warmup: int = Field(
        0,
        ge=0,
        le=3600,
        description="seconds run before the measured ones and left out (fio --ramp_time)",
    )


def fdatasync_job(
    fio: str, job: str, filename: str, block_size: str, size: str, seconds: int, warmup: int
) -> list[str]:
    """fio writing ``block_size`` blocks over a file of ``size``, each followed by
    fdatasync, for ``seconds`` after ``warmup`` (left out of the stats); the options
    that follow (a rate, percentiles, the output format) are the caller's."""
    return [
        fio,
        f"--name={job}",
        f"--filename={filename}",
        "--rw=write",
        f"--bs={size_to_bytes(block_size)}",
        f"--size={size_to_bytes(size)}",  # bytes: no doubt about fio's unit base
        # Lay the file out before the timed phase so every write overwrites
        # allocated blocks, as WAL does in its pre-zeroed segments (and as
        # pg_test_fsync does): an fdatasync is not also committing a file growth.
        "--overwrite=1",
        "--fdatasync=1",
        "--ioengine=sync",
        "--time_based",
        f"--runtime={seconds}",
        *([f"--ramp_time={warmup}"] if warmup else []),  # not in the stats
    ]


def fio_argv(fio: str, filename: str, params: FsyncLatencyWorkload) -> list[str]:
    return [
        *fdatasync_job(
            fio, JOB, filename, params.block_size, params.size, params.seconds, params.warmup
        ),
        "--output-format=json",
    ]


def run(ctx: RunContext, params: FsyncLatencyWorkload) -> WorkloadResult:
    from pgfsbench.workloads.fio_output import fio_binary, keep_json, run_fio

    size = size_to_bytes(params.size)
    ctx.require_free(size, f"fsync-latency (a {params.size} test file)")
    fio = fio_binary()
    test_file = ctx.target.workdir / "fsync_latency.fio"
    try:
        # Generous timeout: the layout before the timed phase runs at disk speed.
        out = run_fio(
            ctx,
            fio_argv(fio, str(test_file), params),
            "fio-fsync-latency",
            cwd=ctx.target.workdir,
            timeout=(params.seconds + params.warmup) * 3 + 120 + size / 5e6,
        )
    finally:
        test_file.unlink(missing_ok=True)
    result = WorkloadResult()
    result.artifacts.append(keep_json(ctx, out, "fio-fsync-latency"))
    result.metrics = fsync_latency_metrics(out.stdout)
    result.metrics.append(
        Metric(
            "fsync_latency.warmup_s",
            params.warmup,
            "s",
            None,
            "run first and left out (fio --ramp_time)",
        )
    )
    return result


def fsync_latency_metrics(stdout: str) -> list[Metric]:
    from pgfsbench.workloads.fio_output import parse_fio_json

    job = parse_fio_json(stdout).job(JOB)
    if job.sync is None or job.write.runtime_ms <= 0:
        raise ValueError("fio reported no fdatasync calls: nothing was measured")
    sync = job.sync
    metrics = [
        Metric(f"fsync_latency.sync_{key}_us", sync.percentile_us(pct), "µs", False)
        for key, pct in PERCENTILES.items()
    ]
    metrics.append(Metric("fsync_latency.sync_max_us", sync.max_ns / 1000, "µs", False))
    metrics.append(Metric("fsync_latency.sync_mean_us", sync.mean_ns / 1000, "µs", False))
    # Divided by the write phase's runtime, fio's own base for iops: with
    # fdatasync=1 there is one sync per write, so this equals the write iops.
    metrics.append(
        Metric("fsync_latency.syncs_per_s", sync.n / (job.write.runtime_ms / 1000), "syncs/s", True)
    )
    return metrics


def logical_bytes(
    params: FsyncLatencyWorkload, values: Mapping[str, float]
) -> tuple[float | None, str]:
    # One block per fdatasync; fio is time based, so the file size is not the total.
    rate = values.get("fsync_latency.syncs_per_s")
    if rate is None or not recorded(params, "seconds", "block_size"):
        return None, "unknown"
    return (
        rate * params.seconds * size_to_bytes(params.block_size),
        "syncs/s × seconds × block size",
    )


KIND = WorkloadKind(
    params=FsyncLatencyWorkload,
    run=run,
    order=20,  # where plan errors and the schema list the type
    headline="fsync_latency.sync_p99_us",
    labels={"fsync_latency.sync_p99_us": "fsync p99 latency"},
    seconds=lambda p: p.seconds + p.warmup + size_to_bytes(p.size) / EST_WRITE_RATE,
    disk_bytes=lambda p, tables: size_to_bytes(p.size),
    logical_bytes=logical_bytes,
)
