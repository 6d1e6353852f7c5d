"""Efficiency ratios and tps stalls, on synthetic values with known answers."""

from __future__ import annotations

import pytest

from pgfsbench.analysis.caveats.efficiency import (
    Stall,
    derived_metrics,
    efficiency_metrics,
    find_stalls,
    stall_context,
    stall_metrics,
)
from pgfsbench.metrics import Metric, Series
from pgfsbench.workloads.registry import StoredParamsWarning


def _m(name: str, value: float | None, unit: str = "") -> Metric:
    return Metric(name, value, unit, False)


def _by_name(metrics: list[Metric]) -> dict[str, Metric]:
    return {m.name: m for m in metrics}


PGBENCH = [
    _m("pgbench.transactions", 10_000.0, "tx"),
    _m("pgbench.tps", 1000.0),
    _m("mon.pg.wal_bytes", 50_000_000.0),
    _m("mon.disk.target.write_bytes", 150_000_000.0),
    _m("mon.cpu.busy_s", 20.0),
]


def test_pgbench_efficiency() -> None:
    got = _by_name(efficiency_metrics("pgbench", {"clients": 8}, PGBENCH, {}))
    assert set(got) == {
        "eff.wal_bytes_per_tx",
        "eff.device_bytes_per_tx",
        "eff.device_bytes_per_wal_byte",
        "eff.cpu_s_per_1000_tx",
    }
    assert got["eff.wal_bytes_per_tx"].value == pytest.approx(5000.0)
    assert got["eff.wal_bytes_per_tx"].unit == "B/tx"
    assert got["eff.device_bytes_per_tx"].value == pytest.approx(15000.0)
    assert got["eff.device_bytes_per_wal_byte"].value == pytest.approx(3.0)
    assert got["eff.device_bytes_per_wal_byte"].unit == "B/B"
    assert got["eff.cpu_s_per_1000_tx"].value == pytest.approx(2.0)
    assert got["eff.cpu_s_per_1000_tx"].unit == "s"
    assert all(not m.higher_is_better and m.note for m in got.values())


def test_efficiency_skips_missing_none_and_zero() -> None:
    assert efficiency_metrics("pgbench", {}, [], {}) == []
    # Zero transactions: nothing per transaction; WAL still gives amplification.
    zero_tx = [
        _m("pgbench.transactions", 0.0),
        _m("mon.pg.wal_bytes", 100.0),
        _m("mon.disk.target.write_bytes", 250.0),
        _m("mon.cpu.busy_s", None),
    ]
    got = _by_name(efficiency_metrics("pgbench", {}, zero_tx, {}))
    assert set(got) == {"eff.device_bytes_per_wal_byte"}
    assert got["eff.device_bytes_per_wal_byte"].value == pytest.approx(2.5)
    # None WAL bytes (monitor could not read it): nothing from WAL; zero WAL: never a divisor.
    for wal, extra in ((None, set()), (0.0, {"eff.wal_bytes_per_tx"})):
        metrics = [
            _m("pgbench.transactions", 10.0),
            _m("mon.pg.wal_bytes", wal),
            _m("mon.disk.target.write_bytes", 100.0),
        ]
        assert (
            set(_by_name(efficiency_metrics("pgbench", {}, metrics, {})))
            == {"eff.device_bytes_per_tx"} | extra
        )
    # A pgbench run never gets the logical-byte ratio.
    assert "eff.device_bytes_per_logical_byte" not in _by_name(
        efficiency_metrics("pgbench", {"size": "1M"}, PGBENCH, {})
    )


def test_seqwrite_logical_bytes() -> None:
    dev = [_m("mon.disk.target.write_bytes", 3 * 512 * 2**20)]
    got = _by_name(
        efficiency_metrics("seqwrite", {"size": "512M", "tools": ["dd", "fio"]}, dev, {})
    )
    assert list(got) == ["eff.device_bytes_per_logical_byte"]
    assert got["eff.device_bytes_per_logical_byte"].value == pytest.approx(1.5)
    assert "512M × 2 tool(s)" in got["eff.device_bytes_per_logical_byte"].note
    # Size unknown or unparsable: skipped, not guessed.
    assert efficiency_metrics("seqwrite", {"tools": ["dd"]}, dev, {}) == []
    with pytest.warns(StoredParamsWarning, match="size: 'lots' is not a size"):
        assert efficiency_metrics("seqwrite", {"size": "lots"}, dev, {}) == []
    assert (
        efficiency_metrics(
            "seqwrite", {"size": "1M"}, [_m("mon.disk.target.write_bytes", None)], {}
        )
        == []
    )


