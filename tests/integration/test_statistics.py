"""Repetitions, verdicts and the recommendation on real targets: identical twins are
never told apart, a throttled one loses, a nobarrier one is never recommended.

One campaign, four ext4 loop targets, five interleaved rounds of a short
pgbench on reused targets: 'a' and 'b' are the same recipe; 'slow' is the
same recipe with its device limited to 100 write IOPS (cgroup blkio), which
every commit's WAL flush pays for; 'nobarrier' mounts without write barriers
(not crash-safe), whatever it measures.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pgfsbench.provision.throttle import throttle_support
from tests.integration.conftest import cli, export, ledgers, leftovers, run_plan
from tests.integration.plans import LOAD_ONCE, SMALL_BUFFERS, ext4, pgbench, plan_toml, rounds

PLAN = plan_toml(
    "twins-and-throttled",
    [
        ext4("a"),
        ext4("b"),
        ext4("slow", throttle={"write_iops": 100}),
        ext4("nobarrier", mount="nobarrier"),
    ],
    [LOAD_ONCE, pgbench(clients=2, duration=2)],
    # 5 paired rounds: the t within rounds can decide 3 pairs at 0.05; mkfs, initdb and
    # the load once per target, then reused; statistics of n = 5 rounds (the settling
    # round: test_repetitions.py)
    repetitions=rounds(5, order="round-robin", settle=False),
    # a 2-core CI VM: 2 s runs of identical targets wander by 10% and more; the
    # throttled target is ×0.02 here, far outside it
    verdicts={"noise": 0.25},
    settings=SMALL_BUFFERS,
)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, state_dir: Path) -> tuple[Path, dict]:
    if reason := throttle_support():
        pytest.skip(reason)
    results, run = run_plan(tmp_path_factory.mktemp("stats"), PLAN)
    assert not leftovers() and not ledgers(state_dir)
    return results, export(results)


def _tps_row(doc: dict) -> dict:
    return next(r for r in doc["comparison"]["rows"] if r["metric"] == "pgbench.tps")


def test_rounds_are_interleaved_and_targets_reused(campaign) -> None:
    _, doc = campaign
    visits = doc["schedule"]["visits"]
    assert visits[:5] == [[1, "a"], [1, "b"], [1, "slow"], [1, "nobarrier"], [2, "b"]]
    assert len(visits) == 20
    # a visit the machine disturbed (the hypervisor's steal on a shared CI host, say) is
    # run again in its round: the earlier run stays, 'redone'; the counted ones are these
    runs = [r for r in doc["runs"] if r["workload"] == "pgbench" and r["status"] != "redone"]
    assert sorted((r["target"], r["repetition"]) for r in runs) == sorted(
        (t, n) for t in ("a", "b", "slow", "nobarrier") for n in range(1, 6)
    )
    assert all(r["status"] in ("ok", "redone") for r in doc["runs"])
    # reused: the load ran once per target, not once per round
    assert sum(r["workload"] == "pgbench-init" for r in doc["runs"]) == 4


def test_identical_targets_are_never_told_apart(campaign) -> None:
    _, doc = campaign
    b = _tps_row(doc)["cells"]["b"]
    assert b["n"] == 5 and b["ci95"] is not None and b["rounds"] == [1, 2, 3, 4, 5]
    vs = b["vs_baseline"]
    assert vs["paired"] and vs["outcome"] in ("equivalent", "inconclusive"), b
    assert vs["rounds"] == 5 and vs["text"].startswith("b vs a: ")
    [verdict] = [v for v in doc["comparison"]["verdicts"] if v["workload"] == "pgbench"]
    # a and b never win: at most nobarrier does (no barriers on a loop image can be
    # faster), and then the line says it is not crash-safe
    assert verdict["winner"] in (None, "nobarrier")
    if verdict["winner"]:
        assert verdict["warning"].startswith("nobarrier is not crash-safe")


def test_throttled_target_is_slower_with_a_ci_excluding_one(campaign) -> None:
    results, doc = campaign
    slow = _tps_row(doc)["cells"]["slow"]["vs_baseline"]
    assert slow["outcome"] == "worse", slow
    assert slow["ratio"] < 0.75 and slow["interval"][1] < 1.0  # beyond the noise
    [verdict] = [v for v in doc["comparison"]["verdicts"] if v["workload"] == "pgbench"]
    assert verdict["winner"] in (None, "nobarrier") and "slow" in verdict["text"]
    assert verdict["durability"] == {
        "a": "safe",
        "b": "safe",
        "slow": "safe",
        "nobarrier": "not crash-safe",
    }
    target = next(
        t for t in json.loads(cli("export", str(results)).stdout)["targets"] if t["name"] == "slow"
    )
    assert target["status"] == "ok"


def test_compare_command_formats_and_cross_directory_matching(campaign) -> None:
    results, _ = campaign
    text = cli("compare", str(results), env={**os.environ, "COLUMNS": "200"}).stdout
    assert "pgbench.tps" in text and "(baseline)" in text and "−" in text
    md = cli("compare", str(results), "--format", "markdown", "--baseline", "slow").stdout
    # the answer first, then the table
    assert md.startswith("**Answer:** ") and "\n| measurement" in md and "slow (baseline)" in md
    doc = json.loads(
        cli(
            "compare",
            str(results),
            str(results),
            "--format",
            "json",
            "--metric",
            "pgbench.latency_*",
        ).stdout
    )
    assert {r["metric"] for r in doc["rows"]} >= {"pgbench.latency_p99_ms"}
    # the same campaign twice: baseline and contender, each target paired with itself
    assert doc["columns"] == [f"{results.name}#1", f"{results.name}#2"]
    assert [p["baseline"] for p in doc["pairs"]] == [p["contender"] for p in doc["pairs"]]
    twin = doc["rows"][0]["cells"][doc["columns"][1]]["vs_baseline"]
    # the same runs on both sides, but two campaigns are never paired by round
    assert twin["ratio"] == 1.0 and not twin["paired"]
    assert twin["outcome"] in ("equivalent", "inconclusive")
    bad = cli("compare", str(results), "--baseline", "nope", check=False)
    assert bad.returncode == 2 and "not a column" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    report = (results / "report.html").read_text()
    assert 'id="verdicts"' in report and "visit order" in report


def test_the_recommendation_is_the_safe_top_tier_and_names_what_nobarrier_buys(campaign):
    results, doc = campaign
    advice = json.loads(cli("advise", str(results), "--format", "json").stdout)
    # a and b lead the crash-safe targets (slow decided behind both); nobarrier, however
    # fast, takes no place among them: a is kept (the baseline, tied with b)
    assert advice["target"] == "a", advice["chosen_by"]
    assert advice["chosen_by"].startswith("tied with b: "), advice["chosen_by"]
    assert "behind it: slow " in advice["chosen_by"]
    [unsafe] = advice["unsafe"]
    assert unsafe["target"] == "nobarrier" and "nobarrier" in unsafe["warning"]
    # what it buys: its finding against the pick, the same one the table quotes
    [gain] = [g for g in unsafe["gains"] if g.startswith("TPC-B tps ")]
    cell = _tps_row(doc)["cells"]["nobarrier"]["vs_baseline"]
    assert gain.startswith("TPC-B tps [clients=2] (pgbench.tps): nobarrier ")
    assert gain.endswith(" against a")
    assert cell["text"].split(": ", 1)[1].split(",")[0] in gain  # the ratio and interval
