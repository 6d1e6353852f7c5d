"""cold-scan end to end: the eviction makes a scan read from the device.

One ext4 loop target, shared_buffers 8 MB and a table of about 24 MB: each cold scan
(after pg_buffercache_evict_relation and POSIX_FADV_DONTNEED on the relation's files)
reads about the table from the loop device, and the warm control right after it, with
no eviction, reads next to nothing. The plans EXPLAIN showed are the forced ones.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.integration.conftest import command_artifact, export, ledgers, loops_backed_by, run_plan
from tests.integration.plans import ext4, plan_toml

PLAN = plan_toml(
    "cold-scan",
    [ext4("ext4", "256M")],
    [{"type": "cold-scan", "table_mb": 24, "repeats": 1}],
    settings={"shared_buffers": "8MB"},
)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, state_dir):
    where = tmp_path_factory.mktemp("cold_scan")
    results, _ = run_plan(where, PLAN)
    [run] = export(results)["runs"]
    assert run["status"] == "ok", run
    # (leftovers() would see the other campaigns on a shared machine)
    assert not ledgers(state_dir) and not loops_backed_by(where)
    return results, run, {m["name"]: m["value"] for m in run["metrics"]}


def test_cold_scans_read_the_table_from_the_device_and_warm_ones_do_not(campaign) -> None:
    _, _, v = campaign
    table = v["cold_scan.table_mb"]
    assert 20 <= table <= 30, v
    # the whole table from the device (kernel readahead may add a little)
    assert 0.9 * table <= v["cold_scan.seq.device_read_mb"] <= 1.5 * table, v
    assert v["cold_scan.seq.read_mb"] >= 0.95 * table, v
    # a few percent of the heap pages and part of the index, from the device too
    assert v["cold_scan.bitmap.device_read_mb"] >= 0.8 * v["cold_scan.bitmap.read_mb"] > 0, v
    # the control: the same scans without eviction read next to nothing
    assert v["cold_scan.seq.warm_device_read_mb"] < 0.05 * table, v
    assert v["cold_scan.bitmap.warm_device_read_mb"] < 0.05 * table, v
    assert v["cold_scan.seq.mb_per_s"] > 0 and v["cold_scan.bitmap.s"] > 0


def test_the_plans_are_the_forced_ones_and_the_run_is_not_cached(campaign) -> None:
    results, run, _ = campaign
    [run_id] = sqlite3.connect(results / "results.db").execute("SELECT id FROM runs").fetchone()
    for stem, node in (("seq_cold_1", "Seq Scan"), ("bitmap_cold_1", "Bitmap Heap Scan")):
        argv, text = command_artifact(results, run_id, stem)
        assert f'"Node Type": "{node}"' in text and "Gather" not in text
        assert "SET max_parallel_workers_per_gather = 0" in argv
    # the device served the reads; whether CPU or other load limited it is the machine's
    assert "cached" not in run["bound"]["classes"], run["bound"]
    db = sqlite3.connect(results / "results.db")
    [(text,)] = db.execute("SELECT provenance_json FROM targets").fetchall()
    assert json.loads(text)["kind"] == "loop"
