"""fsync-capacity: the highest rate of WAL-like syncs a target holds at a latency target.

The fio side of capacity at a latency target: "ext4 holds 180 fdatasyncs/s at
p99 <= 5 ms; xfs 140". Each probe is a short fio run of sequential writes, each followed
by fdatasync (fsync-latency's pattern: PostgreSQL's WAL flush), at a fixed rate
(``--rate_iops R``); its percentile of the fdatasync latency (fio's ``sync`` section) is
held to the target. A probe passes when that percentile is within the target *and* fio
delivered at least ``HELD`` of the rate asked: fio's rate is closed-loop (a sync that
runs late delays the next write instead of queueing it), so a device slower than the rate
shows as a rate not held rather than as latency. The search is capacity_search's, the
same as pgbench-capacity's: an unthrottled probe first, halving to a passing rate, then
geometric bisection to the stated resolution (rates are whole numbers: fio's
``rate_iops`` is). One capacity a round; the repetitions give its CI; the per-rate
latency curve is kept as series for the report's chart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.fields import Size
from pgfsbench.metrics import Metric, Series, WorkloadResult
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads.capacity_search import Capacity, Probe, search
from pgfsbench.workloads.fsync_latency import fdatasync_job
from pgfsbench.workloads.kind import EST_WRITE_RATE, WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

JOB = "fsync-capacity"
# A probe at rate R passes only if fio delivered at least this share of R.
HELD = 0.9
# The per-rate curve (x: the rate asked; the unthrottled probe: the rate it reached).
CURVE = "fsync_capacity.curve_latency_ms"
CURVE_RATE = "fsync_capacity.curve_syncs_per_s"


class FsyncCapacityWorkload(WorkloadBase):
    """fio: the highest rate of writes each followed by fdatasync at which a percentile of
    the fdatasync latency stays within a target."""

    type: Literal["fsync-capacity"]
    latency_ms: float = Field(
        10.0, gt=0, le=600_000, description="the fdatasync latency target in milliseconds"
    )
    percentile: float = Field(
        99.0, gt=0, lt=100, description="the latency percentile held to the target (99: p99)"
    )
    resolution: float = Field(
        0.05,
        ge=0.01,
        le=1.0,
        description="stop when the highest passing and lowest failing rate are within "
        "this fraction (0.05: 5%), or are adjacent whole rates",
    )
    max_probes: int = Field(
        10,
        ge=2,
        le=40,
        description="the most probes a search runs, the unthrottled first one included",
    )
    probe_seconds: int = Field(5, ge=1, le=3600, description="seconds each probe measures")
    probe_warmup: int = Field(
        1, ge=0, le=600, description="seconds each probe runs first, left out (fio --ramp_time)"
    )
    min_rate: float = Field(
        1.0,
        ge=1,
        description="give up below this rate (syncs/s): the capacity is then not measured",
    )
    size: Size = Field("64M", description="size of the file written")
    block_size: Size = Field("8k", description="bytes per write, each followed by fdatasync")

    def sweep_label(self) -> str:
        return f"p{self.percentile:g}<={self.latency_ms:g}ms"


def fio_argv(
    fio: str, filename: str, params: FsyncCapacityWorkload, rate: float | None
) -> list[str]:
    return [
        # fsync-latency's job (each write overwrites allocated blocks), rate-limited
        *fdatasync_job(
            fio,
            JOB,
            filename,
            params.block_size,
            params.size,
            params.probe_seconds,
            params.probe_warmup,
        ),
        *([f"--rate_iops={round(rate)}"] if rate is not None else []),
        f"--percentile_list={params.percentile:g}",
        "--output-format=json",
    ]


def probe_result(
    stdout: str, params: FsyncCapacityWorkload, rate: float | None
) -> tuple[Probe, float]:
    """One probe from fio's JSON: the rate it reached, its sync latency percentile, and
    whether it passed; and the share of the rate asked it delivered (1 unthrottled)."""
    from pgfsbench.workloads.fio_output import parse_fio_json

    job = parse_fio_json(stdout).job(JOB)
    if job.sync is None or job.write.runtime_ms <= 0:
        raise ValueError("fio reported no fdatasync calls: nothing was measured")
    reached = job.sync.n / (job.write.runtime_ms / 1000)
    latency = job.sync.percentile_us(params.percentile) / 1000
    held = reached / rate if rate else 1.0
    passed = latency <= params.latency_ms and held >= HELD
    return Probe(rate, reached, latency, None, passed, job.sync.n), held


def _metrics(params: FsyncCapacityWorkload, cap: Capacity) -> list[Metric]:
    target = f"p{params.percentile:g} fdatasync <= {params.latency_ms:g} ms"
    return cap.metrics(
        "fsync_capacity",
        "syncs_per_s",
        "syncs/s",
        how={
            "latency": f"the highest rate probed whose {target}, delivered to within "
            f"{1 - HELD:.0%}",
            "throughput": f"the unthrottled rate: its {target} already, so the target does "
            "not bind below saturation",
            "none": f"no rate down to {params.min_rate:g} syncs/s held {target}",
        },
        resolution=f"bracket within {params.resolution:.0%} (or adjacent whole rates)",
        max_probes=params.max_probes,
        unthrottled="the unthrottled probe's rate",
        latency=f"p{params.percentile:g} of fdatasync at the capacity",
        percentile=params.percentile,
    )


def curve(cap: Capacity) -> list[Series]:
    """The probes' fdatasync latency and rate reached over the rate asked for."""
    return cap.curves(CURVE, CURVE_RATE, "syncs/s")


def run(ctx: RunContext, params: FsyncCapacityWorkload) -> WorkloadResult:
    from pgfsbench.workloads.fio_output import fio_binary, keep_json, run_fio

    size = size_to_bytes(params.size)
    ctx.require_free(size, f"fsync-capacity (a {params.size} test file)")
    fio = fio_binary()
    test_file = ctx.target.workdir / "fsync_capacity.fio"
    result = WorkloadResult()
    count = 0

    def probe(rate: float | None) -> Probe:
        nonlocal count
        count += 1
        stem = f"fio-probe{count:02d}"
        out = run_fio(
            ctx,
            fio_argv(fio, str(test_file), params, rate),
            stem,
            cwd=ctx.target.workdir,
            # the first probe lays the file out at disk speed first
            timeout=(params.probe_seconds + params.probe_warmup) * 3 + 120 + size / 5e6,
        )
        result.artifacts.append(keep_json(ctx, out, stem))
        return probe_result(out.stdout, params, rate)[0]

    try:
        cap = search(
            probe,
            resolution=params.resolution,
            max_probes=params.max_probes,
            min_rate=params.min_rate,
            whole=True,
        )
    finally:
        test_file.unlink(missing_ok=True)
    result.metrics = _metrics(params, cap)
    result.series = curve(cap)
    return result


KIND = WorkloadKind(
    params=FsyncCapacityWorkload,
    run=run,
    order=46,  # beside pgbench-capacity: the same search
    headline="fsync_capacity.syncs_per_s",
    # plan check's budget: every probe of the budget, and laying the file out once
    labels={"fsync_capacity.syncs_per_s": "fdatasyncs/s held at the latency target"},
    seconds=lambda p: (
        p.max_probes * (p.probe_seconds + p.probe_warmup + 1)
        + size_to_bytes(p.size) / EST_WRITE_RATE
    ),
    disk_bytes=lambda p, tables: size_to_bytes(p.size),
)
