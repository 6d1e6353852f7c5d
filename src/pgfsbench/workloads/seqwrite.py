"""seqwrite: one file written sequentially with dd (and fio), CPU split sampled (the seqwrite study).

The seqwrite study ran ``dd if=/dev/zero of=./test.img bs=4k count=N`` and read vmstat
beside it: the MB/s dd printed, and how much CPU time went to user, system
and iowait explained the differences between filesystems. We run the same
dd with a system monitor on the target's device, and optionally fio doing
the same write, so dd's figure has an independent cross-check.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.fields import Size
from pgfsbench.metrics import SEQWRITE_SAMPLE_INTERVAL, Metric, Series, WorkloadResult
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads.dd_output import parse_dd_output
from pgfsbench.workloads.kind import EST_WRITE_RATE, WorkloadBase, WorkloadKind, recorded

if TYPE_CHECKING:
    from pgfsbench.monitor.system import SystemMonitor
    from pgfsbench.workloads.context import RunContext

MB = 10**6  # decimal, the unit dd prints: our figure and dd's compare directly
MBPS = "MB/s (10^6 B/s)"
CPU_SPLIT = ("user", "system", "iowait")  # vmstat's us/sy/wa, as the study read them
FILE_NAME = "seqwrite.img"


class SeqwriteWorkload(WorkloadBase):
    """Sequential write of one file, dd (and optionally fio), with CPU/dirty sampling (the seqwrite study)."""

    type: Literal["seqwrite"]
    size: Size = Field("1G", description="bytes written to one file")
    block_size: Size = Field("4k", description="bytes per write (dd bs=, fio --bs)")
    tools: list[Literal["dd", "fio"]] = Field(
        ["dd"], min_length=1, description="which tools write it, one measurement each"
    )


def run(ctx: RunContext, params: SeqwriteWorkload) -> WorkloadResult:
    # Here, not at the top: the read side imports this module for the kind's declaration.
    from pgfsbench.monitor.system import SystemMonitor

    size, block = size_to_bytes(params.size), size_to_bytes(params.block_size)
    if block > size or size % block:
        raise UserError(
            f"seqwrite: size {params.size} is not a whole number of "
            f"{params.block_size} blocks; make size a multiple of block_size"
        )
    # One file at a time: each tool's file is removed before the next one starts.
    ctx.require_free(size, f"seqwrite (a {params.size} file)")
    # Find every tool before writing anything: a missing fio must not cost the dd run.
    binaries = {tool: _binary(tool) for tool in params.tools}
    origin = time.monotonic()  # series are timestamped from the run's start
    result = WorkloadResult()
    path = ctx.target.workdir / FILE_NAME
    try:
        for tool in params.tools:
            _flush(ctx, tool)
            # A monitor of its own per tool: the split and the device bytes of this write
            # alone, not of the whole workload (which the campaign's monitors cover).
            monitor = SystemMonitor(interval=SEQWRITE_SAMPLE_INTERVAL, device=ctx.target.io_devices)
            monitor.start(origin)
            try:
                if tool == "dd":
                    metrics = _dd(ctx, binaries[tool], path, size, block)
                else:
                    metrics = _fio(ctx, binaries[tool], path, size, block)
            finally:
                monitor.stop()
            result.metrics += metrics
            result.metrics += _monitor_metrics(tool, monitor, size)
            result.series += [
                Series(s.name.replace("mon.", f"seqwrite.{tool}.", 1), s.unit, s.points)
                for s in monitor.series()
            ]
            path.unlink(missing_ok=True)
    finally:
        path.unlink(missing_ok=True)
    return result


def _binary(tool: str) -> str:
    from pgfsbench.workloads.fio_output import fio_binary

    if tool == "fio":
        return fio_binary()
    path = proc.which(tool)
    if path is None:
        raise UserError(
            f"{tool} is not installed (needed by the seqwrite workload): apt-get install coreutils"
        )
    return path


def _flush(ctx: RunContext, tool: str) -> None:
    """syncfs the target first, so earlier workloads' dirty pages are not written on our time."""
    ctx.tool(
        [proc.which("sync") or "sync", "--file-system", str(ctx.target.workdir)],
        f"seqwrite-{tool}-sync",
    )


def _dd(ctx: RunContext, dd: str, path: Path, size: int, block: int) -> list[Metric]:
    # conv=fdatasync: dd's time then includes getting the data to the disk, not
    # just into the page cache. The seqwrite study wrote 42 GB, far more than RAM, which
    # had the same effect; at our sizes a plain dd would time memcpy into RAM.
    argv = [
        dd,
        "if=/dev/zero",
        f"of={path}",
        f"bs={block}",
        f"count={size // block}",
        "conv=fdatasync",
    ]
    cpu_before = _children_cpu()
    out = ctx.tool(argv, "seqwrite-dd", cwd=ctx.target.workdir, timeout=120 + size / MB)
    process_cpu = _process_metrics("dd", cpu_before)
    summary = parse_dd_output(out.stderr)
    if summary.bytes != size:
        raise ValueError(f"dd wrote {summary.bytes} bytes, {size} were asked for")
    note = "; ".join(["bytes / seconds from dd's summary, fdatasync included", *summary.warnings])
    return [
        Metric("seqwrite.dd.mb_per_s", summary.mb_per_s, MBPS, True, note),
        Metric("seqwrite.dd.seconds", summary.seconds, "s", False),
        Metric(
            "seqwrite.dd.mb_per_s_reported",
            summary.reported_bytes_per_s / MB,
            MBPS,
            True,
            f"dd's own rounded figure ({summary.reported_rate}), for cross-checking",
        ),
        *process_cpu,
    ]


