"""PostgreSQL beside a workload: WAL bytes, checkpoints, buffers written, WAL syncs.

One persistent psycopg connection (autocommit) to the cluster's private socket;
each tick is one query (``pgstats.snapshot_query``). The first LSN is read in
start() and the last in stop(), and every interval runs from one successful
sample to the next, so the intervals partition that span: the per-interval WAL
bytes add up exactly to ``mon.pg.wal_bytes``. A failing query is a problem,
never a crash: the next successful sample closes a longer interval.

Series: mon.pg.wal_mb_per_s, mon.pg.checkpoints (completed in the interval),
mon.pg.buffers_{checkpoint,bgwriter,backend}_per_s, mon.pg.wal_syncs_per_s.
Totals: mon.pg.wal_bytes, checkpoints_timed, checkpoints_req, checkpoint_write_ms,
checkpoint_sync_ms, buffers_checkpoint, buffers_backend, wal_syncs, wal_sync_ms.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pgfsbench.metrics import Metric, Series
from pgfsbench.monitor.base import PeriodicMonitor
from pgfsbench.monitor.pgstats import (
    COUNTERS,
    PgCounters,
    checkpoints_in,
    counter_deltas,
    parse_pg_stats,
    snapshot_query,
)

MB = 1e6

RATE_SERIES = {  # series → counter, per second
    "mon.pg.buffers_checkpoint_per_s": "buffers_checkpoint",
    "mon.pg.buffers_bgwriter_per_s": "buffers_bgwriter",
    "mon.pg.buffers_backend_per_s": "buffers_backend",
    "mon.pg.wal_syncs_per_s": "wal_syncs",
}
SERIES_UNITS = {
    "mon.pg.wal_mb_per_s": "MB/s",
    "mon.pg.checkpoints": "count",
    **{name: "1/s" for name in RATE_SERIES},
}
TOTALS = {  # metric → (counter, unit)
    "mon.pg.checkpoints_timed": ("checkpoints_timed", "count"),
    "mon.pg.checkpoints_req": ("checkpoints_req", "count"),
    "mon.pg.checkpoint_write_ms": ("checkpoint_write_ms", "ms"),
    "mon.pg.checkpoint_sync_ms": ("checkpoint_sync_ms", "ms"),
    "mon.pg.buffers_checkpoint": ("buffers_checkpoint", "buffers"),
    "mon.pg.buffers_backend": ("buffers_backend", "buffers"),
    "mon.pg.wal_syncs": ("wal_syncs", "count"),
    "mon.pg.wal_sync_ms": ("wal_sync_ms", "ms"),
}


@dataclass(frozen=True)
class Interval:
    t0: float  # seconds since origin, as the points
    t1: float
    wal_bytes: int
    deltas: dict[str, float | None]
    before: PgCounters  # counters at t0 (to merge a sliver into this interval)


class PgMonitor(PeriodicMonitor):
    name = "postgres"

    def __init__(self, cluster, interval: float = 1.0, *, connect=None) -> None:
        super().__init__(interval)
        self.cluster = cluster
        self._connect = connect or self._default_connect
        self._conn = None
        self.major: int | None = None
        self._query = ""
        self._wal_io_timing = False
        self._first: tuple[float, PgCounters] | None = None
        self._prev: tuple[float, PgCounters] | None = None
        self.intervals: list[Interval] = []
        self._reset_counters: set[str] = set()

    def _default_connect(self):
        import psycopg

        return psycopg.connect(
            host=str(self.cluster.socket_dir),
            port=self.cluster.port,
            user="postgres",
            dbname="postgres",
            autocommit=True,
            connect_timeout=10,
            application_name="pgfsbench-monitor",
        )

    def _connection(self):
        if self._conn is not None and not self._conn.closed:
            return self._conn
        conn = self._conn = self._connect()
        self.major = conn.info.server_version // 10000
        self._query = snapshot_query(self.major)
        if self.major >= 14:
            row = conn.execute("SELECT current_setting('track_wal_io_timing')").fetchone()
            self._wal_io_timing = row[0] == "on"
        return self._conn

    def _read(self) -> PgCounters | None:
        try:
            conn = self._connection()
            cur = conn.execute(self._query)
            row = cur.fetchone()
            names = [d.name for d in cur.description]
        except Exception as exc:
            self.problem(f"postgres: statistics query failed: {str(exc).strip() or exc!r}")
            if self._conn is not None and self._conn.closed:
                self._conn = None  # reconnect at the next tick
            return None
        values = dict(zip(names, row))
        try:
            return parse_pg_stats(
                self.major or 0, int(values.pop("lsn")), values, self._wal_io_timing
            )
        except (ValueError, KeyError, TypeError) as exc:
            self.problem(f"postgres: unexpected statistics rows: {exc!r}")
            return None

    def _sample(self, first: bool, final: bool) -> None:
        now = time.monotonic()
        counters = self._read()
        if counters is None:
            return
        t = self._t(now)
        if self._prev is None:
            self._first = self._prev = (t, counters)
            return
        t0, before = self._prev
        if t - t0 < 0.001 and self.intervals:
            # stop() right after a tick: fold the sliver into the last interval.
            last = self.intervals.pop()
            t0, before = last.t0, last.before
        self._add_interval(t0, before, t, counters)

    def _add_interval(self, t0: float, before: PgCounters, t1: float, after: PgCounters) -> None:
        deltas, backwards = counter_deltas(before, after)
        for name in backwards:
            if name not in self._reset_counters:
                self._reset_counters.add(name)
                self.problem(
                    f"postgres: {name} went backwards (statistics reset); "
                    "intervals where it did are left out"
                )
        wal = after.lsn - before.lsn
        if wal < 0:
            self.problem("postgres: the WAL position went backwards")
            wal = 0
        self.intervals.append(Interval(t0, t1, wal, deltas, before))
        self._prev = (t1, after)

    def _finish(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
            self._conn = None

    # --- results -------------------------------------------------------------------

    def series(self) -> list[Series]:
        with self._lock:
            points: dict[str, list[tuple[float, float]]] = {n: [] for n in SERIES_UNITS}
            for iv in self.intervals:
                dt = iv.t1 - iv.t0
                if dt <= 0:
                    continue
                points["mon.pg.wal_mb_per_s"].append((iv.t1, iv.wal_bytes / dt / MB))
                if (n := checkpoints_in(iv.deltas)) is not None:
                    points["mon.pg.checkpoints"].append((iv.t1, float(n)))
                for name, counter in RATE_SERIES.items():
                    if (v := iv.deltas.get(counter)) is not None:
                        points[name].append((iv.t1, v / dt))
            return [Series(name, SERIES_UNITS[name], pts) for name, pts in points.items() if pts]

    def wal_bytes(self) -> int | None:
        """LSN at the last successful sample minus LSN at the first."""
        if self._first is None or self._prev is None:
            return None
        return max(0, self._prev[1].lsn - self._first[1].lsn)

    def totals(self) -> list[Metric]:
        with self._lock:
            sums: dict[str, float | None] = {}
            for counter in COUNTERS:
                values = [iv.deltas[counter] for iv in self.intervals]
                known = [v for v in values if v is not None]
                if self._first is None or getattr(self._first[1], counter) is None:
                    sums[counter] = None  # this version has no such counter
                elif not self.intervals:
                    sums[counter] = 0
                else:
                    sums[counter] = sum(known) if known else None
            note = "" if self._first else "PostgreSQL statistics could not be read"
            # Totals grow with the work done (a slower target writes less WAL): no
            # direction; eff.* divides them by the work and ranks.
            out = [Metric("mon.pg.wal_bytes", _f(self.wal_bytes()), "B", None, note)]
            for metric, (counter, unit) in TOTALS.items():
                value = sums[counter]
                why = note or (
                    ""
                    if value is not None
                    else "track_wal_io_timing is off"
                    if counter == "wal_sync_ms" and self.major and self.major >= 14
                    else f"not available on PostgreSQL {self.major}"
                )
                out.append(Metric(metric, _f(value), unit, None, why))
            return out


def _f(value: float | int | None) -> float | None:
    return None if value is None else float(value)
