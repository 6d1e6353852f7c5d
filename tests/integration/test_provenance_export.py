"""Issue 24: a real campaign's JSON export carries the whole provenance, under the
schema, and data checksums are recorded for every target and can be a plan's dimension
(PostgreSQL 18's default on, asked off, and 15's default off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.export.json import schema
from tests.integration.conftest import export, run_plan

PG15 = Path("/usr/lib/postgresql/15/bin")
PLAN = f"""
name = "provenance"

[mixins.small]
fs = "ext4"
size = "256M"
mount = "noatime,commit=10"
sysctls = {{ "vm.dirty_ratio" = 33 }}
queue = {{ scheduler = "mq-deadline" }}

[[targets]]
name = "pg18"
extends = "small"

[[targets]]
name = "pg18-nosums"
extends = "small"
postgres = {{ data_checksums = false }}

[[targets]]
name = "pg15"
extends = "small"
pg_bin = "{PG15}"

[[workloads]]
type = "pgbench-init"
scale = 1
"""


@pytest.mark.skipif(
    not (PG15 / "postgres").exists(),
    reason="needs PostgreSQL 15 (postgresql-15, installed by make setup)",
)
def test_a_real_export_has_every_provenance_field_and_data_checksums(tmp_path, state_dir):
    results, _ = run_plan(tmp_path, PLAN)
    doc = export(results)  # validated against the schema
    targets = {t["name"]: t for t in doc["targets"]}
    fields = set(schema()["$defs"]["target"]["properties"])
    for name, t in targets.items():
        assert t["status"] == "ok" and set(t) == fields, name
        assert t["mkfs"][0]["argv"][0].endswith("mkfs.ext4") and t["mkfs"][0]["exit_code"] == 0
        assert t["geometry"]["facts"]["block_size"] and "Block size" in t["geometry"]["raw"]
        assert t["device_facts"]["loop_backing_file"] and t["backing_device"]["path"]
        assert (
            t["sysctls"]["vm.dirty_ratio"]["asked"]
            == "33"
            == t["sysctls"]["vm.dirty_ratio"]["during"]
        )
        assert t["queue"]["scheduler"]["during"] == "mq-deadline"
        assert t["sysctls_read"]["vm.dirty_ratio"] == 33
        assert "commit=10" in t["effective_mount_options"]
        assert t["postgres"]["settings"] and t["postgres"]["commands"]
    sums = {
        n: (t["postgres"]["version"].split(".")[0], t["postgres"]["data_checksums"])
        for n, t in targets.items()
    }
    assert sums == {"pg18": ("18", True), "pg18-nosums": ("18", False), "pg15": ("15", False)}
    initdb = targets["pg18-nosums"]["postgres"]["commands"][0]
    assert "--no-data-checksums" in initdb
    assert doc["campaign"]["host"]["kernel"] and doc["campaign"]["plan_recorded"]["targets"]
