"""parallel-scan and basebackup end to end: ext4 and xfs on real loop devices.

The stored numbers are checked against the raw outputs kept beside them: the
EXPLAIN ANALYZE documents psql printed and pg_basebackup's own record.
"""

from __future__ import annotations

import re
import sqlite3
import statistics
from pathlib import Path

import pytest

from pgfsbench.scaling import best_workers, knee_workers, speedup
from tests.integration.conftest import export, ledgers, ran, run_plan

PLAN = """
name = "scan-backup"
[postgres.settings]
shared_buffers = "64MB"

[[targets]]
name = "ext4"
fs = "ext4"
size = "1G"

[[targets]]
name = "xfs"
fs = "xfs"
size = "1G"

[[workloads]]
type = "parallel-scan"
rows = 200000
workers = [0, 1, 2]
repeats = 2

[[workloads]]
type = "pgbench-init"
scale = 2

[[workloads]]
type = "basebackup"
"""
WORKERS = (0, 1, 2)
EXECUTION_TIME = re.compile(r'"Execution Time": ([0-9.]+)')


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, state_dir):
    results, run = run_plan(tmp_path_factory.mktemp("scan_backup"), PLAN)
    metrics: dict[str, dict[str, float]] = {}
    doc = export(results)
    backup = ran(doc, "basebackup")["pg_basebackup"]  # as it ran, in the export
    assert {"-Fp", "-Xstream", "fast"} <= set(backup) and "-D" in backup
    for r in doc["runs"]:
        assert r["status"] == "ok", r
        for m in r["metrics"]:
            metrics.setdefault(r["target"], {})[m["name"]] = m["value"]
    return results, run, metrics


def _artifacts(results: Path, target: str, workload: str) -> dict[str, Path]:
    """This target's kept outputs of one workload, by file name."""
    db = sqlite3.connect(results / "results.db")
    rows = db.execute(
        "SELECT a.path FROM artifacts a JOIN runs r ON r.id = a.run_id "
        "JOIN targets t ON t.id = r.target_id WHERE t.name = ? AND r.workload = ?",
        (target, workload),
    ).fetchall()
    return {Path(p).name: results / p for (p,) in rows}


def _stdout(path: Path) -> str:
    return path.read_text().split("# --- stdout ---\n", 1)[1].split("# --- stderr ---\n", 1)[0]


def test_scan_times_are_the_medians_of_the_kept_explain_output(campaign):
    results, _, metrics = campaign
    assert set(metrics) == {"ext4", "xfs"}
    for target, m in metrics.items():
        kept = _artifacts(results, target, "parallel-scan")
        for n in WORKERS:
            out = _stdout(kept[f"scan_workers_{n}.txt"])
            times = [float(t) for t in EXECUTION_TIME.findall(out)]
            assert len(times) == 3  # the untimed warm-up, then two repeats
            assert m[f"parallel_scan.workers_{n}.ms"] == pytest.approx(statistics.median(times[1:]))
            assert m[f"parallel_scan.workers_{n}.ms"] > 0
            # the planner really used N workers, and the server had them to give
            assert m[f"parallel_scan.workers_{n}.launched"] == n, target
            assert out.count(f'"Workers Launched": {n}') == (3 if n else 0)
            argv = kept[f"scan_workers_{n}.txt"].read_text().splitlines()[0]
            assert f"max_parallel_workers_per_gather = {n}" in argv


def test_scan_summary_follows_from_the_times(campaign):
    _, _, metrics = campaign
    for target, m in metrics.items():
        times = {n: m[f"parallel_scan.workers_{n}.ms"] for n in WORKERS}
        assert m["parallel_scan.best_workers"] == best_workers(times)
        assert m["parallel_scan.knee_workers"] == knee_workers(times)
        assert m["parallel_scan.speedup"] == pytest.approx(speedup(times))
        # 200000 bit(200) rows are about 60 bytes each on disk
        assert 8 < m["parallel_scan.table_mb"] < 20, target


def test_scan_table_was_prewarmed_and_dropped(campaign):
    results, _, _ = campaign
    for target in ("ext4", "xfs"):
        kept = _artifacts(results, target, "parallel-scan")
        warm = kept["warm.txt"].read_text()
        assert "pg_prewarm" in warm and "# exit code: 0" in warm
        # pg_prewarm returns the blocks it read: the whole table, twice (OS cache, buffers)
        blocks = [int(b) for b in _stdout(kept["warm.txt"]).split()]
        assert len(blocks) == 2 and blocks[0] == blocks[1] > 0
        drop = kept["drop.txt"].read_text()
        assert "DROP TABLE IF EXISTS pgfsbench_parallel_scan" in drop
        assert "# exit code: 0" in drop


def test_basebackup_numbers_match_its_kept_output(campaign):
    results, _, metrics = campaign
    for target, m in metrics.items():
        kept = _artifacts(results, target, "basebackup")["pg_basebackup.txt"].read_text()
        argv = kept.splitlines()[0].split()[1:]  # "$ pg_basebackup ..."
        assert argv[0].endswith("pg_basebackup")
        assert {"-Fp", "-Xstream", "fast"} <= set(argv)
        assert "base backup completed" in kept
        header = re.search(r"# exit code: 0, ([0-9.]+) s", kept)
        assert header and m["basebackup.seconds"] == pytest.approx(
            float(header.group(1)), abs=0.001
        )
        # the copy holds the whole database plus the other databases and the WAL
        assert m["basebackup.mb"] > m["pgbench_init.db_size_mb"], target
        assert m["basebackup.mb_per_s"] == pytest.approx(
            m["basebackup.mb"] / m["basebackup.seconds"]
        )


def test_report_has_both_charts(campaign):
    results, run, _ = campaign
    html = (results / "report.html").read_text()
    assert 'id="scan-chart"' in html and 'id="basebackup-chart"' in html
    assert "report:" in run.stdout


def test_our_resources_are_gone(campaign, state_dir):
    results, _, _ = campaign
    assert not list((results / "images").glob("*.img"))
    assert ledgers(state_dir) == []
