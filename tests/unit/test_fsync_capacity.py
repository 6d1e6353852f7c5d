"""fsync-capacity: fio's JSON read into probes, and the search, on outputs captured from
real fio 3.33 probes (8 kB writes each followed by fdatasync, ext4 loop image throttled
to 100 write IOPS by cgroup v1 blkio, p99 <= 50 ms; probe 01 unthrottled, 02-05 at
--rate_iops 25, 35, 41, 45: tests/integration/test_capacity.py's search)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pgfsbench.metrics import Metric
from pgfsbench.workloads.capacity_search import Probe, search
from pgfsbench.workloads.fsync_capacity import (
    CURVE,
    FsyncCapacityWorkload,
    _metrics,
    curve,
    fio_argv,
    probe_result,
)

FIXTURES = Path(__file__).parent.parent / "fixtures"
RATES = {"01": None, "02": 25, "03": 35, "04": 41, "05": 45}
PARAMS = FsyncCapacityWorkload(type="fsync-capacity", latency_ms=50, resolution=0.1)


def captured(n: str) -> str:
    return (FIXTURES / f"fio_fsync_capacity_100wiops_probe{n}.json").read_text()


@pytest.mark.parametrize("n", RATES)
def test_each_probe_is_its_sync_count_over_the_write_time_and_its_p99(n):
    job = json.loads(captured(n))["jobs"][0]
    probe, held = probe_result(captured(n), PARAMS, RATES[n])
    assert probe.tps == job["sync"]["lat_ns"]["N"] / (job["write"]["runtime"] / 1000)
    assert probe.latency_ms == pytest.approx(job["sync"]["lat_ns"]["percentile"]["99.000000"] / 1e6)
    assert probe.rate == RATES[n] and probe.lag_ms is None
    if RATES[n] is not None:
        assert held == pytest.approx(1.0, abs=0.01)  # fio held every rate asked


def test_the_unthrottled_probe_misses_the_target_and_the_rated_ones_hold_it():
    results = {n: probe_result(captured(n), PARAMS, rate)[0] for n, rate in RATES.items()}
    # unthrottled: 49 syncs/s (two throttled writes each, 100 IOPS), p99 103 ms
    assert round(results["01"].tps, 1) == 49.0 and round(results["01"].latency_ms) == 103
    assert not results["01"].passed
    assert all(results[n].passed for n in ("02", "03", "04", "05"))
    assert [round(results[n].latency_ms, 2) for n in ("02", "03", "04", "05")] == [
        11.6,
        7.96,
        6.46,
        5.28,
    ]


def test_a_rate_not_delivered_fails_whatever_its_latency():
    # probe 02 delivered 25/s: asked 30, that is 83%, under the 90% a pass needs
    probe, held = probe_result(captured("02"), PARAMS, 30)
    assert held == pytest.approx(25 / 30, abs=0.01) and probe.latency_ms < 50
    assert not probe.passed


def test_a_percentile_fio_was_not_asked_for_is_an_error():
    other = PARAMS.model_copy(update={"percentile": 99.9})
    with pytest.raises(ValueError, match="no 99.9th percentile"):
        probe_result(captured("02"), other, 25)


def replay(asked: list[float | None]):
    """A probe that answers from the captured outputs, for the rates they were taken at."""
    by_rate = {rate: n for n, rate in RATES.items()}

    def probe(rate: float | None) -> Probe:
        asked.append(rate)
        return probe_result(captured(by_rate[None if rate is None else int(rate)]), PARAMS, rate)[0]

    return probe


def test_the_search_on_the_captured_probes_asks_what_the_real_one_asked():
    asked: list[float | None] = []
    cap = search(replay(asked), resolution=0.1, max_probes=6, whole=True)
    assert asked == [None, 25, 35, 41, 45]  # halving 49.01, then bisecting, whole rates
    assert (cap.tps, cap.bound, cap.stopped) == (45, "latency", "resolution")
    assert cap.high == pytest.approx(49.01, abs=0.01)  # within 10% of 45
    m = {x.name: x for x in _metrics(PARAMS, cap)}
    assert m["fsync_capacity.syncs_per_s"].value == 45
    assert m["fsync_capacity.syncs_per_s"].higher_is_better is True
    assert "bracket within 10%" in m["fsync_capacity.syncs_per_s"].note
    assert m["fsync_capacity.max_syncs_per_s"].value == pytest.approx(49.01, abs=0.01)
    assert m["fsync_capacity.probes"].value == 5
    assert m["fsync_capacity.latency_ms"].value == pytest.approx(5.275648)
    series = {s.name: s for s in curve(cap)}
    assert [x for x, _ in series[CURVE].points] == [25, 35, 41, 45, pytest.approx(49.01, 0.001)]


def test_whole_rates_stop_when_nothing_whole_is_left_between_the_ends():
    def probe(rate: float | None) -> Probe:  # unthrottled 10.9/s; holds up to 10/s
        ok = rate is not None and rate <= 10
        return Probe(rate, 10.9 if rate is None else rate, 1.0 if ok else 9.0, None, ok)

    cap = search(probe, resolution=0.01, max_probes=20, whole=True)
    assert [p.rate for p in cap.probes] == [None, 5, 7, 9, 10]  # next: round(10.44) = 10
    assert (cap.tps, cap.high, cap.stopped) == (10, 10.9, "resolution")


def test_argv():
    argv = fio_argv("fio", "/t/f", PARAMS, 44.6)
    assert "--rate_iops=45" in argv and "--percentile_list=99" in argv
    assert "--fdatasync=1" in argv and "--runtime=5" in argv and "--ramp_time=1" in argv
    assert not any(a.startswith("--rate_iops") for a in fio_argv("fio", "/t/f", PARAMS, None))
    assert PARAMS.label() == "p99<=50ms"


def test_the_chart_and_its_headline_sentence():
    from pgfsbench.report.chart_capacity import FIGURES, FSYNC, capacity_chart, headline
    from pgfsbench.store.read import StoredRun

    cap = search(replay([]), resolution=0.1, max_probes=6, whole=True)
    series = {s.name: s for s in curve(cap)}

    def run(i, target, value):
        return StoredRun(
            i,
            target,
            "fsync-capacity",
            "p99<=50ms",
            i,
            {"latency_ms": 50, "percentile": 99},
            "ok",
            None,
            0.0,
            1.0,
            [Metric("fsync_capacity.syncs_per_s", value, "syncs/s", True)],
            series,
        )

    class Fake:
        targets: list = []
        runs = [run(1, "ext4", 45), run(2, "xfs", 38)]

    assert headline(Fake, FSYNC) == ["ext4 holds 45 syncs/s at p99 fdatasync <= 50 ms; xfs 38"]
    fig = capacity_chart(Fake, FSYNC)
    assert len(fig["data"]) == 2 and fig["layout"]["shapes"][0]["y0"] == 50
    assert all(math.isfinite(y) for t in fig["data"] for y in t["y"])
    [spec] = [f for f in FIGURES if f.id == "fsync-capacity-chart"]
    assert spec.render(Fake) is not None
    assert headline(Fake) == []  # the pgbench chart has nothing of it
