"""The PostgreSQL store as a DBA queries it, on a real server: the docs' queries run as
written on a store holding the docs' own campaign and print what the docs show (psql's
own output); on a real campaign with a settling round the views' tidy rows agree with
the tool's own medians and verdicts; at a few thousand campaigns EXPLAIN finds the
queries' rows through indexes; every table, view and column has a comment; and a store
an older pgfsbench wrote (json, epoch seconds) is brought to jsonb and timestamptz,
or read as it is by a user who may not change it.

``python -m tests.integration.test_store_queries`` (as root) rewrites the docs' expected
outputs from what the queries print now, on a throwaway server."""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import tempfile
import uuid
from pathlib import Path

import psycopg
import pytest

from pgfsbench.postgres.binaries import find_binaries
from pgfsbench.store.read import load_campaign
from pgfsbench.store.version import PG_LAYOUT, PG_SCHEMA_VERSION
from tests.integration.conftest import cli, export
from tests.integration.pg_server import pg_server
from tests.integration.plans import LOAD_ONCE, SMALL_BUFFERS, ext4, loop, pgbench, plan_toml, rounds
from tests.integration.test_store_pg import copy_results, sql
from tests.unit.demo_campaign import unpack_demo

DOCS = Path(__file__).resolve().parents[2] / "docs" / "results.md"
LAYOUT2_VIEWS = Path(__file__).parent.parent / "fixtures" / "store" / "views_pg_layout2.sql"
VIEWS = (
    "campaigns",
    "measurements",
    "counted_measurements",
    "medians",
    "verdicts",
    "target_provenance",
)
# Each documented query, then what it prints: a ```sql block, a blank line, a ```text one.
DOCUMENTED = re.compile(r"```sql\n(.*?)```\n\n```text\n(.*?)```\n", re.S)
SLOWER = 100  # the copy's xfs TPC-B tps: the real one's divided by this
CAMPAIGNS = 2000  # campaigns in the store EXPLAIN is run on (1M metrics rows)

# Two targets, three counted rounds after a settling one (reused targets).
PLAN = plan_toml(
    "queried",
    [ext4("ext4"), loop("xfs", "xfs")],
    [LOAD_ONCE, pgbench(clients=1, duration=2)],
    repetitions=rounds(3, order="round-robin"),
    settings=SMALL_BUFFERS,
)


def section() -> str:
    return DOCS.read_text().split("## Querying the store", 1)[1].split("\n## ", 1)[0]


def documented() -> list[tuple[str, str]]:
    """The docs' queries, as written there, each with the output they show for it."""
    return DOCUMENTED.findall(section())


def docs_queries() -> list[str]:
    return [query for query, _ in documented()]


