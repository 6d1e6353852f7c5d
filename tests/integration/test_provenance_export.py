"""A real campaign's JSON export carries the whole provenance, under the
schema, and data checksums are recorded for every target and can be a plan's dimension
(PostgreSQL 18's default on, asked off, and 15's default off). Every durability
and I/O setting the servers ran with, defaults included, read from PostgreSQL 18 and 15,
and the commands that made each target and ran each run."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.formats.json import schema
from pgfsbench.pgsettings import io_settings_of
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
    fields = set(schema()["$defs"]["Target"]["properties"])
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
    # every durability and I/O setting, defaults included, as each server showed it
    for name, t in targets.items():
        pg = t["postgres"]
        io = pg["io_settings"]
        assert pg["io_settings_recorded"] and None not in io.values(), name
        assert (io["fsync"], io["synchronous_commit"], io["full_page_writes"]) == ("on",) * 3
        assert (io["wal_sync_method"], io["wal_level"]) == ("fdatasync", "replica"), name
        assert io["data_checksums"] == ("on" if pg["data_checksums"] else "off"), name
        assert io["shared_buffers"] == pg["settings"]["shared_buffers"], name
        assert "application_name" not in pg["settings"], name  # psql's, not the server's
    assert targets["pg18"]["postgres"]["io_settings"]["io_method"] == "worker"
    for name, major in (("pg18", 18), ("pg15", 15)):  # each one its version has, no other
        assert list(targets[name]["postgres"]["io_settings"]) == list(io_settings_of(major))
    for r in doc["runs"]:  # pgbench -i, as it ran on each target
        [init] = [c["argv"] for c in r["commands"] if c["argv"][0].endswith("/pgbench")]
        assert init[1:4] == ["-i", "-s", "1"], init
    assert doc["campaign"]["host"]["kernel"] and doc["campaign"]["plan_recorded"]["targets"]
