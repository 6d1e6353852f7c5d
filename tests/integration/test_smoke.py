"""The smoke plan end to end: ext4, xfs and btrfs on real loop devices."""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.integration.conftest import cli, command_artifact, export, ledgers, leftovers, ran


def test_every_target_has_fsync_init_and_tps(smoke):
    results, run, _ = smoke
    data = export(results)  # each run's commands checked against its kept outputs
    # the exact command lines a reviewer reruns: the tools and their flags
    fsync, init, tpcb = (ran(data, w) for w in ("fsync", "pgbench-init", "pgbench"))
    assert fsync["pg_test_fsync"][fsync["pg_test_fsync"].index("-s") + 1] == "1"
    assert "-i" in init["pgbench"] and init["pgbench"][init["pgbench"].index("-s") + 1] == "2"
    flags = " ".join(tpcb["pgbench"])
    assert all(f in flags for f in ("-c 2", "-j 2", "-T 5", "-P 1", "-l")), flags
    for t in data["targets"]:  # and how each target was made
        made = [Path(c["argv"][0]).name for c in t["commands"]]
        assert f"mkfs.{t['fs']}" in made and "mount" in made, made
    by_target: dict[str, dict[str, float]] = {}
    for r in data["runs"]:
        assert r["status"] == "ok", r
        for m in r["metrics"]:
            by_target.setdefault(r["target"], {})[m["name"]] = m["value"]
    assert set(by_target) == {"ext4", "xfs", "btrfs"}
    for target, metrics in by_target.items():
        assert metrics["fsync.fdatasync_8k.ops_per_s"] > 0, target
        assert metrics["fsync.open_datasync_8k.ops_per_s"] > 0, target
        assert metrics["fsync.fsync_writethrough_8k.ops_per_s"] is None  # not on Linux
        assert metrics["pgbench_init.elapsed_s"] > 0, target
        assert metrics["pgbench.tps"] > 0, target
    assert "report:" in run.stdout


def test_progress_in_a_pipe_is_plain_sparse_lines(smoke):
    """Not a terminal (a log, CI): no colour, no cursor moves, no bar; what runs, the
    figures of each measurement side by side after the round, and the end."""
    _, run, _ = smoke
    out = run.stdout
    assert "\x1b[" not in out and "\r" not in out and "━" not in out
    lines = out.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith("3 targets (")))
    end = lines.index(next(ln for ln in lines if ln.startswith("campaign ok after ")))
    progress = lines[start : end + 1]
    assert re.fullmatch(r"3 targets \(ext4, xfs, btrfs\): 1 round; estimated \d+:\d\d", progress[0])
    assert re.fullmatch(r"round 1 done: \d+:\d\d elapsed", progress[1])
    figures = {ln.split(" (")[0].strip(): ln for ln in progress[2:-1]}
    assert set(figures) == {
        "fsync fsync.fdatasync_8k.ops_per_s",
        "pgbench-init pgbench_init.elapsed_s",
        "pgbench clients=2 pgbench.tps",
    }
    for line in figures.values():  # every target's headline, in plan order
        assert re.search(r": ext4 [\d,.]+ · xfs [\d,.]+ · btrfs [\d,.]+$", line), line
    assert re.fullmatch(r"campaign ok after \d+:\d\d: 9 runs", progress[-1])
    # then the answer: the verdicts first
    assert lines[end + 1].startswith("smoke · ") and lines[end + 2].startswith("answer: ")
    assert any(ln.startswith("verdicts ─") for ln in lines[end + 3 : end + 6])


def _log_transactions(results: Path, run: dict) -> int:
    """Committed transactions counted straight from the kept pgbench logs."""
    count = 0
    for path in (results / a for a in run["artifacts"] if a.endswith(".gz")):
        with gzip.open(path, "rt") as f:
            for line in f:
                fields = line.split()
                if fields and fields[2] not in ("failed", "skipped"):
                    count += 1
    return count