def psql(url: str, query: str) -> str:
    """What psql prints for ``query``, as a DBA runs it (no psqlrc, TimeZone UTC)."""
    env = {**os.environ, "PGTZ": "UTC", "PGDATESTYLE": "ISO", "PGCLIENTENCODING": "UTF8"}
    done = subprocess.run(
        [find_binaries().tool("psql"), "-X", "-P", "pager=off", "-d", url, "-c", query],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    return "\n".join(line.rstrip() for line in done.stdout.strip("\n").splitlines())


def database(url: str, name: str) -> str:
    """A new database on the server of ``url``: its URL."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return url.replace("/results?", f"/{name}?")


def docs_campaign(url: str, parent: Path) -> None:
    """The campaign the docs show (``pgfsbench list results/quick``) imported into ``url``."""
    cli("import", str(unpack_demo(parent / "results" / "quick")), "--store", url)


@pytest.fixture(scope="module")
def stored(tmp_path_factory, state_dir, store_url):
    """(real results, a copy whose xfs made a hundredth of its TPC-B tps, their UUIDs):
    both imported. The copy is a campaign decided worse for certain, however noisy this
    machine was (a quarter was not, in three rounds on a loaded machine)."""
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
        f"UPDATE metrics SET value = value / {SLOWER} WHERE name = 'pgbench.tps' AND run_id IN "
        "(SELECT r.id FROM runs r JOIN targets t ON t.id = r.target_id WHERE t.name = 'xfs')",
    )
    assert "imported" in cli("import", str(slower), "--store", store_url).stdout
    return results, slower, load_campaign(results).uuid, load_campaign(slower).uuid


@pytest.fixture(scope="module")
def docs_store(store_url, tmp_path_factory):
    """A store holding the docs' campaign alone."""
    url = database(store_url, "docs")
    docs_campaign(url, tmp_path_factory.mktemp("docs-campaign"))
    return url


def test_the_docs_show_four_queries_each_with_its_output():
    assert len(documented()) == 4 == section().count("```sql")
    assert all(shown.strip() for _, shown in documented())


@pytest.mark.parametrize("n", range(4), ids=lambda n: f"query{n + 1}")
def test_a_documented_query_prints_what_the_docs_show(docs_store, n):
    query, shown = documented()[n]
    printed = psql(docs_store, query)
    assert "(0 rows)" not in printed
    assert printed == shown.rstrip("\n"), (
        f"query {n + 1} prints otherwise now; python -m tests.integration.test_store_queries "
        "rewrites the docs' outputs:\n" + printed
    )


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
    for _, _, _, target, _, value, n in rows:
        cell = tps["cells"][target]
        # the query rounds to 0.1 tps; the report's value is the geometric mean
        assert cell["centre_kind"] == "geometric mean"
        assert n == cell["n"] == 3 and float(value) == pytest.approx(cell["centre"], abs=0.05)


def test_a_metrics_history_on_one_host(stored, store_url):
    results, slower, _, _ = stored
    host = load_campaign(results).host["hostname"]
    assert "host = 'vm'" in docs_queries()[1]
    history = docs_queries()[1].replace("'vm'", psycopg.sql.quote(host))
    rows = sql(store_url, history)
    xfs = [(r[1], r[4]) for r in rows if r[2] == "xfs"]
    assert [c for c, _ in xfs] == [load_campaign(results).id, load_campaign(slower).id]
    assert float(xfs[1][1]) == pytest.approx(float(xfs[0][1]) / SLOWER, abs=0.051)
    assert all(isinstance(r[0], datetime.datetime) and r[0].tzinfo for r in rows)
    assert sql(store_url, history.replace(psycopg.sql.quote(host), "'no-such-host'")) == []


def test_every_campaign_where_a_target_was_decided_worse(stored, store_url):
    _, slower, real, slower_uuid = stored
    worse_query = docs_queries()[2].replace("'btrfs'", "'xfs'")
    assert worse_query != docs_queries()[2]
    rows = sql(store_url, worse_query)
    worse = {(r[0], r[2], r[6]) for r in rows}
    assert (load_campaign(slower).id, "xfs", "pgbench.tps") in worse
    assert all(r[2] == "xfs" and r[3] == "ext4" for r in rows)
    # headline metrics only: one per measurement at most
    assert len({(r[0], r[4], r[5]) for r in rows}) == len(rows)
    # Each stored decision is the report's: the export's finding of that cell.
    for campaign_uuid, directory in ((real, stored[0]), (slower_uuid, slower)):
        doc = export(directory)
        report = {
            (r["workload"], r["label"], r["metric"], t): c["vs_baseline"]["outcome"]
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


def test_the_fastest_targets_provenance_is_one_select(stored, store_url):
    """The provenance view's columns are what the campaign recorded for the target: the
    mkfs argv run, the mount options the kernel applied, the server's version and
    settings, the host."""
    results, _, real, _ = stored
    campaign = load_campaign(results)
    [row] = [r for r in sql(store_url, docs_queries()[3]) if r[0] == campaign.id]
    fastest = max(
        ("ext4", "xfs"),
        key=lambda t: sql(
            store_url,
            "SELECT geometric_mean FROM medians WHERE campaign_uuid = %s AND target = %s "
            "AND metric = 'pgbench.tps'",
            real,
            t,
        )[0][0],
    )
    [target] = [t for t in campaign.targets if t.name == fastest]
    p = target.provenance
    [mkfs] = [c["argv"] for c in p["commands"] if Path(c["argv"][0]).name.startswith("mkfs")]
    assert row[1:] == (
        fastest,
        " ".join(mkfs),
        ",".join(p["effective_mount_options"]),
        p["postgres_version"],
        p["postgres_settings"]["shared_buffers"],
    )
    [(argv, host, kernel, checksums, settings, io)] = sql(
        store_url,
        "SELECT mkfs_argv, host, kernel, data_checksums, postgres_settings, "
        "postgres_io_settings FROM target_provenance WHERE campaign_uuid = %s AND target = %s",
        real,
        fastest,
    )
    # the durability and I/O settings, defaults included, as the campaign recorded them
    assert io == p["postgres_io_settings"] and io["synchronous_commit"] == "on"
    assert argv == [mkfs] and host == campaign.host["hostname"]
    assert kernel == campaign.host["kernel"] and checksums == p["data_checksums"]
    assert settings == p["postgres_settings"] and p["postgres_settings"]["shared_buffers"] == "32MB"
    # jsonb: containment on the recorded provenance, as the docs say
    assert sql(
        store_url,
        "SELECT count(*) FROM targets WHERE campaign_uuid = %s AND provenance_json @> %s",
        real,
        '{"fs": "xfs", "mounted_fs_type": "xfs"}',
    ) == [(1,)]


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


def test_a_run_a_burst_touched_in_part_counts_its_headline_alone_as_trimmed(stored, store_url):
    """disturb.trimmed (layout 4): the run's headline counted times the marker's ratio,
    its other figures not counted; as the statistics count it (cells.collect)."""
    _, _, real, _ = stored
    [(run_id, tps)] = sql(
        store_url,
        "SELECT run_id, value FROM measurements WHERE campaign_uuid = %s AND counted "
        "AND metric = 'pgbench.tps' ORDER BY run_id LIMIT 1",
        real,
    )
    with psycopg.connect(store_url) as conn:
        conn.execute(
            "INSERT INTO metrics VALUES (%s, %s, 1000000, 'disturb.trimmed', 0.5, '×', NULL, "
            "'pgbench.tps')",
            (real, run_id),
        )
    try:
        rows = sql(
            store_url,
            "SELECT metric, value, counted FROM measurements WHERE campaign_uuid = %s "
            "AND run_id = %s",
            real,
            run_id,
        )
    finally:
        with psycopg.connect(store_url) as conn:
            conn.execute(
                "DELETE FROM metrics WHERE campaign_uuid = %s AND run_id = %s "
                "AND name = 'disturb.trimmed'",
                (real, run_id),
            )
    counted = {metric: value for metric, value, is_counted in rows if is_counted}
    assert counted == {"pgbench.tps": pytest.approx(tps * 0.5)}
    assert len(rows) > 10  # the run's other figures are there, not counted


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


def test_json_is_jsonb_and_times_are_timestamptz(stored, store_url):
    results, _, real, _ = stored
    types = dict(
        (f"{t}.{c}", d)
        for t, c, d in sql(
            store_url,
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema()",
        )
    )
    assert "json" not in types.values()
    assert {d for c, d in types.items() if c.endswith("_json")} == {"jsonb"}
    times = {c for c in types if re.search(r"\.(\w+_)?(started|ended)$|_at$", c)}
    assert {
        "campaign.started",
        "runs.ended",
        "campaigns.decided_at",
        "medians.campaign_started",
    } <= times
    assert {types[c] for c in times} == {"timestamp with time zone"}
    # To the microsecond: what the directory recorded, as the store holds it.
    campaign = load_campaign(results)
    [(started,)] = sql(store_url, "SELECT started FROM campaign WHERE uuid = %s", real)
    assert started == datetime.datetime.fromtimestamp(campaign.started, datetime.UTC)


def _layout2(url: str, layer: bool = True) -> None:
    """The store at ``url`` turned back into what pgfsbench made before layout 3: json
    and epoch seconds in its tables, without the indexes and the provenance view, and
    the layout-2 views over them (``layer=False``: no views, decisions or layout at all,
    as before layout 2)."""
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("DROP VIEW " + ", ".join(reversed(VIEWS)))
        conn.execute("DROP INDEX metrics_name, campaign_host, targets_name, targets_provenance")
        for table, columns in {
            "campaign": ("plan_json", "host_json", "schedule_json", "started", "ended"),
            "targets": ("spec_json", "provenance_json"),
            "runs": ("params_json", "started", "ended"),
            "artifacts": ("command_json",),
        }.items():
            conn.execute(
                f"ALTER TABLE {table} "
                + ", ".join(
                    f"ALTER COLUMN {c} TYPE json USING {c}::json"
                    if c.endswith("_json")
                    else f"ALTER COLUMN {c} TYPE double precision USING extract(epoch FROM {c})"
                    for c in columns
                )
            )
        if layer:
            # the decisions of layout 2: medians, a rounds estimate, one row per contender
            # (two targets here: every finding holds the baseline, as layout 2's did)
            conn.execute(
                "ALTER TABLE decisions DROP CONSTRAINT decisions_pkey, "
                "DROP COLUMN confidence, DROP COLUMN detectable_change, "
                "ADD COLUMN rounds_needed integer, "
                "ADD PRIMARY KEY (campaign_uuid, workload, label, metric, target)"
            )
            conn.execute("ALTER TABLE decisions RENAME COLUMN centre TO median")
            conn.execute("ALTER TABLE decisions RENAME COLUMN baseline_centre TO baseline_median")
            conn.execute(LAYOUT2_VIEWS.read_text())
            conn.execute("UPDATE pgfsbench_schema SET version = 2, layout = 2")
        else:
            conn.execute("UPDATE pgfsbench_schema SET version = 2")
            conn.execute("DROP TABLE decisions")
            conn.execute("ALTER TABLE campaign DROP COLUMN decided_at, DROP COLUMN decided_by")
            conn.execute("ALTER TABLE pgfsbench_schema DROP COLUMN layout")


def test_a_layout_2_store_is_brought_to_jsonb_and_timestamptz(stored, store_url):
    """A store of the last layout before this one: a reader who may not change it reads
    it as it is; a writer is refused; a view of a DBA's own over it stops the change
    and is named; its owner's first use changes the types in place, values kept."""
    results = stored[0]
    campaign = load_campaign(results)
    older = database(store_url, "older")
    cli("import", str(results), "--store", older)
    before = sql(older, "SELECT uuid, started, ended, host_json FROM campaign")
    _layout2(older)
    assert sql(older, "SELECT version, layout FROM pgfsbench_schema") == [(2, 2)]
    with psycopg.connect(older, autocommit=True) as conn:
        conn.execute("CREATE ROLE reader LOGIN")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    reader = older.replace("postgresql://postgres@", "postgresql://reader@")
    refusals = []
    for who, view in (
        (reader, None),  # may not change it
        (older, "SELECT campaign, value FROM measurements"),  # a view over ours
        (older, "SELECT id, started FROM campaign"),  # a view over a changed column
    ):
        with psycopg.connect(older, autocommit=True) as conn:
            conn.execute("DROP VIEW IF EXISTS mine")
            if view:
                conn.execute(f"CREATE VIEW mine AS {view}")
        if view is None:  # read as it is, times in either column type
            assert campaign.id in cli("list", "--store", who).stdout
            assert load_campaign(who, campaign.uuid).started == pytest.approx(
                campaign.started, abs=1e-6
            )
        refused = cli("import", str(results), "--store", who, check=False)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert f"has layout 2, older than this pgfsbench writes ({PG_LAYOUT})" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        refusals.append(refused.stderr)
    assert "must be owner of" in refusals[0] and "the tables' owner opens it once" in refusals[0]
    assert "view mine depends on view measurements" in refusals[1]
    assert "cannot alter type of a column used by a view or rule" in refusals[2]
    assert 'view mine depends on column "started"' in refusals[2]
    assert all("drop those objects, open the store once" in r for r in refusals[1:])
    assert campaign.id in cli("list", "--store", older).stdout  # still read as it is
    assert sql(older, "SELECT layout FROM pgfsbench_schema") == [(2,)]
    with psycopg.connect(older, autocommit=True) as conn:
        conn.execute("DROP VIEW mine")
    cli("list", "--store", older)  # the owner's first use
    assert sql(older, "SELECT version, layout FROM pgfsbench_schema") == [
        (PG_SCHEMA_VERSION, PG_LAYOUT)
    ]
    assert sql(older, "SELECT uuid, started, ended, host_json FROM campaign") == before
    assert sql(
        older, 'SELECT count(*) FROM targets WHERE provenance_json @> \'{"fs": "xfs"}\''
    ) == [(1,)]
    assert sql(older, "SELECT count(*) FROM target_provenance WHERE mkfs IS NOT NULL") == [(2,)]
    assert "already imported, unchanged" in cli("import", str(results), "--store", older).stdout


def test_a_store_an_older_pgfsbench_wrote_gets_the_views(stored, store_url):
    results = stored[0]
    older = database(store_url, "layerless")
    cli("import", str(results), "--store", older)
    _layout2(older, layer=False)  # its tables, version 2, no layout
    listed = cli("list", "--store", older).stdout  # reading it adds the layer
    assert load_campaign(results).id in listed
    assert sql(older, "SELECT version, layout FROM pgfsbench_schema") == [
        (PG_SCHEMA_VERSION, PG_LAYOUT)
    ]
    assert sql(older, "SELECT count(*) FROM medians") != [(0,)]
    assert sql(older, "SELECT decided_at FROM campaigns") == [(None,)]
    # Importing it again changes none of its rows, and keeps its decisions now.
    assert "already imported, unchanged" in cli("import", str(results), "--store", older).stdout
    assert sql(older, "SELECT count(*) > 0, bool_and(decided_by IS NOT NULL) FROM verdicts") == [
        (True, True)
    ]
    # As a pgfsbench before layout 3 finds it: tables newer than it reads, refused.
    sql(older, "UPDATE pgfsbench_schema SET version = version + 1 RETURNING version")
    newer = cli("list", "--store", older, check=False)
    assert newer.returncode == 2 and "Traceback" not in newer.stderr, newer.stderr
    assert (
        f"has results schema version {PG_SCHEMA_VERSION + 1}, newer than this pgfsbench reads "
        f"(up to {PG_SCHEMA_VERSION}): upgrade pgfsbench" in newer.stderr
    )


def _crowd(url: str, campaigns: int) -> None:
    """The store's one campaign copied ``campaigns`` times over (without its series and
    artifacts: no documented query reads them), under new UUIDs and start times, from
    50 hosts ('vm' among them), every third copy's xfs named btrfs; then analysed."""
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():
            # Copies of rows already consistent: no foreign key checked a row at a time.
            conn.execute("SET LOCAL session_replication_role = replica")
            conn.execute(
                "CREATE TEMP TABLE copies AS SELECT uuid AS source, i, "
                "md5(uuid::text || i)::uuid AS copy FROM campaign, generate_series(1, %s) i",
                (campaigns,),
            )
            renamed = "CASE WHEN i % 3 = 0 AND {0} = 'xfs' THEN 'btrfs' ELSE {0} END"
            conn.execute(
                "INSERT INTO campaign (uuid, id, schema_version, plan_name, plan_json, "
                "host_json, pgfsbench_version, started, ended, status, schedule_json, "
                "hostname, machine_id, results_dir, source_digest, decided_at, decided_by) "
                "SELECT copy, id || '-' || i, schema_version, plan_name, plan_json, host_json, "
                "pgfsbench_version, started - i * interval '1 hour', "
                "ended - i * interval '1 hour', status, schedule_json, "
                "CASE i % 50 WHEN 0 THEN 'vm' ELSE 'host-' || i % 50 END, md5('m' || i % 50), "
                "results_dir, source_digest, decided_at, decided_by "
                "FROM campaign JOIN copies ON source = uuid"
            )
            conn.execute(
                "INSERT INTO targets SELECT copy, id, "
                + renamed.format("name")
                + ", position, kind, fs, spec_json, status, reason, provenance_json "
                "FROM targets JOIN copies ON source = campaign_uuid"
            )
            conn.execute(
                "INSERT INTO runs SELECT copy, id, target_id, workload, label, repetition, "
                "params_json, status, error, started - i * interval '1 hour', "
                "ended - i * interval '1 hour' FROM runs JOIN copies ON source = campaign_uuid"
            )
            # Faster without its indexes, made again after (as a bulk load would be).
            conn.execute("ALTER TABLE metrics DROP CONSTRAINT metrics_pkey")
            conn.execute("DROP INDEX metrics_name")
            conn.execute(
                "INSERT INTO metrics SELECT copy, run_id, seq, name, value * (0.9 + i % 7 / 30.0), "
                "unit, higher_is_better, note FROM metrics JOIN copies ON source = campaign_uuid"
            )
            conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
            conn.execute("ALTER TABLE metrics ADD PRIMARY KEY (campaign_uuid, run_id, name)")
            conn.execute(
                "CREATE INDEX metrics_name ON metrics (name, campaign_uuid, run_id) "
                "INCLUDE (value, unit, higher_is_better)"
            )
            conn.execute("ALTER TABLE decisions DROP CONSTRAINT decisions_pkey")
            conn.execute("DROP INDEX decisions_verdict")
            conn.execute(
                "INSERT INTO decisions SELECT copy, workload, label, metric, unit, direction, "
                "headline, "
                + renamed.format("target")
                + ", baseline, verdict, reason, centre, baseline_centre, n, baseline_n, ratio, "
                "ratio_low, ratio_high, p_value, paired, decided_at_round, confidence, "
                "detectable_change "
                "FROM decisions JOIN copies ON source = campaign_uuid"
            )
            conn.execute(
                "ALTER TABLE decisions ADD PRIMARY KEY "
                "(campaign_uuid, workload, label, metric, baseline, target)"
            )
            conn.execute("CREATE INDEX decisions_verdict ON decisions (verdict, target)")
        conn.execute("ANALYZE")


def test_the_documented_queries_use_indexes_at_thousands_of_campaigns(stored, store_url):
    """EXPLAIN of each documented query over a few thousand campaigns: the metrics are
    found by name through an index (metrics_name, or the key from each run's rows; not
    a Seq Scan on metrics filtered by name), a host's campaigns through campaign_host,
    verdicts through decisions_verdict."""
    crowded = database(store_url, "crowded")
    cli("import", str(stored[1]), "--store", crowded)  # the campaign with xfs worse
    _crowd(crowded, CAMPAIGNS)
    assert sql(crowded, "SELECT count(*) FROM campaign") == [(CAMPAIGNS + 1,)]
    metrics = sql(crowded, "SELECT count(*) FROM metrics")[0][0]
    assert metrics > 100 * CAMPAIGNS
    plans = ["\n".join(r[0] for r in sql(crowded, "EXPLAIN " + q)) for q in docs_queries()]
    medians, history, worse, fastest = plans
    for plan in (medians, history, fastest):  # metrics found by name through an index
        assert "Seq Scan on metrics" not in plan, plan
        assert re.search(r"Index Cond: \(.*name = 'pgbench\.tps'::text", plan), plan
    assert uses(history, "campaign_host"), history
    assert uses(worse, "decisions_verdict"), worse
    # and they find the copies
    here = sql(crowded, "SELECT hostname FROM campaign WHERE uuid = %s", stored[3])[0][0]
    assert len(sql(crowded, docs_queries()[1])) == 2 * (CAMPAIGNS // 50 + (here == "vm"))
    [(per_campaign,)] = sql(
        crowded,
        "SELECT count(*) FROM verdicts WHERE campaign_uuid = %s AND verdict = 'worse' "
        "AND headline AND target = 'xfs'",
        stored[3],
    )
    assert per_campaign and len(sql(crowded, docs_queries()[2])) == CAMPAIGNS // 3 * per_campaign


def uses(plan: str, index: str) -> bool:
    """Whether an EXPLAIN ``plan`` reads through ``index``."""
    return (
        re.search(rf"(Index|Index Only) Scan using {index} |Bitmap Index Scan on {index}\b", plan)
        is not None
    )


def rewrite() -> None:
    """Rewrite the docs' expected outputs with what each query prints now."""
    with pg_server() as url, tempfile.TemporaryDirectory() as tmp:
        docs_campaign(url, Path(tmp))
        text = DOCS.read_text()

        def fresh(m: re.Match) -> str:
            return f"```sql\n{m.group(1)}```\n\n```text\n{psql(url, m.group(1))}\n```\n"

        head, rest = text.split("## Querying the store", 1)
        body, tail = rest.split("\n## ", 1)
        new = head + "## Querying the store" + DOCUMENTED.sub(fresh, body) + "\n## " + tail
        if new != text:
            DOCS.write_text(new)
            print(f"rewrote {DOCS}")


if __name__ == "__main__":
    rewrite()
