"""pgbench beyond TPC-B: a client sweep, select-only, and a user script."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.integration.conftest import cli, export, ledgers
from tests.integration.plans import LOAD, ext4, pgbench, plan_toml

SCRIPT = """\\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
SELECT now();
"""


def modes(script: Path) -> str:
    """A client sweep of select-only, then ``script`` over the simple protocol."""
    return plan_toml(
        "modes",
        [ext4("ext4")],
        [
            LOAD,
            pgbench(clients=[1, 2], duration=2, mode="select-only"),
            pgbench(clients=2, threads=1, duration=2, protocol="simple", script=str(script)),
        ],
    )


def test_sweep_modes_and_scripts(tmp_path, state_dir):
    script = tmp_path / "two-selects.sql"
    script.write_text(SCRIPT)
    script.chmod(0o600)  # only root can read it: the workload must hand over a copy
    plan = tmp_path / "modes.toml"
    plan.write_text(modes(script))
    results = tmp_path / "r"
    cli("run", str(plan), "--results", str(results))
    runs = [r for r in export(results)["runs"] if r["workload"] == "pgbench"]
    # Two different measurements at clients=2: what differs joins the label, so the
    # table and the statistics keep them apart instead of pooling them.
    assert [(r["label"], r["status"]) for r in runs] == [
        ("clients=1", "ok"),
        ("clients=2 protocol=prepared mode=select-only", "ok"),
        ("clients=2 threads=1 protocol=simple mode=tpcb script=two-selects.sql", "ok"),
    ]
    rows = {(r["label"], r["metric"]) for r in export(results)["comparison"]["rows"]}
    assert (
        "clients=2 threads=1 protocol=simple mode=tpcb script=two-selects.sql",
        "pgbench.tps",
    ) in rows
    metrics = [{m["name"]: m for m in r["metrics"]} for r in runs]
    for m in metrics:
        assert m["pgbench.tps"]["value"] > 0
        assert m["pgbench.latency_p50_ms"]["value"] <= m["pgbench.latency_p99_ms"]["value"]
    # select-only is a \\set and a SELECT; the user script adds a second SELECT
    select_only = [n for n in metrics[0] if n.startswith("pgbench.statement_")]
    assert select_only == ["pgbench.statement_01_ms", "pgbench.statement_02_ms"]
    db = sqlite3.connect(results / "results.db")
    notes = [
        n
        for (n,) in db.execute(
            "SELECT note FROM metrics WHERE run_id = (SELECT max(id) FROM runs) "
            "AND name LIKE 'pgbench.statement_%' ORDER BY name"
        )
    ]
    assert notes == [
        "\\set aid random(1, 100000 * :scale)",
        "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
        "SELECT now();",
    ]
    argv = [
        a
        for (a,) in db.execute(
            "SELECT command_json FROM artifacts WHERE run_id IN "
            "(SELECT id FROM runs WHERE workload = 'pgbench') "
            "ORDER BY id"
        )
        if a
    ]
    assert '"-b", "select-only"' in argv[0] and '"-j", "1"' in argv[2] and '"-f"' in argv[2]
    html = (results / "report.html").read_text()
    assert 'id="clients-chart"' in html
    assert "clients=2" in html
    assert ledgers(state_dir) == []
