"""Ctrl-C, SIGTERM and a hard kill: nothing of the run may stay behind."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.conftest import CLI, cli, ledgers, leftovers


def _start_and_wait_for_postgres(results: Path, state_dir: Path) -> subprocess.Popen:
    """Start the smoke plan; return once PostgreSQL runs on the first target."""
    run = subprocess.Popen([*CLI, "run", "smoke", "--results", str(results)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for path in state_dir.glob("*.json"):
            try:
                kinds = [r["kind"] for r in json.loads(path.read_text())["resources"]]
            except (OSError, ValueError):
                continue
            if "postgres" in kinds:
                time.sleep(2)  # into the first workload (pg_test_fsync)
                return run
        if run.poll() is not None:
            break
        time.sleep(0.2)
    run.kill()
    raise AssertionError(f"the run never started PostgreSQL: {run.communicate()}")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_cleans_up_and_keeps_what_completed(tmp_path, state_dir, signum):
    results = tmp_path / "r"
    run = _start_and_wait_for_postgres(results, state_dir)
    run.send_signal(signum)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
    assert leftovers() == []
    assert ledgers(state_dir) == []
    db = sqlite3.connect(results / "results.db")
    assert db.execute("SELECT status FROM campaign").fetchone() == ("interrupted",)
    assert ("fsync", "interrupted") in db.execute("SELECT workload, status FROM runs").fetchall()
    assert (results / "report.html").exists()


def test_after_a_hard_kill_cleanup_removes_everything(tmp_path, state_dir):
    results = tmp_path / "r"
    run = _start_and_wait_for_postgres(results, state_dir)
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=30)
    left = leftovers()
    assert any(l.startswith("mount:") for l in left), left
    assert any(l.startswith("loop:") for l in left), left
    assert any(l.startswith("process:") for l in left), left
    assert len(ledgers(state_dir)) == 1
    out = cli("cleanup").stdout
    assert "cleaning up after run" in out
    assert leftovers() == []
    assert ledgers(state_dir) == []
    assert not list((results / "images").glob("*.img"))
    assert cli("cleanup").stdout.strip() == "nothing to clean up"
