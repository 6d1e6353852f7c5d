"""`compare BASELINE CONTENDER`: two stored campaigns, each target paired with its own.

Stored campaigns (written by Store, read back like any results directory) of one plan
whose targets' tps are a known level times round-to-round jitter: the contender's
targets a known factor of the baseline's. Pairing by name and by --pair, the
unpaired statistics and marks, the provenance refusal and --allow-different's
warning in every output format, and --fail-if-worse across campaigns.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from pgfsbench import exits
from pgfsbench.cli import app
from pgfsbench.compare.pairing import paired_table, pairing, parse_pairs
from pgfsbench.errors import UserError
from pgfsbench.formats.json import schema
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

JITTER = [1.004, 0.997, 1.002, 0.996, 1.003, 0.998, 1.001, 0.999]
WORKLOADS = [{"type": "pgbench", "clients": 4, "duration": 10}]


def stored(
    results: Path,
    targets: dict[str, float],
    *,
    started: float = 0.0,
    plan: str = "nightly",
    specs: dict[str, dict] | None = None,
    pg: str = "17.2",
    workloads: list[dict] | None = None,
    rounds: int = 6,
    host: str = "db1",
    mounted: dict[str, list[str]] | None = None,
    checksums: bool | None = None,
) -> Path:
    """A campaign of ``plan``: each target's tps 1000 × its factor × jitter per round."""
    store = Store.create(results)
    store.start_campaign(
        f"c-{results.name}",
        plan,
        {"name": plan, "workloads": workloads or WORKLOADS},
        {"hostname": host, "kernel": "6.8.0"},
        "0.1.0",
    )
    if started:
        store.conn.execute("UPDATE campaign SET started = ?", (started,))
    for pos, (name, factor) in enumerate(targets.items()):
        spec = {
            "name": name,
            "kind": "loop",
            "fs": "ext4",
            "size": "1G",
            "mount": "noatime",
            **(specs or {}).get(name, {}),
        }
        tid = store.add_target(name, pos, "loop", spec["fs"], spec)
        store.set_target(
            tid,
            "ok",
            provenance={
                "kind": "loop",
                "fs": spec["fs"],
                "postgres_version": pg,
                **({} if checksums is None else {"data_checksums": checksums}),
                "effective_mount_options": (mounted or {}).get(name, ["rw"]),
            },
        )
        for r in range(1, rounds + 1):
            tps = 1000 * factor * JITTER[(r + pos * 3) % len(JITTER)]
            run = store.start_run(tid, "pgbench", (workloads or WORKLOADS)[0], repetition=r)
            store.add_result(
                run,
                tid,
                WorkloadResult(
                    [
                        Metric("pgbench.tps", tps, "tx/s", True),
                        Metric("pgbench.latency_avg_ms", 4000 / tps, "ms", False),
                    ]
                ),
            )
    store.end_campaign("ok")
    store.close()
    return results


def cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})


