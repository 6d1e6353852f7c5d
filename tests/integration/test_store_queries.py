"""The PostgreSQL store as a DBA queries it, on a real server and a real campaign with a
settling round: the docs' three queries run as written, the views' tidy rows agree
with the tool's own medians and verdicts, every table, view and column has a comment,
and a store an older pgfsbench wrote gets the views and keeps its campaigns."""

from __future__ import annotations

import datetime
import re
import uuid
from pathlib import Path

import psycopg
import pytest

from pgfsbench.store.read import load_campaign
from pgfsbench.store.version import PG_LAYOUT
from tests.integration.conftest import cli, export
from tests.integration.plans import LOAD_ONCE, SMALL_BUFFERS, ext4, loop, pgbench, plan_toml, rounds
from tests.integration.test_store_pg import copy_results, sql

DOCS = Path(__file__).resolve().parents[2] / "docs" / "results.md"
VIEWS = ("campaigns", "measurements", "counted_measurements", "medians", "verdicts")

# Two targets, three counted rounds after a settling one (reused targets).
PLAN = plan_toml(
    "queried",
    [ext4("ext4"), loop("xfs", "xfs")],
    [LOAD_ONCE, pgbench(clients=1, duration=2)],
    repetitions=rounds(3, order="round-robin"),
    settings=SMALL_BUFFERS,
)


