"""'auto' repetitions (the sequential design) on fresh targets, and the settling round
of reused ones, on real targets with a pgbench warm-up."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import export, ledgers, leftovers, run_plan
from tests.integration.plans import LOAD_ONCE, SMALL_BUFFERS, ext4, pgbench, plan_toml


def repeated(repetitions: dict, load: dict) -> str:
    """Two ext4 targets, the pgbench load (``load``), a 4 s pgbench with a warm-up."""
    return plan_toml(
        "repeated",
        [ext4("e"), ext4("f")],
        [load, pgbench(clients=1, duration=4, warmup=1)],
        repetitions=repetitions,
        settings=SMALL_BUFFERS,
    )


AUTO_FRESH = repeated(
    {"count": "auto", "min": 2, "max": 3, "fresh": True}, {"type": "pgbench-init", "scale": 1}
)
# reused: a settling round comes first (settle defaults to true); the load runs once
SETTLED = repeated({"count": 2, "fresh": False}, LOAD_ONCE)


def _nothing_left(tmp_path: Path, state_dir: Path) -> None:
    """Our ledger undid everything, and none of our images is still attached. (Other
    campaigns may run on this machine meanwhile: only ours are looked for.)"""
    assert not ledgers(state_dir)
    assert not [x for x in leftovers() if str(tmp_path) in x]


def test_auto_runs_every_target_each_round_and_fresh_rounds_reload(
    tmp_path: Path, state_dir: Path
) -> None:
    results, _ = run_plan(tmp_path, AUTO_FRESH)
    _nothing_left(tmp_path, state_dir)
    doc = export(results)
    sched = doc["schedule"]
    assert sched["count"] == "auto" and sched["fresh"] is True and sched["settle"] is False
    assert sched["design"]["first_look"] == 2 and sched["design"]["last_look"] == 3
    # twins: each measurement (the fresh load is one too) decided, equivalent or by
    # chance, or undecided when max stops it; they need not stop at the same round
    stops = {m["workload"]: m for m in sched["measurements"]}
    assert set(stops) == {"pgbench-init", "pgbench"}
    for stop in stops.values():
        assert stop["reason"] in ("decided", "max rounds"), stop
        assert stop["round"] == 3 or stop["reason"] == "decided"
    last = max(stop["round"] for stop in stops.values())
    # never one target without the other: both in every round, up to the last stop
    assert sorted(sched["visits"]) == [[r, t] for r in range(1, last + 1) for t in "ef"]
    runs = doc["runs"]
    # a fresh filesystem each round: made and loaded each round, on each target (the
    # load runs as long as either measurement does: pgbench needs its tables); pgbench
    # up to its own stop
    for t in ("e", "f"):
        assert [(r["workload"], r["repetition"]) for r in runs if r["target"] == t] == [
            (w, n)
            for n in range(1, last + 1)
            for w in ("pgbench-init", "pgbench")
            if w == "pgbench-init" or n <= stops["pgbench"]["round"]
        ]
        made = sorted(
            p.parent.name for p in (results / "artifacts" / t).glob("round-*/provision-*mkfs*")
        )
        assert made == [f"round-{n:02d}" for n in range(1, last + 1)]
    for r in runs:
        if r["workload"] == "pgbench":
            m = {x["name"]: x["value"] for x in r["metrics"]}
            # at least 1 s of the run: up to the next whole second of the series
            assert m["pgbench.warmup_s"] in (1, 2)
            # tps after the warm-up: the trimmed transactions over the rest of the run
            points = r["series"]["pgbench.tps"]["points"]
            assert m["pgbench.transactions"] < sum(v for _, v in points)
            assert m["pgbench.transactions"] == sum(
                v for t, v in points if t >= m["pgbench.warmup_s"]
            )
    report = (results / "report.html").read_text()
    assert "why it stopped" in report and all(s["text"] in report for s in stops.values())


def test_reused_targets_settle_in_an_uncounted_round_0(tmp_path: Path, state_dir: Path) -> None:
    results, _ = run_plan(tmp_path, SETTLED)
    _nothing_left(tmp_path, state_dir)
    doc = export(results)
    sched = doc["schedule"]
    assert sched["settle"] is True
    assert sorted(sched["visits"]) == [[r, t] for r in (0, 1, 2) for t in "ef"]
    for t in ("e", "f"):
        # the load ran once, in round 0, and counts (repetition 1); round 0's pgbench
        # is stored as repetition 0: kept, not counted
        assert [
            (r["workload"], r["repetition"], r["status"]) for r in doc["runs"] if r["target"] == t
        ] == [
            ("pgbench-init", 1, "ok"),
            ("pgbench", 0, "ok"),
            ("pgbench", 1, "ok"),
            ("pgbench", 2, "ok"),
        ]
        # made once, in the settling round's directory
        made = sorted(
            p.parent.name for p in (results / "artifacts" / t).glob("round-*/provision-*mkfs*")
        )
        assert made == ["round-00"]
        assert (results / "artifacts" / t / "round-00" / "postgres.log").exists()
