"""Ctrl-C, SIGTERM and a hard kill: nothing of the run may stay behind."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import CLI, cli, ledgers, leftovers, wait_for_run
from tests.integration.plans import LOAD_ONCE, SMALL_BUFFERS, ext4, loop, pgbench, plan_toml, rounds


def _start_and_wait_for_postgres(results: Path) -> subprocess.Popen:
    """Start the smoke plan; return once its first workload (pg_test_fsync, about 15 s)
    runs, so PostgreSQL is up and a run is in progress."""
    run = subprocess.Popen(
        [*CLI, "run", "smoke", "--results", str(results)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_run(run, results, "status = 'running' AND workload = 'fsync'", 180)
    return run


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_cleans_up_and_keeps_what_completed(tmp_path, state_dir, signum):
    results = tmp_path / "r"
    run = _start_and_wait_for_postgres(results)
    run.send_signal(signum)
    out, err = run.communicate(timeout=120)
    assert run.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[signum], (out, err)
    assert "interrupted" in err and "Traceback" not in err
    assert leftovers() == []
    assert ledgers(state_dir) == []
    db = sqlite3.connect(results / "results.db")
    assert db.execute("SELECT status FROM campaign").fetchone() == ("interrupted",)
    assert ("fsync", "interrupted") in db.execute("SELECT workload, status FROM runs").fetchall()
    assert (results / "report.html").exists()


def test_after_a_hard_kill_cleanup_removes_everything(tmp_path, state_dir):
    results = tmp_path / "r"
    run = _start_and_wait_for_postgres(results)
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=30)
    left = leftovers()
    assert any(l.startswith("mount:") for l in left), left
    assert any(l.startswith("loop:") for l in left), left
    assert any(l.startswith("process:") for l in left), left
    assert len(ledgers(state_dir)) == 1
    # No campaign may start before the killed one's leftovers are undone.
    refused = cli("run", "smoke", "--results", str(tmp_path / "next"), check=False)
    assert refused.returncode == 2, refused
    assert refused.stderr.count("\n") == 1 and "run 'pgfsbench cleanup' first" in refused.stderr
    assert f"results {results}" in refused.stderr and "mount" in refused.stderr
    assert not (tmp_path / "next").exists()
    out = cli("cleanup").stdout
    assert "cleaning up after run" in out
    assert leftovers() == []
    assert ledgers(state_dir) == []
    assert not list((results / "images").glob("*.img"))
    # the killed run's results say so, and still make a report
    assert "as killed" in out
    db = sqlite3.connect(results / "results.db")
    assert db.execute("SELECT status FROM campaign").fetchone() == ("killed",)
    assert db.execute("SELECT workload, status, error FROM runs").fetchall() == [
        ("fsync", "interrupted", "pgfsbench was killed while it ran")
    ]
    db.close()
    shown = cli("report", str(results), env={**os.environ, "COLUMNS": "200"}).stdout
    assert "status is 'killed': results may be incomplete" in shown
    assert "killed" in (results / "report.html").read_text()
    assert cli("cleanup").stdout.strip() == "nothing to clean up"


REUSED = plan_toml(
    "reused-rounds",
    [ext4("a"), loop("b", "xfs", throttle={"write_iops": 2000})],
    [LOAD_ONCE, pgbench(clients=1, duration=3)],
    repetitions=rounds(3, order="round-robin"),
    settings=SMALL_BUFFERS,
)


def test_sigterm_in_a_later_round_releases_kept_targets_and_keeps_earlier_rounds(
    tmp_path, state_dir
):
    """Reused targets stay mounted across rounds (and b's cgroup holds us during its
    visits): a signal in round 2 must still undo all of it."""
    plan = tmp_path / "plan.toml"
    plan.write_text(REUSED)
    results = tmp_path / "r"
    run = subprocess.Popen(
        [*CLI, "run", str(plan), "--results", str(results)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_run(run, results, "status = 'running' AND repetition = 2", 300)
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 143, (out, err)
    assert leftovers() == [] and ledgers(state_dir) == []
    db = sqlite3.connect(results / "results.db")
    rows = db.execute("SELECT workload, repetition, status FROM runs").fetchall()
    assert ("pgbench", 1, "ok") in rows and ("pgbench", 2, "interrupted") in rows
    assert db.execute("SELECT status FROM campaign").fetchone() == ("interrupted",)
    sched = json.loads(db.execute("SELECT schedule_json FROM campaign").fetchone()[0])
    assert [1, "a"] in sched["visits"] and [2, "b"] in sched["visits"]
    # both stopped short of their rounds, not only the one being visited
    assert sorted(db.execute("SELECT name, status FROM targets").fetchall()) == [
        ("a", "interrupted"),
        ("b", "interrupted"),
    ]
