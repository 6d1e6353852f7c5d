"""A memory size: the plan's validation, the units, the lines written for
each cgroup version, finding the hierarchy, and the one-line refusals.

Nothing here creates a cgroup; tests/integration/test_memory.py does that with a real
server on a loop target.
"""

from pathlib import Path

import pytest
from pydantic import ValidationError

from pgfsbench import ledger as ledger_mod
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Plan
from pgfsbench.provision import cgroups, memory
from pgfsbench.provision.memory import (
    MemoryHierarchy,
    find_memory_hierarchies,
    kernel_has_memory_controller,
    memory_limited,
    merge_usage,
    writes_for,
)
from pgfsbench.units import pg_memory_bytes

WORKLOADS = [{"type": "pgbench-init", "scale": 1}]


def plan(memory_=None, target_memory=None, **settings) -> Plan:
    target = {"name": "a", "fs": "ext4"}
    if target_memory is not None:
        target["memory"] = target_memory
    return Plan(
        name="m",
        targets=[target],
        workloads=WORKLOADS,
        memory=memory_,
        postgres={"settings": settings},
    )


# --- the plan ------------------------------------------------------------------------


def test_the_targets_own_memory_wins_over_the_plans():
    p = plan("1G", "256M")
    assert p.memory_limit(p.targets[0]) == "256M"
    p = plan("1G")
    assert p.memory_limit(p.targets[0]) == "1G"
    assert plan().memory_limit(plan().targets[0]) is None


def test_memory_must_hold_shared_buffers_and_a_margin():
    plan("128M", shared_buffers="32MB")  # 96 MB beside it
    with pytest.raises(
        ValidationError,
        match=r"memory = \"95M\" leaves no room beside "
        r"shared_buffers = '32MB'.*at least 96M \(shared_buffers \+ 64M\)",
    ):
        plan("95M", shared_buffers="32MB")
    # unset shared_buffers is the server's default, 128MB
    with pytest.raises(ValidationError, match="at least 192M"):
        plan("150M")
    # a bare number counts 8 kB buffers: 16384 x 8 kB = 128 MB
    with pytest.raises(ValidationError, match="at least 192M"):
        plan(target_memory="150M", shared_buffers=16384)


def test_memory_is_a_size_and_not_for_zfs():
    with pytest.raises(ValidationError, match="not a size"):
        plan("lots")
    with pytest.raises(ValidationError, match="memory cannot hold ZFS's cache"):
        Plan(name="m", targets=[{"name": "z", "fs": "zfs"}], workloads=WORKLOADS, memory="1G")


def test_postgres_memory_units():
    assert pg_memory_bytes("32MB") == 32 * 2**20
    assert pg_memory_bytes("1GB") == 2**30
    assert pg_memory_bytes("512kB") == 512 * 2**10
    assert pg_memory_bytes(4096) == 4096 * 8192
    assert pg_memory_bytes("4096") == 4096 * 8192
    assert pg_memory_bytes("32mb") is None  # the server refuses it: it judges, not us
    assert pg_memory_bytes(True) is None


# --- the lines -----------------------------------------------------------------------


def test_v1_writes_the_limit_and_memsw_only_with_swap_accounting():
    assert writes_for(1, 2**27, False) == {"memory.limit_in_bytes": "134217728"}
    # memsw after the limit: the kernel refuses memsw below limit_in_bytes
    assert list(writes_for(1, 2**27, True).items()) == [
        ("memory.limit_in_bytes", "134217728"),
        ("memory.memsw.limit_in_bytes", "134217728"),
    ]


def test_v2_writes_memory_max_and_no_swap():
    assert writes_for(2, 2**30, True) == {"memory.max": "1073741824", "memory.swap.max": "0"}


# --- the hierarchy -------------------------------------------------------------------

# /proc/self/cgroup and mountinfo lines as on this project's CI machine (v1 memory
# mounted beside an empty unified hierarchy; this process in a container's cgroup).
PROC_CGROUP = """9:name=systemd:/
7:blkio:/
4:memory:/process_api/7341
0::/
"""
MOUNTINFO = (
    "30 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "31 25 0:27 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "35 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
)
PROC_CGROUPS = """#subsys_name	hierarchy	num_cgroups	enabled
blkio	7	1	1
memory	4	15	1
"""