@pytest.fixture(scope="module")
def before_after(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("pairs")
    return (
        stored(root / "before", {"ext4": 1.0, "xfs": 1.2}, started=1000),
        stored(root / "after", {"ext4": 0.8, "xfs": 1.2}, started=2000),
    )


def _tps(table, pair: str):
    return next(r for r in table.rows if r.metric == "pgbench.tps" and r.label == pair)


def test_the_same_target_is_paired_and_the_slowdown_marked(before_after) -> None:
    before, after = map(load_campaign, before_after)
    p = pairing(before, after)
    assert p.pairs == [("ext4", "ext4"), ("xfs", "xfs")] and p.names == ("before", "after")
    table = paired_table(p, 0.05, 0.02)
    assert table.targets == ["before", "after"] and table.baseline == "before"
    ext4 = _tps(table, "ext4").cells["after"]
    assert ext4.finding.outcome == "worse" and not ext4.finding.paired
    assert ext4.finding.ratio == pytest.approx(0.8, abs=0.01)
    assert ext4.finding.rests_on() == "6 and 6 runs"
    xfs = _tps(table, "xfs").cells["after"]
    assert xfs.finding.outcome == "equivalent" and xfs.finding.ratio == pytest.approx(1.0)
    assert table.unpaired and not table.paired  # rounds of two campaigns never pair


def test_a_mapping_pairs_other_names(tmp_path, before_after) -> None:
    before = load_campaign(before_after[0])
    renamed = load_campaign(stored(tmp_path / "new", {"ext4-new": 0.8, "xfs": 1.2}))
    p = pairing(before, renamed, parse_pairs(["ext4=ext4-new"]))
    assert p.pairs == [("ext4", "ext4-new"), ("xfs", "xfs")]
    row = _tps(paired_table(p, 0.05, 0.02), "ext4→ext4-new")
    assert row.cells["new"].finding.outcome == "worse"
    with pytest.raises(UserError, match="the contender has no target 'nope'"):
        pairing(before, renamed, {"ext4": "nope"})
    with pytest.raises(UserError, match="--pair takes BASELINE_TARGET=CONTENDER_TARGET"):
        parse_pairs(["ext4"])
    alone = load_campaign(stored(tmp_path / "alone", {"btrfs": 1.0}))
    with pytest.raises(UserError, match="no target in common .* --pair"):
        pairing(before, alone)


@pytest.mark.parametrize(
    "change,what",
    [
        (
            {"specs": {"ext4": {"mount": "noatime,nobarrier"}}},
            "ext4: mount: noatime (baseline) vs noatime,nobarrier (contender)",
        ),
        ({"specs": {"ext4": {"fs": "xfs"}}}, "ext4: fs: ext4 (baseline) vs xfs (contender)"),
        ({"specs": {"ext4": {"size": "4G"}}}, "ext4: size"),
        ({"specs": {"ext4": {"sysctls": {"vm.dirty_ratio": 5}}}}, "ext4: sysctls"),
        ({"pg": "16.4"}, "ext4: PostgreSQL version: 17.2 (baseline) vs 16.4 (contender)"),
        (
            {"workloads": [{"type": "pgbench", "clients": 8, "duration": 10}]},
            "workload #1 of the plan",
        ),
    ],
)
def test_a_key_provenance_difference_is_refused(tmp_path, before_after, change, what) -> None:
    other = stored(tmp_path / "other", {"ext4": 1.0, "xfs": 1.2}, **change)
    result = cli("compare", str(before_after[0]), str(other))
    assert result.exit_code == exits.USAGE == 2, result.output
    assert "refusing to compare campaigns whose key provenance differs" in result.stderr
    assert what in result.stderr and "--allow-different" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_data_checksums_that_differ_are_a_key_difference(tmp_path) -> None:
    """PostgreSQL 18 turns them on by default: a PG 15 vs 18 pair of campaigns differs in
    them as much as in the version, and compare says so."""
    on = stored(tmp_path / "on", {"ext4": 1.0}, checksums=True)
    off = stored(tmp_path / "off", {"ext4": 1.0}, checksums=False)
    result = cli("compare", str(on), str(off))
    assert result.exit_code == 2, result.output
    assert "ext4: data checksums: on (baseline) vs off (contender)" in result.stderr
    assert (
        cli(
            "compare", str(on), str(stored(tmp_path / "on2", {"ext4": 1.0}, checksums=True))
        ).exit_code
        == 0
    )


def test_postgres_settings_and_host_are_noted_not_refused(tmp_path, before_after) -> None:
    tuned = stored(
        tmp_path / "tuned",
        {"ext4": 1.0, "xfs": 1.2},
        host="db2",
        specs={"ext4": {"postgres": {"settings": {"commit_delay": 10000}}}},
    )
    doc = json.loads(cli("compare", str(before_after[0]), str(tuned), "--format", "json").stdout)
    assert doc["warnings"] == []
    assert any(
        'ext4: PostgreSQL settings: (none) (baseline) vs {"commit_delay": 10000}' in n
        for n in doc["notes"]
    )
    assert any(n.startswith("differs: host hostname: db1") for n in doc["notes"])


def test_allowed_differences_are_warned_in_every_format(tmp_path, before_after) -> None:
    other = stored(
        tmp_path / "other",
        {"ext4": 0.8, "xfs": 1.2},
        specs={"ext4": {"mount": "noatime,nobarrier"}},
    )
    args = ("compare", str(before_after[0]), str(other), "--allow-different")
    warning = "compared despite a different ext4: mount: noatime (baseline) vs"
    text = cli(*args)
    assert text.exit_code == 0 and warning in text.stdout and warning in text.stderr
    assert warning in cli(*args, "--format", "markdown").stdout
    doc = json.loads(cli(*args, "--format", "json").stdout)
    jsonschema.validate(doc, schema(), cls=jsonschema.Draft202012Validator)
    assert len(doc["warnings"]) == 1 and doc["warnings"][0].startswith(warning)
    assert [c["role"] for c in doc["campaigns"]] == ["baseline", "contender"]
    assert doc["pairs"] == [
        {"baseline": "ext4", "contender": "ext4", "column": "other"},
        {"baseline": "xfs", "contender": "xfs", "column": "other"},
    ]
    rows = list(csv.DictReader(io.StringIO(cli(*args, "--format", "csv").stdout)))
    assert rows and all(r["warnings"].startswith(warning) for r in rows)


def test_a_faster_contender_that_is_not_crash_safe_is_said_to_be(tmp_path, before_after):
    """As in a campaign's own verdicts: the contender's ext4 wins by mounting nobarrier."""
    risky = stored(
        tmp_path / "risky",
        {"ext4": 1.3, "xfs": 1.2},
        specs={"ext4": {"mount": "noatime,nobarrier"}},
        mounted={"ext4": ["rw", "noatime", "nobarrier"]},
    )
    args = ("compare", str(before_after[0]), str(risky), "--allow-different")
    doc = json.loads(cli(*args, "--format", "json").stdout)
    verdicts = {v["label"]: v for v in doc["verdicts"] if v["metric"] == "pgbench.tps"}
    assert verdicts["ext4"]["winner"] == "risky"
    assert verdicts["ext4"]["durability"] == {"before": "safe", "risky": "not crash-safe"}
    assert verdicts["ext4"]["warning"].startswith("risky is not crash-safe: mount option nobarrier")
    assert verdicts["xfs"]["warning"] is None  # the other pair is safe on both sides
    assert verdicts["xfs"]["durability"] == {"before": "safe", "risky": "safe"}
    assert "⚠ risky is not crash-safe" in cli(*args).stdout
    assert "⚠ **risky is not crash-safe" in cli(*args, "--format", "markdown").stdout
    rows = csv.DictReader(io.StringIO(cli(*args, "--format", "csv", "--metric", "*").stdout))
    safety = {
        (r["label"], r["metric"]): (r["baseline_crash_safety"], r["contender_crash_safety"])
        for r in rows
    }
    assert safety[("ext4", "pgbench.latency_avg_ms")] == ("safe", "not crash-safe")
    assert safety[("xfs", "pgbench.tps")] == ("safe", "safe")
    # within the one campaign too: its targets are the columns
    alone = next(csv.DictReader(io.StringIO(cli("compare", str(risky), "--format", "csv").stdout)))
    assert (alone["baseline"], alone["contender"]) == ("ext4", "xfs")
    assert (alone["baseline_crash_safety"], alone["contender_crash_safety"]) == (
        "not crash-safe",
        "safe",
    )


def test_every_format_and_the_gate_across_campaigns(before_after) -> None:
    before, after = map(str, before_after)
    text = cli("compare", before, after, "--metric", "pgbench.tps")
    assert "baseline before (nightly, db1) vs contender after" in text.stdout
    assert "pgbench ext4 pgbench.tps" in text.stdout and "−" in text.stdout
    md = cli("compare", before, after, "--format", "markdown").stdout
    assert "before (baseline)" in md and "after vs base" in md
    rows = list(
        csv.DictReader(io.StringIO(cli("compare", before, after, "--format", "csv").stdout))
    )
    ext4 = next(r for r in rows if r["label"] == "ext4" and r["metric"] == "pgbench.tps")
    assert (ext4["baseline"], ext4["contender"], ext4["decision"], ext4["design"]) == (
        "before",
        "after",
        "worse",
        "unpaired",
    )
    gate = cli("compare", before, after, "--fail-if-worse", "10%")
    assert gate.exit_code == exits.WORSE
    assert "pgbench ext4 pgbench.tps: after vs before: −20.0% [" in gate.stderr
    assert cli("compare", after, before, "--fail-if-worse", "10%").exit_code == 0


def test_bad_combinations_are_user_errors(before_after) -> None:
    before, after = map(str, before_after)
    for args, message in [
        ((before, "--pair", "ext4=xfs"), "--pair and --allow-different compare campaigns"),
        ((before, after, "--baseline", "ext4"), "with several, the first is the baseline"),
        ((before, after, "--pair", "zfs=ext4"), "the baseline has no target 'zfs'"),
        ((before, "c-x", "--store", "mysql://x"), "is not a PostgreSQL connection string"),
    ]:
        result = cli("compare", *args)
        assert result.exit_code == 2 and message in result.stderr, (args, result.output)


def test_a_fleet_baseline_against_several_contenders(tmp_path, before_after) -> None:
    """One campaign per host: the first host's is the baseline, every other a column."""
    before, after = before_after
    third = stored(tmp_path / "db3", {"ext4": 1.0, "xfs": 1.2}, host="db3", started=3000)
    doc = json.loads(cli("compare", str(before), str(after), str(third), "--format", "json").stdout)
    jsonschema.validate(doc, schema(), cls=jsonschema.Draft202012Validator)
    assert doc["columns"] == ["before", "after", "db3"]
    assert [c["role"] for c in doc["campaigns"]] == ["baseline", "contender", "contender"]
    assert {p["column"] for p in doc["pairs"]} == {"after", "db3"}
    [tps] = [r for r in doc["rows"] if r["label"] == "ext4" and r["metric"] == "pgbench.tps"]
    assert tps["cells"]["after"]["vs_baseline"]["outcome"] == "worse"
    assert tps["cells"]["db3"]["vs_baseline"]["outcome"] == "equivalent"
    assert any(n.startswith("db3: differs: host hostname: db1") for n in doc["notes"])
    gate = cli("compare", str(before), str(third), str(after), "--fail-if-worse", "10%")
    assert (
        gate.exit_code == exits.WORSE
        and "ext4 pgbench.tps: after vs before: −20.0% [" in gate.stderr
    )
    # one contender whose recipe differs refuses the whole comparison
    odd = stored(tmp_path / "odd", {"ext4": 1.0, "xfs": 1.2}, specs={"xfs": {"fs": "btrfs"}})
    refused = cli("compare", str(before), str(after), str(odd))
    assert refused.exit_code == 2 and "odd: refusing to compare" in refused.stderr
    assert "xfs: fs: ext4 (baseline) vs btrfs (contender)" in refused.stderr


def test_columns_are_told_apart(tmp_path, before_after) -> None:
    from pgfsbench.compare.pairing import column_names

    before = load_campaign(before_after[0])
    twice = column_names(before, load_campaign(before_after[0]))
    assert twice == ("before#1", "before#2")  # the same campaign given twice
    other = load_campaign(stored(tmp_path / "before", {"ext4": 1.0}))
    assert column_names(before, other) == (f"before@{before.uuid[:8]}", f"before@{other.uuid[:8]}")
    after = load_campaign(before_after[1])
    assert column_names(before, after, before) == ("before#1", "after", "before#3")
