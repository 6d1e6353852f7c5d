"""pgbench output parsing, checked against outputs captured from PG 15 and PG 18."""

from __future__ import annotations

import gzip
import math
import shutil
import statistics
from pathlib import Path

import pytest

from pgfsbench.metrics import Metric
from pgfsbench.workloads.pgbench_output import (
    InitTimes,
    LatencyHistogram,
    StatementLatency,
    TxLogSummary,
    parse_init_output,
    parse_run_summary,
    summarize_transaction_logs,
)
from pgfsbench.workloads.pgbench_tpcb import PgbenchWorkload, _metrics
from pgfsbench.workloads.warmup import steady_state_start

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# Per-thread log samples (first 50 lines of prefix.PID and prefix.PID.1).
TXLOGS = {
    "pg15": ["pgbench_txlog_pg15.4646", "pgbench_txlog_pg15.4646.1"],
    "pg18": ["pgbench_txlog_pg18.4658", "pgbench_txlog_pg18.4658.1"],
    "failures_pg15": ["pgbench_txlog_failures_pg15.5163", "pgbench_txlog_failures_pg15.5163.1"],
    "failures_pg18": ["pgbench_txlog_failures_pg18.5198", "pgbench_txlog_failures_pg18.5198.1"],
    "rate_pg18": ["pgbench_txlog_rate_pg18.5271", "pgbench_txlog_rate_pg18.5271.1"],
}

# Relative error bound documented on LatencyHistogram.
HIST_REL_ERROR = 1 / 128


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def log_paths(key: str) -> list[Path]:
    return [FIXTURES / name for name in TXLOGS[key]]


# ---------------------------------------------------------------- pgbench -i


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "pgbench_init_pg15.txt",
            InitTimes(
                0.42,
                {
                    "drop_tables": 0.00,
                    "create_tables": 0.01,
                    "client_side_generate": 0.20,
                    "vacuum": 0.09,
                    "primary_keys": 0.11,
                },
            ),
        ),
        (
            "pgbench_init_pg18.txt",
            InitTimes(
                0.40,
                {
                    "drop_tables": 0.00,
                    "create_tables": 0.01,
                    "client_side_generate": 0.23,
                    "vacuum": 0.09,
                    "primary_keys": 0.06,
                },
            ),
        ),
        (
            "pgbench_init_server_side_pg18.txt",
            InitTimes(
                0.48,
                {
                    "drop_tables": 0.01,
                    "create_tables": 0.01,
                    "server_side_generate": 0.29,
                    "vacuum": 0.10,
                    "primary_keys": 0.06,
                },
            ),
        ),
    ],
)
def test_parse_init_output(name: str, expected: InitTimes) -> None:
    got = parse_init_output(fixture(name))
    assert got == expected
    assert list(got.phases) == list(expected.phases)


@pytest.mark.parametrize(
    "name", ["pgbench_connfail_exit1_pg15.txt", "pgbench_connfail_exit1_pg18.txt"]
)
def test_init_failure_raises(name: str) -> None:
    with pytest.raises(ValueError, match="done in"):
        parse_init_output(fixture(name))


def test_init_unfinished_raises() -> None:
    # The same output cut before the final line, as after a crash.
    text = fixture("pgbench_init_pg18.txt")
    cut = text[: text.index("done in")]
    with pytest.raises(ValueError, match="did not finish"):
        parse_init_output(cut)


# ------------------------------------------------------------- run summary


def test_run_summary_pg15_with_r() -> None:
    s = parse_run_summary(fixture("pgbench_run_pg15.txt"))
    assert s.tps == 1885.440237
    assert s.latency_avg_ms == 1.061
    assert s.latency_stddev_ms is None  # not printed without -P/-R/-L
    assert s.transactions == 5651
    assert s.failed_transactions == 0
    assert s.duration_s == 3.0
    assert (s.clients, s.threads, s.query_mode, s.scaling_factor) == (2, 2, "prepared", 1)
    assert s.initial_connection_ms == 6.855
    assert s.skipped_transactions is None
    assert not s.aborted and not s.latency_includes_failures
    assert len(s.statements) == 11
    assert s.statements[0] == StatementLatency(r"\set aid random(1, 100000 * :scale)", 0.001, 0)
    assert s.statements[3] == StatementLatency(r"\set delta random(-5000, 5000)", 0.000, 0)
    assert s.statements[4] == StatementLatency("BEGIN;", 0.061, 0)
    assert s.statements[8] == StatementLatency(
        "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;", 0.186, 0
    )
    assert s.statements[-1] == ("END;", 0.319, 0)


