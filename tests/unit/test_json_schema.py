"""The JSON documents follow the JSON Schema generated from their writers' typed
dictionaries (formats/export_document.py, formats/comparison_document.py)."""

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
from pgfsbench.formats.json import SCHEMA_VERSION, schema, write_campaign
from pgfsbench.store.read import load_campaign
from tests.unit.test_export import build_results
from tests.unit.test_fail_if_worse import ROUNDS, _store

VALIDATOR = jsonschema.Draft202012Validator(schema())


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    for doc in ("ExportDocument", "ComparisonDocument"):
        assert schema()["$defs"][doc]["properties"]["schema_version"]["const"] == SCHEMA_VERSION


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
    assert set(target) == set(schema()["$defs"]["Target"]["properties"])
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
    postgres = schema()["$defs"]["Postgres"]
    assert set(pg) == set(postgres["properties"]) == set(postgres["required"])
    assert doc["campaign"]["host"]["memory_mb"] == 24105
    assert doc["campaign"]["plan_recorded"]["name"] == "p"
    # a fact of the wrong shape is caught
    bad = copy.deepcopy(doc)
    bad["targets"][0]["sysctls"]["vm.dirty_ratio"]["during"] = 40
    assert not VALIDATOR.is_valid(bad)


# What a PostgreSQL 18 and a 15 server report for pgsettings.IO_SETTINGS (a few of them;
# a real campaign records every one its version has): the integration test
# test_provenance_export.py reads them from real servers.
IO_18 = {
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "wal_sync_method": "fdatasync",
    "wal_level": "replica",
    "data_checksums": "on",
    "debug_io_direct": "",
    "io_method": "worker",
}
IO_15 = {**{k: v for k, v in IO_18.items() if k not in ("io_method", "debug_io_direct")}}
IO_15.update(fsync="off", data_checksums="off")


def recorded_campaign(results: Path) -> Path:
    """Two targets (PostgreSQL 18 and 15) whose durability and I/O settings were read
    from the server, a pgbench measurement of a settling and a counted round whose runs
    kept their commands (as the campaign records them: an artifact with its argv)."""
    from pgfsbench.metrics import Artifact, Metric, WorkloadResult
    from pgfsbench.store.db import Store

    store = Store.create(results)
    store.start_campaign("c-cmd", "p", {"name": "p"}, {"hostname": "db1"}, "0.2.0")
    servers = (("pg18", "18.6", IO_18), ("pg15", "15.14", IO_15))
    for pos, (name, version, settings) in enumerate(servers):
        tid = store.add_target(name, pos, "loop", "ext4", {"fs": "ext4"})
        mkfs = ["/usr/sbin/mkfs.ext4", "-F", "/dev/loop0"]
        provenance = {
            "device": "/dev/loop0",
            "commands": [{"argv": mkfs, "exit_code": 0, "stdout": "", "stderr": ""}],
            "postgres_version": version,
            "postgres_settings": {"fsync": "off"} if settings["fsync"] == "off" else {},
            "postgres_io_settings": settings,
            "data_checksums": settings["data_checksums"] == "on",
            "postgres_commands": [["initdb", "-D", "/x/pgdata"]],
        }
        store.set_target(tid, "ok", provenance=provenance)
        for repetition in (0, 1):
            run = store.start_run(tid, "pgbench", {"clients": 4}, "clients=4", repetition)
            kept = []
            for stem, argv in (
                ("checkpoint", ["psql", "-X", "-c", "CHECKPOINT"]),
                ("pgbench", ["pgbench", "-n", "-M", "prepared", "-c", "4", "-j", "4"]),
            ):
                out = results / f"runs/{run}/{stem}.txt"
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(f"$ {' '.join(argv)}\n")
                if stem == "pgbench":
                    argv = [*argv, "-T", "8", "-P", "1", "-l", f"--log-prefix=/r{repetition}/x"]
                kept.append(Artifact("command", out, tuple(argv), 0))
            kept.append(Artifact("pgbench-log", results / f"runs/{run}/pgbench_log.1.gz"))
            result = WorkloadResult([Metric("pgbench.tps", 900.0 + pos, "tx/s", True)], [], kept)
            store.add_result(run, tid, result)
    store.end_campaign("ok")
    store.close()
    return results


