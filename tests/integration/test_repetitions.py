"""'auto' repetitions (the sequential design) on fresh targets, and the settling round
of reused ones, on real targets with a pgbench warm-up."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import export, leftovers, ledgers, run_plan

PLAN = """
name = "auto-fresh"

[repetitions]
count = "auto"
min = 2
max = 3
fresh = true

[postgres.settings]
shared_buffers = "32MB"

[[targets]]
name = "e"
fs = "ext4"
size = "512M"

[[targets]]
name = "f"
fs = "ext4"
size = "512M"

[[workloads]]
type = "pgbench-init"
scale = 1

[[workloads]]
type = "pgbench"
clients = 1
duration = 4
warmup = 1
"""


def _nothing_left(tmp_path: Path, state_dir: Path) -> None:
    """Our ledger undid everything, and none of our images is still attached. (Other
    campaigns may run on this machine meanwhile: only ours are looked for.)"""
    assert not ledgers(state_dir)
    assert not [x for x in leftovers() if str(tmp_path) in x]


def _rounds(visits: list) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for r, t in visits:
        out.setdefault(r, []).append(t)
    return out


def test_auto_runs_every_target_each_round_and_fresh_rounds_reload(
        tmp_path: Path, state_dir: Path) -> None:
    results, _ = run_plan(tmp_path, PLAN)
    _nothing_left(tmp_path, state_dir)
    doc = export(results)
    sched = doc["schedule"]
    assert sched["count"] == "auto" and sched["fresh"] is True and sched["settle"] is False
    assert sched["design"]["first_look"] == 2 and sched["design"]["last_look"] == 3
    # twins: decided (equivalent, or by chance) or undecided when max stops them
    stop = {m["workload"]: m for m in sched["measurements"]}["pgbench"]
    assert stop["reason"] in ("decided", "max rounds"), stop
    last = stop["round"]
    assert last == 3 or stop["reason"] == "decided"
    # never one target without the other: both in every round, up to the stop
    rounds = _rounds(sched["visits"])
    assert sorted(rounds) == list(range(1, last + 1))
    assert all(sorted(ts) == ["e", "f"] for ts in rounds.values())
    runs = doc["runs"]
    # a fresh filesystem each round: made and loaded each round, on each target
    for t in ("e", "f"):
        assert [(r["workload"], r["repetition"]) for r in runs if r["target"] == t] == [
            (w, n) for n in range(1, last + 1) for w in ("pgbench-init", "pgbench")]
        made = sorted(p.parent.name for p in
                      (results / "artifacts" / t).glob("round-*/provision-*mkfs*"))
        assert made == [f"round-{n:02d}" for n in range(1, last + 1)]
    for r in runs:
        if r["workload"] == "pgbench":
            m = {x["name"]: x["value"] for x in r["metrics"]}
            # at least 1 s of the run: up to the next whole second of the series
            assert m["pgbench.warmup_s"] in (1, 2)
            # tps after the warm-up: the trimmed transactions over the rest of the run
            points = r["series"]["pgbench.tps"]["points"]
            assert m["pgbench.transactions"] < sum(v for _, v in points)
            assert m["pgbench.transactions"] == sum(v for t, v in points
                                                    if t >= m["pgbench.warmup_s"])
    report = (results / "report.html").read_text()
    assert "why it stopped" in report and stop["text"] in report


SETTLED = """
name = "settled"

[repetitions]
count = 2
fresh = false      # a settling round comes first (settle defaults to true)

[postgres.settings]
shared_buffers = "32MB"

[[targets]]
name = "e"
fs = "ext4"
size = "512M"

[[workloads]]
type = "pgbench-init"
scale = 1
repetitions = 1

[[workloads]]
type = "pgbench"
clients = 1
duration = 2
"""


def test_a_reused_target_settles_in_an_uncounted_round_0(tmp_path: Path,
                                                        state_dir: Path) -> None:
    results, _ = run_plan(tmp_path, SETTLED)
    _nothing_left(tmp_path, state_dir)
    doc = export(results)
    sched = doc["schedule"]
    assert sched["settle"] is True and sched["visits"] == [[0, "e"], [1, "e"], [2, "e"]]
    # the load ran once, in round 0, and counts (repetition 1); round 0's pgbench is
    # stored as repetition 0: kept, not counted
    assert [(r["workload"], r["repetition"], r["status"]) for r in doc["runs"]] == [
        ("pgbench-init", 1, "ok"), ("pgbench", 0, "ok"), ("pgbench", 1, "ok"),
        ("pgbench", 2, "ok")]
    # made once, in the settling round's directory
    made = sorted(p.parent.name for p in
                  (results / "artifacts" / "e").glob("round-*/provision-*mkfs*"))
    assert made == ["round-00"]
    assert (results / "artifacts" / "e" / "round-00" / "postgres.log").exists()
