"""PostgreSQL's cumulative statistics, version by version: which views to query, and
how to turn their rows into one set of counters. Pure (no connection), so it is
tested on rows captured from real servers (tests/fixtures/pgstat_pg*.json).

Where each counter lives:

=================  ==============================  ====================================
counter            PG 14-16                         PG 17+
=================  ==============================  ====================================
checkpoints        pg_stat_bgwriter.checkpoints_*   pg_stat_checkpointer.num_timed/
                                                    num_requested (PG 18: num_done)
write/sync ms      ...checkpoint_write/sync_time    ...write_time, sync_time
by checkpointer    ...buffers_checkpoint            ...buffers_written
by bgwriter        pg_stat_bgwriter.buffers_clean   same
by backends        pg_stat_bgwriter.buffers_backend pg_stat_io: writes of object
                                                    'relation' by all but checkpointer
                                                    and background writer
WAL syncs          pg_stat_wal.wal_sync/_time       PG 17: same; PG 18: pg_stat_io,
                   (PG 14+)                         object 'wal', context 'normal'
=================  ==============================  ====================================

Rows come as ``SELECT coalesce(json_agg(t), '[]') FROM <view> t``: a list of dicts.
A counter a version does not have is None: unknown, never 0. WAL sync time is
only counted with ``track_wal_io_timing`` on, so without it it is None too.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

# pg_stat_io rows of these backends are not "written by a backend".
_NOT_BACKENDS = ("checkpointer", "background writer")


@dataclass(frozen=True)
class PgCounters:
    """Cumulative counters at one moment (lsn: bytes since 0/0)."""

    lsn: int
    checkpoints_timed: int | None = None
    checkpoints_req: int | None = None
    checkpoints_done: int | None = None  # PG 18+: performed, not just started or skipped
    checkpoint_write_ms: float | None = None
    checkpoint_sync_ms: float | None = None
    buffers_checkpoint: int | None = None
    buffers_bgwriter: int | None = None
    buffers_backend: int | None = None
    wal_syncs: int | None = None
    wal_sync_ms: float | None = None


COUNTERS = [f.name for f in fields(PgCounters) if f.name != "lsn"]


def views_for(major: int) -> list[str]:
    """The statistics views the monitor reads on this major version."""
    if major >= 17:
        return ["pg_stat_checkpointer", "pg_stat_bgwriter", "pg_stat_io"] + (
            ["pg_stat_wal"] if major == 17 else []
        )
    return ["pg_stat_bgwriter"] + (["pg_stat_wal"] if major >= 14 else [])


def snapshot_query(major: int) -> str:
    """One round trip: the LSN and every view's rows as JSON."""
    cols = ["pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS lsn"]
    for view in views_for(major):
        where = " WHERE t.object IN ('relation', 'wal')" if view == "pg_stat_io" else ""
        cols.append(f"(SELECT coalesce(json_agg(t), '[]') FROM {view} t{where}) AS {view}")
    return "SELECT " + ",\n       ".join(cols)


def _one(rows: dict[str, list[dict]], view: str) -> dict:
    got = rows.get(view) or []
    if not got:
        raise ValueError(f"{view}: no row")
    return got[0]


def _sum(rows: list[dict], column: str) -> float | None:
    """Sum of a pg_stat_io column; NULL cells (an operation that cannot happen) count 0,
    and a column with no value at all is None."""
    values = [r[column] for r in rows if r.get(column) is not None]
    return sum(values) if values else None


def parse_pg_stats(
    major: int, lsn: int, rows: dict[str, list[dict]], wal_io_timing: bool = False
) -> PgCounters:
    """The counters from ``views_for(major)``'s rows; ValueError when a row is missing."""
    c: dict[str, object] = {}
    bgw = _one(rows, "pg_stat_bgwriter")
    c["buffers_bgwriter"] = bgw["buffers_clean"]
    if major >= 17:
        cp = _one(rows, "pg_stat_checkpointer")
        c["checkpoints_timed"] = cp["num_timed"]
        c["checkpoints_req"] = cp["num_requested"]
        c["checkpoints_done"] = cp.get("num_done")  # PG 18+
        c["checkpoint_write_ms"] = float(cp["write_time"])
        c["checkpoint_sync_ms"] = float(cp["sync_time"])
        c["buffers_checkpoint"] = cp["buffers_written"]
        io = rows.get("pg_stat_io")
        if io is None:
            raise ValueError("pg_stat_io: no rows")
        rel = [
            r for r in io if r["object"] == "relation" and r["backend_type"] not in _NOT_BACKENDS
        ]
        c["buffers_backend"] = int(_sum(rel, "writes") or 0)
    else:
        c["checkpoints_timed"] = bgw["checkpoints_timed"]
        c["checkpoints_req"] = bgw["checkpoints_req"]
        c["checkpoint_write_ms"] = float(bgw["checkpoint_write_time"])
        c["checkpoint_sync_ms"] = float(bgw["checkpoint_sync_time"])
        c["buffers_checkpoint"] = bgw["buffers_checkpoint"]
        c["buffers_backend"] = bgw["buffers_backend"]
    if major >= 18:
        wal = [
            r
            for r in rows.get("pg_stat_io") or []
            if r["object"] == "wal" and r["context"] == "normal"
        ]
        syncs = _sum(wal, "fsyncs")
        c["wal_syncs"] = int(syncs) if syncs is not None else None
        sync_ms = _sum(wal, "fsync_time")
        c["wal_sync_ms"] = float(sync_ms) if wal_io_timing and sync_ms is not None else None
    elif major >= 14:
        w = _one(rows, "pg_stat_wal")
        c["wal_syncs"] = w["wal_sync"]
        c["wal_sync_ms"] = float(w["wal_sync_time"]) if wal_io_timing else None
    return PgCounters(lsn=lsn, **c)  # type: ignore[arg-type]


def counter_deltas(
    before: PgCounters, after: PgCounters
) -> tuple[dict[str, float | None], list[str]]:
    """after − before per counter (None where unknown), and the counters that went
    backwards (stats reset): those are None too, never negative."""
    out: dict[str, float | None] = {}
    backwards = []
    for name in COUNTERS:
        a, b = getattr(after, name), getattr(before, name)
        if a is None or b is None:
            out[name] = None
        elif a < b:
            out[name] = None
            backwards.append(name)
        else:
            out[name] = a - b
    return out, backwards


def checkpoints_in(delta: dict[str, float | None]) -> float | None:
    """Checkpoints completed: num_done where the server has it (18+), else timed+requested."""
    if delta.get("checkpoints_done") is not None:
        return delta["checkpoints_done"]
    timed, req = delta.get("checkpoints_timed"), delta.get("checkpoints_req")
    return None if timed is None or req is None else timed + req
