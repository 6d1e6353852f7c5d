"""parallel-scan: count(*) over a cached table for each max_parallel_workers_per_gather (the parallel-scan study).

The study loads a wide unlogged table, caches it in memory and times
``SELECT count(*)`` while raising ``max_parallel_workers_per_gather``, looking
for the knee after which more workers stop helping. We do the same:

- an unlogged ``bit(200)`` table (the study's row shape), autovacuum off, its
  ``parallel_workers`` storage parameter set to the largest worker count so the
  planner's size heuristic never caps the workers;
- VACUUM ANALYZE, then pg_prewarm into the OS cache and shared buffers (or,
  without the extension, a plain scan), so what is timed is CPU and memory
  bandwidth over the filesystem's cached pages, not disk reads;
- one psql session per worker count: the planner settings, one untimed warm-up
  scan, then ``repeats`` scans under ``EXPLAIN (ANALYZE, TIMING OFF, ...)``,
  whose "Execution Time" is the time and whose Gather node says how many
  workers really ran. JIT is off: its compile time grows with the workers and
  has nothing to do with the filesystem.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.scaling import KNEE_GAIN, best_workers, knee_workers, speedup
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind
from pgfsbench.workloads.scratch_table import drop_scratch, extension_state, psql

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

TABLE = "pgfsbench_parallel_scan"
# Row as in the study: bit(200). On disk about 60 B per row (tuple header, 30 B
# value, line pointer); estimate 70 B, plus what generate_series spills to a
# temporary file while the INSERT runs.
EST_ROW_BYTES = 70
EST_SPILL_BYTES = 40


class ParallelScanWorkload(WorkloadBase):
    """count(*) over a cached table for each max_parallel_workers_per_gather (the parallel-scan study)."""

    type: Literal["parallel-scan"]
    rows: int = Field(2_000_000, ge=1000, le=10**10, description="rows in the scanned table")
    workers: list[int] = Field(
        [0, 1, 2, 4],
        min_length=1,
        description="max_parallel_workers_per_gather values, one timed scan series each",
    )
    repeats: int = Field(3, ge=1, le=100, description="timed scans per worker count")

    @field_validator("workers")
    @classmethod
    def _workers_valid(cls, v: list[int]) -> list[int]:
        if any(w < 0 or w > 1024 for w in v):
            raise ValueError("worker counts must be between 0 and 1024")
        return sorted(set(v))

    def server_settings(self) -> dict[str, int]:
        most = max(self.workers)
        # Two spare: the postmaster frees the last query's workers a moment after the
        # leader sees them stop, and a scan started in between would get fewer.
        return {"max_worker_processes": most + 8, "max_parallel_workers": most + 2}


SCAN = f"SELECT count(*) FROM {TABLE}"
EXPLAIN = f"EXPLAIN (ANALYZE, TIMING OFF, BUFFERS, SETTINGS, FORMAT JSON) {SCAN}"


# --- parsing EXPLAIN output --------------------------------------------------------


@dataclass(frozen=True)
class ScanTiming:
    """One timed scan, from one EXPLAIN ANALYZE JSON document."""

    execution_ms: float
    planning_ms: float
    workers_planned: int  # 0 when the plan has no Gather node
    workers_launched: int
    rows_counted: int | None  # count(*)'s result is not in the plan: the scan's rows
    settings: dict[str, str]


def _gather(node: Mapping) -> Mapping | None:
    """The first Gather (or Gather Merge) node in a plan tree, depth first."""
    if node.get("Node Type", "").startswith("Gather"):
        return node
    for child in node.get("Plans", []):
        found = _gather(child)
        if found is not None:
            return found
    return None


def _scanned_rows(node: Mapping) -> int | None:
    """Rows the Seq Scan returned, all processes together ("Actual Rows" × loops)."""
    if "Seq Scan" in node.get("Node Type", ""):
        # Per-loop average; a parallel scan runs one loop per process. PG 18
        # prints it with decimals, older versions as an integer.
        return round(float(node["Actual Rows"]) * int(node["Actual Loops"]))
    for child in node.get("Plans", []):
        found = _scanned_rows(child)
        if found is not None:
            return found
    return None


def parse_explain_documents(text: str) -> list[ScanTiming]:
    """Every EXPLAIN (ANALYZE, FORMAT JSON) document in psql's unaligned output, in order.

    psql -A -t prints each document as-is, one after another; anything that is
    not a document (blank lines) is skipped.
    """
    decoder = json.JSONDecoder()
    timings: list[ScanTiming] = []
    pos = 0
    while True:
        start = text.find("[", pos)
        if start < 0:
            return timings
        doc, pos = decoder.raw_decode(text, start)
        top = doc[0]
        gather = _gather(top["Plan"]) or {}
        timings.append(
            ScanTiming(
                execution_ms=float(top["Execution Time"]),
                planning_ms=float(top.get("Planning Time", 0.0)),
                workers_planned=int(gather.get("Workers Planned", 0)),
                workers_launched=int(gather.get("Workers Launched", 0)),
                rows_counted=_scanned_rows(top["Plan"]),
                settings=dict(top.get("Settings", {})),
            )
        )


# --- summarising the sweep -----------------------------------------------------------


def sweep_metrics(timings: Mapping[int, list[ScanTiming]]) -> list[Metric]:
    """Per-count median time and launched workers, then best, speedup and knee."""
    metrics: list[Metric] = []
    medians: dict[int, float] = {}
    for n in sorted(timings):
        runs = timings[n]
        medians[n] = statistics.median(t.execution_ms for t in runs)
        launched = min(t.workers_launched for t in runs)
        planned = min(t.workers_planned for t in runs)
        metrics.append(
            Metric(
                f"parallel_scan.workers_{n}.ms",
                medians[n],
                "ms",
                False,
                f"median of {len(runs)} scans (EXPLAIN ANALYZE Execution Time)",
            )
        )
        note = "fewest workers launched over the scans"
        if planned < n:
            note = f"fewer workers than asked ({n}): the planner planned {planned}"
        elif launched < n:
            note = f"fewer workers than asked ({n}): the server ran short of background workers"
        metrics.append(
            Metric(f"parallel_scan.workers_{n}.launched", launched, "workers", None, note)
        )
    best = best_workers(medians)
    metrics += [
        Metric(
            "parallel_scan.best_workers",
            best,
            "workers",
            None,
            "informational: the max_parallel_workers_per_gather with the lowest time",
        ),
        Metric(
            "parallel_scan.speedup",
            speedup(medians),
            "x",
            None,
            f"informational: time at {min(medians)} workers / best time (the shape "
            f"of the curve; the times themselves rank the targets)",
        ),
        Metric(
            "parallel_scan.knee_workers",
            knee_workers(medians),
            "workers",
            None,
            f"informational: the fewest workers after which more improve the time by "
            f"less than {KNEE_GAIN:.0%}",
        ),
    ]
    return metrics


# --- running it ------------------------------------------------------------------------


def _load(ctx: RunContext, params: ParallelScanWorkload) -> None:
    most = max(params.workers)
    psql(
        ctx,
        [
            f"DROP TABLE IF EXISTS {TABLE}",
            f"CREATE UNLOGGED TABLE {TABLE} (id bit(200)) "
            f"WITH (autovacuum_enabled = off, parallel_workers = {most})",
            # A constant the planner folds once: the insert costs I/O, not expression work.
            f"INSERT INTO {TABLE} SELECT repeat('10', 100)::bit(200) "
            f"FROM generate_series(1, {params.rows})",
            f"VACUUM ANALYZE {TABLE}",  # its own -c: VACUUM refuses a transaction block
        ],
        "load",
    )


def _warm(ctx: RunContext, prewarm: str) -> None:
    """Bring the table into memory, with pg_prewarm when the server has it."""
    if not prewarm:
        psql(ctx, [SCAN], "warm")  # a plain scan caches the table in the OS page cache
        return
    install = ["CREATE EXTENSION pg_prewarm"] if prewarm == "-" else []
    # 'read' fills the OS page cache with every block; 'buffer' then puts as many as
    # fit in shared buffers.
    psql(
        ctx,
        [
            *install,
            f"SELECT pg_prewarm('{TABLE}', 'read')",
            f"SELECT pg_prewarm('{TABLE}', 'buffer')",
        ],
        "warm",
    )


def _sweep(ctx: RunContext, params: ParallelScanWorkload) -> dict[int, list[ScanTiming]]:
    timings: dict[int, list[ScanTiming]] = {}
    for n in params.workers:
        out = psql(
            ctx,
            [
                f"SET max_parallel_workers_per_gather = {n}",
                # Free parallelism in the cost model, so the planner uses all N workers.
                "SET parallel_setup_cost = 0",
                "SET parallel_tuple_cost = 0",
                "SET min_parallel_table_scan_size = 0",
                "SET jit = off",
                *[EXPLAIN] * (params.repeats + 1),
            ],
            f"scan_workers_{n}",
        )
        docs = parse_explain_documents(out)
        if len(docs) != params.repeats + 1:
            raise ValueError(
                f"expected {params.repeats + 1} EXPLAIN results from psql for "
                f"{n} workers, got {len(docs)}"
            )
        timings[n] = docs[1:]  # the first scan is the untimed warm-up
    return timings


def _check_rows(timings: Mapping[int, list[ScanTiming]], rows: int) -> None:
    """Every scan saw the whole table (EXPLAIN rounds per-process rows: allow that)."""
    for n, runs in timings.items():
        for t in runs:
            if t.rows_counted is None or abs(t.rows_counted - rows) > t.workers_launched + 1:
                raise ValueError(f"the scan with {n} workers saw {t.rows_counted} rows, not {rows}")


def run(ctx: RunContext, params: ParallelScanWorkload) -> WorkloadResult:
    ctx.require_free(params.rows * (EST_ROW_BYTES + EST_SPILL_BYTES), "the parallel-scan table")
    prewarm = extension_state(ctx, "pg_prewarm")
    ok = False
    try:
        _load(ctx, params)
        size = int(ctx.cluster.sql(f"SELECT pg_table_size('{TABLE}')"))
        _warm(ctx, prewarm)
        timings = _sweep(ctx, params)
        ok = True
    finally:
        drop_scratch(ctx, TABLE, "pg_prewarm", prewarm, ok)
    _check_rows(timings, params.rows)
    result = WorkloadResult(metrics=sweep_metrics(timings))
    result.metrics.append(
        Metric(
            "parallel_scan.table_mb",
            size / 2**20,
            "MB",
            None,
            "informational: size of the scanned table",
        )
    )
    return result


def estimate_seconds(params: ParallelScanWorkload) -> float:
    load = params.rows / 400_000
    return load + len(params.workers) * (params.repeats + 1) * params.rows / 5_000_000 + 2


KIND = WorkloadKind(
    params=ParallelScanWorkload,
    run=run,
    order=50,  # where plan errors and the schema list the type
    # The scan with the most workers asked: what parallelism buys on this filesystem.
    headline=lambda p, names: f"parallel_scan.workers_{max(p.workers)}.ms",
    labels={"parallel_scan.workers_{workers}.ms": "parallel scan time, {workers} workers"},
    seconds=estimate_seconds,
    disk_bytes=lambda p, tables: p.rows * (EST_ROW_BYTES + EST_SPILL_BYTES),
    # Uncached, every scan reads the whole table; the first one at least.
    read_bytes=lambda p, values: (
        values["parallel_scan.table_mb"] * 2**20 if "parallel_scan.table_mb" in values else None
    ),
)