def test_run_summary_pg18_with_r() -> None:
    s = parse_run_summary(fixture("pgbench_run_pg18.txt"))
    assert s.tps == 1786.903426
    assert s.latency_avg_ms == 1.119
    assert s.latency_stddev_ms is None
    assert s.transactions == 5356
    assert s.failed_transactions == 0
    assert (s.duration_s, s.clients, s.threads, s.query_mode, s.scaling_factor) == (
        3.0,
        2,
        2,
        "prepared",
        1,
    )
    assert s.initial_connection_ms == 5.603
    # PG 18 separates the statement with one space instead of two.
    assert [st.statement for st in s.statements][4:7] == [
        "BEGIN;",
        "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;",
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
    ]
    assert s.statements[4].latency_ms == 0.057
    assert s.statements[-1] == StatementLatency("END;", 0.349, 0)


def test_run_summary_simple_without_r_pg15() -> None:
    s = parse_run_summary(fixture("pgbench_run_simple_no_r_pg15.txt"))
    assert (s.tps, s.latency_avg_ms, s.transactions, s.query_mode) == (
        1291.760847,
        1.548,
        3873,
        "simple",
    )
    assert s.initial_connection_ms == 8.814
    assert s.statements == []


@pytest.mark.parametrize(
    ("name", "tps", "avg", "stddev", "tx"),
    [
        ("pgbench_run_progress_pg15.txt", 1711.304784, 1.167, 0.976, 5131),
        ("pgbench_run_progress_pg18.txt", 1992.991963, 1.002, 0.748, 5967),
    ],
)
def test_run_summary_with_stddev(name: str, tps: float, avg: float, stddev: float, tx: int) -> None:
    s = parse_run_summary(fixture(name))
    assert (s.tps, s.latency_avg_ms, s.latency_stddev_ms, s.transactions) == (tps, avg, stddev, tx)


@pytest.mark.parametrize(
    ("name", "tps", "tx", "failed", "retried", "avg", "tellers", "end"),
    [
        # tellers/end: (latency, failures) of those statements in the -r table.
        (
            "pgbench_run_failures_detailed_pg15.txt",
            518.160004,
            1550,
            4476,
            4909,
            3.971,
            (0.282, 3079),
            (0.672, 0),
        ),
        (
            "pgbench_run_failures_detailed_pg18.txt",
            571.209948,
            1708,
            4681,
            5086,
            3.744,
            (0.265, 3350),
            (0.645, 1),
        ),
    ],
)
def test_run_summary_failures_detailed(
    name: str,
    tps: float,
    tx: int,
    failed: int,
    retried: int,
    avg: float,
    tellers: tuple[float, int],
    end: tuple[float, int],
) -> None:
    s = parse_run_summary(fixture(name))
    assert (s.tps, s.transactions, s.failed_transactions) == (tps, tx, failed)
    assert (s.retried_transactions, s.total_retries) == (retried, retried)
    assert s.latency_avg_ms == avg
    assert s.latency_includes_failures
    assert s.clients == 8
    # "failures and retries" table: three numeric columns before the statement.
    assert len(s.statements) == 11
    by_text = {st.statement: st for st in s.statements}
    t = by_text["UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;"]
    assert (t.latency_ms, t.failures) == tellers
    assert (by_text["END;"].latency_ms, by_text["END;"].failures) == end


@pytest.mark.parametrize(
    ("name", "tps", "tx", "skipped", "avg", "stddev"),
    [
        ("pgbench_run_rate_limit_pg15.txt", 1666.204666, 4995, 2609, 1.376, 0.441),
        ("pgbench_run_rate_limit_pg18.txt", 1682.881146, 5045, 2386, 1.337, 0.400),
    ],
)
def test_run_summary_rate_limit(
    name: str, tps: float, tx: int, skipped: int, avg: float, stddev: float
) -> None:
    s = parse_run_summary(fixture(name))
    assert (s.tps, s.transactions, s.skipped_transactions) == (tps, tx, skipped)
    assert (s.latency_avg_ms, s.latency_stddev_ms) == (avg, stddev)


def test_run_summary_fixed_transaction_count_pg15() -> None:
    s = parse_run_summary(fixture("pgbench_run_transactions_pg15.txt"))
    # "number of transactions actually processed: 400/400", no duration line.
    assert (s.tps, s.transactions, s.duration_s, s.latency_avg_ms) == (
        1344.348025,
        400,
        None,
        1.488,
    )


def test_run_summary_partially_aborted_pg18() -> None:
    s = parse_run_summary(fixture("pgbench_abort_partial_exit2_pg18.txt"))
    assert s.aborted
    assert (s.tps, s.transactions, s.latency_avg_ms) == (17208.251871, 7147, 0.116)


@pytest.mark.parametrize(
    "name",
    [
        "pgbench_abort_exit2_pg18.txt",
        "pgbench_connfail_exit1_pg15.txt",
        "pgbench_connfail_exit1_pg18.txt",
        "",
    ],
)
def test_run_summary_without_tps_raises(name: str) -> None:
    text = fixture(name) if name else ""
    with pytest.raises(ValueError, match="tps"):
        parse_run_summary(text)