def test_fsync_latency_and_fileio_logical_bytes() -> None:
    dev = _m("mon.disk.target.write_bytes", 2 * 100 * 10 * 8192)
    got = efficiency_metrics(
        "fsync-latency",
        {"size": "64M", "block_size": "8k", "seconds": 10},
        [dev, _m("fsync_latency.syncs_per_s", 100.0)],
        {},
    )
    assert [m.value for m in got] == [pytest.approx(2.0)]
    assert efficiency_metrics("fsync-latency", {"seconds": 10}, [dev], {}) == []
    # fileio: 1 MiB layout + (2 + 1) MB/s of writes for 5 s; reads do not count.
    logical = 2**20 + 3e6 * 5
    fio = [
        _m("mon.disk.target.write_bytes", logical * 1.25),
        _m("fileio.write-8k.mb_per_s", 2.0),
        _m("fileio.randwrite-1M.mb_per_s", 1.0),
        _m("fileio.read-8k.mb_per_s", 500.0),
    ]
    got = efficiency_metrics("fileio", {"size": "1M", "seconds": 5}, fio, {})
    assert [m.value for m in got] == [pytest.approx(1.25)]


def _series(name: str, values: list[float | None], start: int = 1) -> Series:
    return Series(name, "", [(float(start + i), v) for i, v in enumerate(values)])


# tps with a median of 1000: seconds 4-6 and 9 are below 500.
TPS = [1000, 1000, 1010, 100, 0, 200, 1000, 1000, 400, 1000]


def test_find_stalls_merges_consecutive_seconds() -> None:
    stalls = find_stalls(_series("pgbench.tps", TPS))
    assert stalls == [Stall(4.0, 6.0, 3, 0.0), Stall(9.0, 9.0, 1, 400.0)]
    # A stricter fraction: only what is below 150 tx/s.
    assert find_stalls(_series("pgbench.tps", TPS), fraction=0.15) == [Stall(4.0, 5.0, 2, 0.0)]
    # A stall running to the end of the run is closed too.
    assert find_stalls(_series("pgbench.tps", [1000, 1000, 1000, 10, 10])) == [
        Stall(4.0, 5.0, 2, 10.0)
    ]


def test_find_stalls_gap_splits_and_edge_cases() -> None:
    gap = Series(
        "pgbench.tps",
        "",
        [(1.0, 1000), (2.0, 1000), (3.0, 10), (5.0, 10), (6.0, 1000), (7.0, 1000)],
    )
    assert find_stalls(gap) == [Stall(3.0, 3.0, 1, 10), Stall(5.0, 5.0, 1, 10)]
    assert find_stalls(_series("pgbench.tps", [1000] * 10)) == []  # steady: no stalls
    assert find_stalls(_series("pgbench.tps", [0] * 10)) == []  # median 0: nothing to fall below
    assert find_stalls(Series("pgbench.tps", "tx/s")) == []
    assert find_stalls(_series("pgbench.tps", [None, 1000, 1000, 1000, 100])) == [
        Stall(5.0, 5.0, 1, 100)
    ]


def _monitors() -> dict[str, Series]:
    inside = {4, 5, 6, 9}
    return {
        "pgbench.tps": _series("pgbench.tps", TPS),
        "mon.mem.dirty_mb": _series("d", [800.0 if t in inside else 100.0 for t in range(1, 11)]),
        "mon.mem.writeback_mb": _series("w", [50.0 if t in inside else 0.0 for t in range(1, 11)]),
        "mon.disk.target.write_mb_per_s": _series("m", [300.0] * 10),
        "mon.disk.target.await_ms": _series(
            "a", [40.0 if t in inside else 2.0 for t in range(1, 11)]
        ),
        # iowait: a None sample inside, ignored rather than counted as zero
        "mon.cpu.iowait_pct": _series(
            "i", [None if t == 4 else (30.0 if t in inside else 5.0) for t in range(1, 11)]
        ),
        "mon.pg.checkpoints": _series("c", [1.0 if t == 5 else 0.0 for t in range(1, 11)]),
    }


