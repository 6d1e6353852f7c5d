"""fileio: a fio matrix of access patterns × block sizes with O_DIRECT (the btrfs-fsync study's iozone).

One file is laid out once (written for real, not fallocated: reading
unwritten extents would cost no I/O and flatter the filesystem) and every
cell reads or overwrites it in place.

One fio process per cell rather than one invocation with ``stonewall`` jobs:
each cell's JSON is its own artifact, named after the cell; a cell that fails
says which one it was and leaves the earlier cells' raw output kept; and each
cell gets its own timeout. A fio start costs milliseconds next to a cell's
seconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.errors import UserError
from pgfsbench.fields import Size
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads.kind import EST_WRITE_RATE, WorkloadBase, WorkloadKind, recorded

if TYPE_CHECKING:
    from pathlib import Path

    from pgfsbench.workloads.context import RunContext

LAYOUT_BS = 2**20
MB = 10**6  # decimal, as said in the unit string
# Cell.name joins pattern and block size with "_"; "-" is kept for older synthetic names.
WRITE_CELL_MB_PER_S = re.compile(r"^fileio\.(?:rand)?write[_-][^.]+\.mb_per_s$")


class FileioWorkload(WorkloadBase):
    """fio matrix: patterns × block sizes, O_DIRECT, time-based (the btrfs-fsync study's iozone)."""

    type: Literal["fileio"]
    patterns: list[Literal["read", "write", "randread", "randwrite"]] = Field(
        ["read", "write", "randread", "randwrite"],
        min_length=1,
        description="fio access patterns (--rw), one cell each per block size",
    )
    block_sizes: list[Size] = Field(
        ["8k", "64k", "1M"],
        min_length=1,
        description="block sizes (--bs), one cell each per pattern",
    )
    size: Size = Field("256M", description="size of the test file")
    seconds: int = Field(5, ge=1, le=3600, description="seconds per cell")
    iodepth: int = Field(1, ge=1, le=1024, description="I/Os in flight (--iodepth)")
    warmup: int = Field(
        0,
        ge=0,
        le=3600,
        description="seconds per cell run before the measured ones and left out (fio --ramp_time)",
    )


@dataclass(frozen=True)
class Cell:
    pattern: str  # fio --rw: read, write, randread, randwrite
    block_bytes: int

    @property
    def name(self) -> str:
        """Stable metric/job name: ``randread_8k``, ``write_1m``."""
        return f"{self.pattern}_{block_label(self.block_bytes)}"


def block_label(n: int) -> str:
    """8192 → '8k', 1048576 → '1m': the same name however the plan spelled it."""
    for suffix, unit in (("g", 2**30), ("m", 2**20), ("k", 2**10)):
        if n % unit == 0:
            return f"{n // unit}{suffix}"
    return f"{n}b"


def cells(params: FileioWorkload) -> list[Cell]:
    sizes = list(dict.fromkeys(size_to_bytes(b) for b in params.block_sizes))  # '8k' == '8K'
    return [Cell(p, b) for p in dict.fromkeys(params.patterns) for b in sizes]


def layout_argv(fio: str, filename: str, size: int) -> list[str]:
    # A read job needs the whole file: create_only=1 writes it (and fsyncs,
    # fio's create_fsync default), then exits without running the job.
    return [
        fio,
        "--name=layout",
        f"--filename={filename}",
        "--rw=read",
        f"--bs={min(LAYOUT_BS, size)}",
        f"--size={size}",
        "--create_only=1",
        "--output-format=json",
    ]


def lay_out(ctx: RunContext, fio: str, test_file: Path, size: int, stem: str) -> None:
    """Write the whole test file before the timed jobs (``layout_argv``)."""
    from pgfsbench.workloads.fio_output import run_fio

    run_fio(
        ctx,
        layout_argv(fio, str(test_file), size),
        stem,
        cwd=ctx.target.workdir,
        timeout=120 + size / 5e6,
    )  # even at 5 MB/s


def cell_argv(fio: str, filename: str, cell: Cell, params: FileioWorkload) -> list[str]:
    # psync at depth 1: fio would cap a synchronous engine's depth at 1 anyway.
    engine = "libaio" if params.iodepth > 1 else "psync"
    return [
        fio,
        f"--name={cell.name}",
        f"--filename={filename}",
        f"--rw={cell.pattern}",
        f"--bs={cell.block_bytes}",
        f"--size={size_to_bytes(params.size)}",
        "--direct=1",
        f"--ioengine={engine}",
        f"--iodepth={params.iodepth}",
        "--time_based",
        f"--runtime={params.seconds}",
        *([f"--ramp_time={params.warmup}"] if params.warmup else []),  # not in the stats
        "--output-format=json",
    ]


def run(ctx: RunContext, params: FileioWorkload) -> WorkloadResult:
    from pgfsbench.workloads.fio_output import fio_binary, keep_json, run_fio

    size = size_to_bytes(params.size)
    matrix = cells(params)
    if too_big := [c for c in matrix if c.block_bytes > size]:
        raise UserError(
            f"fileio: block size {block_label(too_big[0].block_bytes)} is larger "
            f"than the file ({params.size}); give a larger size"
        )
    ctx.require_free(size, f"fileio (a {params.size} test file)")
    fio = fio_binary()
    test_file = ctx.target.workdir / "fileio.fio"
    result = WorkloadResult()
    try:
        lay_out(ctx, fio, test_file, size, "fio-fileio-layout")
        for cell in matrix:
            out = run_fio(
                ctx,
                cell_argv(fio, str(test_file), cell, params),
                f"fio-{cell.name}",
                cwd=ctx.target.workdir,
                timeout=(params.seconds + params.warmup) * 3 + 120,
            )
            result.artifacts.append(keep_json(ctx, out, f"fio-{cell.name}"))
            result.metrics += cell_metrics(cell, out.stdout)
    finally:
        test_file.unlink(missing_ok=True)
    return result


def cell_metrics(cell: Cell, stdout: str) -> list[Metric]:
    from pgfsbench.workloads.fio_output import parse_fio_json

    stats = parse_fio_json(stdout).job(cell.name).direction(cell.pattern)
    if stats.total_ios == 0:
        raise ValueError(f"fio did no I/O in the fileio cell {cell.name}")
    prefix = f"fileio.{cell.name}"
    return [
        Metric(f"{prefix}.iops", stats.iops, "IO/s", True),
        Metric(f"{prefix}.mb_per_s", stats.bw_bytes / MB, "MB/s (10^6 B/s)", True),
        Metric(
            f"{prefix}.lat_p50_us",
            stats.clat.percentile_us(50.0),
            "µs",
            False,
            "completion latency (clat)",
        ),
        Metric(
            f"{prefix}.lat_p99_us",
            stats.clat.percentile_us(99.0),
            "µs",
            False,
            "completion latency (clat)",
        ),
    ]


def headline(params: FileioWorkload, names: Sequence[str]) -> str | None:
    """The first cell's MB/s: which cells there are depends on what was measured."""
    return next((n for n in names if n.startswith("fileio.") and n.endswith(".mb_per_s")), None)


def logical_bytes(params: FileioWorkload, values: Mapping[str, float]) -> tuple[float | None, str]:
    if not recorded(params, "size", "seconds"):
        return None, "unknown"
    rates = [v for k, v in values.items() if WRITE_CELL_MB_PER_S.match(k)]
    # The laid-out test file, then every write cell's MB/s for its seconds.
    total = size_to_bytes(params.size) + sum(rates) * MB * params.seconds
    return float(total), "file layout + write cells' MB/s × seconds"


def estimate_seconds(params: FileioWorkload) -> float:
    cells = len(params.patterns) * len(params.block_sizes)
    return size_to_bytes(params.size) / EST_WRITE_RATE + cells * (
        params.seconds + params.warmup + 0.5
    )


KIND = WorkloadKind(
    params=FileioWorkload,
    run=run,
    order=80,  # where plan errors and the schema list the type
    headline=headline,
    labels={"fileio.{job}.mb_per_s": "fio {job} MB/s"},
    seconds=estimate_seconds,
    disk_bytes=lambda p, tables: size_to_bytes(p.size),
    logical_bytes=logical_bytes,
)
