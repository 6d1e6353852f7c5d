"""A memory size: the server and its page cache held to 128 MB reach the device.

One ext4 loop target, ``memory = "128M"`` with 32 MB of shared_buffers and a generous
write-IOPS throttle (both cgroups on one target), a scale-20 database (about 300 MB):
TPC-B and select-only for 3 s each read from the device, the bound check calls neither
``cached`` (nor TPC-B ``cached-reads``), the provenance and the export record the cgroup,
and the cgroups are gone afterwards, also after a SIGTERM mid-run.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from pgfsbench.provision.memory import find_memory_hierarchies, memory_support
from tests.integration.conftest import (
    CLI,
    export,
    ledgers,
    loops_backed_by,
    run_plan,
    wait_for_run,
)

PLAN = """
name = "memory"
memory = "128M"

[postgres.settings]
shared_buffers = "32MB"

[[targets]]
name = "ext4"
fs = "ext4"
size = "1G"
throttle = { write_iops = 2000 }  # both cgroups on one target (v1: two hierarchies)

[[workloads]]
type = "pgbench-init"
scale = 20

[[workloads]]
type = "pgbench"
clients = 2
duration = 3

[[workloads]]
type = "pgbench"
mode = "select-only"
clients = 2
duration = 3
"""


def our_cgroups() -> list[Path]:
    """Memory cgroups pgfsbench made and left behind, where it makes them."""
    found = find_memory_hierarchies(
        Path("/proc/self/cgroup").read_text(), Path("/proc/self/mountinfo").read_text()
    )
    return [p for h in found for p in h.parent.glob("pgfsbench-mem-*")]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory, state_dir: Path):
    if reason := memory_support():
        pytest.skip(reason)
    where = tmp_path_factory.mktemp("memory")
    results, _ = run_plan(where, PLAN, "--wait")  # others' campaigns may hold the machine
    assert not ledgers(state_dir) and not loops_backed_by(where)
    assert our_cgroups() == []
    return results, export(results)


def the_run(doc: dict, mode: str) -> dict:
    [run] = [r for r in doc["runs"] if r["workload"] == "pgbench" and r["params"]["mode"] == mode]
    return run


def values(run: dict) -> dict[str, float]:
    return {m["name"]: m["value"] for m in run["metrics"]}


def test_limited_runs_read_from_the_device_and_are_not_cached(campaign) -> None:
    _, doc = campaign
    tpcb, select = the_run(doc, "tpcb"), the_run(doc, "select-only")
    t = values(tpcb)
    assert t["mon.disk.target.read_bytes"] > 0, t
    # TPC-B's account lookups reach the device (test_bound.py: unlimited, < 10%)
    assert t["bound.data_read_frac"] >= 0.1, t
    assert not {"cached", "cached-reads"} & set(tpcb["bound"]["classes"]), tpcb["bound"]
    v = values(select)
    assert v["mon.disk.target.read_bytes"] > 0, v
    # a page a transaction at least, nearly all from the device (unlimited: < 1%)
    assert v["bound.device_read_frac"] >= 0.5, v
    assert "cached" not in select["bound"]["classes"]


def test_the_limit_is_in_the_provenance(campaign) -> None:
    results, doc = campaign
    db = sqlite3.connect(results / "results.db")
    [(text,)] = db.execute("SELECT provenance_json FROM targets").fetchall()
    memory = json.loads(text)["memory"]
    assert doc["targets"][0]["memory"] == memory  # the export carries it as recorded
    throttle = json.loads(text)["throttle"]  # beside it, and put back as well
    assert throttle["limits"] == {"write_iops": 2000} and throttle["release_problems"] == []
    assert memory["limit_bytes"] == 128 * 2**20 and memory["release_problems"] == []
    assert memory["mechanism"] in ("cgroup v1 memory", "cgroup v2 memory.max")
    assert int(next(iter(memory["effective"].values()))) == 128 * 2**20
    # shared_buffers and more, up to the limit (the kernel charges in batches of pages:
    # the peak was seen one page over it)
    assert 32 * 2**20 < memory["peak_bytes"] <= 129 * 2**20


def test_sigterm_mid_run_removes_the_cgroup(tmp_path, state_dir) -> None:
    if reason := memory_support():
        pytest.skip(reason)
    plan = tmp_path / "plan.toml"
    plan.write_text(
        PLAN.replace("scale = 20", "scale = 2").replace("duration = 3", "duration = 60")
    )
    results = tmp_path / "r"
    run = subprocess.Popen(
        [*CLI, "run", str(plan), "--results", str(results), "--wait"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the first run (the load; the 60-s pgbench after it, should the poll miss it): the
    # server has been in the cgroup since the visit began
    wait_for_run(run, results, "status = 'running'", 900)
    assert len(our_cgroups()) == 1  # the server is in it now
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 143, (out, err)
    assert our_cgroups() == [] and ledgers(state_dir) == []
