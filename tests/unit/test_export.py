"""JSON export, from a results directory written by Store."""

from __future__ import annotations

import json
import math
from pathlib import Path

from pgfsbench.formats.json import campaign_data
from pgfsbench.metrics import Metric, Series, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

SKIP_REASON = "zfs is not available: modprobe zfs exited 1"
RUN_ERROR = "pgbench exited 2: connection refused"


def build_results(results: Path) -> Path:
    """ext4/xfs/btrfs ok, zfs skipped; fsync with an unsupported method, init, pgbench."""
    store = Store.create(results)
    store.start_campaign(
        "c-42",
        "filesystems",
        {"name": "filesystems"},
        {"kernel": "6.8.0", "cpu": "test cpu", "memory_bytes": 2**36},
        "0.1.0",
    )
    for pos, fs in enumerate(("ext4", "xfs", "btrfs")):
        tid = store.add_target(fs, pos, "loop", fs, {"size": "2G"})
        store.set_target(
            tid,
            "ok",
            provenance={
                "kind": "loop",
                "fs": fs,
                "device": "/dev/loop0",
                "effective_mount_options": ["rw", "noatime"],
                "commands": [],
                "notes": [],
            },
        )
        run = store.start_run(tid, "fsync", {"secs_per_test": 2})
        store.add_result(
            run,
            tid,
            WorkloadResult(
                [
                    Metric("fsync.fdatasync_8k.ops_per_s", 1000.0 + pos, "ops/s", True),
                    Metric("fsync.fsync_writethrough_8k.ops_per_s", None, "ops/s", True),
                ]
            ),
        )
        store.finish_run(run, "ok")
        run = store.start_run(tid, "pgbench-init", {"scale": 10})
        store.add_result(
            run,
            tid,
            WorkloadResult(
                [
                    Metric("pgbench_init.elapsed_s", 30.0 + pos, "s", False),
                    # A parser that divided by zero: must come out as null, not Infinity.
                    Metric("pgbench_init.vacuum_s", math.inf, "s", False),
                ]
            ),
        )
        store.finish_run(run, "ok")
        run = store.start_run(tid, "pgbench", {"clients": 8, "rate": math.nan})
        if fs == "btrfs":
            store.finish_run(run, "failed", RUN_ERROR)
            continue
        store.add_result(
            run,
            tid,
            WorkloadResult(
                [
                    Metric("pgbench.tps", 900.0 + pos, "tx/s", True),
                    Metric("pgbench.transactions", 4500.0 + pos, "tx", None),
                ],  # informational
                [Series("pgbench.tps", "tx/s", [(1.0, 890.0), (2.0, 910.0)])],
            ),
        )
        store.finish_run(run, "ok")
    tid = store.add_target("zfs", 3, "dir", "zfs", {})
    store.set_target(tid, "skipped", reason=SKIP_REASON)
    store.end_campaign("ok")
    store.close()
    return results


def test_export_structure(tmp_path: Path) -> None:
    data = campaign_data(load_campaign(build_results(tmp_path / "res")))
    json.dumps(data, allow_nan=False)  # raises on NaN/Infinity anywhere

    c = data["campaign"]
    assert (c["id"], c["plan"], c["status"]) == ("c-42", "filesystems", "ok")
    assert c["host"]["kernel"] == "6.8.0" and c["started"] <= c["ended"]

    targets = {t["name"]: t for t in data["targets"]}
    assert list(targets) == ["ext4", "xfs", "btrfs", "zfs"]
    summary = (
        "name",
        "kind",
        "fs",
        "status",
        "reason",
        "effective_mount_options",
        "durability",
        "caveats",
    )
    assert {k: targets["xfs"][k] for k in summary} == {
        "name": "xfs",
        "kind": "loop",
        "fs": "xfs",
        "status": "ok",
        "reason": None,
        "effective_mount_options": ["rw", "noatime"],
        "durability": {"level": "safe", "reasons": []},
        "caveats": [],
    }
    # what was not recorded is there, empty: one shape for every target
    assert (
        targets["xfs"]["device"],
        targets["xfs"]["geometry"],
        targets["xfs"]["postgres"],
        targets["xfs"]["sysctls"],
    ) == ("/dev/loop0", None, None, {})
    assert targets["zfs"]["status"] == "skipped" and targets["zfs"]["reason"] == SKIP_REASON
    assert targets["zfs"]["effective_mount_options"] == []
    assert targets["zfs"]["durability"] is None  # never mounted: nothing to classify

    assert len(data["runs"]) == 9
    failed = [r for r in data["runs"] if r["status"] == "failed"]
    assert [(r["target"], r["fs"], r["workload"], r["error"]) for r in failed] == [
        ("btrfs", "btrfs", "pgbench", RUN_ERROR)
    ]
    assert failed[0]["metrics"] == [] and failed[0]["series"] == {}
    assert failed[0]["params"] == {"clients": 8, "rate": None}


