"""A memory limit on the read side: the caveat when the server filled it, the
caveat when targets compared ran under different limits, the cross-campaign check, the
differences table and the report's Targets line. The export's record is checked in
test_json_schema.py."""

from __future__ import annotations

from pathlib import Path

from pgfsbench.analysis.caveats.diff import provenance_diff
from pgfsbench.analysis.caveats.notes import measurement_caveats, memory_limit, target_caveats
from pgfsbench.compare.comparable import differences
from pgfsbench.metrics import Metric
from pgfsbench.report.html import _memory_limit
from pgfsbench.store.read import Campaign, StoredRun, StoredTarget

# As a cgroup v1 visit recorded it (tests/integration/test_memory.py's campaign: 128 MB,
# scale 20, TPC-B and select-only; the kernel counted no refused charge though the peak
# reached the limit), paths shortened.
V1 = {
    "mechanism": "cgroup v1 memory",
    "version": 1,
    "limit": "128M",
    "limit_bytes": 134217728,
    "cgroup": "/sys/fs/cgroup/memory/pgfsbench-mem-22910-0",
    "procs": "/sys/fs/cgroup/memory/pgfsbench-mem-22910-0/cgroup.procs",
    "written": {
        "memory.limit_in_bytes": "134217728",
        "memory.memsw.limit_in_bytes": "134217728",
    },
    "effective": {
        "memory.limit_in_bytes": "134217728",
        "memory.memsw.limit_in_bytes": "134217728",
    },
    "release_problems": [],
    "dropped_files": 0,
    "peak_bytes": 134217728,
    "failcnt": 0,
    "memsw_failcnt": 0,
}


def target(name: str, memory: dict | None = None, spec: dict | None = None) -> StoredTarget:
    prov = {"memory": memory} if memory is not None else {"device": "/dev/loop1"}
    return StoredTarget(
        1, name, 0, "loop", "ext4", "ok", None, {"name": name, **(spec or {})}, prov
    )


def campaign(targets: list[StoredTarget], plan: dict | None = None) -> Campaign:
    runs = [
        StoredRun(
            i,
            t.name,
            "pgbench",
            "",
            1,
            {},
            "ok",
            None,
            0.0,
            1.0,
            [Metric("pgbench.tps", 1.0, "", True)],
        )
        for i, t in enumerate(targets)
    ]
    return Campaign(Path("."), "c", "p", plan or {}, {}, "0", "ok", 0.0, 1.0, targets, runs)


def test_a_filled_limit_is_a_target_caveat():
    [text] = target_caveats(target("a", V1))
    assert text.startswith("held to memory = 128M and the server filled it (peak 128 MiB):")
    assert "hold for this memory size" in text
    # refused charges count too (cgroup v2: memory.events' max)
    v2 = {"limit": "1G", "limit_bytes": 2**30, "version": 2, "max_events": 7, "peak_bytes": 2**29}
    assert "(peak 512 MiB, 7 charges refused at the limit)" in target_caveats(target("b", v2))[0]
    # never reached, or nothing recorded: nothing to say
    assert target_caveats(target("c", {**V1, "peak_bytes": 2**26})) == []
    assert target_caveats(target("d", {"limit": "1G"})) == []
    assert target_caveats(target("e", {})) == []


def test_the_limit_is_the_recorded_one_else_the_targets_else_the_plans():
    plan = {"memory": "1G"}
    c = campaign([], plan)
    assert memory_limit(c, target("a", V1)) == "128M"
    assert memory_limit(c, target("b", spec={"memory": "256M"})) == "256M"
    assert memory_limit(c, target("c")) == "1G"
    assert memory_limit(campaign([]), target("d")) is None


def test_targets_under_different_limits_carry_a_caveat():
    c = campaign([target("a", V1), target("b"), target("c", {**V1, "peak_bytes": 2**26})])
    texts = measurement_caveats(c, "pgbench", "")
    assert texts[0] == (
        "different memory limits (a 128M, b no limit, c 128M): the page cache each "
        "server had differs, so this compares memory sizes as well as the targets"
    )
    assert measurement_caveats(c, "pgbench", "", ["a", "c"])[0].startswith("a: held to memory")
    same = campaign([target("a"), target("b")], {"memory": "512M"})
    assert measurement_caveats(same, "pgbench", "") == []


def test_a_cross_campaign_comparison_under_another_limit_is_refused_unless_allowed():
    base = campaign([target("ext4")], {"memory": "512M"})
    cont = campaign([target("ext4")])
    [diff] = [d for d in differences(base, cont, [("ext4", "ext4")]) if "memory" in d.what]
    assert (diff.what, diff.baseline, diff.contender, diff.key) == (
        "ext4: memory",
        "512M",
        "(none)",
        True,
    )
    same = campaign([target("ext4", V1)])  # recorded 128M, asked by the plan
    assert not [
        d
        for d in differences(same, campaign([target("ext4")], {"memory": "128M"}), [("ext4",) * 2])
        if "memory" in d.what
    ]


def test_the_differences_table_shows_each_targets_limit():
    rows = provenance_diff([target("a", V1), target("b", {**V1, "limit": "1G"})])
    [row] = [r for r in rows if r.key == "plan.memory"]
    assert row.values == {"a": "128M", "b": "1G"}


def test_the_report_says_the_limit_in_one_line():
    assert _memory_limit(V1) == (
        "128M (cgroup v1 memory); peak 128 MiB; 0 charges refused at the limit"
    )
    shared = {
        "limit": "1G",
        "mechanism": "cgroup v2 memory.max",
        "max_events": 0,
        "shared_with": "the throttle's cgroup /sys/fs/cgroup/pgfsbench-1-0",
    }
    assert _memory_limit(shared) == (
        "1G (cgroup v2 memory.max); 0 charges refused at the limit; made in the throttle's "
        "cgroup /sys/fs/cgroup/pgfsbench-1-0"
    )
