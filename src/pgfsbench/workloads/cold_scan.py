"""cold-scan: a sequential and a bitmap heap scan of a table that starts every scan cold.

PostgreSQL 18 reads through its asynchronous I/O subsystem (``io_method``,
``effective_io_concurrency``, ``io_combine_limit``); on pages already in memory those
settings change nothing, so each timed scan here starts with the table and its index out
of both caches:

- PostgreSQL's: ``pg_buffercache_evict_relation()`` (PostgreSQL 18's pg_buffercache,
  which the embedded build ships) writes out and evicts every buffer of the table and of
  its index;
- the kernel's: each file of the two relations under the data directory (every 1 GB
  segment and fork) is fsynced and dropped with ``posix_fadvise(POSIX_FADV_DONTNEED)``,
  so only this workload's files leave the page cache, never the rest of the machine's.

Then one psql session forces the plan (``enable_*`` off for every other scan, no
parallel workers, no JIT), runs the query under ``EXPLAIN (ANALYZE, BUFFERS, TIMING
OFF, FORMAT JSON)`` and the plan is checked to be the intended one. The target's block
device counters (/proc/diskstats, the devices its I/O is counted on) are read before
and after that session: what the scan really read from the device.

The table (``table_mb``, larger than shared_buffers: refused otherwise) has a sequential
``id``, a random ``r`` with a b-tree index, and 150 bytes of padding, about 40 rows to a
page. The seq scan sums ``id`` over every row; the bitmap heap scan sums ``id`` where
``r`` is below the ``bitmap_fraction`` quantile: with the default 0.1% of the rows it
visits about 4% of the heap pages, scattered over the table about 200 kB apart, beyond
the kernel's default 128 kB readahead (prefetching them is what
``effective_io_concurrency`` controls). At 1% it would visit a third of the pages and
readahead would read the whole heap file (seen: 48.5 MB from the device for a 48 MB
table, 16 MB of it asked for).

After the cold scans, each scan runs once more without eviction: its device reads are
the control that says the eviction worked (a warm scan reads next to nothing, unless a
memory limit smaller than the table pushes it out).

The first scan in ``scans`` is the headline the verdicts are about; list one scan per
workload (with a tag) for a verdict on each.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from pgfsbench.errors import UserError
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.units import pg_memory_bytes
from pgfsbench.workloads.kind import EST_WRITE_RATE, MB, WorkloadBase, WorkloadKind
from pgfsbench.workloads.scratch_table import drop_scratch, extension_state, psql

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

TABLE = "pgfsbench_cold_scan"
INDEX = f"{TABLE}_r"
PAGE = 8192
PAD = 150
# About 41 rows to an 8 kB page (24 B tuple header, 8 B id, 4 B r, 151 B text, 4 B line
# pointer, alignment): 200 B a row on disk; the index adds about 11%.
EST_ROW_BYTES = 200
ROWS_PER_PAGE = 41
EST_INDEX_SHARE = 0.12
R_RANGE = 2**31 - 1  # r is uniform in [0, R_RANGE)
# plan check's calibration: a cold scan of a loop image on a loaded 2-core VM
EST_SCAN_BYTES_PER_S = 100 * MB
EST_LOAD_BYTES_PER_S = 20 * MB

Scan = Literal["seq", "bitmap"]
PLAN_NODE = {"seq": "Seq Scan", "bitmap": "Bitmap Heap Scan"}
# Every other way to read the table off, so the planner has one plan left.
FORCE = {
    "seq": ("enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan", "enable_tidscan"),
    "bitmap": ("enable_seqscan", "enable_indexscan", "enable_indexonlyscan", "enable_tidscan"),
}


class ColdScanWorkload(WorkloadBase):
    """Sequential and bitmap heap scans of a table evicted from shared buffers and the
    OS page cache before each scan (PostgreSQL 18's I/O settings at work)."""

    type: Literal["cold-scan"]
    table_mb: int = Field(
        256,
        ge=8,
        le=10**7,
        description="size of the scanned table in MB; it must be larger than shared_buffers",
    )
    scans: list[Scan] = Field(
        ["seq", "bitmap"],
        min_length=1,
        description="the scans to time, in order: 'seq' (a sequential scan of the whole "
        "table) and 'bitmap' (a bitmap heap scan through the index); the first is the "
        "headline",
    )
    bitmap_fraction: float = Field(
        0.001,
        gt=0,
        le=0.5,
        description="share of the rows the bitmap heap scan selects (scattered over the table)",
    )
    repeats: int = Field(3, ge=1, le=100, description="cold scans of each kind (median kept)")

    @field_validator("scans")
    @classmethod
    def _scans_once(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(v))

    def server_problem(self, settings: Mapping[str, object]) -> str | None:
        value = settings.get("shared_buffers", "128MB")  # PostgreSQL's default
        buffers = pg_memory_bytes(value)
        if buffers is None or self.table_mb * MB > buffers:
            return None  # (an unreadable value: the server judges it)
        return (
            f"cold-scan's table_mb = {self.table_mb} is not larger than shared_buffers = "
            f"{value!r}: give it a larger table_mb or the server smaller shared_buffers"
        )

    def rows(self) -> int:
        return max(1000, self.table_mb * MB // EST_ROW_BYTES)


# --- parsing -------------------------------------------------------------------------


@dataclass(frozen=True)
class ScanResult:
    """One timed scan: EXPLAIN ANALYZE's figures and the device's read bytes around it."""

    execution_ms: float
    node_types: tuple[str, ...]  # every plan node, depth first
    read_blocks: int  # shared blocks read from outside PostgreSQL's buffers
    hit_blocks: int
    device_read_bytes: int | None  # None: the target has no device counters (dir target)

    @property
    def read_bytes(self) -> int:
        return self.read_blocks * PAGE


def node_types(node: Mapping) -> tuple[str, ...]:
    found = [str(node.get("Node Type", ""))]
    for child in node.get("Plans", []):
        found += node_types(child)
    return tuple(found)


def parse_scan(text: str) -> tuple[float, tuple[str, ...], int, int]:
    """(execution ms, plan nodes, shared read blocks, shared hit blocks) of the one
    EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) document in psql's unaligned output."""
    decoder, docs, pos = json.JSONDecoder(), [], 0
    while (start := text.find("[", pos)) >= 0:  # psql -A -t: the documents as they are
        doc, pos = decoder.raw_decode(text, start)
        docs.append(doc)
    if len(docs) != 1:
        raise ValueError(f"expected one EXPLAIN result from psql, got {len(docs)}")
    top = docs[0][0]
    plan = top["Plan"]
    return (
        float(top["Execution Time"]),
        node_types(plan),
        int(plan.get("Shared Read Blocks", 0)),
        int(plan.get("Shared Hit Blocks", 0)),
    )


def check_plan(scan: str, nodes: Sequence[str]) -> None:
    """The plan is the one asked for: the scan's node, and no parallel workers."""
    if PLAN_NODE[scan] not in nodes or any(n.startswith("Gather") for n in nodes):
        raise ValueError(
            f"the {scan} scan did not get the plan it forces ({PLAN_NODE[scan]}, no "
            f"Gather): the planner chose {' > '.join(nodes)}"
        )


def device_read_bytes(diskstats: str, devices: Iterable[str]) -> int | None:
    """Bytes read so far from ``devices`` (diskstats names), summed; None when one is
    missing or there are none."""
    from pgfsbench.monitor.procfs import SECTOR_BYTES, parse_diskstats

    stats = parse_diskstats(diskstats)
    names = list(devices)
    if not names or any(n not in stats for n in names):
        return None
    return sum(stats[n].sectors_read for n in names) * SECTOR_BYTES


# --- the metrics -----------------------------------------------------------------------


def scan_metrics(scan: str, cold: Sequence[ScanResult], warm: ScanResult | None) -> list[Metric]:
    """Median time, read rate and device reads of the cold scans; the warm control."""
    p = f"cold_scan.{scan}."
    n = len(cold)
    seconds = statistics.median(r.execution_ms for r in cold) / 1000
    rates = [r.read_bytes / MB / (r.execution_ms / 1000) for r in cold if r.execution_ms > 0]
    out = [
        Metric(
            p + "s",
            seconds,
            "s",
            False,
            f"median of {n} cold {scan} scans (EXPLAIN ANALYZE Execution Time)",
        ),
        Metric(
            p + "read_mb",
            statistics.median(r.read_bytes for r in cold) / MB,
            "MB",
            None,
            "informational: PostgreSQL's shared blocks read (not hit) by one cold scan, median",
        ),
    ]
    if rates:
        out.append(
            Metric(
                p + "mb_per_s",
                statistics.median(rates),
                "MB/s",
                True,
                f"median over {n} cold {scan} scans of the blocks PostgreSQL read / the "
                "scan's time",
            )
        )
    devices = [r.device_read_bytes for r in cold if r.device_read_bytes is not None]
    if devices:
        out.append(
            Metric(
                p + "device_read_mb",
                statistics.median(devices) / MB,
                "MB",
                None,
                "informational: bytes read from the target's device during one cold scan "
                "(/proc/diskstats), median",
            )
        )
    if warm is not None:
        out.append(
            Metric(
                p + "warm_s",
                warm.execution_ms / 1000,
                "s",
                None,
                "informational: the same scan once more without eviction (the control)",
            )
        )
        if warm.device_read_bytes is not None:
            out.append(
                Metric(
                    p + "warm_device_read_mb",
                    warm.device_read_bytes / MB,
                    "MB",
                    None,
                    "informational: device reads of that warm scan; next to nothing when "
                    "the eviction before the cold scans is what made them read",
                )
            )
    return out


# --- running it ------------------------------------------------------------------------


def _load(ctx: RunContext, params: ColdScanWorkload) -> None:
    psql(
        ctx,
        [
            "SELECT setseed(0.25)",  # the same table every time
            f"DROP TABLE IF EXISTS {TABLE}",
            f"CREATE UNLOGGED TABLE {TABLE} (id bigint, r integer, pad text) "
            "WITH (autovacuum_enabled = off)",
            f"INSERT INTO {TABLE} SELECT g, floor(random() * {R_RANGE})::integer, "
            f"repeat('x', {PAD}) FROM generate_series(1, {params.rows()}) g",
            f"CREATE INDEX {INDEX} ON {TABLE} (r)",
            # Hint bits and the visibility map set now, not written by the first scan.
            f"VACUUM (FREEZE, ANALYZE) {TABLE}",
        ],
        "load",
    )


def _relation_files(ctx: RunContext) -> list[Path]:
    out = ctx.cluster.sql(
        f"SELECT pg_relation_filepath('{TABLE}') UNION ALL SELECT pg_relation_filepath('{INDEX}')"
    )
    return relation_files(ctx.cluster.pgdata, out.splitlines())


def relation_files(pgdata: Path, relpaths: Iterable[str]) -> list[Path]:
    """Every file of the relations at ``relpaths`` (pg_relation_filepath, relative to the
    data directory or absolute in a tablespace): each 1 GB segment (.1, .2 ...) and fork
    (_fsm, _vm, _init), not another relation whose number starts alike."""
    files: list[Path] = []
    for rel in relpaths:
        base = Path(rel) if os.path.isabs(rel) else pgdata / rel
        files += [
            f
            for f in sorted(base.parent.glob(base.name + "*"))
            if f.name == base.name or f.name[len(base.name)] in "._"
        ]
    return files


def drop_from_page_cache(files: Iterable[Path]) -> int:
    """Write back and drop each file's pages from the OS page cache; how many files."""
    count = 0
    for path in files:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            os.fsync(fd)  # dirty pages are not dropped
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            count += 1
        finally:
            os.close(fd)
    return count


def _evict(ctx: RunContext) -> None:
    psql(
        ctx,
        [
            f"SELECT * FROM pg_buffercache_evict_relation('{TABLE}')",
            f"SELECT * FROM pg_buffercache_evict_relation('{INDEX}')",
        ],
        "evict",
    )
    if not drop_from_page_cache(_relation_files(ctx)):
        raise ValueError(f"found no file of {TABLE} under {ctx.cluster.pgdata}")


def _query(params: ColdScanWorkload, scan: str) -> str:
    if scan == "seq":
        return f"SELECT sum(id) FROM {TABLE}"
    # id is in the heap only: every selected row's page is read (no index-only answer).
    return f"SELECT sum(id) FROM {TABLE} WHERE r < {int(params.bitmap_fraction * R_RANGE)}"


def _devices(ctx: RunContext) -> list[str]:
    from pgfsbench.monitor.system import device_name

    return [device_name(d) for d in ctx.target.io_devices]


def _device_reads(devices: list[str]) -> int | None:
    try:
        text = Path("/proc/diskstats").read_text()
    except OSError:
        return None
    return device_read_bytes(text, devices)


def _timed(ctx: RunContext, params: ColdScanWorkload, scan: str, stem: str) -> ScanResult:
    devices = _devices(ctx)
    before = _device_reads(devices)
    out = psql(
        ctx,
        [
            "SET max_parallel_workers_per_gather = 0",
            "SET jit = off",
            *(f"SET {name} = off" for name in FORCE[scan]),
            f"EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) {_query(params, scan)}",
        ],
        stem,
    )
    after = _device_reads(devices)
    ms, nodes, read, hit = parse_scan(out)
    check_plan(scan, nodes)
    read_bytes = None if before is None or after is None else max(0, after - before)
    return ScanResult(ms, nodes, read, hit, read_bytes)


def _check_larger_than_buffers(ctx: RunContext, table_bytes: int) -> None:
    buffers = int(
        ctx.cluster.sql(
            "SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers'"
        )
    )
    if table_bytes <= buffers:
        raise UserError(
            f"cold-scan's table ({table_bytes / MB:.0f} MB) is not larger than "
            f"shared_buffers ({buffers / MB:.0f} MB): give it a larger table_mb or the "
            "server smaller shared_buffers"
        )


def run(ctx: RunContext, params: ColdScanWorkload) -> WorkloadResult:
    ctx.require_free(estimate_disk_bytes(params), "the cold-scan table")
    state = extension_state(ctx, "pg_buffercache")
    if not state:
        raise UserError(
            "cold-scan needs the pg_buffercache extension (PostgreSQL 18's, with "
            "pg_buffercache_evict_relation) and this server has none: use the embedded "
            "PostgreSQL or a server with contrib installed"
        )
    ok = False
    try:
        if state == "-":
            psql(ctx, ["CREATE EXTENSION pg_buffercache"], "extension")
        if ctx.cluster.sql(
            "SELECT count(*) FROM pg_proc WHERE proname = 'pg_buffercache_evict_relation'"
        ) in ("", "0"):
            raise UserError(
                "cold-scan needs pg_buffercache_evict_relation(), new in PostgreSQL 18's "
                f"pg_buffercache; this server is {ctx.cluster.version()}: use PostgreSQL 18"
            )
        _load(ctx, params)
        table_bytes = int(ctx.cluster.sql(f"SELECT pg_relation_size('{TABLE}')"))
        index_bytes = int(ctx.cluster.sql(f"SELECT pg_relation_size('{INDEX}')"))
        _check_larger_than_buffers(ctx, table_bytes)
        metrics: list[Metric] = []
        for scan in params.scans:
            cold = []
            for i in range(params.repeats):
                _evict(ctx)
                cold.append(_timed(ctx, params, scan, f"{scan}_cold_{i + 1}"))
            warm = _timed(ctx, params, scan, f"{scan}_warm")
            metrics += scan_metrics(scan, cold, warm)
        ok = True
    finally:
        drop_scratch(ctx, TABLE, "pg_buffercache", state, ok)
    metrics += [
        Metric("cold_scan.table_mb", table_bytes / MB, "MB", None, "informational: the table"),
        Metric("cold_scan.index_mb", index_bytes / MB, "MB", None, "informational: its index"),
    ]
    return WorkloadResult(metrics=metrics)


def estimate_disk_bytes(params: ColdScanWorkload) -> int:
    return int(params.rows() * EST_ROW_BYTES * (1 + EST_INDEX_SHARE))


def estimate_seconds(params: ColdScanWorkload) -> float:
    table = params.rows() * EST_ROW_BYTES
    load = estimate_disk_bytes(params) / EST_LOAD_BYTES_PER_S + table / EST_WRITE_RATE
    # the bitmap scan reads the pages holding a selected row (random reads: costed as a
    # sequential read of four times as much)
    share = {
        "seq": 1.0,
        "bitmap": min(1.0, 4 * (1 - (1 - params.bitmap_fraction) ** ROWS_PER_PAGE)),
    }
    scans = sum(
        (params.repeats + 1) * (share[s] * table / EST_SCAN_BYTES_PER_S + 1) for s in params.scans
    )
    return load + scans + 2


def least_read_bytes(params: ColdScanWorkload, values: Mapping[str, float]) -> float | None:
    """What the cold scans read from outside PostgreSQL's buffers: uncached, at least
    that much came from the device (the warm controls are left out)."""
    names = [f"cold_scan.{s}.read_mb" for s in params.scans]
    if any(n not in values for n in names):
        return None
    return sum(values[n] for n in names) * MB * params.repeats


KIND = WorkloadKind(
    params=ColdScanWorkload,
    run=run,
    order=55,  # after parallel-scan, where plan errors and the schema list the type
    headline=lambda p, names: f"cold_scan.{p.scans[0]}.s",
    labels={
        "cold_scan.seq.s": "cold sequential scan time",
        "cold_scan.bitmap.s": "cold bitmap heap scan time",
    },
    seconds=estimate_seconds,
    disk_bytes=lambda p, tables: estimate_disk_bytes(p),
    read_bytes=least_read_bytes,
)