def test_every_run_carries_its_commands_and_every_server_its_settings(tmp_path) -> None:
    results = recorded_campaign(tmp_path / "r")
    doc = _cli_json("export", str(results), "--format", "json")
    VALIDATOR.validate(doc)
    for run in doc["runs"]:
        psql, pgbench = run["commands"]  # the pgbench log, with no command, is no command
        assert psql == {
            "argv": ["psql", "-X", "-c", "CHECKPOINT"],
            "exit_code": 0,
            "kind": "command",
            "output": f"runs/{psql['output'].split('/')[1]}/checkpoint.txt",
        }
        assert pgbench["argv"][:2] == ["pgbench", "-n"] and "-T" in pgbench["argv"]
        assert (results / pgbench["output"]).read_text().startswith("$ pgbench -n")
    servers = {t["name"]: t["postgres"] for t in doc["targets"]}
    assert servers["pg18"]["io_settings"] == IO_18 and servers["pg15"]["io_settings"] == IO_15
    assert all(s["io_settings_recorded"] for s in servers.values())
    assert servers["pg15"]["settings"] == {"fsync": "off"}


def test_an_older_campaign_says_which_settings_it_did_not_record(tmp_path) -> None:
    """Recorded before the full set was kept: what it did record (a setting not at its
    default, data checksums) and null for the rest its version has; the psql session's
    application_name it recorded among the server's settings is left out."""
    from pgfsbench.formats.target_provenance import postgres_of
    from pgfsbench.pgsettings import io_settings_of

    older = {
        "postgres_version": "15.14",
        "postgres_settings": {"application_name": "psql", "synchronous_commit": "off"},
        "data_checksums": False,
    }
    pg = postgres_of(older)
    assert pg is not None and not pg["io_settings_recorded"]
    assert pg["settings"] == {"synchronous_commit": "off"}
    known = pg["io_settings"]
    assert list(known) == list(io_settings_of(15)) and "io_method" not in known
    assert (known["synchronous_commit"], known["data_checksums"], known["fsync"]) == (
        "off",
        "off",
        None,
    )
    assert "io_method" in postgres_of({**older, "postgres_version": "18.1"})["io_settings"]


def test_list_and_history_documents_follow_their_schemas(tmp_path) -> None:
    from pgfsbench.formats.list_history_documents import document_schema
    from tests.unit.test_pairing import stored

    for n in range(2):  # two campaigns: a history with a comparison
        stored(tmp_path / f"c{n}", {"ext4": 1.0 - 0.1 * n}, started=1.7e9 + n)
    listed = _cli_json("list", str(tmp_path), "--format", "json")
    jsonschema.validate(listed, document_schema("list"), cls=jsonschema.Draft202012Validator)
    assert [c["db_layout_version"] for c in listed] == [c["schema_version"] for c in listed]
    history = _cli_json("history", str(tmp_path), "--format", "json")
    jsonschema.validate(history, document_schema("history"), cls=jsonschema.Draft202012Validator)
    assert history["series"][0]["points"][1]["vs_previous"]["ratio"] < 1
    bad = copy.deepcopy(history)
    bad["series"][0]["points"][0]["n"] = -1
    assert not jsonschema.Draft202012Validator(document_schema("history")).is_valid(bad)


@pytest.mark.parametrize("kind", ["export", "compare", "list", "history", "plan"])
def test_the_schema_command_prints_each_schema(kind) -> None:
    printed = _cli_json("schema", kind)
    jsonschema.Draft202012Validator.check_schema(printed)
    assert printed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    if kind != "plan":  # every field described, no title made from its name
        text = json.dumps(printed)
        assert '"title": "' not in text.replace(f'"title": "{printed["title"]}"', "")
        assert printed["description"].startswith("What 'pgfsbench ")


def test_the_schema_command_refuses_an_unknown_kind() -> None:
    result = CliRunner().invoke(app, ["schema", "report"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "error: no schema for 'report' (kinds: export, compare, list, history, advise, plan)"
    )