def docs_queries() -> list[str]:
    """The SQL blocks of the docs' "Querying the store", as written there."""
    section = DOCS.read_text().split("## Querying the store", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sql\n(.*?)```", section, re.S)


@pytest.fixture(scope="module")
def stored(tmp_path_factory, state_dir, store_url):
    """(real results, a copy whose xfs made a quarter of its TPC-B tps, their UUIDs):
    both imported. The copy is a campaign decided worse for certain."""
    directory = tmp_path_factory.mktemp("store-queries")
    (directory / "plan.toml").write_text(PLAN)
    results = directory / "r"
    cli(
        "run",
        str(directory / "plan.toml"),
        "--results",
        str(results),
        "--store",
        store_url,
        "--wait",
    )  # another campaign on this machine: after it
    slower = copy_results(
        results,
        directory / "slower",
        f"UPDATE campaign SET uuid = '{uuid.uuid4()}', id = id || '-slower', started = started + 1",
        "UPDATE metrics SET value = value / 4 WHERE name = 'pgbench.tps' AND run_id IN "
        "(SELECT r.id FROM runs r JOIN targets t ON t.id = r.target_id WHERE t.name = 'xfs')",
    )
    assert "imported" in cli("import", str(slower), "--store", store_url).stdout
    return results, slower, load_campaign(results).uuid, load_campaign(slower).uuid


def test_the_readme_shows_three_queries():
    assert len(docs_queries()) == 3


def test_medians_per_filesystem_are_the_reports(stored, store_url):
    results, _, real, _ = stored
    medians_query = docs_queries()[0]
    rows = [r for r in sql(store_url, medians_query) if r[0] == load_campaign(results).id]
    doc = export(results)
    [tps] = [r for r in doc["comparison"]["rows"] if r["metric"] == "pgbench.tps"]
    assert {(fs, target, label) for _, _, fs, target, label, _, _ in rows} == {
        ("ext4", "ext4", tps["label"]),
        ("xfs", "xfs", tps["label"]),
    }
    for _, _, _, target, _, median, n in rows:
        cell = tps["cells"][target]
        assert n == cell["n"] == 3 and median == pytest.approx(cell["median"], rel=1e-12)


def test_a_metrics_history_on_one_host(stored, store_url):
    results, slower, _, _ = stored
    host = load_campaign(results).host["hostname"]
    history = docs_queries()[1].replace("'db-old'", psycopg.sql.quote(host))
    rows = sql(store_url, history)
    xfs = [(r[1], r[4]) for r in rows if r[2] == "xfs"]
    assert [c for c, _ in xfs] == [load_campaign(results).id, load_campaign(slower).id]
    assert xfs[1][1] == pytest.approx(xfs[0][1] / 4)
    assert all(isinstance(r[0], datetime.datetime) and r[0].tzinfo for r in rows)
    assert sql(store_url, history.replace(psycopg.sql.quote(host), "'no-such-host'")) == []


def test_every_campaign_where_a_target_was_decided_worse(stored, store_url):
    _, slower, real, slower_uuid = stored
    rows = sql(store_url, docs_queries()[2])
    worse = {(r[0], r[3], r[7]) for r in rows}
    assert (load_campaign(slower).id, "xfs", "pgbench.tps") in worse
    assert all(r[3] == "xfs" and r[4] == "ext4" for r in rows)
    # Each stored decision is the report's: the export's verdict of that cell.
    for campaign_uuid, directory in ((real, stored[0]), (slower_uuid, slower)):
        doc = export(directory)
        report = {
            (r["workload"], r["label"], r["metric"], t): c["vs_baseline"]["verdict"]
            for r in doc["comparison"]["rows"]
            for t, c in r["cells"].items()
            if "vs_baseline" in c
        }
        decided = sql(
            store_url,
            "SELECT workload, label, metric, target, verdict FROM "
            "decisions WHERE campaign_uuid = %s",
            campaign_uuid,
        )
        assert {k[:4]: k[4] for k in decided} == {k: v or "na" for k, v in report.items()}


def test_settling_and_failed_runs_are_marked_and_left_out(stored, store_url):
    _, _, real, _ = stored
    rows = sql(
        store_url,
        "SELECT round, settling, run_status, counted, direction, "
        "pg_typeof(run_started)::text, value FROM measurements WHERE campaign_uuid = %s "
        "AND workload = 'pgbench'",
        real,
    )
    assert {r[0] for r in rows} == {0, 1, 2, 3}
    # Counted: not settling, the run ok, and a value (a figure the run could not
    # measure is NULL, not counted, as the statistics leave it out).
    assert all(
        r[1] == (r[0] == 0) and r[3] == (r[0] != 0 and r[2] == "ok" and r[6] is not None)
        for r in rows
    )
    assert any(r[3] for r in rows) and any(r[1] and not r[3] for r in rows)
    assert {r[4] for r in rows} <= {"higher", "lower", "none"} and {r[5] for r in rows} == {
        "timestamp with time zone"
    }
    assert sql(
        store_url, "SELECT count(*) FROM counted_measurements WHERE round = 0 OR run_status <> 'ok'"
    ) == [(0,)]


def test_every_table_view_and_column_has_a_comment(stored, store_url):
    missing = sql(
        store_url,
        """
        SELECT c.relname, a.attname FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
        LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE c.relkind IN ('r', 'v')
          AND (obj_description(c.oid, 'pg_class') IS NULL
               OR (a.attname IS NOT NULL AND col_description(c.oid, a.attnum) IS NULL))""",
    )
    assert missing == []
    assert set(VIEWS) <= {
        r
        for (r,) in sql(
            store_url,
            "SELECT table_name FROM information_schema.views WHERE table_schema = current_schema()",
        )
    }


def test_a_store_an_older_pgfsbench_wrote_gets_the_views(stored, store_url):
    results = stored[0]
    with psycopg.connect(store_url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE older")
    older = store_url.replace("/results?", "/older?")
    cli("import", str(results), "--store", older)
    # Back to what the layer-less pgfsbench made: its tables, version 2, no layout.
    with psycopg.connect(older, autocommit=True) as conn:
        conn.execute("DROP VIEW " + ", ".join(VIEWS))
        conn.execute("DROP TABLE decisions")
        conn.execute("ALTER TABLE campaign DROP COLUMN decided_at, DROP COLUMN decided_by")
        conn.execute("ALTER TABLE pgfsbench_schema DROP COLUMN layout")
    listed = cli("list", "--store", older).stdout  # reading it adds the layer
    assert load_campaign(results).id in listed
    assert sql(older, "SELECT version, layout FROM pgfsbench_schema") == [(2, PG_LAYOUT)]
    assert sql(older, "SELECT count(*) FROM medians") != [(0,)]
    assert sql(older, "SELECT decided_at FROM campaigns") == [(None,)]
    # Importing it again changes none of its rows, and keeps its decisions now.
    assert "already imported, unchanged" in cli("import", str(results), "--store", older).stdout
    assert sql(older, "SELECT count(*) > 0, bool_and(decided_by IS NOT NULL) FROM verdicts") == [
        (True, True)
    ]
