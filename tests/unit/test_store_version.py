"""The results schema's version: new files carry it, older files still load (and migrate
when written), newer files are refused with one clear message."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from pgfsbench.errors import UserError
from pgfsbench.metrics import Metric, Series, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.store.pg import _epoch, _stored
from pgfsbench.store.read import load_campaign, read_rows
from pgfsbench.store.url import check_store_url, is_store_url, shown
from pgfsbench.store.version import SCHEMA_VERSION, legacy_uuid

# The schema a results.db from before versioning has: taken from a real smoke run.
V1_SCHEMA = Path(__file__).parent.parent / "fixtures" / "store" / "results_schema_v1.sql"


def legacy_results(directory: Path, schema: str | None = None) -> Path:
    """A results directory as pgfsbench wrote it before schema versioning: one campaign,
    one target with a provisioning artifact, one run with a metric, a series point and
    a tool output."""
    directory.mkdir(parents=True)
    db = sqlite3.connect(directory / "results.db")
    db.executescript(schema or V1_SCHEMA.read_text())
    columns = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
    db.execute(
        "INSERT INTO campaign (id, plan_name, plan_json, host_json, pgfsbench_version, "
        "started, ended, status) VALUES ('20250101-120000-abcdef', 'smoke', ?, ?, "
        "'0.1.0', 1735732800.5, 1735732890.25, 'ok')",
        (json.dumps({"name": "smoke"}), json.dumps({"hostname": "old-host", "kernel": "6.1.0"})),
    )
    db.execute(
        "INSERT INTO targets VALUES (1, 'ext4', 0, 'loop', 'ext4', '{}', 'ok', NULL, ?)",
        (json.dumps({"backing_device": {"device": "/dev/sda", "model": "DISK", "serial": "S1"}}),),
    )
    if "label" in columns:
        db.execute(
            "INSERT INTO runs (id, target_id, workload, label, repetition, params_json, "
            "status, started, ended) VALUES (1, 1, 'fsync', '', 1, '{}', 'ok', 1, 2)"
        )
    else:
        db.execute(
            "INSERT INTO runs (id, target_id, workload, params_json, status, started, "
            "ended) VALUES (1, 1, 'fsync', '{}', 'ok', 1, 2)"
        )
    db.execute("INSERT INTO metrics VALUES (1, 'fsync.x', 123.5, 'ops/s', 1, '')")
    db.execute("INSERT INTO series VALUES (1, 'cpu.busy', '%', 0.5, 42.0)")
    db.execute(
        "INSERT INTO artifacts VALUES (1, 1, NULL, 'command', "
        "'artifacts/ext4/provision-01-mkfs.txt', '[\"mkfs.ext4\"]', 0)"
    )
    db.execute(
        "INSERT INTO artifacts VALUES (2, 1, 1, 'command', "
        "'artifacts/ext4/01-fsync/pg_test_fsync.txt', '[\"pg_test_fsync\"]', 0)"
    )
    db.commit()
    db.close()
    return directory


def user_version(results: Path) -> int:
    db = sqlite3.connect(results / "results.db")
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


def test_a_new_campaign_records_its_uuid_and_schema_version(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    store.start_campaign("c1", "p", {"name": "p"}, {"hostname": "h"}, "0")
    store.close()
    assert user_version(tmp_path / "r") == SCHEMA_VERSION
    campaign = load_campaign(tmp_path / "r")
    assert uuid.UUID(campaign.uuid).version == 4
    assert campaign.schema_version == SCHEMA_VERSION
    assert load_campaign(tmp_path / "r").uuid == campaign.uuid  # recorded, not made up


def test_two_campaigns_never_share_a_uuid(tmp_path: Path) -> None:
    uuids = set()
    for n in range(2):
        store = Store.create(tmp_path / str(n))
        store.start_campaign("same-id", "p", {}, {}, "0")
        store.close()
        uuids.add(load_campaign(tmp_path / str(n)).uuid)
    assert len(uuids) == 2


def test_a_results_directory_from_before_versioning_still_loads(tmp_path: Path) -> None:
    results = legacy_results(tmp_path / "old")
    assert user_version(results) == 0
    campaign = load_campaign(results)
    assert campaign.schema_version == 1
    # Its UUID is derived from what identifies it: the same on every read.
    assert campaign.uuid == legacy_uuid("20250101-120000-abcdef", 1735732800.5)
    assert load_campaign(results).uuid == campaign.uuid
    [run] = campaign.runs
    assert [(m.name, m.value) for m in run.metrics] == [("fsync.x", 123.5)]
    assert run.series["cpu.busy"].points == [(0.5, 42.0)]
    assert [a.path for a in run.artifacts] == ["artifacts/ext4/01-fsync/pg_test_fsync.txt"]
    assert [a.path for a in campaign.target_artifacts["ext4"]] == [
        "artifacts/ext4/provision-01-mkfs.txt"
    ]
    assert user_version(results) == 0  # reading changes nothing


def test_the_oldest_files_without_label_repetition_or_schedule_load(tmp_path: Path) -> None:
    oldest = "\n".join(
        line
        for line in V1_SCHEMA.read_text().splitlines()
        if not line.lstrip().startswith(("label ", "repetition ", "schedule_json "))
    )
    oldest = oldest.replace(
        "status TEXT NOT NULL,  -- running, ok, partial, failed, interrupted, killed",
        "status TEXT NOT NULL",
    )
    results = legacy_results(tmp_path / "oldest", oldest)
    db = sqlite3.connect(results / "results.db")
    assert "repetition" not in {r[1] for r in db.execute("PRAGMA table_info(runs)")}
    assert "schedule_json" not in {r[1] for r in db.execute("PRAGMA table_info(campaign)")}
    db.close()
    campaign = load_campaign(results)
    assert [(r.label, r.repetition) for r in campaign.runs] == [("", 1)]
    assert campaign.schedule == {}


def test_opening_an_older_file_for_writing_migrates_it(tmp_path: Path) -> None:
    results = legacy_results(tmp_path / "old")
    before = read_rows(results)
    store = Store.open(results, writable=True)  # as 'cleanup' does
    store.close()
    assert user_version(results) == SCHEMA_VERSION
    after = read_rows(results)
    assert after.campaign["uuid"] == before.campaign["uuid"]  # the same campaign
    assert after.campaign["schema_version"] == 1  # recorded by a version-1 pgfsbench
    assert after.digest() == before.digest()  # nothing else changed
    store = Store.open(results, writable=True)  # again: nothing to do
    store.close()
    assert read_rows(results).digest() == before.digest()


def test_a_newer_file_is_refused_with_one_clear_message(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
    store.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    store.close()
    for writable in (False, True):
        with pytest.raises(UserError, match="newer than this pgfsbench reads"):
            Store.open(tmp_path / "r", writable=writable)
    for args in (["report", str(tmp_path / "r")], ["list", str(tmp_path / "r")]):
        result = subprocess.run(
            [sys.executable, "-m", "pgfsbench", *args], capture_output=True, text=True
        )
        assert result.returncode == 2, result.stderr
        assert f"schema version {SCHEMA_VERSION + 1}" in result.stderr
        assert "upgrade pgfsbench" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_the_digest_tells_a_changed_campaign(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
    target = store.add_target("a", 0, "loop", "ext4", {})
    run = store.start_run(target, "fsync", {})
    store.add_result(
        run,
        target,
        WorkloadResult([Metric("fsync.x", 1.0, "ops/s", True)], [Series("s", "u", [(0.0, 1.0)])]),
    )
    first = read_rows(tmp_path / "r").digest()
    assert read_rows(tmp_path / "r").digest() == first
    store.end_campaign("ok")
    store.close()
    assert read_rows(tmp_path / "r").digest() != first


def test_every_connection_string_libpq_takes_names_a_store() -> None:
    for good in (
        "postgresql://u@h/db",
        "postgres://h/db",
        "postgresql://u@/results?host=/tmp/sock&port=5433",
        "host=db.example dbname=pgfsbench user=bench",
        "host = db.example  dbname = 'pg fs bench'",
        "service=bench",
        "dbname=pgfsbench",  # the rest from PGHOST, PGUSER...
    ):
        assert check_store_url(good) == good and is_store_url(good), good
    # What libpq refuses, with libpq's own reason.
    for bad, reason in (
        ("/tmp/results", 'missing "=" after "/tmp/results"'),
        ("mysql://h/db", 'missing "="'),
        ("h:5432", 'missing "="'),
        ("host=h bogus=1", 'invalid connection option "bogus"'),
        ("postgresql://h/db?bogus=1", 'invalid URI query parameter: "bogus"'),
        ("host='unterminated", "unterminated quoted string"),
    ):
        with pytest.raises(UserError, match="not a PostgreSQL connection string") as refused:
            check_store_url(bad)
        assert reason in str(refused.value) and "service=NAME" in str(refused.value), bad
        assert not is_store_url(bad) or bad.startswith("postgresql://"), bad
    with pytest.raises(UserError, match="--store is empty"):
        check_store_url(" ")
    # A path is never taken for a store, nor a store for a path.
    assert not is_store_url("results/quick") and not is_store_url("/srv/a=b")


def test_a_password_is_never_shown() -> None:
    assert shown("postgresql://u:s3cret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert shown("postgresql://u:db@h/db") == "postgresql://u:***@h/db"
    assert shown("postgresql://u@h/db?password=s3cret&sslmode=require") == (
        "postgresql://u@h/db?password=***&sslmode=require"
    )
    assert shown("host=h password=s3cret dbname=x") == "host=h password=*** dbname=x"
    assert shown("host=h password = 'it\\'s s3cret' dbname=x") == "host=h password = *** dbname=x"
    assert shown("service=bench") == "service=bench"
    for bad in (
        "mysql://u:s3cret@h/db",
        "host=h bogus=1 password=s3cret",
        "postgresql://u:s3cret@[h/db",
    ):
        with pytest.raises(UserError) as refused:
            check_store_url(bad)
        assert "s3cret" not in str(refused.value), refused.value


def test_the_store_keeps_times_as_timestamptz_and_json_jsonb_takes() -> None:
    """What the store writes for a results.db value, and reads back: times to the
    microsecond, JSON text as recorded unless jsonb refuses part of it."""
    started = 1764226557.3990123
    stored = _stored("started", started)
    assert stored.tzinfo is not None and stored.microsecond == 399012
    assert _epoch(stored) == 1764226557.399012 and _epoch(started) == started
    assert _epoch(None) is None and _stored("ended", None) is None
    text = json.dumps({"b": 1, "a": [1.5, "x"]})
    assert _stored("plan_json", text) is text  # unchanged: jsonb takes it
    odd = json.dumps({"out": "a\0b", "ratio": float("nan"), "NaN": [float("inf")], "ok": "NaN"})
    assert json.loads(_stored("provenance_json", odd)) == {
        "out": "a\ufffdb",
        "ratio": None,
        "NaN": [None],
        "ok": "NaN",
    }


def test_a_folder_of_results_lists_what_it_can_read(tmp_path: Path) -> None:
    legacy_results(tmp_path / "all" / "old")
    newer = Store.create(tmp_path / "all" / "newer")
    newer.start_campaign("c2", "p", {"name": "p"}, {}, "0")
    newer.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    newer.close()
    result = subprocess.run(
        [sys.executable, "-m", "pgfsbench", "list", str(tmp_path / "all"), "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stderr  # listed, but not everything
    [listed] = json.loads(result.stdout)
    assert (listed["id"], listed["plan"], listed["status"]) == (
        "20250101-120000-abcdef",
        "smoke",
        "ok",
    )
    assert listed["host"]["hostname"] == "old-host" and listed["schema_version"] == 1
    assert listed["host"]["devices"] == {
        "ext4": {"device": "/dev/sda", "model": "DISK", "serial": "S1"}
    }
    assert "skipped:" in result.stderr and "newer than this pgfsbench" in result.stderr


def test_import_checks_every_directory_before_it_connects(tmp_path: Path) -> None:
    """A directory this version cannot read is refused before any store is touched (the
    store here does not even exist: the refusal names the directory, not the store)."""
    legacy_results(tmp_path / "old")
    newer = Store.create(tmp_path / "newer")
    newer.start_campaign("c2", "p", {"name": "p"}, {}, "0")
    newer.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    newer.close()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgfsbench",
            "import",
            str(tmp_path / "old"),
            str(tmp_path / "newer"),
            "--store",
            "postgresql://u@/x?host=/nonexistent&port=1",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2, result.stderr
    assert (
        "newer than this pgfsbench reads" in result.stderr
        and str(tmp_path / "newer") in result.stderr
    )
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_cleanup_ends_a_killed_campaign_of_an_older_version(tmp_path: Path) -> None:
    """'cleanup' opens the killed campaign's results for writing: an older file is
    migrated, then marked killed, and keeps its UUID."""
    results = legacy_results(tmp_path / "old")
    db = sqlite3.connect(results / "results.db")
    db.execute("UPDATE campaign SET status = 'running', ended = NULL")
    db.execute("UPDATE runs SET status = 'running', ended = NULL")
    db.commit()
    db.close()
    before = load_campaign(results).uuid
    store = Store.open(results, writable=True)
    assert store.end_if_killed() is True
    store.close()
    campaign = load_campaign(results)
    assert (campaign.status, campaign.uuid, campaign.schema_version) == ("killed", before, 1)
    assert [r.status for r in campaign.runs] == ["interrupted"]