def _fio(ctx: RunContext, fio: str, path: Path, size: int, block: int) -> list[Metric]:
    # Buffered psync writes appended to a new file, as dd does: --fallocate=none,
    # because fio would otherwise preallocate the file (a different allocation
    # path, CoW behaviour on btrfs). end_fsync=1 is dd's conv=fdatasync, and
    # fio counts it in the job's runtime.
    from pgfsbench.workloads.fio_output import parse_fio_json

    argv = [
        fio,
        "--name=seqwrite",
        f"--filename={path}",
        "--rw=write",
        f"--bs={block}",
        f"--size={size}",
        "--ioengine=psync",
        "--fallocate=none",
        "--end_fsync=1",
        "--output-format=json",
    ]
    cpu_before = _children_cpu()
    out = ctx.tool(argv, "seqwrite-fio", cwd=ctx.target.workdir, timeout=120 + size / MB)
    process_cpu = _process_metrics("fio", cpu_before)
    stats = parse_fio_json(out.stdout).job("seqwrite").write
    if stats.io_bytes != size:
        raise ValueError(f"fio wrote {stats.io_bytes} bytes, {size} were asked for")
    return [
        Metric(
            "seqwrite.fio.mb_per_s",
            stats.bw_bytes / MB,
            MBPS,
            True,
            "fio's write bandwidth, end_fsync included",
        ),
        Metric("seqwrite.fio.seconds", stats.runtime_ms / 1000, "s", False),
        *process_cpu,
    ]


def _children_cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def _process_metrics(tool: str, before: tuple[float, float]) -> list[Metric]:
    """CPU seconds of the tool's own process, what ``time dd`` printed in the seqwrite study.

    Unlike the machine-wide split this ignores whatever else the machine runs.
    The delta of RUSAGE_CHILDREN around one command is that command: the
    campaign runs one child at a time and the monitors start none.
    """
    user, system = (a - b for a, b in zip(_children_cpu(), before))
    note = f"CPU seconds of the {tool} process itself (as 'time {tool}' reports)"
    return [
        Metric(f"seqwrite.{tool}.process_user_s", user, "s", False, note),
        Metric(f"seqwrite.{tool}.process_system_s", system, "s", False, note),
    ]


def _monitor_metrics(tool: str, monitor: SystemMonitor, size: int) -> list[Metric]:
    """The CPU split over the whole write (exact, from the first and last /proc/stat)."""
    note = "; ".join(monitor.problems)
    cpu = monitor.window_cpu()
    # No direction: a share of CPU time over a window whose length differs by
    # target says where the time went, not what the write cost (process_*_s does).
    metrics = [
        Metric(
            f"seqwrite.{tool}.cpu_{part}_pct",
            cpu[part] if cpu else None,
            "% of all CPUs",
            None,
            note or "vmstat-style, over the write",
        )
        for part in CPU_SPLIT
    ]
    # What reached the device per byte written: journal, metadata, CoW. Unknown
    # (None) without a device, or when an interval of the window is missing.
    written = next(m.value for m in monitor.totals() if m.name == "mon.disk.target.write_bytes")
    gaps = any("target device" in p for p in monitor.problems)
    ratio = written / size if written is not None and not gaps else None
    why = note or (
        "bytes the device received / bytes the file got"
        if ratio is not None
        else "unknown: the target has no block device to sample"
    )
    metrics.append(Metric(f"seqwrite.{tool}.device_write_ratio", ratio, "x", False, why))
    return metrics


def logical_bytes(
    params: SeqwriteWorkload, values: Mapping[str, float]
) -> tuple[float | None, str]:
    if not recorded(params, "size", "tools"):
        return None, "unknown"
    return (
        float(size_to_bytes(params.size) * len(params.tools)),
        f"size {params.size} × {len(params.tools)} tool(s)",
    )


KIND = WorkloadKind(
    params=SeqwriteWorkload,
    run=run,
    order=70,  # where plan errors and the schema list the type
    headline=lambda p, names: f"seqwrite.{p.tools[0]}.mb_per_s",
    labels={"seqwrite.{tool}.mb_per_s": "{tool} sequential write MB/s"},
    seconds=lambda p: len(p.tools) * (size_to_bytes(p.size) / EST_WRITE_RATE + 1),
    disk_bytes=lambda p, tables: size_to_bytes(p.size),  # one tool's file at a time
    logical_bytes=logical_bytes,
)
