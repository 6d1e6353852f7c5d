"""What limited a run: the bound.* inputs from series shapes, the classes from metric
sets, and the caveats a verdict carries."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pgfsbench.analysis.caveats.bound import (
    CACHED,
    CACHED_READS,
    CPU,
    DEVICE,
    FSYNC,
    OTHER,
    STORAGE,
    bound_metrics,
    classify,
    legend,
)
from pgfsbench.analysis.caveats.notes import (
    fill_verdict_caveats,
    measurement_caveats,
    target_caveats,
)
from pgfsbench.analysis.verdicts.verdict_lines import VerdictLine
from pgfsbench.metrics import Metric, Series
from pgfsbench.store.read import Campaign, StoredRun, StoredTarget
from pgfsbench.workloads.registry import StoredParamsWarning


def series(**shapes: list[float]) -> dict[str, Series]:
    """mon.cpu.user_pct=[...] → one point a second from t=1."""
    out = {}
    for key, values in shapes.items():
        name = "mon." + key.replace("__", ".")
        out[name] = Series(name, "%", [(float(i + 1), v) for i, v in enumerate(values)])
    return out


def by_name(metrics: list[Metric]) -> dict[str, float]:
    return {m.name: m.value for m in metrics}


def cls(**values: float) -> list[str]:
    return classify({f"bound.{k}": v for k, v in values.items()}).classes


# --- the inputs, from series shapes -------------------------------------------------


def test_saturated_most_of_the_run_is_a_high_median():
    # 8 s at 97% busy, 2 s at 20%: saturated for most of the run
    s = series(
        cpu__user_pct=[80] * 8 + [10] * 2,
        cpu__system_pct=[17] * 8 + [10] * 2,
        cpu__server_pct=[60] * 8 + [5] * 2,
        cpu__client_pct=[30] * 8 + [5] * 2,
        cpu__other_user_pct=[2] * 10,
        cpu__steal_pct=[0] * 10,
    )
    v = by_name(bound_metrics("pgbench", {}, [], s))
    assert v["bound.cpu_busy_frac"] == pytest.approx(0.97)
    assert v["bound.ours_cpu_frac"] == pytest.approx((8 * 90 + 2 * 10) / (8 * 97 + 2 * 20))
    assert v["bound.server_cpu_frac"] == pytest.approx((8 * 60 + 10) / (8 * 90 + 20))
    assert v["bound.other_cpu_frac"] == pytest.approx(0.02)
    assert classify(bound_metrics("pgbench", {}, [], s)).classes == [CPU]


def test_a_short_spike_is_not_cpu_bound():
    s = series(cpu__user_pct=[100] * 3 + [25] * 7, cpu__system_pct=[0] * 3 + [5] * 7)
    v = by_name(bound_metrics("pgbench", {}, [], s))
    assert v["bound.cpu_busy_frac"] == pytest.approx(0.30)
    assert CPU not in classify(v).classes


def test_device_util_median_and_other_disk_from_the_totals():
    s = series(
        cpu__user_pct=[5] * 10, cpu__system_pct=[5] * 10, disk__target__util_pct=[95] * 6 + [10] * 4
    )
    totals = [
        Metric("mon.disk.backing.read_bytes", 0.0, "B", None),
        Metric("mon.disk.backing.write_bytes", 100e6, "B", None),
        Metric("mon.disk.target.read_bytes", 0.0, "B", None),
        Metric("mon.disk.target.write_bytes", 20e6, "B", None),
    ]
    v = by_name(bound_metrics("fsync-latency", {}, totals, s))
    assert v["bound.device_util_frac"] == pytest.approx(0.95)
    assert v["bound.other_disk_frac"] == pytest.approx(0.8)
    assert v["bound.other_disk_mb_per_s"] == pytest.approx(80 / 10)  # over the 10 s window
    assert classify(v).classes == [DEVICE]  # 8 MB/s: could be our own logs
    v["bound.other_disk_mb_per_s"] = 12.0
    assert classify(v).classes == [OTHER, DEVICE]
    assert "wal_sync_frac" not in str(v)  # fio writes no WAL


def test_wal_sync_share_measured_or_estimated():
    s = series(cpu__user_pct=[10] * 10, disk__target__await_ms=[4.0] * 10)
    timed = [
        Metric("mon.pg.wal_sync_ms", 7000.0, "ms", None),
        Metric("mon.pg.wal_syncs", 10.0, "count", None),
    ]
    assert by_name(bound_metrics("pgbench", {}, timed, s))["bound.wal_sync_frac"] == 0.7
    untimed = [
        Metric("mon.pg.wal_sync_ms", None, "ms", None),
        Metric("mon.pg.wal_syncs", 2000.0, "count", None),
    ]
    v = by_name(bound_metrics("pgbench", {}, untimed, s))
    assert v["bound.wal_sync_frac"] == pytest.approx(2000 * 4.0 / 1000 / 10)
    assert FSYNC in classify(v).classes


def test_device_reads_of_a_read_only_workload():
    s = series(cpu__user_pct=[50] * 10)
    metrics = [
        Metric("pgbench.transactions", 100_000.0, "tx", None),
        Metric("mon.disk.target.read_bytes", 8192 * 2_000.0, "B", None),
    ]
    params = {"type": "pgbench", "mode": "select-only", "clients": 8, "duration": 10}
    v = by_name(bound_metrics("pgbench", params, metrics, s))
    assert v["bound.device_read_frac"] == pytest.approx(0.02)
    assert CACHED in classify(v).classes
    # TPC-B writes: its reads are judged apart (cached reads, its writes measured)
    tpcb = by_name(bound_metrics("pgbench", {**params, "mode": "tpcb"}, metrics, s))
    assert "bound.device_read_frac" not in tpcb
    assert tpcb["bound.data_read_frac"] == pytest.approx(0.02)
    b = classify(tpcb)
    assert b.classes == [STORAGE, CACHED_READS] and b.storage_bound
    assert "measured the writes" in b.reasons[CACHED_READS]
    # a custom script: what it reads is unknown
    script = {**params, "mode": "tpcb", "script": "SELECT 1;"}
    assert not any("read_frac" in k for k in by_name(bound_metrics("pgbench", script, metrics, s)))
    with pytest.warns(StoredParamsWarning, match="not valid"):
        assert "bound.device_read_frac" not in by_name(
            bound_metrics("pgbench", {**params, "clients": "many"}, metrics, s)
        )


def test_nothing_to_go_on_gives_nothing():
    assert bound_metrics("pgbench", {}, [], {}) == []
    assert (
        bound_metrics("no-such-kind", {"x": 1}, [Metric("mon.pg.wal_syncs", 5.0, "n", None)], {})
        == []
    )
    assert classify([]) is None
    assert classify([Metric("pgbench.tps", 5.0, "tx/s", True)]) is None
    assert classify([Metric("bound.cpu_busy_frac", None, "fraction", None)]) is None
    # not numbers (a hand-edited store): left out, never a traceback
    assert (
        classify(
            {
                "bound.cpu_busy_frac": "high",
                "bound.steal_frac": math.nan,
                "bound.device_util_frac": True,
            }
        )
        is None
    )
    assert classify({"bound.cpu_busy_frac": "high", "bound.device_util_frac": 0.95}).classes == [
        DEVICE
    ]


# --- the classes, from metric sets ------------------------------------------------------


def test_cpu_bound_says_server_or_client():
    b = classify(
        {"bound.cpu_busy_frac": 0.99, "bound.ours_cpu_frac": 0.9, "bound.server_cpu_frac": 0.7}
    )
    assert b.classes == [CPU] and not b.storage_bound
    assert "70% of ours in the PostgreSQL server" in b.reasons[CPU]
    b = classify({"bound.cpu_busy_frac": 0.95, "bound.server_cpu_frac": 0.2})
    assert "80% of ours in the client" in b.reasons[CPU]


@pytest.mark.parametrize(
    "values, expected",
    [
        ({"cpu_busy_frac": 0.90, "ours_cpu_frac": 0.8}, [CPU]),  # the threshold counts
        ({"cpu_busy_frac": 0.89, "ours_cpu_frac": 0.8}, [STORAGE]),
        # saturated, but by someone else: other load, not ours to call CPU-bound
        ({"cpu_busy_frac": 1.0, "ours_cpu_frac": 0.05, "other_cpu_frac": 0.8}, [OTHER]),
        ({"cpu_busy_frac": 1.0, "ours_cpu_frac": 0.5, "other_cpu_frac": 0.4}, [CPU, OTHER]),
        ({"other_cpu_frac": 0.14}, [STORAGE]),
        ({"steal_frac": 0.2}, [OTHER]),
        ({"other_disk_frac": 0.6, "other_disk_mb_per_s": 10.0}, [OTHER]),
        ({"other_disk_frac": 0.6, "other_disk_mb_per_s": 4.0}, [STORAGE]),  # our own pgbench logs
        ({"other_disk_frac": 0.2, "other_disk_mb_per_s": 50.0}, [STORAGE]),
        ({"device_read_frac": 0.099}, [CACHED]),
        ({"device_read_frac": 0.5}, [STORAGE]),
        ({"data_read_frac": 0.099}, [STORAGE, CACHED_READS]),
        ({"data_read_frac": 0.099, "wal_sync_frac": 0.8}, [FSYNC, CACHED_READS]),
        ({"data_read_frac": 0.5}, [STORAGE]),
        ({"device_util_frac": 0.97}, [DEVICE]),
        ({"wal_sync_frac": 0.8, "device_util_frac": 0.3}, [FSYNC]),
    ],
)
def test_classes(values, expected):
    assert cls(**values) == expected


def test_storage_bound_classes():
    assert classify({"bound.device_util_frac": 0.97, "bound.wal_sync_frac": 0.9}).storage_bound
    assert not classify({"bound.device_read_frac": 0.0}).storage_bound
    assert classify({"bound.data_read_frac": 0.0}).storage_bound
    assert "90%" in legend() and "other-load" in legend() and "cached-reads" in legend()


# --- caveats --------------------------------------------------------------------------

LOOP = {
    "device_facts": {
        "loop_dio": False,
        "loop_backing_file": "/var/i.img",
        "logical_block_size": 512,
    },
    "backing_device": {
        "name": "vda",
        "vendor": "0x1af4",
        "physical_block_size": 4096,
        "logical_block_size": 512,
    },
}


def target(name: str, prov: object) -> StoredTarget:
    return StoredTarget(1, name, 0, "loop", "ext4", "ok", None, {}, prov)


def test_loop_and_virtual_disk_caveats_from_provenance():
    texts = target_caveats(target("a", LOOP))
    assert [t.split(" ")[0] for t in texts] == ["loop", "the", "on"]
    assert "host page cache" in texts[0] and "512-byte writes" in texts[1]
    assert "virtio" in texts[2]
    direct = {
        "device_facts": {**LOOP["device_facts"], "loop_dio": True, "logical_block_size": 4096},
        "backing_device": {"name": "nvme0n1", "model": "Samsung SSD", "physical_block_size": 4096},
    }
    assert target_caveats(target("b", direct)) == []
    assert target_caveats(target("c", {"device_facts": {"model": "QEMU HARDDISK"}})) != []


@pytest.mark.parametrize(
    "prov",
    [
        {},
        None,
        "junk",
        {"device_facts": "x", "backing_device": 3},
        {
            "device_facts": {"logical_block_size": "512"},
            "backing_device": {"physical_block_size": True},
        },
    ],
)
def test_odd_provenance_never_tracebacks(prov):
    assert target_caveats(target("a", prov)) == []


def run(i: int, name: str, busy: float, status: str = "ok") -> StoredRun:
    metrics = [
        Metric("pgbench.tps", 100.0, "tx/s", True),
        Metric("bound.cpu_busy_frac", busy, "fraction", None),
        Metric("bound.ours_cpu_frac", 0.9, "fraction", None),
    ]
    return StoredRun(i, name, "pgbench", "clients=8", 1, {}, status, None, 0.0, 1.0, metrics)


def campaign(runs: list[StoredRun]) -> Campaign:
    return Campaign(
        Path("."), "c", "p", {}, {}, "0", "ok", 0.0, 1.0, [target("a", LOOP), target("b", {})], runs
    )


def test_verdict_caveats_count_the_runs_behind_it():
    c = campaign(
        [run(1, "a", 0.99), run(2, "a", 0.5), run(3, "b", 0.97), run(4, "b", 0.99, status="failed")]
    )
    line = VerdictLine(
        "pgbench",
        "clients=8",
        "pgbench.tps",
        "tx/s",
        "winner",
        "a",
        "a wins",
        {"a": "safe", "b": "safe"},
    )
    [line] = fill_verdict_caveats([line], c)
    assert line.caveats[0].startswith(
        "CPU-bound: this compares CPU contention, not the "
        "filesystems (a 1/2 runs, b 1/1 runs; CPUs 99% busy"
    )
    assert [x.split(":")[0] for x in line.caveats[1:]] == ["a"] * 3  # b: no loop facts
    assert measurement_caveats(c, "pgbench", "clients=8", devices=False) == line.caveats[:1]
    assert measurement_caveats(c, "pgbench", "other", ["a"]) == line.caveats[1:]


def test_storage_bound_runs_have_no_run_caveat():
    c = campaign([run(1, "a", 0.3), run(2, "b", 0.2)])
    assert measurement_caveats(c, "pgbench", "clients=8", devices=False) == []


def test_terminal_prints_caveats_under_verdicts_and_for_single_target_measurements():
    from rich.console import Console

    from pgfsbench.report.terminal import render_table

    alone = run(3, "a", 0.99)
    alone.label = "clients=2"  # only target a ran it: no verdict, still a caveat
    c = campaign([run(1, "a", 0.99), run(2, "b", 0.98), alone])
    console = Console(record=True, width=400)
    render_table(c, console)
    text = console.export_text()
    verdict = text.index("pgbench clients=8: ")
    assert (
        text.index(
            "ⓘ CPU-bound: this compares CPU contention, not the filesystems "
            "(a 1/1 runs, b 1/1 runs;"
        )
        > verdict
    )
    assert "ⓘ a: loop image without direct I/O" in text
    assert (
        "pgbench clients=2: ⓘ CPU-bound: this compares CPU contention, not the "
        "filesystems (a 1/1 runs;"
    ) in text


def test_json_export_has_each_runs_bound_and_each_verdicts_caveats():
    from pgfsbench.formats.json import campaign_data

    old = run(4, "b", 0.2)
    old.metrics = old.metrics[:1]  # recorded before bound.* existed
    data = campaign_data(campaign([run(1, "a", 0.99), run(2, "b", 0.3), old]))
    assert [r["bound"] for r in data["runs"]][1:] == [
        {
            "classes": ["storage"],
            "storage_bound": True,
            "reasons": {"storage": "no CPU, cache or other-load limit seen"},
        },
        None,
    ]
    assert data["runs"][0]["bound"]["classes"] == ["cpu"]
    [verdict] = data["comparison"]["verdicts"]
    assert verdict["caveats"][0].startswith(
        "CPU-bound: this compares CPU contention, not the filesystems (a 1/1 runs;"
    )
    assert data["targets"][0]["caveats"] and data["targets"][1]["caveats"] == []