def test_v1_memory_first_made_under_our_own_cgroup_v2_at_the_top():
    v1, v2 = find_memory_hierarchies(PROC_CGROUP, MOUNTINFO)
    assert v1 == MemoryHierarchy(
        1, Path("/sys/fs/cgroup/memory"), Path("/sys/fs/cgroup/memory/process_api/7341")
    )
    assert v1.parent == v1.home and v1.mechanism == "cgroup v1 memory"
    assert v2.version == 2 and v2.parent == Path("/sys/fs/cgroup/unified")


def test_the_memory_controller_from_proc_cgroups_or_cgroup_v2():
    assert kernel_has_memory_controller(PROC_CGROUPS)
    assert not kernel_has_memory_controller(
        PROC_CGROUPS.replace("memory\t4\t15\t1", "memory\t0\t1\t0")
    )
    assert not kernel_has_memory_controller("#subsys_name\thierarchy\n", "cpu io")
    assert kernel_has_memory_controller("", "cpu io memory pids")


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Ledger:
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    return Ledger.create("memory", tmp_path)


def test_no_memory_is_a_no_op(ledger, tmp_path):
    with memory_limited(None, tmp_path, ledger) as record:
        assert record == {}
    assert ledger.resources == []


def test_no_controller_is_one_user_error_line(ledger, tmp_path, monkeypatch):
    monkeypatch.setattr(memory, "PROC_CGROUPS", tmp_path / "cgroups")
    (tmp_path / "cgroups").write_text("#subsys_name\thierarchy\tnum_cgroups\tenabled\n")
    monkeypatch.setattr(cgroups, "MOUNTINFO", tmp_path / "mountinfo")
    (tmp_path / "mountinfo").write_text("")
    with pytest.raises(UserError) as exc:
        with memory_limited("1G", tmp_path, ledger):
            pass
    assert "\n" not in str(exc.value)
    assert str(exc.value).startswith(
        "memory is not possible here: this kernel has no memory cgroup controller"
    )
    assert ledger.resources == []


def test_dropping_the_cache_touches_every_file(tmp_path):
    (tmp_path / "base" / "1").mkdir(parents=True)
    for name in ("base/1/1259", "base/1/1259_fsm", "PG_VERSION"):
        (tmp_path / name).write_bytes(b"x" * 8192)
    assert memory.drop_cached(tmp_path) == 3


def test_plan_check_refuses_memory_without_the_controller(tmp_path, monkeypatch):
    from pgfsbench.preflight import PLAN_CHECK, CheckContext, checks, run_checks

    monkeypatch.setattr(memory, "PROC_CGROUPS", tmp_path / "cgroups")
    (tmp_path / "cgroups").write_text(
        "#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t0\t1\t0\n"
    )
    monkeypatch.setattr(cgroups, "MOUNTINFO", tmp_path / "mountinfo")
    (tmp_path / "mountinfo").write_text("")
    [check] = [c for c in checks(PLAN_CHECK) if c.name == "memory"]
    assert check.check(plan(), CheckContext()) == []  # no memory asked: nothing to say
    with pytest.raises(UserError, match="no memory cgroup controller"):
        check.check(plan("1G"), CheckContext())
    with pytest.raises(UserError, match="no memory cgroup controller"):
        run_checks(plan("1G"), PLAN_CHECK, CheckContext())


def test_a_later_visits_usage_is_folded_into_the_stored_record():
    first = {"limit": "128M", "peak_bytes": 100, "failcnt": 0, "memsw_failcnt": 2}
    assert merge_usage(first, {"limit": "128M", "peak_bytes": 120, "failcnt": 1})
    assert merge_usage(first, {"limit": "128M", "peak_bytes": 90, "memsw_failcnt": 3})
    assert first == {
        "limit": "128M",
        "peak_bytes": 120,
        "failcnt": 1,
        "memsw_failcnt": 5,
        "visits": 3,
    }
    # no limit, or a visit whose server never started: nothing to fold
    assert not merge_usage({}, {"peak_bytes": 5})
    assert not merge_usage(first, {"limit": "128M"}) and first["visits"] == 3
    assert not merge_usage(first, {})