def test_old_two_tps_lines_prefers_excluding() -> None:
    # PG <= 13 printed both; only the one without connection time is comparable.
    text = fixture("pgbench_run_simple_no_r_pg15.txt").replace(
        "tps = 1291.760847 (without initial connection time)",
        "tps = 1200.5 (including connections establishing)\ntps = 1291.7 (excluding connections establishing)",
    )
    assert parse_run_summary(text).tps == 1291.7


# -------------------------------------------------------- transaction logs


def exact_stats(
    paths: list[Path], skip_before_s: float = 0, series_s: int | None = None
) -> dict[str, object]:
    """Independent, all-in-memory computation to check the streaming one.

    With ``skip_before_s`` the counts and latencies are of the lines whose
    completion second is >= the first whole second at least ``skip_before_s``
    after the earliest start (or, with ``series_s``, of the lines completing
    from that many whole seconds after the earliest start's whole second on,
    as an auto warm-up cuts); times and ``per_sec`` cover every line.
    """
    rows: list[tuple[int, int, str]] = []  # (completion second, end us, time column)
    for path in paths:
        for line in path.read_text().splitlines():
            client, txno, t, script, sec, usec, *rest = line.split()
            rows.append((int(sec), int(sec) * 1_000_000 + int(usec), t))
    starts = [end - int(t) if t.isdigit() else end for _, end, t in rows]
    ends = [end for _, end, _ in rows]
    if series_s is not None:
        cut = min(starts) // 1_000_000 + series_s
    else:
        cut = math.ceil(min(starts) / 1_000_000 + skip_before_s) if skip_before_s else 0
    lats: list[int] = []
    failed = skipped = 0
    per_sec: dict[int, int] = {}
    for sec, _, t in rows:
        if t.isdigit():
            per_sec[sec] = per_sec.get(sec, 0) + 1
        if sec < cut:
            continue
        if t == "skipped":
            skipped += 1
        elif not t.isdigit():
            failed += 1
        else:
            lats.append(int(t))
    ordered = sorted(lats)

    def nearest_rank(p: float) -> float | None:
        if not ordered:
            return None
        return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1] / 1000

    return {
        "committed": len(lats),
        "failed": failed,
        "skipped": skipped,
        "mean": statistics.fmean(lats) / 1000 if lats else None,
        "stddev": statistics.pstdev(lats) / 1000 if lats else None,
        "p50": nearest_rank(50),
        "p95": nearest_rank(95),
        "p99": nearest_rank(99),
        "max": ordered[-1] / 1000 if ordered else None,
        "first_start": min(starts) / 1e6,
        "last_end": max(ends) / 1e6,
        "per_sec": per_sec,
    }


@pytest.mark.parametrize("key", list(TXLOGS))
def test_txlog_matches_exact_computation(key: str) -> None:
    paths = log_paths(key)
    s = summarize_transaction_logs(paths)
    e = exact_stats(paths)
    assert (s.committed, s.failed, s.skipped) == (e["committed"], e["failed"], e["skipped"])
    assert s.malformed_lines == 0
    assert s.files == 2
    assert s.latency_mean_ms == pytest.approx(e["mean"], rel=1e-12)
    assert s.latency_stddev_ms == pytest.approx(e["stddev"], rel=1e-9)
    for p in ("p50", "p95", "p99"):
        assert getattr(s, f"latency_{p}_ms") == pytest.approx(e[p], rel=HIST_REL_ERROR), p
    assert s.latency_max_ms == e["max"]
    assert s.first_start_epoch == pytest.approx(e["first_start"], abs=1e-7)
    assert s.last_end_epoch == pytest.approx(e["last_end"], abs=1e-7)
    # Every committed transaction lands in exactly one second.
    assert sum(v for _, v in s.tps.points) == s.committed
    origin = math.floor(e["first_start"])
    assert {int(t) + origin: int(v) for t, v in s.tps.points if v} == e["per_sec"]


def test_txlog_pg15_literal_values() -> None:
    # Numbers read off the fixture with awk: 100 committed, latencies sum to
    # 102234 us, the largest is 4933 us ("0 1 4933 0 1795360376 910328"), the
    # earliest start is 1795360376.905358 (thread 1, first line: 909248 - 3890).
    s = summarize_transaction_logs(log_paths("pg15"))
    assert (s.committed, s.failed, s.skipped) == (100, 0, 0)
    assert s.latency_mean_ms == pytest.approx(1.02234)
    assert s.latency_max_ms == 4.933
    assert s.first_start_epoch == pytest.approx(1795360376.905358, abs=1e-7)
    assert s.tps.name == "pgbench.tps" and s.tps.unit == "tx/s"
    assert s.latency_avg.name == "pgbench.latency_avg" and s.latency_avg.unit == "ms"
    # The 50-line samples all complete within second 1795360376.
    assert s.tps.points == [(0.0, 100.0)]
    assert s.latency_avg.points == [(0.0, pytest.approx(1.02234))]


