"""Did the run measure storage? Real runs that did not, and one that did.

One campaign, two ext4 loop targets, one round:

- pgbench select-only with 8 clients on a scale-1 database (16 MB, in
  shared_buffers) on a 2-core machine: the CPUs saturate and no read reaches the
  device. Flagged ``cpu`` and ``cached``, in the export, the terminal and the report.
- TPC-B with 2 clients on 'slow', whose device is capped at 100 write IOPS: every
  commit waits for the capped WAL flush, the CPUs idle. Not flagged ``cpu``, but
  ``fsync`` (the cap sits above the device, so its %util stays low), and
  ``cached-reads``: its reads never reached the device (test_memory.py has one that
  does, under a memory limit).

Beside a busy loop this test starts outside its process tree, the system monitor
counts that loop as other load (no campaign needed for that).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgfsbench.analysis.caveats.bound import bound_metrics, classify
from pgfsbench.monitor import SystemMonitor
from pgfsbench.provision.throttle import throttle_support
from tests.integration.conftest import export, ledgers, loops_backed_by, run_plan

TARGETS = """
[postgres.settings]
shared_buffers = "64MB"
track_wal_io_timing = "on"   # WAL sync time measured, not estimated

[[targets]]
name = "fast"
fs = "ext4"
size = "384M"

[[targets]]
name = "slow"
fs = "ext4"
size = "384M"
throttle = { write_iops = 100 }
"""
PLAN = (
    """
name = "bound"
"""
    + TARGETS
    + """
[[workloads]]
type = "pgbench-init"
scale = 1

[[workloads]]
type = "pgbench"
mode = "select-only"
clients = 8
duration = 6

[[workloads]]
type = "pgbench"
clients = 2
duration = 6
"""
)


def values(run: dict) -> dict[str, float]:
    return {m["name"]: m["value"] for m in run["metrics"]}


def the_run(doc: dict, target: str, mode: str) -> dict:
    [run] = [
        r
        for r in doc["runs"]
        if r["workload"] == "pgbench" and r["target"] == target and r["params"]["mode"] == mode
    ]
    return run


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, state_dir: Path):
    if reason := throttle_support():
        pytest.skip(reason)
    where = tmp_path_factory.mktemp("bound")
    results, run = run_plan(where, PLAN)
    assert not ledgers(state_dir) and not loops_backed_by(where)
    return results, run.stdout, export(results)


def test_select_only_on_a_cached_table_is_cpu_bound_and_cached(campaign) -> None:
    _, _, doc = campaign
    for target in ("fast", "slow"):
        run = the_run(doc, target, "select-only")
        v = values(run)
        assert v["bound.cpu_busy_frac"] >= 0.9, v
        # ours (PostgreSQL and pgbench) the most; others' jobs on this machine take some
        assert v["bound.ours_cpu_frac"] >= 0.4, v
        assert v["bound.cpu_busy_frac"] * v["bound.ours_cpu_frac"] > v["bound.other_cpu_frac"]
        assert 0.2 < v["bound.server_cpu_frac"] < 0.95, v  # both sides of the socket work
        assert v["bound.device_read_frac"] < 0.01, v  # not one page in a hundred read
        assert run["bound"]["classes"][:1] == ["cpu"] and "cached" in run["bound"]["classes"]
        assert run["bound"]["storage_bound"] is False
    [verdict] = [v for v in doc["comparison"]["verdicts"] if v["label"] == "clients=8"]
    assert any(
        c.startswith("CPU-bound: this compares CPU contention, not the filesystems")
        and "fast 1/1 runs, slow 1/1 runs" in c
        for c in verdict["caveats"]
    )
    assert any(c.startswith("cached:") for c in verdict["caveats"])


def test_capped_tpcb_is_not_cpu_bound(campaign) -> None:
    _, _, doc = campaign
    run = the_run(doc, "slow", "tpcb")
    v = values(run)
    ours = v["bound.cpu_busy_frac"] * v["bound.ours_cpu_frac"]
    assert ours < 0.25, v  # ~100 commits/s cost PostgreSQL and pgbench little CPU
    assert v["pgbench.tps"] < 150, v  # the cap bit
    assert "cpu" not in run["bound"]["classes"] and "cached" not in run["bound"]["classes"]
    # scale 1, just loaded, no memory limit: its reads came from memory, so what it
    # measured is its writes; said beside, not a reason to doubt the comparison
    assert "bound.device_read_frac" not in v and v["bound.data_read_frac"] < 0.1, v
    assert "cached-reads" in run["bound"]["classes"]
    assert v["bound.wal_sync_frac"] >= 0.5, v  # commits wait on the capped WAL flush
    assert "fsync" in run["bound"]["classes"]


def test_terminal_and_report_say_so(campaign) -> None:
    results, stdout, _ = campaign
    assert "CPU-bound: this compares CPU contention, not the filesystems" in stdout
    report = (results / "report.html").read_text()
    assert "CPU-bound: this compares CPU contention" in report
    assert 'data-bound="cpu' in report


def _ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_a_busy_loop_outside_our_tree_is_other_load() -> None:
    """The real system monitor beside two spinning loops: one our child, one detached
    (its parent exits at once, so init adopts it): the first is ours, the second
    other load, each by its own /proc ticks."""
    spin = [sys.executable, "-c", "while True: pass"]
    mine = subprocess.Popen(spin)
    out = subprocess.run(
        ["sh", "-c", f"{' '.join(spin[:2])} 'while True: pass' >/dev/null 2>&1 & echo $!"],
        capture_output=True,
        text=True,
    )
    theirs = int(out.stdout.strip())
    try:
        time.sleep(0.3)
        before = _ticks(mine.pid), _ticks(theirs)
        mon = SystemMonitor(0.5)
        mon.start(time.monotonic())
        time.sleep(4)
        mon.stop()
        spent = _ticks(mine.pid) - before[0], _ticks(theirs) - before[1]
    finally:
        mine.kill()
        mine.wait()
        subprocess.run(["kill", str(theirs)])
    ticks = os.sysconf("SC_CLK_TCK")
    totals = {m.name: m.value for m in mon.totals()}
    # ours: the child's ticks (within the ±1-tick edges of each sample), not the other's
    assert totals["mon.cpu.client_s"] >= spent[0] / ticks * 0.9, (totals, spent)
    assert totals["mon.cpu.client_s"] < (spent[0] + spent[1]) / ticks * 0.9, (totals, spent)
    series = {s.name: s for s in mon.series()}
    metrics = bound_metrics("pgbench", {"type": "pgbench"}, mon.totals(), series)
    v = {m.name: m.value for m in metrics}
    capacity = 4 * (os.cpu_count() or 1)  # CPU seconds the machine had in the window
    assert v["bound.other_cpu_frac"] >= spent[1] / ticks / capacity * 0.8, (v, spent)
    assert v["bound.other_cpu_frac"] >= 0.2, v  # a loop gets a good part of a core
    bound = classify(metrics)
    assert "other-load" in bound.classes and not bound.storage_bound, bound
