"""Monitors against the real thing: a loop ext4 target, a real PostgreSQL on it.

- dd writes a known number of bytes (conv=fdatasync) into the target: the monitor's
  ``mon.disk.target.write_bytes`` is at least that and only a few percent more
  (journal and metadata).
- SQL generates WAL: the per-interval WAL bytes add up exactly to ``mon.pg.wal_bytes``,
  which covers the LSN difference measured here around the SQL.
"""

from __future__ import annotations

import os
import time

import psycopg
import pytest

from pgfsbench import proc
from pgfsbench.ledger import Ledger
from pgfsbench.monitor import backing_device, monitors_for
from pgfsbench.plan.model import Monitors, Target
from pgfsbench.postgres.binaries import find_binaries
from pgfsbench.postgres.cluster import running_cluster
from pgfsbench.postgres.user import ensure_pg_user
from pgfsbench.provision.loop import loop_target

DD_BYTES = 48 * 2**20


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Ledger:
    monkeypatch.setenv("PGFSBENCH_STATE_DIR", str(tmp_path / "state"))
    ledger = Ledger.create("monitors", tmp_path)
    yield ledger
    assert ledger.release_all() == []
    ledger.close()


@pytest.fixture
def target_and_cluster(tmp_path, ledger):
    user = ensure_pg_user()
    spec = Target(name="mon", fs="ext4", size="384M")
    with loop_target(spec, tmp_path / "images", ledger, False, user) as target:
        with running_cluster(
            find_binaries(),
            user,
            target.workdir,
            ledger,
            # no autovacuum: its WAL and writes would blur the exact
            # figures the test compares
            {"checkpoint_timeout": "1h", "autovacuum": "off"},
            tmp_path / "pg.log",
        ) as cluster:
            yield target, cluster


def lsn(conn) -> int:
    return int(
        conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").fetchone()[0]
    )


def test_device_bytes_and_wal_bytes(target_and_cluster, tmp_path):
    target, cluster = target_and_cluster
    conn = psycopg.connect(
        host=str(cluster.socket_dir),
        port=cluster.port,
        user="postgres",
        dbname="postgres",
        autocommit=True,
    )
    backing = backing_device(target.device)

    # --- WAL: SQL with both monitors running ----------------------------------------
    monitors = monitors_for(
        Monitors(interval=0.5), target.device, backing, cluster, time.monotonic()
    )
    with monitors:
        ours0 = lsn(conn)
        conn.execute(
            "CREATE TABLE t AS SELECT g, repeat('x', 200) AS s FROM generate_series(1, 100000) g"
        )
        conn.execute("INSERT INTO t SELECT g, 'y' FROM generate_series(1, 100000) g")
        ours1 = lsn(conn)
        # A backend sends its I/O statistics (the WAL fsync of its commits) at most once a
        # second and, when it goes idle, only after a 10 s timeout: without this the
        # monitor's last tick could come before them (wal_syncs 0, as CI once saw).
        conn.execute("SELECT pg_stat_force_next_flush()")
        time.sleep(1.2)  # at least two ticks
    assert [p for p in monitors.problems if "postgres" in p] == []
    totals = {m.name: m.value for m in monitors.totals()}
    series = {s.name: s for s in monitors.series()}
    pg = next(m for m in monitors.monitors if m.name == "postgres")
    # the intervals partition the monitor's span exactly…
    assert sum(iv.wal_bytes for iv in pg.intervals) == totals["mon.pg.wal_bytes"]
    rate = series["mon.pg.wal_mb_per_s"].points
    assert len(rate) >= 2
    assert sum(
        v * 1e6 * (iv.t1 - iv.t0) for (_, v), iv in zip(rate, pg.intervals)
    ) == pytest.approx(totals["mon.pg.wal_bytes"], rel=1e-9)
    # …and cover our own measurement; what is left is background WAL (a few records)
    assert ours1 - ours0 > 10 * 2**20
    assert 0 <= totals["mon.pg.wal_bytes"] - (ours1 - ours0) < 64 * 1024
    assert totals["mon.pg.buffers_backend"] is not None
    assert totals["mon.pg.wal_syncs"] is not None and totals["mon.pg.wal_syncs"] >= 1
    assert totals["mon.pg.checkpoints_req"] == 0  # checkpoint_timeout is 1 h
    assert totals["mon.cpu.busy_s"] > 0
    assert totals["mon.disk.target.write_bytes"] > 0

    # --- device bytes: dd alone, with the system monitor ------------------------------
    conn.execute("CHECKPOINT")
    conn.close()
    os.sync()
    monitors = monitors_for(
        Monitors(interval=0.5, postgres=False), target.device, backing, None, time.monotonic()
    )
    with monitors:
        proc.run(
            [
                "dd",
                "if=/dev/zero",
                f"of={target.workdir / 'dd.bin'}",
                "bs=1M",
                f"count={DD_BYTES // 2**20}",
                "conv=fdatasync",
            ]
        )
    totals = {m.name: m.value for m in monitors.totals()}
    written = totals["mon.disk.target.write_bytes"]
    print(
        f"dd {DD_BYTES} B, device {written:.0f} B (+{written / DD_BYTES - 1:.2%}), backing {backing}"
    )
    assert DD_BYTES <= written <= DD_BYTES * 1.05, (written, DD_BYTES)
    if backing is not None:  # the loop's writes reach the disk under the image
        assert totals["mon.disk.backing.write_bytes"] is not None
    assert not [p for p in monitors.problems if "target" in p]