def test_txlog_failures_and_skips_literal_counts() -> None:
    # --failures-detailed logs "serialization" in the time column.
    f18 = summarize_transaction_logs(log_paths("failures_pg18"))
    assert (f18.committed, f18.failed, f18.skipped) == (27, 73, 0)
    assert f18.latency_max_ms == 17.055
    f15 = summarize_transaction_logs(log_paths("failures_pg15"))
    assert (f15.committed, f15.failed) == (23, 77)
    # -R with -L logs "skipped" and an extra schedule-lag column.
    r18 = summarize_transaction_logs(log_paths("rate_pg18"))
    assert (r18.committed, r18.failed, r18.skipped) == (61, 0, 39)
    assert r18.latency_mean_ms == pytest.approx(92054 / 61 / 1000)


def test_txlog_multiple_files_combine() -> None:
    a, b = log_paths("pg18")
    both = summarize_transaction_logs([a, b])
    sa, sb = summarize_transaction_logs([a]), summarize_transaction_logs([b])
    assert (sa.committed, sb.committed, both.committed) == (50, 50, 100)
    assert both.latency_max_ms == max(sa.latency_max_ms, sb.latency_max_ms) == 6.572
    assert both.first_start_epoch == min(sa.first_start_epoch, sb.first_start_epoch)
    assert both.last_end_epoch == max(sa.last_end_epoch, sb.last_end_epoch)
    assert both.latency_mean_ms == pytest.approx(138543 / 100 / 1000)


