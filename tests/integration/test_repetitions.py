"""Fresh rounds and 'auto' repetitions on a real target, with a pgbench warm-up."""

from __future__ import annotations

from pathlib import Path

from tests.integration.conftest import export, leftovers, ledgers, run_plan

PLAN = """
name = "auto-fresh"

[repetitions]
count = "auto"
min = 2
max = 3
ci_width = 0.9     # wide on purpose: two rounds must be enough for every cell
fresh = true

[postgres.settings]
shared_buffers = "32MB"

[[targets]]
name = "e"
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


def test_auto_stops_on_the_ci_and_fresh_rounds_reload(tmp_path: Path, state_dir: Path) -> None:
    results, _ = run_plan(tmp_path, PLAN)
    assert not leftovers() and not ledgers(state_dir)
    doc = export(results)
    sched = doc["schedule"]
    assert sched["count"] == "auto" and sched["fresh"] is True
    assert sched["visits"] == [[1, "e"], [2, "e"]]
    stops = {s["workload"]: s for s in sched["stops"]}
    assert stops["pgbench"]["reason"] == "ci" and stops["pgbench"]["n"] == 2
    assert "CI within ±90%" in stops["pgbench"]["text"]
    runs = doc["runs"]
    # a fresh filesystem each round: made twice, loaded twice
    assert [(r["workload"], r["repetition"]) for r in runs] == [
        ("pgbench-init", 1), ("pgbench", 1), ("pgbench-init", 2), ("pgbench", 2)]
    made = sorted(p.parent.name for p in (results / "artifacts" / "e").glob("round-*/provision-*mkfs*"))
    assert made == ["round-01", "round-02"]
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
    assert "why it stopped" in report and "CI within ±90%" in report