def test_stored_tps_is_log_transactions_over_duration(smoke):
    results, _, _ = smoke
    db = sqlite3.connect(results / "results.db")
    runs = db.execute(
        "SELECT r.id, t.name, r.params_json FROM runs r JOIN targets t "
        "ON t.id = r.target_id WHERE workload = 'pgbench'"
    ).fetchall()
    assert len(runs) == 3
    for run_id, target, params in runs:
        artifacts = [
            p
            for (p,) in db.execute(
                "SELECT path FROM artifacts WHERE run_id = ? AND kind = 'pgbench-log'", (run_id,)
            )
        ]
        assert len(artifacts) == json.loads(params)["threads"]  # one log per thread
        counted = _log_transactions(results, {"artifacts": artifacts})
        (tps,) = db.execute(
            "SELECT value FROM metrics WHERE run_id = ? AND name = 'pgbench.tps'", (run_id,)
        ).fetchone()
        (reported,) = db.execute(
            "SELECT value FROM metrics WHERE run_id = ? AND name = 'pgbench.tps_reported'",
            (run_id,),
        ).fetchone()
        assert counted > 0
        assert tps == pytest.approx(counted / json.loads(params)["duration"])
        # pgbench counts the same transactions, but divides by its own elapsed time,
        # which includes thread start and join: compare counts, and its time loosely.
        _, stdout = command_artifact(results, run_id, "pgbench")
        (processed,) = re.findall(
            r"^number of transactions actually processed: (\d+)", stdout, re.M
        )
        assert counted == int(processed), target
        duration = json.loads(params)["duration"]
        assert duration - 0.5 < counted / reported < duration + 5, target
        # the per-second series adds up to the same transactions
        (series_sum,) = db.execute(
            "SELECT sum(value) FROM series WHERE run_id = ? AND name = 'pgbench.tps'", (run_id,)
        ).fetchone()
        assert series_sum == counted


def test_each_target_was_really_mounted_with_its_filesystem(smoke):
    results, _, _ = smoke
    db = sqlite3.connect(results / "results.db")
    for name, fs, prov in db.execute("SELECT name, fs, provenance_json FROM targets"):
        prov = json.loads(prov)
        assert prov["mounted_fs_type"] == fs == name  # read back from mountinfo
        assert prov["device"].startswith("/dev/loop")
        assert "rw" in prov["effective_mount_options"]
        assert prov["postgres_version"].startswith("18")


def test_raw_outputs_are_kept(smoke):
    results, _, _ = smoke
    db = sqlite3.connect(results / "results.db")
    paths = [p for (p,) in db.execute("SELECT path FROM artifacts")]
    assert all((results / p).exists() for p in paths)
    mkfs = [p for p in paths if "mkfs.xfs" in p]
    assert mkfs and "meta-data" in (results / mkfs[0]).read_text()
    fsync = [p for p in paths if p.endswith("pg_test_fsync.txt")]
    assert len(fsync) == 3 and "ops/sec" in (results / fsync[0]).read_text()


def test_report_is_one_offline_file(smoke):
    results, _, _ = smoke
    html = (results / "report.html").read_text()
    assert html.count('<div class="chart"') >= 2
    for t in ("ext4", "xfs", "btrfs"):
        assert t in html
    assert "<script src" not in html and "<link" not in html
    # rebuilt from the store alone
    (results / "report.html").unlink()
    cli("report", str(results))
    assert (results / "report.html").exists()


def test_nothing_is_left_behind(smoke, state_dir):
    results, _, before = smoke
    assert leftovers() == before == []
    assert ledgers(state_dir) == []
    assert not list((results / "images").glob("*.img"))


def test_every_run_carries_its_monitors_and_cost_per_transaction(smoke):
    results, _, _ = smoke
    for r in export(results)["runs"]:
        metrics = {m["name"]: m["value"] for m in r["metrics"]}
        assert r["series"]["mon.cpu.user_pct"]["points"], (r["target"], r["workload"])
        assert r["series"]["mon.disk.target.write_mb_per_s"]["points"]
        assert metrics["mon.cpu.busy_s"] > 0
        if r["workload"] == "pgbench":
            # tps and the monitors share one timeline: both start near zero
            assert r["series"]["pgbench.tps"]["points"][0][0] < 2
            assert metrics["mon.pg.wal_bytes"] > 0
            assert metrics["eff.wal_bytes_per_tx"] == pytest.approx(
                metrics["mon.pg.wal_bytes"] / metrics["pgbench.transactions"]
            )
            assert metrics["eff.device_bytes_per_tx"] > 0
            assert "stall.seconds" in metrics
    assert 'id="timeline-chart"' in (results / "report.html").read_text()


def test_the_answer_leads_the_summary_the_listing_and_the_export(smoke):
    results, run, _ = smoke
    answer = export(results)["comparison"]["answer"]
    assert answer
    summary = run.stdout[run.stdout.index(" · ok · ") :]
    assert summary.splitlines()[1].startswith("answer: ")
    listed = cli("list", str(results)).stdout
    assert " ".join(answer.split()[:3]) in " ".join(listed.split())
    [doc] = json.loads(cli("list", str(results), "--format", "json").stdout)
    assert doc["answer"] == answer and all("ranking" in v for v in doc["verdicts"])
