"""fio for the workloads: find it, run it, parse its ``--output-format=json``.

Checked against outputs captured from fio 3.33 (``tests/fixtures/fio_*.json``).
Units are fio's own: latencies in nanoseconds, bandwidth in bytes per second,
runtimes in milliseconds. fio may print notes or error lines before the JSON
(``note: both iodepth >= 1 and synchronous I/O engine are selected ...``);
they are kept as ``preamble``, never parsed as numbers.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.metrics import Artifact

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext


def fio_binary() -> str:
    """The fio executable, or a UserError that says how to get it."""
    path = proc.which("fio")
    if path is None:
        raise UserError(
            "fio is not installed (needed by the fsync-latency and fileio "
            "workloads): apt-get install fio, or run 'make setup'"
        )
    return path


def run_fio(ctx: RunContext, argv: list[str], stem: str, **kwargs) -> proc.CommandResult:
    """``ctx.tool`` for fio: on failure, say why in fio's words.

    fio prints some errors on stdout before its JSON, so the tail of stdout
    that CommandFailed would quote is only closing braces.
    """
    try:
        return ctx.tool(argv, stem, **kwargs)
    except CommandFailed as exc:
        result = exc.result
        raise ValueError(
            f"fio exited {result.exit_code}: {failure_reason(result.stdout, result.stderr)}"
        ) from exc


def keep_json(ctx: RunContext, out: proc.CommandResult, stem: str) -> Artifact:
    """fio's bare JSON as ``stem``.json beside the command record, so jq and fio's tools
    read it as is."""
    raw = ctx.artifacts_dir / f"{stem}.json"
    raw.write_text(out.stdout)
    return Artifact("fio-json", raw, out.argv, out.exit_code)


def failure_reason(stdout: str, stderr: str) -> str:
    """What fio said about a failed run: its stderr lines, then what its stdout tells."""
    said = list(dict.fromkeys(l.strip() for l in stderr.splitlines() if l.strip()))
    if stdout.strip():
        try:
            parse_fio_json(stdout)
        except ValueError as exc:  # a failed job, or no JSON at all
            said.append(str(exc))
    return " | ".join(said) or "fio gave no reason"


@dataclass(frozen=True)
class Latency:
    """One fio latency block (``clat_ns``, ``lat_ns``, ``sync.lat_ns``), in nanoseconds.

    ``percentiles_ns`` maps the percentile (99.9) to its value. fio computes
    them from log-linear histogram buckets, so a high percentile can exceed
    the exact ``max_ns`` a little.
    """

    n: int
    min_ns: float
    max_ns: float
    mean_ns: float
    percentiles_ns: dict[float, float] = field(default_factory=dict)

    def percentile_us(self, pct: float) -> float:
        try:
            return self.percentiles_ns[pct] / 1000
        except KeyError:
            have = ", ".join(f"{p:g}" for p in sorted(self.percentiles_ns)) or "none"
            raise ValueError(f"fio reported no {pct:g}th percentile (it has: {have})") from None


@dataclass(frozen=True)
class IoStats:
    """One direction (read or write) of one job."""

    total_ios: int
    io_bytes: int
    runtime_ms: int
    iops: float
    bw_bytes: float  # bytes per second, as fio computed it
    clat: Latency  # completion latency: what the fio manual recommends comparing
    lat: Latency  # submission + completion


@dataclass(frozen=True)
class FioJob:
    name: str
    error: int
    runtime_ms: int
    read: IoStats
    write: IoStats
    sync: Latency | None  # with fsync/fdatasync=N: latency of each sync call

    def direction(self, rw: str) -> IoStats:
        """The stats a ``--rw`` pattern is measured by (read/randread → read, else write)."""
        return self.read if rw.endswith("read") else self.write


@dataclass(frozen=True)
class FioOutput:
    version: str
    jobs: list[FioJob]
    preamble: str  # whatever fio printed before the JSON, stripped

    def job(self, name: str) -> FioJob:
        for j in self.jobs:
            if j.name == name:
                return j
        raise ValueError(
            f"fio output has no job '{name}' (jobs: "
            f"{', '.join(j.name for j in self.jobs) or 'none'})"
        )


def parse_fio_json(text: str) -> FioOutput:
    """fio stdout → FioOutput; ValueError on error output or a failed job."""
    start = text.find("{")
    if start < 0:
        raise ValueError("fio printed no JSON output" + _excerpt(text))
    preamble = text[:start].strip()
    try:
        # raw_decode: anything after the JSON object (a later note) is ignored.
        data, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ValueError(f"fio output is not valid JSON ({exc})" + _excerpt(text)) from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise ValueError("fio JSON output has no 'jobs' list" + _excerpt(text))
    try:
        jobs = [_job(j) for j in data["jobs"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(
            f"fio JSON output is not in the shape fio 3 prints (missing or odd field: {exc!r})"
        ) from None
    for job in jobs:
        if job.error:
            detail = f": {preamble}" if preamble else ""
            raise ValueError(
                f"fio job '{job.name}' failed with error {job.error} "
                f"({os.strerror(job.error)}){detail}"
            )
    return FioOutput(str(data.get("fio version", "")), jobs, preamble)


def _job(j: dict[str, Any]) -> FioJob:
    sync = j.get("sync")
    sync_lat = _latency(sync["lat_ns"]) if sync and "lat_ns" in sync else None
    return FioJob(
        name=str(j["jobname"]),
        error=int(j["error"]),
        runtime_ms=int(j.get("job_runtime", 0)),
        read=_io(j["read"]),
        write=_io(j["write"]),
        # fio 3.33 prints a sync section even without syncs (N = 0): none is None.
        sync=sync_lat if sync_lat and sync_lat.n else None,
    )


def _io(d: dict[str, Any]) -> IoStats:
    return IoStats(
        total_ios=int(d["total_ios"]),
        io_bytes=int(d["io_bytes"]),
        runtime_ms=int(d["runtime"]),
        iops=float(d["iops"]),
        bw_bytes=float(d["bw_bytes"]),
        clat=_latency(d["clat_ns"]),
        lat=_latency(d["lat_ns"]),
    )


def _latency(d: dict[str, Any]) -> Latency:
    return Latency(
        n=int(d["N"]),
        min_ns=float(d["min"]),
        max_ns=float(d["max"]),
        mean_ns=float(d["mean"]),
        # Keys are "%f"-formatted percents ("99.900000"): float() makes them exact lookups.
        percentiles_ns={float(k): float(v) for k, v in d.get("percentile", {}).items()},
    )


def _excerpt(text: str, lines: int = 3) -> str:
    head = [l.strip() for l in text.strip().splitlines() if l.strip()][:lines]
    return ": " + " | ".join(head) if head else " (the output was empty)"
