"""Other ways to run: a directory target (the non-root fallback) and a system PostgreSQL."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from pgfsbench.campaign import machine
from pgfsbench.campaign.events import Note
from pgfsbench.campaign.options import Options
from pgfsbench.campaign.run import Campaign
from pgfsbench.plan.load import parse_plan
from pgfsbench.postgres.binaries import find_binaries
from tests.integration.conftest import cli, export, ledgers, leftovers
from tests.integration.plans import LOAD, ext4, loop, pgbench, plan_toml

SMALL_WORKLOADS = [{"type": "fsync", "seconds": 1}, LOAD, pgbench(clients=1, duration=2)]
SMALL = plan_toml("small", [ext4("ext4")], SMALL_WORKLOADS)

PG15 = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture
def world_dir():
    """A results directory the PostgreSQL user can reach (pytest's tmp is 0700)."""
    path = Path(tempfile.mkdtemp(prefix="pgfsbench-test-", dir="/var/tmp"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path)


def test_without_loop_devices_it_falls_back_to_a_directory_target(
    world_dir, state_dir, monkeypatch
):
    # What a non-root user gets: no loop devices, so no filesystems to make.
    monkeypatch.setattr(machine, "can_use_loop_devices", lambda: False)
    said: list = []
    results = world_dir / "r"
    status = Campaign(
        parse_plan(SMALL, "small"), Options(results, find_binaries()), said.append
    ).run()
    assert status == "ok"
    assert any(
        isinstance(e, Note)
        and e.level == "warning"
        and "no filesystem comparison is possible" in e.text
        for e in said
    )
    db = sqlite3.connect(results / "results.db")
    assert db.execute("SELECT name, kind, fs, status FROM targets").fetchall() == [
        ("dir", "dir", "ext4", "ok")
    ]  # /var/tmp lives on this machine's ext4 root
    assert {s for (s,) in db.execute("SELECT status FROM runs")} == {"ok"}
    (tps,) = db.execute("SELECT value FROM metrics WHERE name = 'pgbench.tps'").fetchone()
    assert tps > 0
    assert not [p for p in results.iterdir() if p.name.startswith("pgfsbench-dir-")]
    assert leftovers() == [] and ledgers(state_dir) == []


@pytest.mark.skipif(
    not (PG15 / "postgres").exists(),
    reason="PostgreSQL 15 is not installed (make setup installs postgresql-15)",
)
def test_a_system_postgresql_with_pg_bin(tmp_path, state_dir):
    plan = tmp_path / "small.toml"
    # nobarrier and synchronous_commit=off: fast, and the report must say what they risk
    plan.write_text(
        plan_toml(
            "small",
            [ext4("ext4", mount="nobarrier")],
            SMALL_WORKLOADS,
            settings={"synchronous_commit": "off"},
        )
    )
    results = tmp_path / "r"
    cli("run", str(plan), "--results", str(results), "--pg-bin", str(PG15))
    db = sqlite3.connect(results / "results.db")
    (prov,) = db.execute("SELECT provenance_json FROM targets").fetchone()
    assert json.loads(prov)["postgres_version"].startswith("15.")
    (target,) = export(results)["targets"]
    assert "nobarrier" in target["effective_mount_options"]
    assert target["durability"]["level"] == "not crash-safe"
    assert any("synchronous_commit=off" in r for r in target["durability"]["reasons"])
    assert "is not crash-safe" in (results / "report.html").read_text()
    assert {s for (s,) in db.execute("SELECT status FROM runs")} == {"ok"}
    assert leftovers() == [] and ledgers(state_dir) == []


def test_a_filesystem_this_kernel_lacks_is_skipped_with_the_reason(tmp_path, state_dir):
    from pgfsbench.provision.filesystems import kernel_filesystems

    plan = tmp_path / "f2fs.toml"
    plan.write_text(plan_toml("f2fs", [loop("f2fs", "f2fs")], [LOAD]))
    results = tmp_path / "r"
    run = cli("run", str(plan), "--results", str(results), check=False)
    (target,) = export(results)["targets"]
    if "f2fs" in kernel_filesystems():  # a kernel with f2fs runs the untested recipe
        assert target["status"] in ("ok", "skipped"), target
    else:
        assert target["status"] == "skipped"
        assert "does not support f2fs" in target["reason"]
        assert "skipped" in run.stdout
    # a skipped target is not a clean campaign: a script sees it in the exit code
    assert run.returncode == (0 if target["status"] == "ok" else 1), run.stderr
    assert ledgers(state_dir) == []
