"""pgbench-capacity: probe log parsing and the search, on logs captured from real pgbench
probes (TPC-B, 1 client, ext4 loop image throttled to 100 write IOPS; probe 01 unthrottled,
02-05 at --rate 24.491, 34.636, 41.189, 37.771)."""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

import pytest

from pgfsbench.workloads.capacity_search import Probe, read_probe_logs, search
from pgfsbench.workloads.pgbench_capacity import PgbenchCapacityWorkload, curve, pgbench_argv

FIXTURES = Path(__file__).parent.parent / "fixtures"
RATES = {"01": None, "02": 24.491, "03": 34.636, "04": 41.189, "05": 37.771}


def fixture(n: str) -> Path:
    return FIXTURES / f"pgbench_capacity_100wiops_probe{n}.log.gz"


def processed(n: str) -> int:
    text = (FIXTURES / f"pgbench_capacity_100wiops_probe{n}.txt").read_text()
    return int(re.search(r"actually processed: (\d+)", text).group(1))


def raw_latencies_ms(n: str) -> list[float]:
    with gzip.open(fixture(n), "rt") as fh:
        return sorted(int(line.split()[2]) / 1000 for line in fh)


@pytest.mark.parametrize("n", sorted(RATES))
def test_every_logged_transaction_is_counted_and_percentiles_match_a_sort(n):
    stats = read_probe_logs([fixture(n)])
    assert stats.committed == processed(n) and stats.over == 0
    raw = raw_latencies_ms(n)
    for pct in (50, 90, 99):
        exact = raw[math.ceil(pct / 100 * len(raw)) - 1]  # nearest rank
        assert stats.percentile_ms(pct) == pytest.approx(exact, rel=1 / 128)
    # the schedule lag column is there exactly when pgbench ran with --rate
    assert (stats.lag.total > 0) == (RATES[n] is not None)


def test_the_warmup_leaves_out_early_transactions_and_the_rate_follows():
    whole = read_probe_logs([fixture("02")])
    trimmed = read_probe_logs([fixture("02")], skip_s=1)
    assert 0 < trimmed.committed < whole.committed
    assert trimmed.tps == pytest.approx(24.491, rel=0.25)  # Poisson schedule over ~4 s


def test_skipped_and_failed_count_as_over_the_target(tmp_path):
    log = tmp_path / "pgbench_log.1"
    lines = [f"0 {i} 1000 0 1795745764 {i * 1000} 10" for i in range(97)]
    lines += [
        "0 97 skipped 0 1795745764 98000 20000",
        "0 98 failed 0 1795745764 99000 5",
        "0 99 skipped 0 1795745764 99500 20000",
        "garbage",
    ]
    log.write_text("\n".join(lines) + "\n")
    stats = read_probe_logs([log])
    assert (stats.committed, stats.over) == (97, 3)
    assert stats.percentile_ms(97) == pytest.approx(1.0)
    assert stats.percentile_ms(98) == math.inf  # 3% over: p98 is over any target


def test_no_lines_is_infinitely_slow(tmp_path):
    empty = tmp_path / "pgbench_log.1"
    empty.write_text("")
    assert read_probe_logs([empty]).percentile_ms(99) == math.inf


def real_probe(target_ms: float, pct: float = 99):
    """A probe function answering from the captured probes: a rate gets the captured
    probe nearest it (they are the rates the real search asked for)."""
    asked: list[float | None] = []

    def probe(rate):
        asked.append(rate)
        if rate is None:
            n = "01"
        else:
            n = min((k for k in RATES if RATES[k]), key=lambda k: abs(RATES[k] - rate))
        stats = read_probe_logs([fixture(n)], skip_s=1)
        lat = stats.percentile_ms(pct)
        count = stats.committed + stats.over
        return Probe(rate, stats.tps, lat, stats.lag_percentile_ms(pct), lat <= target_ms, count)

    return probe, asked


def test_the_search_on_the_captured_curve_finds_what_the_real_one_found():
    probe, asked = real_probe(50)
    cap = search(probe, resolution=0.1, max_probes=8)
    # the real run's sequence: unthrottled (fails), half of it (passes), then geometric
    # splits of the bracket until within 10%
    assert asked[0] is None and asked[1] == pytest.approx(cap.probes[0].tps / 2)
    assert cap.bound == "latency" and cap.stopped == "resolution"
    assert cap.high / cap.low <= 1.1
    assert [round(r, 1) for r in asked[1:]] == pytest.approx([24.5, 34.6, 41.2, 37.8], abs=0.2)
    assert cap.tps == pytest.approx(37.77, abs=0.2)
    assert all(p.passed == (p.latency_ms <= 50) for p in cap.probes)


