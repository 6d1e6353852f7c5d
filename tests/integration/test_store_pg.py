"""The PostgreSQL results store, on a real server: a real campaign stored by
``run --store``, imported again (no duplicates), listed from both stores, a
directory from before schema versioning, a failing import, an unreachable store,
and a store lost in the middle of a campaign."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import psycopg
import pytest

from pgfsbench.store.read import load_campaign
from pgfsbench.store.version import legacy_uuid
from tests.integration.conftest import CLI, cli, ledgers, leftovers, wait_for_run
from tests.integration.pg_server import pg_server
from tests.integration.plans import LOAD, SMALL_BUFFERS, ext4, loop, pgbench, plan_toml

V1_SCHEMA = Path(__file__).parent.parent / "fixtures" / "store" / "results_schema_v1.sql"
UNREACHABLE = "postgresql://postgres@/results?host=/nonexistent-pgfsbench-store&port=1"
TINY = plan_toml(
    "tiny",
    [ext4("ext4", "300M")],
    [{"type": "fsync", "seconds": 1}],
    description="one target, fsync only: long enough to lose the store while it runs",
)


# The smoke plan's shape (ext4, xfs, btrfs; a load and TPC-B) without its 48 s of
# pg_test_fsync: a store holds every kind of row alike (the lost-store test runs fsync).
STORED = plan_toml(
    "stored",
    [ext4("ext4"), loop("xfs", "xfs"), loop("btrfs", "btrfs")],
    [LOAD, pgbench(clients=2, duration=3)],
    settings=SMALL_BUFFERS,
)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, state_dir, store_url):
    """A small campaign run once, stored into the store as it ends."""
    directory = tmp_path_factory.mktemp("store-smoke")
    (directory / "stored.toml").write_text(STORED)
    results = directory / "r"
    run = cli(
        "run", str(directory / "stored.toml"), "--results", str(results), "--store", store_url
    )
    return results, run


def sql(url: str, query: str, *args) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(query, args).fetchall()


def as_stored(campaign) -> dict:
    """The campaign's fields as the store gives them back: its times to the microsecond
    (timestamptz's resolution), all else as recorded."""

    def microsecond(t: float | None) -> float | None:
        return None if t is None else datetime.datetime.fromtimestamp(t, datetime.UTC).timestamp()

    fields = dataclasses.asdict(campaign)
    for record in (fields, *fields["runs"]):
        record["started"], record["ended"] = map(microsecond, (record["started"], record["ended"]))
    return fields


def listed(*args: str) -> list[dict]:
    return json.loads(cli("list", *args, "--format", "json").stdout)


def copy_results(results: Path, dest: Path, *statements: str) -> Path:
    """A copy of a results directory's results.db, changed by ``statements``."""
    dest.mkdir(parents=True)
    shutil.copyfile(results / "results.db", dest / "results.db")
    db = sqlite3.connect(dest / "results.db")
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()
    return dest


def test_run_stores_its_campaign_and_both_stores_list_it_alike(smoke, store_url):
    results, run = smoke
    campaign = load_campaign(results)
    assert "stored in the results store" in run.stdout and campaign.uuid in run.stdout
    [from_dir] = listed(str(results))
    from_store = [c for c in listed("--store", store_url) if c["uuid"] == campaign.uuid]
    assert len(from_store) == 1
    assert from_dir["source"] == str(results) and from_store[0]["source"] == store_url
    # alike, but for the times the store keeps to the microsecond
    times = ("started", "ended", "duration_s")
    assert {k: from_store[0][k] for k in times} == pytest.approx(
        {k: from_dir[k] for k in times}, abs=1e-6
    )
    assert {**from_dir, "source": None} == {**from_store[0], "source": None} | {
        k: from_dir[k] for k in times
    }
    assert from_dir["status"] == "ok" and from_dir["plan"] == "stored"
    assert from_dir["host"]["machine_id"] == Path("/etc/machine-id").read_text().strip()
    assert set(from_dir["host"]["devices"]) == {"ext4", "xfs", "btrfs"}
    assert [v["measurement"] for v in from_dir["verdicts"]] == ["pgbench-init", "pgbench clients=2"]
    # The host is a column of the store too (history by host comes next).
    assert sql(
        store_url, "SELECT hostname, machine_id FROM campaign WHERE uuid = %s", campaign.uuid
    ) == [(campaign.host["hostname"], campaign.host["machine_id"])]
    # Every row made it, and reads back the same.
    stored = load_campaign(store_url, campaign.uuid)
    assert dataclasses.asdict(stored) == as_stored(campaign)
    db = sqlite3.connect(results / "results.db")
    for table in ("targets", "runs", "metrics", "series", "artifacts"):
        [(here,)] = db.execute(f"SELECT count(*) FROM {table}").fetchall()
        [(there,)] = sql(
            store_url, f"SELECT count(*) FROM {table} WHERE campaign_uuid = %s", campaign.uuid
        )
        assert here == there > 0, table
    db.close()
    # The text list, from both, with the same verdicts.
    text = cli("list", str(results), "--store", store_url).stdout
    flat = " ".join(text.split())  # list wraps its lines at the terminal's width
    assert text.count(campaign.id) == 2 and "(from the store)" in flat


def test_importing_again_changes_nothing(smoke, store_url):
    results, _ = smoke
    campaign_uuid = load_campaign(results).uuid
    before = sql(
        store_url, "SELECT imported_at, source_digest FROM campaign WHERE uuid = %s", campaign_uuid
    )
    again = cli("import", str(results), "--store", store_url)
    assert "already imported, unchanged" in again.stdout
    assert (
        sql(
            store_url,
            "SELECT imported_at, source_digest FROM campaign WHERE uuid = %s",
            campaign_uuid,
        )
        == before
    )
    assert sql(store_url, "SELECT count(*) FROM runs WHERE campaign_uuid = %s", campaign_uuid) == [
        (len(load_campaign(results).runs),)
    ]


def test_a_changed_directory_replaces_what_the_store_held(smoke, store_url, tmp_path):
    results, _ = smoke
    campaign_uuid = load_campaign(results).uuid
    changed = copy_results(
        results,
        tmp_path / "changed",
        "UPDATE campaign SET status = 'killed'",
        "DELETE FROM series WHERE run_id = (SELECT max(id) FROM runs)",
    )
    out = cli("import", str(changed), "--store", store_url).stdout
    assert "updated: the directory changed since it was imported" in out
    assert f"the store held: ok, {len(load_campaign(results).runs)} runs, from {results}" in out
    assert sql(
        store_url, "SELECT status, results_dir FROM campaign WHERE uuid = %s", campaign_uuid
    ) == [("killed", str(changed))]
    assert dataclasses.asdict(load_campaign(store_url, campaign_uuid)) == {
        **as_stored(load_campaign(changed)),
        "results_dir": changed,
    }
    # And back: the store follows the directory, whole, never a mix of the two.
    assert "updated" in cli("import", str(results), "--store", store_url).stdout
    assert dataclasses.asdict(load_campaign(store_url, campaign_uuid)) == as_stored(
        load_campaign(results)
    )


def test_a_directory_from_before_schema_versions_imports(smoke, store_url, tmp_path):
    """A results.db with the schema the code before versioning made (kept as SQL)."""
    results, _ = smoke
    old = tmp_path / "old"
    old.mkdir()
    db = sqlite3.connect(old / "results.db")
    db.executescript(V1_SCHEMA.read_text())
    db.execute("ATTACH ? AS new", (str(results / "results.db"),))
    db.execute(
        "INSERT INTO campaign SELECT id, plan_name, plan_json, host_json, "
        "pgfsbench_version, started, ended, status, schedule_json FROM new.campaign"
    )
    for table in ("targets", "runs", "metrics", "series", "artifacts"):
        db.execute(f"INSERT INTO {table} SELECT * FROM new.{table} ORDER BY rowid")
    db.commit()
    db.close()
    legacy = load_campaign(old)
    row = sqlite3.connect(old / "results.db").execute("SELECT id, started FROM campaign")
    assert legacy.uuid == legacy_uuid(*row.fetchone()) and legacy.schema_version == 1
    assert "imported" in cli("import", str(old), "--store", store_url).stdout
    assert "unchanged" in cli("import", str(old), "--store", store_url).stdout
    [entry] = [c for c in listed("--store", store_url) if c["uuid"] == legacy.uuid]
    assert entry["schema_version"] == 1 and entry["status"] == "ok"
    assert dataclasses.asdict(load_campaign(store_url, legacy.uuid)) == as_stored(legacy)
    assert sqlite3.connect(old / "results.db").execute("PRAGMA user_version").fetchone() == (
        0,
    )  # importing reads, never migrates


def test_a_failing_import_keeps_what_was_committed_before_it(smoke, store_url, tmp_path):
    results, _ = smoke
    uuids = [str(uuid.uuid4()) for _ in range(3)]
    good, bad, last = (
        copy_results(results, tmp_path / "good", f"UPDATE campaign SET uuid = '{uuids[0]}'"),
        # A run whose target is missing: the store refuses it part way through the copy.
        copy_results(
            results,
            tmp_path / "bad",
            f"UPDATE campaign SET uuid = '{uuids[1]}'",
            "UPDATE runs SET target_id = 99 WHERE id = (SELECT max(id) FROM runs)",
        ),
        copy_results(results, tmp_path / "last", f"UPDATE campaign SET uuid = '{uuids[2]}'"),
    )
    run = cli("import", str(good), str(bad), str(last), "--store", store_url, check=False)
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert f"{good}: imported" in run.stdout
    assert f"importing {bad} failed" in run.stderr and "Traceback" not in run.stderr
    assert "the 1 campaign(s) imported before it are kept" in run.stderr
    assert f"not imported: {bad}, {last}" in run.stderr
    held = {u for (u,) in sql(store_url, "SELECT uuid::text FROM campaign")}
    assert uuids[0] in held and not {uuids[1], uuids[2]} & held
    assert sql(store_url, "SELECT count(*) FROM runs WHERE campaign_uuid = %s", uuids[1]) == [
        (0,)
    ]  # nothing of the failed one: its transaction rolled back whole


def test_an_unreachable_store_is_one_clear_message(smoke, tmp_path, state_dir):
    results, _ = smoke
    for args in (
        ["import", str(results), "--store", UNREACHABLE],
        ["list", "--store", UNREACHABLE],
        ["run", "smoke", "--results", str(tmp_path / "never"), "--store", UNREACHABLE],
        ["import", str(results), "--store", "mysql://u:pw@h/db"],
        ["list", "--store", "host=/tmp bogus=1"],  # libpq: invalid connection option
        ["list", "--store", "service=pgfsbench-no-such-service"],
    ):
        run = cli(*args, check=False)
        assert run.returncode == 2, (args, run.stderr)
        assert "Traceback" not in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert (
            "cannot reach the results store" in run.stderr
            or "is not a PostgreSQL connection string" in run.stderr
        )
    assert not (tmp_path / "never").exists()  # refused before anything ran
    env = {**os.environ, "PGFSBENCH_STORE": UNREACHABLE}
    for args in (["list"], ["run", "smoke", "--results", str(tmp_path / "never")]):
        run = cli(*args, check=False, env=env)
        assert run.returncode == 2 and "cannot reach the results store" in run.stderr
    assert not (tmp_path / "never").exists()


def test_every_connection_string_form_libpq_takes_names_the_store(smoke, store_url, tmp_path):
    """Keyword/value words, a service, libpq's environment and a postgres:// URL name the
    store as the postgresql:// URL does, for writing and for reading."""
    results, _ = smoke
    campaign = load_campaign(results)
    p = psycopg.conninfo.conninfo_to_dict(store_url)  # host (the socket), port, user, dbname
    words = f"host={p['host']} port={p['port']} user={p['user']} dbname={p['dbname']}"
    services = tmp_path / "pg_service.conf"
    services.write_text("[bench]\n" + "\n".join(words.split()) + "\n")
    imported = cli("import", str(results), "--store", words)
    assert "already imported, unchanged" in imported.stdout
    env = {**os.environ, "PGSERVICEFILE": str(services)}
    [entry] = [
        c
        for c in json.loads(
            cli("list", "--store", "service=bench", "--format", "json", env=env).stdout
        )
        if c["uuid"] == campaign.uuid
    ]
    assert entry["source"] == "service=bench"
    env = {
        **os.environ,
        "PGFSBENCH_STORE": f"dbname={p['dbname']}",  # the rest from libpq's environment
        "PGHOST": p["host"],
        "PGPORT": p["port"],
        "PGUSER": p["user"],
    }
    assert "already imported, unchanged" in cli("import", str(results), env=env).stdout
    short = store_url.replace("postgresql://", "postgres://")
    assert load_campaign(short, campaign.uuid).uuid == campaign.uuid


def test_a_store_lost_mid_campaign_costs_no_result(store_url, tmp_path, state_dir):
    plan = tmp_path / "tiny.toml"
    plan.write_text(TINY)
    results = tmp_path / "r"
    with contextlib.ExitStack() as stack:
        lost = stack.enter_context(pg_server())
        run = subprocess.Popen(
            [*CLI, "run", str(plan), "--results", str(results), "--store", lost],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for_run(run, results, "workload = 'fsync'", 120)
    # The store's server is stopped and removed now; the campaign goes on.
    out, err = run.communicate(timeout=300)
    assert run.returncode == 1, (out, err)
    assert "the campaign is not in the results store" in err
    assert f"'pgfsbench import {results} --store URL' adds them later" in err
    campaign = load_campaign(results)
    assert campaign.status == "ok" and [r.status for r in campaign.runs] == ["ok"]
    # Later, into a store that is there:
    assert f"{results}: imported" in cli("import", str(results), "--store", store_url).stdout
    assert load_campaign(store_url, campaign.id).uuid == campaign.uuid
    # Cleaned up as always (other campaigns may run on this machine: only ours counts).
    assert ledgers(state_dir) == []
    assert [x for x in leftovers() if str(results) in x] == []
