"""A results filesystem that is read-only, or fills up while a campaign runs.

The results directory is on a small ext4 of the test's own (a loop device), the
target elsewhere: one line and the documented exit code, every completed run
kept, nothing left behind.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.integration.conftest import CLI, cli, ledgers, leftovers, wait_for_run
from tests.integration.plans import LOAD, SMALL_BUFFERS, pgbench, plan_toml


def sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def small_fs(tmp_path):
    """A 64 MB ext4 (no root reserve: full means full) mounted at tmp_path/results-fs.
    Not called *.img or pgfsbench-*: the leftover checks must not take it for a run's."""
    image = tmp_path / "results-fs.raw"
    with open(image, "wb") as f:
        f.truncate(64 << 20)
    device = sh("losetup", "--find", "--show", str(image)).strip()
    where = tmp_path / "results-fs"
    where.mkdir()
    try:
        sh("mkfs.ext4", "-q", "-F", "-m", "0", device)
        sh("mount", device, str(where))
        yield where
    finally:
        # A process that just exited can hold the mount a moment longer: retry, and
        # say so if it stays (a mount left behind fails every later leftover check).
        for attempt in range(10):
            done = subprocess.run(["umount", str(where)], capture_output=True, text=True)
            if done.returncode == 0 or not os.path.ismount(where):
                break
            time.sleep(0.2 * (attempt + 1))
        for attempt in range(10):
            if subprocess.run(["losetup", "-d", device], capture_output=True).returncode == 0:
                break
            time.sleep(0.2 * (attempt + 1))
        assert not os.path.ismount(where), f"{where} still mounted: {done.stderr}"


@pytest.fixture
def target_dir():
    """A directory target off the small filesystem, reachable by the PostgreSQL user."""
    path = Path(tempfile.mkdtemp(prefix="pgfsb-test-target-", dir="/var/tmp"))
    path.chmod(0o755)
    yield path
    subprocess.run(["rm", "-rf", str(path)])


def fill(directory: Path, name: str) -> Path:
    """Write a file until the filesystem is full."""
    filler = directory / name
    with open(filler, "wb", buffering=0) as f:
        for chunk in (1 << 20, 4096, 512):
            try:
                while True:
                    f.write(bytes(chunk))
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    return filler


def fills_up(target: Path) -> str:
    """A load and two pgbench runs on the directory target ``target``."""
    return plan_toml(
        "fills-up",
        [{"name": "d", "dir": str(target)}],
        [
            LOAD,
            pgbench(clients=1, duration=4, tag="first"),
            pgbench(clients=1, duration=4, tag="second"),
        ],
        settings=SMALL_BUFFERS,
    )


def test_a_results_disk_that_fills_up_stops_the_campaign_and_keeps_what_completed(
    tmp_path, state_dir, small_fs, target_dir
):
    plan = tmp_path / "plan.toml"
    plan.write_text(fills_up(target_dir))
    results = small_fs / "r"
    run = subprocess.Popen(
        [*CLI, "run", str(plan), "--results", str(results)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_run(run, results, "workload = 'pgbench-init' AND status = 'ok'", 180)
    filler = fill(small_fs, "filler")  # while the first pgbench runs
    out, err = run.communicate(timeout=300)
    assert run.returncode == 1, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "the campaign stopped and everything was cleaned up" in err
    assert f"what completed before is kept in {results}" in err
    assert leftovers() == [] and ledgers(state_dir) == []
    assert not list(target_dir.iterdir())  # the dir target's own sub-directory is gone

    # The load completed and is kept; the campaign's end was recorded (in the reserve).
    db = sqlite3.connect(f"file:{results / 'results.db'}?mode=ro", uri=True)
    assert db.execute("SELECT status FROM campaign").fetchone() == ("failed",)
    statuses = dict(db.execute("SELECT workload || ' ' || label, status FROM runs"))
    db.close()
    assert statuses["pgbench-init "] == "ok"
    assert statuses.get("pgbench clients=1 first") in ("failed", None)
    assert "running" not in statuses.values()

    # A report needs room too: one line and exit 2 while the disk is full...
    filler2 = fill(small_fs, "filler2")
    full = cli("report", str(results), check=False)
    assert full.returncode == 2, full
    assert full.stderr.strip().splitlines() == [
        f"error: cannot write the report in {results}: No space left on device; the "
        f"results are kept in {results}: free space, or write it elsewhere with "
        f"'pgfsbench report {results} --output FILE'"
    ]
    assert not list(results.glob(".report-*"))  # no half-written temporary left
    # ...and the report once there is.
    filler.unlink()
    filler2.unlink()
    shown = cli("report", str(results), env={**os.environ, "COLUMNS": "200"}).stdout
    assert "status is 'failed': results may be incomplete" in shown
    assert "pgbench-init" in (results / "report.html").read_text()

    # Read-only results (an archive): read, and written elsewhere with --output.
    sh("mount", "-o", "remount,ro", str(small_fs))
    readonly = cli("report", str(results), check=False)
    assert readonly.returncode == 2 and "Read-only file system" in readonly.stderr
    assert len(readonly.stderr.strip().splitlines()) == 1
    elsewhere = tmp_path / "copy.html"
    cli("report", str(results), "--output", str(elsewhere))
    assert "pgbench-init" in elsewhere.read_text()

    # A new campaign cannot put results there: refused before anything is made.
    refused = cli("run", str(plan), "--results", str(small_fs / "new"), check=False)
    assert refused.returncode == 2, refused
    assert refused.stderr.strip().splitlines() == [
        f"error: --results {small_fs / 'new'}: {small_fs} is on a read-only filesystem; "
        "give --results a directory on a writable filesystem with free space"
    ]
    assert ledgers(state_dir) == [] and leftovers() == []
