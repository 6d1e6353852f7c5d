"""The PostgreSQL monitor on statistics rows captured from real servers.

tests/fixtures/pgstat_pg15.json and pgstat_pg18.json hold, for PG 15.18 (Debian)
and the embedded PG 18.6, ``SELECT coalesce(json_agg(t), '[]') FROM <view> t`` of
pg_stat_bgwriter, pg_stat_checkpointer, pg_stat_wal and pg_stat_io (those that
exist) and the LSN, right after initdb+start ("before") and after
``CREATE TABLE t AS … generate_series(1, 200000)``, ``CHECKPOINT`` and an INSERT of
50000 rows ("after"). Recaptured with tests/fixtures/pgstat_capture.py (as root):
``python tests/fixtures/pgstat_capture.py /usr/lib/postgresql/15/bin out.json``
(``embedded`` instead of a bin directory for the embedded build).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pgfsbench.monitor.pgstats import (
    checkpoints_in,
    counter_deltas,
    parse_pg_stats,
    snapshot_query,
    views_for,
)
from pgfsbench.monitor.postgres import PgMonitor

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TOTALS = [
    "mon.pg.wal_bytes",
    "mon.pg.checkpoints_timed",
    "mon.pg.checkpoints_req",
    "mon.pg.checkpoint_write_ms",
    "mon.pg.checkpoint_sync_ms",
    "mon.pg.buffers_checkpoint",
    "mon.pg.buffers_backend",
    "mon.pg.wal_syncs",
    "mon.pg.wal_sync_ms",
]


def capture(version: str) -> dict:
    return json.loads((FIXTURES / f"pgstat_{version}.json").read_text())


def counters(version: str, when: str, wal_io_timing: bool = False):
    snap = capture(version)[when]
    major = snap["server_version_num"] // 10000
    rows = {v: snap[v] for v in views_for(major)}
    return parse_pg_stats(major, int(snap["lsn"][1]), rows, wal_io_timing)


def test_views_per_version():
    assert views_for(15) == ["pg_stat_bgwriter", "pg_stat_wal"]
    assert views_for(13) == ["pg_stat_bgwriter"]
    assert views_for(17) == [
        "pg_stat_checkpointer",
        "pg_stat_bgwriter",
        "pg_stat_io",
        "pg_stat_wal",
    ]
    assert views_for(18) == ["pg_stat_checkpointer", "pg_stat_bgwriter", "pg_stat_io"]
    for major in (15, 18):  # every view queried exists in the captured catalog
        assert all(v in capture(f"pg{major}")["after"] for v in views_for(major))
    assert "pg_wal_lsn_diff(pg_current_wal_lsn()" in snapshot_query(18)


def test_pg15_counters():
    before, after = counters("pg15", "before"), counters("pg15", "after")
    d, backwards = counter_deltas(before, after)
    assert backwards == []
    assert after.lsn - before.lsn == 57452232 - 22022016
    assert d["checkpoints_timed"] == 0 and d["checkpoints_req"] == 1
    assert checkpoints_in(d) == 1
    assert d["checkpoint_write_ms"] == 16 and d["checkpoint_sync_ms"] == 52
    assert d["buffers_checkpoint"] == 2077 and d["buffers_bgwriter"] == 0
    assert d["buffers_backend"] == 4853
    assert d["wal_syncs"] == 7
    assert after.checkpoints_done is None  # PG 15 has no num_done
    assert after.wal_sync_ms is None  # track_wal_io_timing off: unknown, not 0
    assert counters("pg15", "after", wal_io_timing=True).wal_sync_ms == 0.0


def test_pg18_counters():
    before, after = counters("pg18", "before"), counters("pg18", "after")
    d, _ = counter_deltas(before, after)
    assert after.lsn - before.lsn == 59543896 - 24048784
    assert d["checkpoints_timed"] == 0 and d["checkpoints_req"] == 1
    assert d["checkpoints_done"] == 1 and checkpoints_in(d) == 1
    assert d["checkpoint_write_ms"] == 31 and d["checkpoint_sync_ms"] == 54
    assert d["buffers_checkpoint"] == 2070
    # pg_stat_io relation writes by client backends (the CTAS's bulkwrite ring)
    assert d["buffers_backend"] == 1408
    # pg_stat_io object 'wal', context 'normal' fsyncs: client backend 4,
    # checkpointer 1, walwriter 2 after; none of those before (only the standalone
    # backend of initdb, whose 0 stays)
    assert d["wal_syncs"] == 7
    assert after.wal_syncs == 7


def test_missing_row_is_an_error():
    with pytest.raises(ValueError):
        parse_pg_stats(15, 0, {"pg_stat_bgwriter": [], "pg_stat_wal": []})


def test_reset_counter_is_none_not_negative():
    d, backwards = counter_deltas(counters("pg15", "after"), counters("pg15", "before"))
    assert "buffers_checkpoint" in backwards and d["buffers_checkpoint"] is None
    assert all(v is None or v >= 0 for v in d.values())


# --- the monitor, on a fake connection serving the captured rows ------------------


class FakeCursor:
    def __init__(self, row, names):
        self._row = row
        self.description = [type("D", (), {"name": n}) for n in names]

    def fetchone(self):
        return self._row


class FakeConn:
    """Serves the captured snapshots in order; ``fail`` makes a query raise."""

    def __init__(self, version: str, sequence: list[str]):
        self.cap = capture(version)
        self.sequence = list(sequence)
        self.closed = False
        self.fail = False
        num = self.cap["before"]["server_version_num"]
        self.info = type("I", (), {"server_version": num})
        self.major = num // 10000

    def execute(self, query):
        if query.startswith("SELECT current_setting"):
            return FakeCursor(("off",), ["current_setting"])
        if self.fail:
            raise RuntimeError("server closed the connection unexpectedly")
        snap = self.cap[self.sequence.pop(0)]
        views = views_for(self.major)
        return FakeCursor((int(snap["lsn"][1]), *(snap[v] for v in views)), ["lsn", *views])

    def close(self):
        self.closed = True


def monitor(version: str, sequence: list[str]) -> tuple[PgMonitor, FakeConn]:
    conn = FakeConn(version, sequence)
    return PgMonitor(cluster=None, interval=3600, connect=lambda: conn), conn


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_monitor_intervals_partition_the_wal(version):
    mon, conn = monitor(version, ["before", "before", "after", "after"])
    mon.start(time.monotonic())
    for _ in range(2):
        time.sleep(0.01)
        mon.sample_now()
    time.sleep(0.01)
    mon.stop()
    assert conn.closed
    cap = capture(version)
    total = int(cap["after"]["lsn"][1]) - int(cap["before"]["lsn"][1])
    t = {m.name: m for m in mon.totals()}
    assert list(t) == TOTALS
    assert t["mon.pg.wal_bytes"].value == total
    assert sum(iv.wal_bytes for iv in mon.intervals) == total
    series = {s.name: s for s in mon.series()}
    rate = series["mon.pg.wal_mb_per_s"].points
    # rate × interval length, summed over the series, gives the total back
    spans = [iv.t1 - iv.t0 for iv in mon.intervals]
    assert sum(v * 1e6 * dt for (_, v), dt in zip(rate, spans)) == pytest.approx(total, rel=1e-9)
    assert [p[1] for p in series["mon.pg.checkpoints"].points] == [0, 1, 0]
    assert t["mon.pg.checkpoints_req"].value == 1
    assert t["mon.pg.wal_syncs"].value == 7
    assert t["mon.pg.wal_sync_ms"].value is None
    assert t["mon.pg.wal_sync_ms"].note == "track_wal_io_timing is off"
    assert set(series) == {
        "mon.pg.wal_mb_per_s",
        "mon.pg.checkpoints",
        "mon.pg.buffers_checkpoint_per_s",
        "mon.pg.buffers_bgwriter_per_s",
        "mon.pg.buffers_backend_per_s",
        "mon.pg.wal_syncs_per_s",
    }
    assert mon.problems == []


def test_failing_query_is_a_problem_and_the_span_stays_whole():
    mon, conn = monitor("pg18", ["before", "after"])
    mon.start(time.monotonic())
    conn.fail = True
    mon.sample_now()
    conn.fail = False
    time.sleep(0.01)
    mon.stop()
    assert any("statistics query failed" in p for p in mon.problems)
    assert len(mon.intervals) == 1
    assert mon.intervals[0].wal_bytes == {m.name: m.value for m in mon.totals()}["mon.pg.wal_bytes"]


def test_unreachable_server():
    def refuse():
        raise OSError("connection refused")

    mon = PgMonitor(cluster=None, interval=3600, connect=refuse)
    mon.start(time.monotonic())
    mon.stop()
    assert all(m.value is None for m in mon.totals())
    assert mon.series() == []
    assert any("connection refused" in p for p in mon.problems)


def test_stop_right_after_a_tick_folds_the_sliver():
    mon, _ = monitor("pg15", ["before", "after", "after"])
    mon.start(time.monotonic())
    time.sleep(0.01)
    mon.sample_now()
    mon.stop()  # usually under 1 ms later: merged into the previous interval
    assert len(mon.intervals) in (1, 2)
    assert all(iv.t1 > iv.t0 for iv in mon.intervals)
