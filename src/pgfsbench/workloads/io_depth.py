"""io-depth: 8 kB random-read IOPS against the queue depth, and what an 8 kB read costs
at random vs in sequence, with fio and O_DIRECT.

The depth at which IOPS stop growing is what ``effective_io_concurrency`` asks for; the
random/sequential cost ratio is what ``random_page_cost`` means (analysis/advice/advise.py).
O_DIRECT keeps the page cache out, so every read reaches the device; with a loop image
the host's cache is out too only with ``direct_io = true`` (the default). Sequential
reads at depth 1 get no readahead under O_DIRECT: the ratio is the device's, not what a
buffered sequential scan with kernel readahead would see.

One fio process per point, for the reasons fileio gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from pgfsbench.fields import Size
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads.fileio import lay_out
from pgfsbench.workloads.kind import EST_WRITE_RATE, WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext
    from pgfsbench.workloads.fio_output import IoStats

BLOCK = 8192  # PostgreSQL's page


class IoDepthWorkload(WorkloadBase):
    """fio 8 kB random reads at each queue depth (libaio, O_DIRECT), and 8 kB sequential
    vs random reads at depth 1: effective_io_concurrency and random_page_cost."""

    type: Literal["io-depth"]
    depths: list[int] = Field(
        [1, 2, 4, 8, 16, 32, 64], min_length=1, description="queue depths measured, one point each"
    )
    size: Size = Field("256M", description="size of the file read")
    seconds: int = Field(2, ge=1, le=600, description="seconds per point")
    warmup: int = Field(
        0, ge=0, le=600, description="seconds per point run first and left out (fio --ramp_time)"
    )

    @field_validator("depths")
    @classmethod
    def _depths(cls, v: list[int]) -> list[int]:
        if any(not 1 <= d <= 1024 for d in v):
            raise ValueError("each depth must be between 1 and 1024")
        return sorted(set(v))


def point_argv(
    fio: str, filename: str, name: str, rw: str, depth: int, params: IoDepthWorkload
) -> list[str]:
    # libaio for the sweep, depth 1 included, so the curve has one engine; psync for the
    # read-cost pair, a plain pread as PostgreSQL's own reads are.
    engine = "libaio" if name.startswith("qd") else "psync"
    return [
        fio,
        f"--name={name}",
        f"--filename={filename}",
        f"--rw={rw}",
        f"--bs={BLOCK}",
        f"--size={size_to_bytes(params.size)}",
        "--direct=1",
        f"--ioengine={engine}",
        f"--iodepth={depth}",
        "--time_based",
        f"--runtime={params.seconds}",
        *([f"--ramp_time={params.warmup}"] if params.warmup else []),
        "--output-format=json",
    ]


def points(params: IoDepthWorkload) -> list[tuple[str, str, int]]:
    """(job name, fio --rw, depth) of every point, in the order they run."""
    return [(f"qd{d}", "randread", d) for d in params.depths] + [
        ("seq_8k", "read", 1),
        ("rand_8k", "randread", 1),
    ]


def run(ctx: RunContext, params: IoDepthWorkload) -> WorkloadResult:
    from pgfsbench.workloads.fio_output import fio_binary, keep_json, run_fio

    size = size_to_bytes(params.size)
    if size < 2 * BLOCK:
        raise ValueError(f"io-depth: the file ({params.size}) must hold at least two 8 kB blocks")
    ctx.require_free(size, f"io-depth (a {params.size} test file)")
    fio = fio_binary()
    test_file = ctx.target.workdir / "iodepth.fio"
    result = WorkloadResult()
    outputs: dict[str, str] = {}
    try:
        lay_out(ctx, fio, test_file, size, "fio-iodepth-layout")
        for name, rw, depth in points(params):
            out = run_fio(
                ctx,
                point_argv(fio, str(test_file), name, rw, depth, params),
                f"fio-iodepth-{name}",
                cwd=ctx.target.workdir,
                timeout=(params.seconds + params.warmup) * 3 + 120,
            )
            result.artifacts.append(keep_json(ctx, out, f"fio-iodepth-{name}"))
            outputs[name] = out.stdout
    finally:
        test_file.unlink(missing_ok=True)
    result.metrics = iodepth_metrics(outputs)
    return result


def _reads(name: str, stdout: str) -> IoStats:
    from pgfsbench.workloads.fio_output import parse_fio_json

    stats = parse_fio_json(stdout).job(name).read
    if stats.total_ios == 0:
        raise ValueError(f"fio did no reads in the io-depth point {name}")
    return stats


def iodepth_metrics(outputs: dict[str, str]) -> list[Metric]:
    """Metrics from each point's fio JSON, keyed by job name (``qd<N>``, ``seq_8k``,
    ``rand_8k``)."""
    metrics: list[Metric] = []
    for name, stdout in outputs.items():
        if not name.startswith("qd"):
            continue
        stats = _reads(name, stdout)
        metrics += [
            Metric(f"iodepth.{name}.iops", stats.iops, "IO/s", True, "8 kB random reads"),
            Metric(
                f"iodepth.{name}.lat_mean_us",
                stats.clat.mean_ns / 1000,
                "µs",
                False,
                "completion latency (clat)",
            ),
            Metric(
                f"iodepth.{name}.lat_p99_us",
                stats.clat.percentile_us(99.0),
                "µs",
                False,
                "completion latency (clat)",
            ),
        ]
    # Mean total latency (lat: submission + completion) per read: what one read costs.
    seq = _reads("seq_8k", outputs["seq_8k"]).lat.mean_ns / 1000
    rand = _reads("rand_8k", outputs["rand_8k"]).lat.mean_ns / 1000
    metrics += [
        Metric("readcost.seq_8k_us", seq, "µs", False, "one 8 kB sequential read, O_DIRECT"),
        Metric("readcost.rand_8k_us", rand, "µs", False, "one 8 kB random read, O_DIRECT"),
        Metric(
            "readcost.rand_seq_ratio",
            rand / seq if seq > 0 else None,
            "×",
            None,
            "random / sequential 8 kB read time",
        ),
    ]
    return metrics


def estimate_seconds(params: IoDepthWorkload) -> float:
    return size_to_bytes(params.size) / EST_WRITE_RATE + len(points(params)) * (
        params.seconds + params.warmup + 0.5
    )


KIND = WorkloadKind(
    params=IoDepthWorkload,
    run=run,
    order=90,  # where plan errors and the schema list the type
    # The deepest point: what the device gives when PostgreSQL keeps it busy.
    headline=lambda p, names: f"iodepth.qd{max(p.depths)}.iops",
    labels={"iodepth.qd{depth}.iops": "IOPS at queue depth {depth}"},
    seconds=estimate_seconds,
    disk_bytes=lambda p, tables: size_to_bytes(p.size),
)