def test_the_budget_stops_the_search_with_the_bracket_it_had():
    probe, asked = real_probe(50)
    cap = search(probe, resolution=0.01, max_probes=4)
    assert len(asked) == 4 and cap.stopped == "budget" and cap.high / cap.low > 1.01


def test_a_loose_target_is_the_unthrottled_throughput():
    probe, asked = real_probe(10_000)
    cap = search(probe, resolution=0.05, max_probes=8)
    assert asked == [None] and cap.bound == "throughput" and cap.tps == cap.probes[0].tps


def test_a_target_nothing_holds_gives_no_capacity():
    probe, asked = real_probe(0.001)
    cap = search(probe, resolution=0.05, max_probes=40, min_rate=5)
    assert cap.tps is None and cap.bound == "none" and cap.stopped == "floor"
    assert min(r for r in asked if r) >= 5


def test_a_percentile_the_probes_are_too_short_for_is_said_on_the_capacity():
    from pgfsbench.workloads.pgbench_capacity import _metrics

    # the captured 5 s probes hold 100-200 transactions: their p99 is set by the one or
    # two slowest, and the capacity says so; their p90 by a dozen or more, and it does not
    probe, _ = real_probe(50, pct=99)
    params = PgbenchCapacityWorkload(type="pgbench-capacity", latency_ms=50, percentile=99)
    cap = search(probe, resolution=0.1, max_probes=8)
    counts = {p.rate: p.count for p in cap.probes}
    assert 100 <= counts[cap.low] < 500
    note = _metrics(params, cap)[0].note
    fewest = min(counts[cap.low], counts[cap.high])
    assert f"a deciding probe counted {fewest}, so its p99 is set by its" in note
    probe, _ = real_probe(50, pct=90)
    params = PgbenchCapacityWorkload(type="pgbench-capacity", latency_ms=50, percentile=90)
    cap = search(probe, resolution=0.1, max_probes=8)
    assert cap.bound == "latency" and "deciding probe" not in _metrics(params, cap)[0].note


def test_argv_and_curve():
    p = PgbenchCapacityWorkload(
        type="pgbench-capacity", latency_ms=10, latency_limit=True, clients=2
    )
    argv = pgbench_argv("pgbench", p, 123.4567, "/s/log", ["-h", "/s"])
    assert argv[argv.index("--rate") + 1] == "123.457"
    assert argv[argv.index("--latency-limit") + 1] == "10"
    assert "--rate" not in pgbench_argv("pgbench", p, None, "/s/log", [])
    assert p.label() == "p99<=10ms"
    probe, _ = real_probe(50)
    series = {s.name: s for s in curve(search(probe, resolution=0.1, max_probes=8))}
    xs = [x for x, _ in series["pgbench_capacity.curve_latency_ms"].points]
    assert xs == sorted(xs) and len(xs) == 5


def test_the_chart_and_its_headline_sentence():
    from pgfsbench.metrics import Metric
    from pgfsbench.report.chart_capacity import capacity_chart, headline
    from pgfsbench.store.read import StoredRun

    probe, _ = real_probe(50)
    cap = search(probe, resolution=0.1, max_probes=8)
    series = {s.name: s for s in curve(cap)}

    def run(i, target, value):
        return StoredRun(
            i,
            target,
            "pgbench-capacity",
            "p99<=50ms",
            i,
            {"latency_ms": 50, "percentile": 99},
            "ok",
            None,
            0.0,
            1.0,
            [Metric("pgbench_capacity.tps", value, "tx/s", True)],
            series,
        )

    class Fake:
        targets = []
        runs = [run(1, "ext4", 2400.4), run(2, "ext4", 2399.6), run(3, "btrfs", 900)]

    assert headline(Fake) == ["ext4 holds 2,400 tx/s at p99 <= 50 ms; btrfs 900"]
    fig = capacity_chart(Fake)
    assert len(fig["data"]) == 3 and fig["layout"]["shapes"][0]["y0"] == 50
