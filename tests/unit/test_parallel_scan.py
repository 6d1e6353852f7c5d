"""parallel-scan: the sweep summary (best, speedup, knee) and the EXPLAIN JSON parser.

The parser runs against psql outputs captured from PostgreSQL 18 (embedded)
and 15 (Debian): each file holds the warm-up scan and two timed scans.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pgfsbench.errors import CommandFailed
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.proc import CommandResult
from pgfsbench.report.chart_scan import basebackup_chart, basebackup_rates, scan_chart, scan_curves
from pgfsbench.scaling import best_workers, knee_workers, speedup
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign
from pgfsbench.workloads import basebackup
from pgfsbench.workloads.basebackup import BasebackupWorkload, backup_metrics, tree_bytes
from pgfsbench.workloads.parallel_scan import ScanTiming, parse_explain_documents, sweep_metrics
from pgfsbench.workloads.scratch_table import drop_scratch

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# --- knee, best, speedup -----------------------------------------------------------


@pytest.mark.parametrize(
    "times, knee",
    [
        # the study's shape: big gains, then a plateau, then worse
        ({0: 100.0, 1: 55.0, 2: 40.0, 4: 37.0, 8: 36.5, 16: 50.0}, 2),
        ({0: 100.0}, 0),  # one worker count: it is the knee
        ({0: 50.0, 1: 50.0, 2: 50.0}, 0),  # flat
        ({0: 50.0, 1: 60.0, 2: 80.0}, 0),  # getting worse
        ({0: 100.0, 1: 80.0, 2: 60.0, 4: 40.0}, 4),  # every step gains ≥ 10 %: the last
        # a flat step does not hide a real gain further on
        ({0: 100.0, 1: 98.0, 2: 50.0}, 2),
        # exactly 10 % better is still a gain worth having (the rule is "less than 10 %")
        ({0: 100.0, 2: 90.0}, 2),
        ({0: 100.0, 2: 90.1}, 0),
        # unsorted input, sparse counts
        ({32: 21.1, 64: 18.3, 17: 8.9, 21: 7.6}, 21),
    ],
)
def test_knee(times, knee):
    assert knee_workers(times) == knee


def test_knee_threshold_is_a_parameter():
    times = {0: 100.0, 1: 80.0, 2: 75.0}
    assert knee_workers(times) == 1
    assert knee_workers(times, min_gain=0.05) == 2
    assert knee_workers(times, min_gain=0.5) == 0


def test_best_and_speedup():
    times = {0: 100.0, 1: 55.0, 2: 40.0, 4: 37.0, 8: 36.0, 16: 50.0}
    assert best_workers(times) == 8
    assert speedup(times) == pytest.approx(100.0 / 36.0)


def test_best_and_speedup_edge_cases():
    assert best_workers({0: 10.0}) == 0 and speedup({0: 10.0}) == 1.0
    assert best_workers({0: 5.0, 1: 5.0, 2: 5.0}) == 0  # a tie: the fewer workers
    assert best_workers({0: 5.0, 1: 6.0}) == 0 and speedup({0: 5.0, 1: 6.0}) == 1.0
    # no 0 in the sweep: the speedup is over the fewest workers measured
    assert speedup({2: 30.0, 4: 15.0}) == pytest.approx(2.0)


def test_empty_is_an_error():
    for f in (best_workers, knee_workers):
        with pytest.raises(ValueError):
            f({})


def _timing(ms: float, launched: int, planned: int | None = None) -> ScanTiming:
    return ScanTiming(ms, 0.05, launched if planned is None else planned, launched, 1000, {})


def test_sweep_metrics():
    timings = {
        0: [_timing(30.0, 0), _timing(10.0, 0), _timing(20.0, 0)],
        2: [_timing(9.0, 2), _timing(11.0, 1, planned=2)],
    }
    m = {x.name: x for x in sweep_metrics(timings)}
    assert m["parallel_scan.workers_0.ms"].value == 20.0  # median
    assert m["parallel_scan.workers_2.ms"].value == 10.0  # median of an even count
    assert not m["parallel_scan.workers_0.ms"].higher_is_better
    assert m["parallel_scan.workers_0.launched"].value == 0
    assert m["parallel_scan.workers_2.launched"].value == 1  # the fewest over the scans
    assert "ran short" in m["parallel_scan.workers_2.launched"].note
    planner = sweep_metrics({4: [_timing(9.0, 2)]})[1]
    assert planner.value == 2 and "the planner planned 2" in planner.note
    assert m["parallel_scan.best_workers"].value == 2
    assert m["parallel_scan.speedup"].value == pytest.approx(2.0)
    assert m["parallel_scan.speedup"].higher_is_better is None  # describes the curve
    for name in (
        "parallel_scan.best_workers",
        "parallel_scan.knee_workers",
        "parallel_scan.workers_0.launched",
    ):
        assert m[name].higher_is_better is None, name  # informational: no direction
    assert m["parallel_scan.knee_workers"].value == 2


# --- EXPLAIN (ANALYZE, FORMAT JSON) from psql -A -t --------------------------------

# (file) → [(execution ms, planning ms, workers planned, launched, rows scanned)],
# copied from the captured files.
EXPECTED = {
    "explain_workers_0_pg18.txt": [
        (20.544, 0.182, 0, 0, 200000),
        (18.803, 0.057, 0, 0, 200000),
        (16.197, 0.046, 0, 0, 200000),
    ],
    "explain_workers_2_pg18.txt": [
        (20.661, 0.267, 2, 2, 200000),
        (18.289, 0.07, 2, 2, 200000),
        (16.952, 0.067, 2, 2, 200000),
    ],
    "explain_workers_4_pg18.txt": [
        (25.248, 0.261, 4, 4, 200000),
        (22.84, 0.056, 4, 4, 200000),
        (26.462, 0.074, 4, 4, 200000),
    ],
    "explain_short_of_workers_pg18.txt": [(15.062, 0.263, 2, 1, 200000)],
    "explain_workers_0_pg15.txt": [
        (18.701, 0.179, 0, 0, 200000),
        (17.596, 0.043, 0, 0, 200000),
        (17.896, 0.039, 0, 0, 200000),
    ],
    # PG 15 prints per-process rows as a rounded integer: 66667 × 3 processes
    "explain_workers_2_pg15.txt": [
        (21.959, 0.218, 2, 2, 200001),
        (26.242, 0.055, 2, 2, 200001),
        (26.35, 0.052, 2, 2, 200001),
    ],
    "explain_workers_4_pg15.txt": [
        (35.416, 0.188, 4, 4, 200000),
        (40.148, 0.054, 4, 4, 200000),
        (37.408, 0.077, 4, 4, 200000),
    ],
    "explain_short_of_workers_pg15.txt": [(27.03, 0.386, 2, 1, 200000)],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_parse_captured_explain(name):
    got = [
        (t.execution_ms, t.planning_ms, t.workers_planned, t.workers_launched, t.rows_counted)
        for t in parse_explain_documents(fixture(name))
    ]
    assert got == EXPECTED[name]


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_settings_show_what_the_session_set(version):
    (first, *_) = parse_explain_documents(fixture(f"explain_workers_4_{version}.txt"))
    assert first.settings["max_parallel_workers_per_gather"] == "4"
    assert first.settings["parallel_setup_cost"] == "0"
    assert first.settings["jit"] == "off"
    (short,) = parse_explain_documents(fixture(f"explain_short_of_workers_{version}.txt"))
    assert short.settings["max_parallel_workers"] == "1"  # why only one was launched


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_an_error_output_has_no_documents(version):
    # psql exits 1 with the error on stderr and nothing on stdout
    text = fixture(f"explain_error_exit1_{version}.txt")
    stdout = text.split("# --- stdout ---\n", 1)[1].split("# --- stderr ---\n", 1)[0]
    assert "exit code: 1" in text and 'relation "no_such_table" does not exist' in text
    assert parse_explain_documents(stdout) == []


def test_parse_nothing():
    assert parse_explain_documents("") == []
    assert parse_explain_documents("\n\n") == []


# --- basebackup ------------------------------------------------------------------------


def test_tree_bytes_counts_regular_files_only(tmp_path: Path):
    (tmp_path / "a").write_bytes(b"x" * 1000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 24)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert tree_bytes(tmp_path) == 1024


def test_backup_metrics():
    m = {x.name: x for x in backup_metrics(100 * 2**20, 4.0)}
    assert m["basebackup.mb"].value == 100.0 and m["basebackup.mb"].higher_is_better is None
    assert m["basebackup.seconds"].value == 4.0 and not m["basebackup.seconds"].higher_is_better
    assert m["basebackup.mb_per_s"].value == 25.0 and m["basebackup.mb_per_s"].higher_is_better


def _fake_ctx(tmp_path: Path, exit_code: int) -> SimpleNamespace:
    """Just enough of a RunContext: the tool 'copies' 3000 bytes, then exits."""
    workdir = tmp_path / "work"
    (workdir / "pgdata").mkdir(parents=True)
    seen: list[list[str]] = []

    def tool(argv: list[str], stem: str) -> CommandResult:
        seen.append(argv)
        dest = Path(argv[argv.index("-D") + 1])
        (dest / "base").mkdir(parents=True)
        (dest / "base" / "1").write_bytes(b"x" * 3000)
        result = CommandResult(tuple(argv), exit_code, "", "", 0.5)
        if exit_code:
            raise CommandFailed(result)
        return result

    return SimpleNamespace(
        target=SimpleNamespace(workdir=workdir, name="t"),
        seen=seen,
        tool=tool,
        require_free=lambda needed, what: None,
        cluster=SimpleNamespace(
            pgdata=workdir / "pgdata",
            conn_args=lambda: ["-h", "/s"],
            bins=SimpleNamespace(tool=lambda name: name),
        ),
    )


def test_basebackup_measures_then_removes_the_copy(tmp_path: Path):
    ctx = _fake_ctx(tmp_path, 0)
    result = basebackup.run(ctx, BasebackupWorkload(type="basebackup"))
    assert ctx.seen[0][:1] == ["pg_basebackup"]
    assert ctx.seen[0][-5:] == ["-Fp", "-Xstream", "-c", "fast", "--verbose"]
    dest = Path(ctx.seen[0][ctx.seen[0].index("-D") + 1])
    assert dest.parent == ctx.target.workdir  # on the target's filesystem
    assert result.metric("basebackup.mb").value == pytest.approx(3000 / 2**20)
    assert result.metric("basebackup.seconds").value == 0.5
    assert not dest.exists()


def test_basebackup_removes_the_copy_on_failure(tmp_path: Path):
    ctx = _fake_ctx(tmp_path, 1)
    with pytest.raises(CommandFailed):
        basebackup.run(ctx, BasebackupWorkload(type="basebackup"))
    assert list(ctx.target.workdir.iterdir()) == [ctx.target.workdir / "pgdata"]


# --- charts ------------------------------------------------------------------------------


def _campaign(tmp_path: Path, with_data: bool):
    store = Store.create(tmp_path / "r")
    store.start_campaign("c-1", "scan", {"name": "scan"}, {}, "0.1.0")
    for pos, (fs, times) in enumerate(
        (("ext4", {0: 90.0, 1: 50.0, 2: 48.0}), ("xfs", {0: 80.0, 1: 42.0, 2: 30.0}))
    ):
        tid = store.add_target(fs, pos, "loop", fs, {})
        store.set_target(tid, "ok", provenance={})
        if not with_data:
            run = store.start_run(tid, "parallel-scan", {"rows": 1000})
            store.finish_run(run, "failed", "boom")
            continue
        run = store.start_run(tid, "parallel-scan", {"rows": 1000, "workers": [0, 1, 2]})
        metrics = [
            Metric(f"parallel_scan.workers_{n}.ms", ms, "ms", False) for n, ms in times.items()
        ]
        metrics.append(
            Metric("parallel_scan.knee_workers", 1 if fs == "ext4" else 2, "workers", None)
        )
        store.add_result(run, tid, WorkloadResult(metrics))
        store.finish_run(run, "ok")
        run = store.start_run(tid, "basebackup", {})
        store.add_result(
            run,
            tid,
            WorkloadResult([Metric("basebackup.mb_per_s", 100.0 + 50 * pos, "MB/s", True)]),
        )
        store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return load_campaign(tmp_path / "r")


def test_charts_from_stored_runs(tmp_path: Path):
    campaign = _campaign(tmp_path, with_data=True)
    curves = scan_curves(campaign)
    # One run per cell: the medians are the values, without a CI.
    assert [(c.target, {w: e.median for w, e in c.ms.items()}, c.knee) for c in curves] == [
        ("ext4", {0: 90.0, 1: 50.0, 2: 48.0}, 1),
        ("xfs", {0: 80.0, 1: 42.0, 2: 30.0}, 2),
    ]
    assert not any(e.has_ci for c in curves for e in c.ms.values())
    assert {t: e.median for t, e in basebackup_rates(campaign).items()} == {
        "ext4": 100.0,
        "xfs": 150.0,
    }
    lines = [t for t in scan_chart(campaign)["data"] if t.get("showlegend", True)]
    assert [t["name"] for t in lines] == ["ext4 (knee: 1)", "xfs (knee: 2)"]
    rings = [t for t in scan_chart(campaign)["data"] if t.get("showlegend") is False]
    assert [(t["meta"]["target"], t["x"], t["y"]) for t in rings] == [
        ("ext4", [1], [50.0]),
        ("xfs", [2], [30.0]),
    ]  # on the drawn median curve
    bars = basebackup_chart(campaign)["data"]
    assert [(t["name"], t["y"]) for t in bars] == [("ext4", [100.0]), ("xfs", [150.0])]


def test_no_charts_without_data(tmp_path: Path):
    campaign = _campaign(tmp_path, with_data=False)
    assert scan_chart(campaign) is None
    assert basebackup_chart(campaign) is None


def _dropping_ctx(exit_code: int) -> SimpleNamespace:
    """Just enough of a RunContext for scratch.drop_scratch: psql's commands are kept."""
    seen: list[tuple[list[str], str]] = []

    def tool(argv: list[str], stem: str) -> CommandResult:
        seen.append((argv, stem))
        result = CommandResult(tuple(argv), exit_code, "", "server closed the connection", 0.1)
        if exit_code:
            raise CommandFailed(result)
        return result

    return SimpleNamespace(
        seen=seen, tool=tool, cluster=SimpleNamespace(psql_argv=lambda commands: commands)
    )


@pytest.mark.parametrize(("state", "dropped"), [("-", True), ("1.2", False)])
def test_drop_scratch_drops_the_extension_only_when_it_installed_it(state, dropped):
    ctx = _dropping_ctx(0)
    drop_scratch(ctx, "t", "pg_prewarm", state, ok=True)
    extension = ["DROP EXTENSION IF EXISTS pg_prewarm"] if dropped else []
    assert ctx.seen == [(["DROP TABLE IF EXISTS t", *extension], "drop")]


def test_drop_scratch_raises_only_after_a_run_that_went_well():
    drop_scratch(_dropping_ctx(1), "t", "pg_prewarm", "-", ok=False)  # the first error stands
    with pytest.raises(CommandFailed):
        drop_scratch(_dropping_ctx(1), "t", "pg_prewarm", "-", ok=True)