def test_stall_context_during_vs_outside() -> None:
    series = _monitors()
    stalls = find_stalls(series["pgbench.tps"])
    ctx = stall_context(stalls, series)
    assert ctx["dirty_mb"] == (pytest.approx(800.0), pytest.approx(100.0))
    assert ctx["writeback_mb"] == (pytest.approx(50.0), pytest.approx(0.0))
    assert ctx["await_ms"] == (pytest.approx(40.0), pytest.approx(2.0))
    assert ctx["iowait_pct"] == (pytest.approx(30.0), pytest.approx(5.0))
    assert ctx["checkpoint"] is True
    # Only the one-second stall at 9 s: no checkpoint there.
    assert stall_context(stalls[1], series)["checkpoint"] is False
    # Missing series: its key is absent; no checkpoint series: None.
    bare = stall_context(stalls, {"pgbench.tps": series["pgbench.tps"]})
    assert bare == {"checkpoint": None}


def test_stall_metrics_and_note() -> None:
    got = _by_name(stall_metrics(_monitors()))
    assert got["stall.seconds"].value == 4.0 and got["stall.count"].value == 2.0
    assert not got["stall.seconds"].higher_is_better and not got["stall.count"].higher_is_better
    note = got["stall.seconds"].note
    assert note.startswith("4 s below 50% of median tps (1,000 tx/s) in 2 stalls; during them ")
    assert "dirty 800 MB vs 100 MB" in note and "await 40 ms vs 2 ms" in note
    assert "iowait 30% vs 5%" in note and note.endswith(", a checkpoint finished")


def test_stall_metrics_without_stalls_or_series() -> None:
    assert stall_metrics({}) == []
    assert stall_metrics({"pgbench.tps": Series("pgbench.tps", "tx/s")}) == []
    steady = _by_name(stall_metrics({"pgbench.tps": _series("pgbench.tps", [1000.0] * 5)}))
    assert steady["stall.seconds"].value == 0.0 and steady["stall.count"].value == 0.0
    assert steady["stall.seconds"].note == "0 s below 50% of median tps (1,000 tx/s)"
    zero = _by_name(stall_metrics({"pgbench.tps": _series("pgbench.tps", [0.0] * 5)}))
    assert zero["stall.seconds"].value == 0.0
    # Stalls but no monitor series at all: the note says only what is known.
    alone = _by_name(stall_metrics({"pgbench.tps": _series("pgbench.tps", TPS)}))
    assert alone["stall.seconds"].note == "4 s below 50% of median tps (1,000 tx/s) in 2 stalls"


def test_derived_metrics_combines_both() -> None:
    names = [m.name for m in derived_metrics("pgbench", {}, PGBENCH, _monitors())]
    assert names == [
        "eff.wal_bytes_per_tx",
        "eff.device_bytes_per_tx",
        "eff.device_bytes_per_wal_byte",
        "eff.cpu_s_per_1000_tx",
        "stall.seconds",
        "stall.count",
    ]


def test_partial_first_and_last_seconds_are_not_stalls() -> None:
    # pgbench's first and last seconds are partial: low counts there are no dip
    edges = {"pgbench.tps": _series("pgbench.tps", [300, 1000, 1000, 1000, 1000, 120])}
    assert _by_name(stall_metrics(edges))["stall.seconds"].value == 2.0
    assert _by_name(stall_metrics(edges, trim_edges=True))["stall.seconds"].value == 0.0
    assert _by_name(derived_metrics("pgbench", {}, [], edges))["stall.seconds"].value == 0.0


def test_fileio_logical_bytes_count_the_write_cells_fileio_names() -> None:
    from pgfsbench.workloads.fileio import Cell

    write, randwrite, read = (
        f"fileio.{Cell(p, 8192).name}.mb_per_s" for p in ("write", "randwrite", "read")
    )
    logical = 2**20 + (2.0 + 1.0) * 1e6 * 5  # layout, then the write cells' MB/s × seconds
    fio = [
        _m("mon.disk.target.write_bytes", logical * 2),
        _m(write, 2.0),
        _m(randwrite, 1.0),
        _m(read, 500.0),
    ]
    [eff] = efficiency_metrics("fileio", {"size": "1M", "seconds": 5}, fio, {})
    assert eff.value == pytest.approx(2.0)