def test_txlog_gzip_is_transparent(tmp_path: Path) -> None:
    plain = log_paths("pg15")
    gz = tmp_path / "pgbench_log.4646.gz"
    with open(plain[0], "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    # Detection is by content, not name.
    gz_no_suffix = tmp_path / "pgbench_log.4646.1"
    with open(plain[1], "rb") as src, gzip.open(gz_no_suffix, "wb") as dst:
        shutil.copyfileobj(src, dst)
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    assert summarize_transaction_logs([gz, gz_no_suffix]) == summarize_transaction_logs(plain)


def test_txlog_empty(tmp_path: Path) -> None:
    empty = tmp_path / "pgbench_log.1"
    empty.write_bytes(b"")
    s = summarize_transaction_logs([empty])
    assert (s.committed, s.failed, s.skipped, s.files) == (0, 0, 0, 1)
    assert s.latency_mean_ms is s.latency_stddev_ms is s.latency_p50_ms is s.latency_max_ms is None
    assert s.first_start_epoch is None and s.last_end_epoch is None
    assert s.tps.points == [] and s.latency_avg.points == []
    assert summarize_transaction_logs([]).committed == 0
    # An empty thread log next to a real one changes nothing but the file count.
    with_empty = summarize_transaction_logs([empty, *log_paths("pg18")])
    alone = summarize_transaction_logs(log_paths("pg18"))
    assert with_empty.files == 3
    assert (with_empty.committed, with_empty.latency_p99_ms, with_empty.tps.points) == (
        alone.committed,
        alone.latency_p99_ms,
        alone.tps.points,
    )


def test_txlog_truncated_last_line_is_counted_not_fatal(tmp_path: Path) -> None:
    src = log_paths("pg15")[0]
    cut = tmp_path / "pgbench_log.9"
    cut.write_text(src.read_text() + "0 51 93")  # killed mid-write
    s = summarize_transaction_logs([cut])
    assert (s.committed, s.malformed_lines) == (50, 1)


def test_txlog_malformed_fields_are_counted_and_ignored(tmp_path: Path) -> None:
    src = log_paths("pg15")[0]
    log = tmp_path / "pgbench_log.9"
    log.write_text(
        "0 0 9999999 0 17953603x6 1\n"  # bad epoch
        + src.read_text()
        + "0 52 100 0 1795360376 12x\n"  # bad microseconds
        + "0 53 -5 0 1795360376 1\n"  # bad latency
        + "0 54 100 0 1795360399 999999\n"  # valid: the last completion
    )
    s = summarize_transaction_logs([log])
    assert (s.committed, s.malformed_lines) == (51, 3)
    assert s.latency_max_ms == 4.933
    assert s.last_end_epoch == pytest.approx(1795360399.999999, abs=1e-7)


def test_txlog_group_cap_does_not_change_results(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lines of one second are folded in groups of at most GROUP_CAP lines;
    # splitting a second across groups must give the same summary.
    from pgfsbench.workloads import pgbench_output

    for key in TXLOGS:
        whole = summarize_transaction_logs(log_paths(key))
        monkeypatch.setattr(pgbench_output._Accumulator, "GROUP_CAP", 3)
        split = summarize_transaction_logs(log_paths(key))
        monkeypatch.undo()
        assert split == whole, key


def test_txlog_earliest_start_need_not_be_first_line(tmp_path: Path) -> None:
    log = tmp_path / "pgbench_log.1"
    log.write_text(
        "0 1 1000 0 1000 500000\n"
        "0 2 1000 0 1001 100000\n"
        "0 3 2500000 0 1002 0\n"  # slow: started at 999.5, before line 1 (1000.499)
        "0 4 1000 0 1002 10\n"
    )
    s = summarize_transaction_logs([log])
    assert s.first_start_epoch == pytest.approx(999.5)
    assert s.last_end_epoch == pytest.approx(1002.00001)
    assert s.tps.points == [(0.0, 0.0), (1.0, 1.0), (2.0, 1.0), (3.0, 2.0)]


def test_txlog_series_fill_gaps_and_relative_time(tmp_path: Path) -> None:
    log = tmp_path / "pgbench_log.1"
    log.write_text(
        "0 1 500000 0 1000 200000\n"  # started at 999.7: origin is second 999
        "0 2 1000 0 1000 900000\n"
        "0 3 failed 0 1002 0\n"  # failed: no tps, no latency
        "0 4 2000 0 1003 100000\n"
    )
    s = summarize_transaction_logs([log])
    assert s.first_start_epoch == pytest.approx(999.7)
    assert s.last_end_epoch == pytest.approx(1003.1)
    assert s.tps.points == [(0.0, 0.0), (1.0, 2.0), (2.0, 0.0), (3.0, 0.0), (4.0, 1.0)]
    assert s.latency_avg.points == [(1.0, 250.5), (4.0, 2.0)]
    assert (s.committed, s.failed) == (3, 1)


def test_txlog_implausible_span_raises(tmp_path: Path) -> None:
    log = tmp_path / "pgbench_log.1"
    log.write_text("0 1 100 0 0 0\n0 2 100 0 1795360376 0\n")
    with pytest.raises(ValueError, match="span"):
        summarize_transaction_logs([log])


# --------------------------------------------------------------- histogram


def test_histogram_relative_error_bound() -> None:
    values = list(range(0, 5000)) + [2**k + d for k in range(7, 40) for d in (-1, 0, 1)]
    values += list(range(100_000, 20_000_000, 9_973))
    for v in values:
        mid = LatencyHistogram.bucket_midpoint(LatencyHistogram.bucket(v))
        assert abs(mid - v) <= v * HIST_REL_ERROR, v
    for v in range(128):
        assert LatencyHistogram.bucket_midpoint(LatencyHistogram.bucket(v)) == v


def test_histogram_buckets_are_monotonic_and_bounded() -> None:
    keys = [LatencyHistogram.bucket(v) for v in range(0, 3_000_000, 7)]
    assert keys == sorted(keys)
    # 1 us .. 1 hour: a few thousand buckets at most, whatever the sample count.
    assert len({LatencyHistogram.bucket(v) for v in range(0, 2**22)}) < 64 * 22 + 128
    assert LatencyHistogram.bucket(3_600_000_000) < 128 * 40


def test_histogram_percentiles() -> None:
    h = LatencyHistogram()
    assert h.percentile(50) is None
    for v in range(1, 101):
        h.add(v)
    assert (h.percentile(50), h.percentile(95), h.percentile(99), h.percentile(100)) == (
        50,
        95,
        99,
        100,
    )
    one = LatencyHistogram()
    one.add(123_456)
    # A midpoint outside the observed range is clamped to it.
    assert one.percentile(50) == 123_456
    big = LatencyHistogram()
    for v in range(1000, 1_000_000, 37):
        big.add(v)
    ordered = list(range(1000, 1_000_000, 37))
    p99 = ordered[math.ceil(0.99 * len(ordered)) - 1]
    assert big.percentile(99) == pytest.approx(p99, rel=HIST_REL_ERROR)
    merged = LatencyHistogram()
    merged.merge(h)
    merged.merge(one)
    assert (merged.total, merged.min, merged.max) == (101, 1, 123_456)


# ------------------------------------------------------------ warm-up trim

# Every captured sample (50 lines per thread log) completes within a single
# second: series second 1 for failures_pg15 (its earliest start is in the
# second before), second 0 for the others. On one capture a trim therefore
# keeps all or nothing. Read together as the threads of one "run" (the five
# captures were taken minutes apart on one machine; lines untouched) they give
# a 65-second timeline with completions in series seconds 0, 4, 51, 54 and 64,
# and committed, failed and skipped lines on both sides of most cuts.
ALL_CAPTURES = [path for key in TXLOGS for path in log_paths(key)]
CAPTURE_SECONDS = [0, 4, 51, 54, 64]


def fixed_trim_checked(paths: list[Path], skip: float) -> tuple[TxLogSummary, TxLogSummary]:
    """A fixed warm-up's summary checked against exact_stats, and the untrimmed one."""
    full = summarize_transaction_logs(paths)
    s = summarize_transaction_logs(paths, skip_before_s=skip)
    assert_matches_exact(s, exact_stats(paths, skip))
    assert_whole_run_unchanged(s, full)
    assert s.trimmed_s == trimmed_series_s(full, skip)
    assert skip <= s.trimmed_run_s < skip + 1  # at least the warm-up, at most 1 s more
    return s, full


def trimmed_series_s(full: TxLogSummary, skip: float) -> int:
    """Series seconds a fixed warm-up of ``skip`` s leaves out: up to the first whole
    second at least ``skip`` after the earliest start."""
    first = full.first_start_epoch
    return math.ceil(first + skip) - math.floor(first)


def assert_matches_exact(s: TxLogSummary, e: dict[str, object]) -> None:
    assert (s.committed, s.failed, s.skipped) == (e["committed"], e["failed"], e["skipped"])
    if e["committed"] == 0:
        assert s.latency_mean_ms is s.latency_stddev_ms is s.latency_p50_ms is None
        assert s.latency_p95_ms is s.latency_p99_ms is s.latency_max_ms is None
        return
    assert s.latency_mean_ms == pytest.approx(e["mean"], rel=1e-12)
    assert s.latency_stddev_ms == pytest.approx(e["stddev"], rel=1e-9, abs=1e-12)
    for p in ("p50", "p95", "p99"):
        assert getattr(s, f"latency_{p}_ms") == pytest.approx(e[p], rel=HIST_REL_ERROR), p
    assert s.latency_max_ms == e["max"]


def assert_whole_run_unchanged(trimmed: TxLogSummary, full: TxLogSummary) -> None:
    """The series and run times still describe the whole run."""
    assert trimmed.tps == full.tps
    assert trimmed.latency_avg == full.latency_avg
    assert (trimmed.first_start_epoch, trimmed.last_end_epoch) == (
        full.first_start_epoch,
        full.last_end_epoch,
    )
    assert (trimmed.files, trimmed.malformed_lines) == (full.files, full.malformed_lines)


def test_capture_timeline() -> None:
    full = summarize_transaction_logs(ALL_CAPTURES)
    assert [int(t) for t, v in full.tps.points if v] == CAPTURE_SECONDS
    assert len(full.tps.points) == 65 and full.trimmed_s == 0


@pytest.mark.parametrize("key", list(TXLOGS))
@pytest.mark.parametrize("skip", [0.005, 0.5, 1, 1.5, 2])
def test_txlog_trim_single_capture(key: str, skip: float) -> None:
    s, full = fixed_trim_checked(log_paths(key), skip)
    # Each capture completes within one series second, so it is kept whole or not at
    # all: only failures_pg15 (all in second 1, started 0.990451 s into second 0)
    # outlives a warm-up short enough to end in second 0.
    kept = key == "failures_pg15" and skip < 1 - 0.990451
    assert s.committed == (full.committed if kept else 0)
    assert s.committed == sum(v for t, v in full.tps.points if t >= s.trimmed_s)


@pytest.mark.parametrize("skip", [0.2, 1, 3.5, 4, 5, 30, 51, 52, 54, 55, 64, 65, 1000])
def test_txlog_trim_matches_exact_computation(skip: float) -> None:
    s, full = fixed_trim_checked(ALL_CAPTURES, skip)
    # Independently of exact_stats: committed = the series' seconds >= the cut.
    assert s.committed == sum(v for t, v in full.tps.points if t >= s.trimmed_s)


def test_txlog_trim_changes_counts_and_latencies() -> None:
    # Cut after second 4: pg15 (second 0) and pg18 (second 4) go, the
    # failures and rate captures stay.
    full = summarize_transaction_logs(ALL_CAPTURES)
    s = summarize_transaction_logs(ALL_CAPTURES, skip_before_s=5)
    assert (full.committed, full.failed, full.skipped) == (100 + 100 + 23 + 27 + 61, 77 + 73, 39)
    assert (s.committed, s.failed, s.skipped) == (23 + 27 + 61, 77 + 73, 39)
    # pg15/pg18 latencies are ~1 ms, the conflict-heavy and rate-limited runs' larger.
    assert s.latency_mean_ms > full.latency_mean_ms
    assert s.latency_p50_ms > full.latency_p50_ms
    assert s.latency_max_ms == 17.055  # failures_pg18's largest, kept
    # Keeping only the rate-limited capture (second 64): the run began 0.905358 s
    # into series second 0, so 63 s of warm-up end in second 63.9, cut at 64.
    r = summarize_transaction_logs(ALL_CAPTURES, skip_before_s=63)
    r18 = summarize_transaction_logs(log_paths("rate_pg18"))
    assert (r.committed, r.failed, r.skipped) == (61, 0, 39)
    assert (r.latency_mean_ms, r.latency_p99_ms, r.latency_max_ms) == (
        r18.latency_mean_ms,
        r18.latency_p99_ms,
        r18.latency_max_ms,
    )


def test_txlog_trim_zero_is_the_single_pass_default() -> None:
    for key in TXLOGS:
        default = summarize_transaction_logs(log_paths(key))
        assert summarize_transaction_logs(log_paths(key), skip_before_s=0) == default
        assert summarize_transaction_logs(log_paths(key), skip_before_s=0.0) == default
        assert default.trimmed_s == 0 and default.trimmed_run_s == 0


def test_txlog_trim_reads_an_iterator_of_paths_twice() -> None:
    # The benchmark (and any caller) may pass a generator: it is materialised.
    lst = summarize_transaction_logs(ALL_CAPTURES, skip_before_s=5)
    gen = summarize_transaction_logs((p for p in ALL_CAPTURES), skip_before_s=5)
    assert gen == lst and gen.committed == 111


@pytest.mark.parametrize("bad", [-1, -0.001, float("nan"), "bogus", None])
def test_txlog_trim_rejects_bad_values(bad: object) -> None:
    with pytest.raises(ValueError, match="skip_before_s"):
        summarize_transaction_logs(log_paths("pg15"), skip_before_s=bad)  # type: ignore[arg-type]


def test_txlog_trim_group_cap_does_not_change_results(monkeypatch: pytest.MonkeyPatch) -> None:
    from pgfsbench.workloads import pgbench_output

    for skip in (1, 5, 52):
        whole = summarize_transaction_logs(ALL_CAPTURES, skip_before_s=skip)
        monkeypatch.setattr(pgbench_output._Accumulator, "GROUP_CAP", 3)
        split = summarize_transaction_logs(ALL_CAPTURES, skip_before_s=skip)
        monkeypatch.undo()
        assert split == whole, skip


def test_txlog_trimmed_run_s() -> None:
    # failures_pg15 starts at 1795360426.990451; its series origin is second
    # ...426. A 1 s warm-up must leave out at least 1 s of the run, so the cut
    # is at ...428 (series second 2): 1.009549 s of run time, not the 0.009549 s
    # a cut at series second 1 would have dropped.
    s = summarize_transaction_logs(log_paths("failures_pg15"), skip_before_s=1)
    assert s.first_start_epoch == pytest.approx(1795360426.990451, abs=1e-7)
    assert s.trimmed_s == 2
    assert s.trimmed_run_s == pytest.approx(1.009549, abs=1e-6)
    # pg15 starts at ...376.905358: a 5 s warm-up cuts at series second 6, 5.094642 s.
    assert summarize_transaction_logs(ALL_CAPTURES, skip_before_s=5).trimmed_run_s == pytest.approx(
        6 - 0.905358, abs=1e-6
    )


def test_txlog_trim_empty_logs(tmp_path: Path) -> None:
    empty = tmp_path / "pgbench_log.1"
    empty.write_bytes(b"")
    for skip in (3, "auto"):
        s = summarize_transaction_logs([empty], skip_before_s=skip)
        assert (s.committed, s.trimmed_s, s.trimmed_run_s, s.files) == (0, 0, 0, 1)


def _warmup_log(path: Path, warm_s: int, run_s: int) -> None:
    """A log starting exactly at second 1000: 5 tx/s for warm_s, then 20 tx/s, then a partial second."""
    lines = []
    n = 0
    for sec in range(run_s):
        for i in range(5 if sec < warm_s else 20):
            n += 1
            lines.append(f"0 {n} {900 + i} 0 {1000 + sec} {1000 + i * 40_000}")
    for i in range(3):  # the run ends a little into the next second
        n += 1
        lines.append(f"0 {n} 1000 0 {1000 + run_s} {5000 + i}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("warm_s", "run_s"), [(10, 40), (10, 60), (7, 30)])
def test_txlog_auto_trims_the_detected_warm_up(tmp_path: Path, warm_s: int, run_s: int) -> None:
    log = tmp_path / "pgbench_log.1"
    _warmup_log(log, warm_s, run_s)
    full = summarize_transaction_logs([log])
    s = summarize_transaction_logs([log], skip_before_s="auto")
    values = [v for _, v in full.tps.points]
    assert values[-1] == 3  # the partial last second, which the detector does not see
    expected = steady_state_start(values[:-1])
    assert expected == (warm_s if run_s < 50 else math.ceil(warm_s / 5) * 5)  # MSER-5 above 50 s
    assert s.trimmed_s == expected
    assert_matches_exact(s, exact_stats([log], series_s=expected))
    assert_whole_run_unchanged(s, full)
    assert s.committed == 20 * (run_s - expected) + 3


def test_txlog_auto_on_captures_is_consistent() -> None:
    full = summarize_transaction_logs(ALL_CAPTURES)
    s = summarize_transaction_logs(ALL_CAPTURES, skip_before_s="auto")
    d = steady_state_start([v for _, v in full.tps.points][:-1])
    assert s.trimmed_s == d <= 32
    assert_matches_exact(s, exact_stats(ALL_CAPTURES, series_s=d))
    assert_whole_run_unchanged(s, full)


# ------------------------------------------------- pgbench workload metrics


def _by_name(metrics: list[Metric]) -> dict[str, Metric]:
    return {m.name: m for m in metrics}


def test_metrics_without_warmup_are_as_before_plus_warmup_s() -> None:
    logs = summarize_transaction_logs(log_paths("pg18"))
    summary = parse_run_summary(fixture("pgbench_run_pg18.txt"))
    params = PgbenchWorkload(type="pgbench", duration=3)
    got = _metrics(params, logs, summary)
    # What the workload reported before warm-up trimming existed.
    before = [
        Metric("pgbench.tps", logs.committed / 3, "tx/s", True),
        Metric(
            "pgbench.tps_reported",
            summary.tps,
            "tx/s",
            True,
            "pgbench's own figure, for cross-checking",
        ),
        Metric("pgbench.transactions", logs.committed, "tx", None),
        Metric("pgbench.failed", logs.failed, "tx", False),
        Metric("pgbench.latency_avg_ms", logs.latency_mean_ms, "ms", False),
        Metric("pgbench.latency_stddev_ms", logs.latency_stddev_ms, "ms", False),
        Metric("pgbench.latency_p50_ms", logs.latency_p50_ms, "ms", False),
        Metric("pgbench.latency_p95_ms", logs.latency_p95_ms, "ms", False),
        Metric("pgbench.latency_p99_ms", logs.latency_p99_ms, "ms", False),
        Metric("pgbench.latency_max_ms", logs.latency_max_ms, "ms", False),
    ] + [
        Metric(f"pgbench.statement_{n:02d}_ms", st.latency_ms, "ms", False, st.statement)
        for n, st in enumerate(summary.statements, start=1)
    ]
    warmup = [m for m in got if m.name == "pgbench.warmup_s"]
    assert warmup == [Metric("pgbench.warmup_s", 0.0, "s", None, "fixed")]
    assert [m for m in got if m.name != "pgbench.warmup_s"] == before
    assert got[0].value == 100 / 3


def test_metrics_with_fixed_warmup() -> None:
    params = PgbenchWorkload(type="pgbench", duration=70, warmup=5)
    logs = summarize_transaction_logs(ALL_CAPTURES, skip_before_s=params.warmup)
    m = _by_name(_metrics(params, logs, parse_run_summary(fixture("pgbench_run_pg18.txt"))))
    # at least 5 s of the run: up to series second 6, as the run began at 0.905 s
    assert m["pgbench.warmup_s"] == Metric(
        "pgbench.warmup_s",
        6.0,
        "s",
        None,
        "fixed 5 s: the first 6 s of the per-second series, 5.09 s of the run",
    )
    assert m["pgbench.transactions"].value == 111
    # Committed after the cut over the run time after it: the run started
    # 0.905358 s into the origin second, so 5.094642 s of run time were cut.
    # (epochs as floats near 1.8e9 are good to ~0.2 us, hence the tolerance)
    assert m["pgbench.tps"].value == pytest.approx(111 / (70 - 5.094642), rel=1e-8)
    assert m["pgbench.latency_max_ms"].value == 17.055
    assert m["pgbench.failed"].value == 150
    assert "includes the 5.09 s warm-up" in m["pgbench.tps_reported"].note
    assert m["pgbench.tps_reported"].value == 1786.903426


def test_metrics_with_auto_warmup() -> None:
    params = PgbenchWorkload(type="pgbench", duration=70, warmup="auto")
    logs = summarize_transaction_logs(ALL_CAPTURES, skip_before_s=params.warmup)
    m = _by_name(_metrics(params, logs, parse_run_summary(fixture("pgbench_run_pg18.txt"))))
    assert m["pgbench.warmup_s"].value == logs.trimmed_s
    assert m["pgbench.warmup_s"].note.startswith("detected (MSER): the first ")
    assert m["pgbench.warmup_s"].higher_is_better is None
    assert m["pgbench.transactions"].value == logs.committed
