"""Failures are recorded and the campaign goes on; nothing is left behind."""

from __future__ import annotations

import json
import sqlite3

from tests.integration.conftest import cli, ledgers, leftovers

PLAN = """
name = "failures"
description = "a disk too small for the load, a mount the kernel refuses, then a good one"

[postgres.settings]
shared_buffers = "32MB"
max_wal_size = "96MB"
min_wal_size = "32MB"

[[targets]]
name = "full"
fs = "ext4"
size = "160M"

[[targets]]
name = "refused"
fs = "ext4"
size = "300M"
# a value the plan's types accept and this kernel refuses for a loop device (the plan
# refuses data=bogus at load now, before anything is made)
mount = "dax=always"

[[targets]]
name = "good"
fs = "ext4"
size = "1G"

[[workloads]]
type = "fsync"
seconds = 1

[[workloads]]
type = "pgbench-init"
scale = 6

[[workloads]]
type = "pgbench"
clients = 1
duration = 2
"""


def test_failed_steps_are_recorded_and_the_campaign_goes_on(tmp_path, state_dir):
    plan = tmp_path / "failures.toml"
    plan.write_text(PLAN)
    results = tmp_path / "r"
    run = cli("run", str(plan), "--results", str(results), check=False)
    # Some runs failed and a target was refused: a script can tell by the exit code.
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert (
        run.stderr.strip()
        .splitlines()[-1]
        .startswith("campaign partial: 2 of 6 runs did not complete; target 'refused' failed (")
    )
    db = sqlite3.connect(results / "results.db")
    assert db.execute("SELECT status FROM campaign").fetchone() == ("partial",)
    targets = {n: (s, r) for n, s, r in db.execute("SELECT name, status, reason FROM targets")}
    assert targets["full"][0] == "ok"
    assert targets["refused"][0] == "failed" and "mount" in targets["refused"][1]
    assert targets["good"][0] == "ok"
    runs = {
        (t, w): (s, e)
        for t, w, s, e in db.execute(
            "SELECT t.name, r.workload, r.status, r.error FROM runs r JOIN targets t "
            "ON t.id = r.target_id"
        )
    }
    # The small disk fills during the load: pgbench -i fails with its own words kept...
    status, error = runs[("full", "pgbench-init")]
    assert status == "failed" and "No space left on device" in error
    # ...and the benchmark after it is not run on half-loaded tables.
    assert runs[("full", "pgbench")] == ("failed", "not run: pgbench-init failed on this target")
    assert runs[("full", "fsync")][0] == "ok"
    assert all(runs[("good", w)][0] == "ok" for w in ("fsync", "pgbench-init", "pgbench"))
    # pgbench itself only sees the connection drop; the cause comes from the server log
    assert "server log:" in error
    (stdout_path,) = db.execute(
        "SELECT a.path FROM artifacts a JOIN runs r ON r.id = a.run_id JOIN targets t "
        "ON t.id = r.target_id WHERE t.name = 'full' AND r.workload = 'pgbench-init'"
    ).fetchone()
    assert "# exit code: 1" in (results / stdout_path).read_text()
    assert "No space left on device" in (results / "artifacts/full/postgres.log").read_text()
    assert "failed" in run.stdout
    report = json.loads(cli("export", str(results)).stdout)
    assert {r["status"] for r in report["runs"]} == {"ok", "failed"}
    assert leftovers() == []
    assert ledgers(state_dir) == []


def test_a_campaign_whose_only_target_fails_exits_1_with_status_failed(tmp_path, state_dir):
    plan = tmp_path / "one.toml"
    plan.write_text(
        PLAN.split("[[targets]]")[0] + '[[targets]]\nname = "refused"\n'
        'fs = "ext4"\nsize = "300M"\nmount = "dax=always"\n'
        '[[workloads]]\ntype = "fsync"\nseconds = 1\n'
    )
    run = cli("run", str(plan), "--results", str(tmp_path / "r"), check=False)
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "campaign failed: target 'refused' failed" in run.stderr
    assert "Traceback" not in run.stderr
    db = sqlite3.connect(tmp_path / "r" / "results.db")
    assert db.execute("SELECT status FROM campaign").fetchone() == ("failed",)
    assert leftovers() == [] and ledgers(state_dir) == []


def test_what_cannot_work_is_refused_before_anything_is_made(tmp_path, state_dir):
    """An image too small for its filesystem or a missing directory: exit 2 at once,
    nothing created, no state file."""
    for target, words in [
        (
            'fs = "xfs"\nsize = "100M"',
            "target 'small': xfs needs an image of at least 300 MB, the plan gives 100 MB",
        ),
        (
            f'dir = "{tmp_path}/nowhere"',
            f"target 'small': directory {tmp_path}/nowhere does not exist",
        ),
    ]:
        plan = tmp_path / "small.toml"
        plan.write_text(
            f'name = "s"\n[[targets]]\nname = "small"\n{target}\n[[workloads]]\ntype = "fsync"\n'
        )
        run = cli("run", str(plan), "--results", str(tmp_path / "r"), check=False)
        assert run.returncode == 2 and words in run.stderr, run.stderr
        assert len(run.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "r").exists() and ledgers(state_dir) == []
