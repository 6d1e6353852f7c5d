"""The JSON documents follow the JSON Schema shipped in the package (export/schema.json)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from pgfsbench import __version__
from pgfsbench.cli import app
from pgfsbench.export.json import SCHEMA_VERSION, schema, write_campaign
from pgfsbench.store.read import load_campaign
from tests.unit.test_export import build_results
from tests.unit.test_fail_if_worse import ROUNDS, _store

VALIDATOR = jsonschema.Draft202012Validator(schema())


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["$defs"]["header"]["properties"]["schema_version"]["const"] == SCHEMA_VERSION


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """Failed and skipped targets, unsupported and infinite values (test_export)."""
    return build_results(tmp_path_factory.mktemp("schema") / "r")


@pytest.fixture(scope="module")
def repeated(tmp_path_factory) -> Path:
    """Repeated rounds: CIs, ratios, verdicts."""
    return _store(
        tmp_path_factory.mktemp("schema") / "rep",
        "c-rep",
        {"base": 1.0, "slow": 0.85, "same": 1.0},
        ROUNDS,
    )


def _cli_json(*args: str) -> dict:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("which", ["results", "repeated"])
def test_export_documents_follow_the_schema(request, which) -> None:
    doc = _cli_json("export", str(request.getfixturevalue(which)), "--format", "json")
    assert (doc["schema_version"], doc["pgfsbench_version"], doc["kind"]) == (
        SCHEMA_VERSION,
        __version__,
        "export",
    )
    assert list(doc)[:3] == ["schema_version", "pgfsbench_version", "kind"]  # at the top
    VALIDATOR.validate(doc)


@pytest.mark.parametrize("which", ["results", "repeated"])
def test_comparison_documents_follow_the_schema(request, which) -> None:
    doc = _cli_json(
        "compare", str(request.getfixturevalue(which)), "--metric", "*", "--format", "json"
    )
    assert (doc["schema_version"], doc["kind"]) == (SCHEMA_VERSION, "comparison")
    VALIDATOR.validate(doc)
    if which == "repeated":  # the optional parts are there, and checked
        cells = [c for r in doc["rows"] for c in r["cells"].values() if "vs_baseline" in c]
        assert {c["vs_baseline"]["outcome"] for c in cells} >= {"worse", "equivalent"}


def test_the_schema_rejects_what_it_does_not_describe(results) -> None:
    """Mutations a reader would trip on: each must fail validation."""
    out = io.StringIO()  # as export writes it: a series' (t, value) pairs as arrays
    write_campaign(load_campaign(results), out)
    doc = json.loads(out.getvalue())
    VALIDATOR.validate(doc)
    mutations = [
        lambda d: d.pop("schema_version"),
        lambda d: d.update(schema_version=SCHEMA_VERSION + 1),
        lambda d: d.update(kind="comparison"),
        lambda d: d["runs"][0]["metrics"][0].update(value="1000.0"),
        lambda d: d["runs"][0]["metrics"][0].update(direction="up"),
        lambda d: d["runs"][0].update(unexpected=True),
        lambda d: d["targets"][0].update(status="fine"),
        lambda d: d["comparison"]["rows"][0]["cells"].update(x={"status": "ok"}),
    ]
    for i, mutate in enumerate(mutations):
        bad = copy.deepcopy(doc)
        mutate(bad)
        assert not VALIDATOR.is_valid(bad), f"mutation {i} passed validation"


# A target's provenance as a real campaign records it (ext4 on a loop image, a plan that
# set sysctls and the scheduler, PostgreSQL 18 with checksums): every fact the report
# shows, so the export must carry each one.
REAL_PROVENANCE = {
    "kind": "loop",
    "fs": "ext4",
    "device": "/dev/loop0",
    "log_device": "/dev/loop1",
    "devices": ["/dev/loop0"],
    "layout": {"volume": None},
    "workdir": "/tmp/pgfsbench-ext4-x/pgfsbench",
    "mounted_fs_type": "ext4",
    "mount_point": "/tmp/pgfsbench-ext4-x",
    "effective_mount_options": ["rw", "noatime"],
    "commands": [
        {
            "argv": ["losetup", "--find", "--show", "--direct-io=on", "/r/images/ext4.img"],
            "exit_code": 0,
            "stdout": "/dev/loop0\n",
            "stderr": "",
        },
        {
            "argv": ["/usr/sbin/mkfs.ext4", "-F", "-E", "lazy_itable_init=0", "/dev/loop0"],
            "exit_code": 0,
            "stdout": "Creating filesystem with 524288 4k blocks\n",
            "stderr": "mke2fs 1.47.0 (5-Feb-2023)\n",
        },
        {
            "argv": ["mount", "-t", "ext4", "-o", "noatime", "/dev/loop0", "/tmp/x"],
            "exit_code": 0,
            "stdout": "",
            "stderr": "",
        },
    ],
    "notes": ["loop direct I/O: on"],
    "geometry": {
        "tool": ["dumpe2fs", "-h", "/dev/loop0"],
        "facts": {"block_size": 4096, "inode_count": 131072},
        "raw": "Block size:               4096\n",
        "extra": [
            {
                "tool": ["e2freefrag", "/dev/loop0"],
                "facts": {},
                "raw": "",
                "error": "e2freefrag exited 1",
            }
        ],
    },
    "device_facts": {
        "device": "/dev/loop0",
        "name": "loop0",
        "size_bytes": 2147483648,
        "rotational": True,
        "scheduler": "none",
        "read_ahead_kb": 128,
        "loop_backing_file": "/r/images/ext4.img",
        "loop_dio": True,
    },
    "backing_device": {
        "path": "/r/images/ext4.img",
        "filesystem": "ext4",
        "device": "/dev/vda",
        "scheduler": "mq-deadline",
        "rotational": True,
    },
    "mount_option_changes": [
        {"option": "noatime", "status": "kept", "effective": "noatime", "note": ""}
    ],
    "sysctls": {"vm.dirty_ratio": 40, "vm.dirty_background_ratio": 10},
    "os_settings": {
        "sysctls": {
            "vm.dirty_ratio": {"before": "20", "asked": "40", "during": "40"},
            "vm.dirty_bytes": {"before": "0", "asked": None, "during": "0"},
        },
        "queue": {
            "scheduler": {"before": "none", "asked": "mq-deadline", "during": "mq-deadline"},
            "nr_requests": {"before": "128", "asked": None, "during": "64"},
        },
        "device": "/dev/loop0",
        "restore_problems": ["nr_requests is 64"],
    },
    "throttle": {"device": "7:0", "write_iops": 500},
    "memory": {
        "mechanism": "cgroup v1 memory",
        "version": 1,
        "limit": "128M",
        "limit_bytes": 134217728,
        "cgroup": "/sys/fs/cgroup/memory/pgfsbench-mem-1-0",
        "procs": "/sys/fs/cgroup/memory/pgfsbench-mem-1-0/cgroup.procs",
        "written": {"memory.limit_in_bytes": "134217728"},
        "effective": {"memory.limit_in_bytes": "134217728"},
        "release_problems": [],
        "dropped_files": 0,
        "peak_bytes": 134217728,
        "failcnt": 0,
        "memsw_failcnt": 0,
    },
    "postgres_version": "18.6",
    "postgres_bindir": "/usr/lib/postgresql/18/bin",
    "postgres_settings": {"shared_buffers": "128MB", "max_connections": "20"},
    "postgres_commands": [
        ["/usr/lib/postgresql/18/bin/initdb", "-D", "/x/pgdata", "--data-checksums"]
    ],
    "postgres_build_options": "'--prefix=/usr' '--with-lz4'",
    "data_checksums": True,
    "remade": [
        {
            "round": 2,
            "session": 1,
            "settling_again": False,
            "why": "resumed",
            "differs_in": ["geometry"],
        }
    ],
}


def test_an_export_carries_every_provenance_fact_the_report_shows(tmp_path) -> None:
    from pgfsbench.store.db import Store

    store = Store.create(tmp_path / "r")
    store.start_campaign(
        "c-prov",
        "p",
        {"name": "p", "targets": [{"name": "ext4"}]},
        {
            "hostname": "db1",
            "kernel": "6.18.0",
            "cpus": 2,
            "memory_mb": 24105,
            "tools": {"fio": "fio-3.33"},
        },
        "0.1.0",
    )
    spec = {
        "name": "ext4",
        "fs": "ext4",
        "mount": "noatime",
        "sysctls": {"vm.dirty_ratio": 40},
        "queue": {"scheduler": "mq-deadline"},
        "postgres": {"data_checksums": True},
    }
    tid = store.add_target("ext4", 0, "loop", "ext4", spec)
    store.set_target(tid, "ok", provenance=REAL_PROVENANCE)
    store.end_campaign("ok")
    store.close()

    doc = _cli_json("export", str(tmp_path / "r"), "--format", "json")
    VALIDATOR.validate(doc)
    target = doc["targets"][0]
    # every field the schema names is there and holds what was recorded
    assert set(target) == set(schema()["$defs"]["target"]["properties"])
    empty = [
        k for k, v in target.items() if v in (None, [], {}, "") and k not in ("reason", "caveats")
    ]
    assert empty == []
    assert target["mkfs"] == [{**REAL_PROVENANCE["commands"][1]}]
    assert target["geometry"]["facts"]["block_size"] == 4096
    assert target["sysctls"]["vm.dirty_ratio"] == {"before": "20", "asked": "40", "during": "40"}
    assert target["queue"]["scheduler"]["during"] == "mq-deadline"
    assert target["sysctls_read"]["vm.dirty_ratio"] == 40
    assert target["plan"]["queue"] == {"scheduler": "mq-deadline"}
    assert (target["memory"]["limit_bytes"], target["memory"]["peak_bytes"]) == (2**27, 2**27)
    assert any(c.startswith("held to memory = 128M and the server") for c in target["caveats"])
    pg = target["postgres"]
    assert (pg["version"], pg["data_checksums"], pg["settings"]["shared_buffers"]) == (
        "18.6",
        True,
        "128MB",
    )
    postgres = schema()["$defs"]["postgres"]
    assert set(pg) == set(postgres["properties"]) == set(postgres["required"])
    assert doc["campaign"]["host"]["memory_mb"] == 24105
    assert doc["campaign"]["plan_recorded"]["name"] == "p"
    # a fact of the wrong shape is caught
    bad = copy.deepcopy(doc)
    bad["targets"][0]["sysctls"]["vm.dirty_ratio"]["during"] = 40
    assert not VALIDATOR.is_valid(bad)