def test_export_metrics_and_series(tmp_path: Path) -> None:
    import io

    from pgfsbench.formats.json import write_campaign

    out = io.StringIO()  # as written: the series' (t, value) pairs are JSON arrays
    write_campaign(load_campaign(build_results(tmp_path / "res")), out)
    data = json.loads(out.getvalue())
    metrics = {(r["target"], m["name"]): m for r in data["runs"] for m in r["metrics"]}
    assert metrics[("xfs", "pgbench.tps")] == {
        "name": "pgbench.tps",
        "value": 901.0,
        "unit": "tx/s",
        "direction": "higher",
    }
    assert metrics[("ext4", "pgbench_init.elapsed_s")]["direction"] == "lower"
    assert metrics[("ext4", "pgbench.transactions")]["direction"] == "none"  # no direction
    assert metrics[("ext4", "pgbench_init.vacuum_s")]["value"] is None  # was inf
    wt = metrics[("ext4", "fsync.fsync_writethrough_8k.ops_per_s")]
    assert wt["value"] is None and wt["direction"] == "higher"  # unsupported is not zero

    run = next(r for r in data["runs"] if r["target"] == "ext4" and r["workload"] == "pgbench")
    assert run["series"] == {
        "pgbench.tps": {"unit": "tx/s", "points": [[1.0, 890.0], [2.0, 910.0]]}
    }
    assert run["started"] <= run["ended"] and run["fs"] == "ext4"


def test_the_json_layout_holds_the_same_data_with_each_deep_value_on_one_line() -> None:
    """export's text is indented four levels deep (document, list, item, field, entry)
    and encodes what is deeper on one line: the same data as json.dumps gives, a float
    that is not finite as null."""
    import io

    from pgfsbench.formats.json import _dump

    doc = {
        "kind": "export",
        "runs": [
            {
                "metrics": [{"name": "pgbench.tps", "value": 1.5, "unit": "µs"}],
                "series": {"pgbench.tps": {"unit": "tx/s", "points": [[1.0, 2.0], [2.0, None]]}},
                "params": {},
            }
        ],
        "keys": {1: "one", None: [], 2.5: {}},
        "deep": [[{"nan": float("nan")}]],
    }
    out = io.StringIO()
    _dump(doc, out)
    text = out.getvalue()
    assert json.loads(text) == {**json.loads(json.dumps(doc)), "deep": [[{"nan": None}]]}
    lines = text.splitlines()
    # deeper values compact, in UTF-8 (orjson)
    assert '        {"name":"pgbench.tps","value":1.5,"unit":"µs"}' in lines
    assert '        "pgbench.tps": {"unit":"tx/s","points":[[1.0,2.0],[2.0,null]]}' in lines
    assert '      "params": {}' in lines


def test_export_carries_each_metrics_note(tmp_path: Path) -> None:
    """What a filesystem offers PostgreSQL comes with its crash-safety and restore notes:
    the JSON export carries a metric's note where it has one, and validates."""
    import jsonschema

    from pgfsbench.formats.json import schema
    from pgfsbench.workloads.compression import compression_metrics, uncompressed_space
    from pgfsbench.workloads.fs_snapshot import snapshot_metrics

    store = Store.create(tmp_path / "res")
    store.start_campaign("c-43", "fs-features", {"name": "fs-features"}, {}, "0.1.0")
    tid = store.add_target("btrfs", 0, "loop", "btrfs", {"size": "1G"})
    store.set_target(tid, "ok", provenance={"kind": "loop", "fs": "btrfs"})
    for workload, metrics in (
        ("fs-snapshot", snapshot_metrics((0.01, 0.0), (1.0, 50 * 2**20), "")),
        ("compression", compression_metrics(uncompressed_space(2**20, "ext4"), 2**20)),
    ):
        run = store.start_run(tid, workload, {})
        store.add_result(run, tid, WorkloadResult(metrics + [Metric("x.plain", 1.0, "", None)]))
        store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    data = campaign_data(load_campaign(tmp_path / "res"))
    jsonschema.validate(data, schema(), cls=jsonschema.Draft202012Validator)
    notes = {m["name"]: m.get("note") for r in data["runs"] for m in r["metrics"]}
    assert "crash-consistent" in notes["fs_snapshot.offered"]
    assert "transparent to PostgreSQL" in notes["compression.ratio"]
    assert notes["x.plain"] is None  # no note: no key


def test_free_form_values_are_cleaned_to_valid_json() -> None:
    """Plan params and host facts may hold anything: a non-finite float (numpy's too)
    becomes null, a key a string, a tuple a list; the rest stays as it is."""
    import numpy as np

    from pgfsbench.formats.json import _clean

    cleaned = _clean({"a": np.float64("nan"), 1: (float("inf"), True, 2, 0.5), "s": "x"})
    assert cleaned == {"a": None, "1": [None, True, 2, 0.5], "s": "x"}
    assert json.dumps(cleaned, allow_nan=False)
