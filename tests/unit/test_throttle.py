"""Throttle: the lines written for each cgroup version, finding the hierarchy, no-ops.

Nothing here creates a cgroup; tests/integration/test_throttle.py does that on a
real loop device.
"""

from pathlib import Path

import pytest

from pgfsbench import ledger as ledger_mod
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Throttle
from pgfsbench.provision import throttle
from pgfsbench.provision.throttle import (
    Hierarchy,
    device_number,
    find_hierarchies,
    limit_values,
    throttled,
    v1_lines,
    v2_line,
    whole_disk,
    writes_for,
)


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Ledger:
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    return Ledger.create("throttle", tmp_path)


# --- the lines ----------------------------------------------------------------------


def test_sizes_become_bytes_and_unset_limits_are_left_out():
    limits = Throttle(write_iops=200, read_bps="20M")
    assert limit_values(limits) == {"write_iops": 200, "read_bps": 20 * 2**20}


def test_cgroup_v1_writes_one_file_per_limit():
    limits = Throttle(read_iops=100, write_iops=50, read_bps="1G", write_bps="512k")
    assert v1_lines("7:3", limits) == {
        "blkio.throttle.read_iops_device": "7:3 100",
        "blkio.throttle.write_iops_device": "7:3 50",
        "blkio.throttle.read_bps_device": f"7:3 {2**30}",
        "blkio.throttle.write_bps_device": f"7:3 {512 * 2**10}",
    }
    assert writes_for(1, "7:3", Throttle(write_iops=50)) == {
        "blkio.throttle.write_iops_device": "7:3 50"
    }


def test_cgroup_v2_writes_one_io_max_line():
    assert (
        v2_line("259:1", Throttle(write_iops=200, write_bps="20M"))
        == f"259:1 wiops=200 wbps={20 * 2**20}"
    )
    assert (
        v2_line("7:0", Throttle(read_iops=10, write_iops=20, read_bps="1M", write_bps="2M"))
        == f"7:0 riops=10 wiops=20 rbps={2**20} wbps={2 * 2**20}"
    )
    assert writes_for(2, "7:0", Throttle(read_iops=10)) == {"io.max": "7:0 riops=10"}


def test_a_throttle_without_limits_is_refused_by_the_plan_model():
    with pytest.raises(ValueError):
        Throttle()


# --- no throttle, no throttling ---------------------------------------------------------


def test_no_throttle_is_a_no_op(ledger, monkeypatch):
    before = Path("/proc/self/cgroup").read_text()
    # not even the device is looked at, nor whether throttling is possible
    monkeypatch.setattr(throttle, "_hierarchy", lambda: pytest.fail("looked for cgroups"))
    with throttled("/dev/does-not-exist", None, ledger) as record:
        assert record == {}
        assert Path("/proc/self/cgroup").read_text() == before
    assert ledger.resources == []


def test_unsupported_is_a_user_error_with_the_reason(ledger, monkeypatch):
    monkeypatch.setattr(throttle.os, "geteuid", lambda: 1000)
    reason = throttle.throttle_support()
    assert reason and "root" in reason and "\n" not in reason
    with pytest.raises(UserError, match="needs root"):
        with throttled("/dev/null", Throttle(write_iops=5), ledger):
            pytest.fail("ran unthrottled")
    assert ledger.resources == []


def test_a_target_without_a_device_cannot_be_throttled(ledger):
    with pytest.raises(UserError, match="block device"):
        with throttled(None, Throttle(write_iops=5), ledger):
            pytest.fail("ran unthrottled")
    assert ledger.resources == []


def test_a_device_that_is_not_a_block_device_is_refused(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(UserError, match="not a block device"):
        device_number(str(tmp_path / "f"))
    with pytest.raises(UserError, match="cannot use"):
        device_number(str(tmp_path / "missing"))


def test_a_partition_is_throttled_on_its_disk(tmp_path):
    disk = tmp_path / "devices/sdb"
    (disk / "sdb1").mkdir(parents=True)
    (disk / "dev").write_text("8:16\n")
    (disk / "sdb1/partition").write_text("1\n")
    (disk / "sdb1/dev").write_text("8:17\n")
    sys_dev_block = tmp_path / "dev/block"
    sys_dev_block.mkdir(parents=True)
    (sys_dev_block / "8:17").symlink_to(disk / "sdb1")
    (sys_dev_block / "8:16").symlink_to(disk)
    assert whole_disk("8:17", sys_dev_block) == ("8:16", "sdb")
    assert whole_disk("8:16", sys_dev_block) == ("8:16", None)


# --- finding the hierarchy -----------------------------------------------------------------

HYBRID_CGROUP = """\
9:name=systemd:/
7:blkio:/user.slice
2:cpu,cpuacct:/
0::/user.slice/session-1.scope
"""
HYBRID_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""


def test_v1_blkio_comes_first_and_home_is_where_we_are():
    assert find_hierarchies(HYBRID_CGROUP, HYBRID_MOUNTINFO) == [
        Hierarchy(1, Path("/sys/fs/cgroup/blkio"), Path("/sys/fs/cgroup/blkio/user.slice")),
        Hierarchy(
            2,
            Path("/sys/fs/cgroup/unified"),
            Path("/sys/fs/cgroup/unified/user.slice/session-1.scope"),
        ),
    ]


def test_a_blkio_hierarchy_shared_with_other_controllers_is_found():
    cgroup = "4:blkio,io_x:/a\n0::/\n"
    mountinfo = "38 31 0:35 / /cg/blk rw - cgroup cgroup rw,blkio,io_x\n"
    assert find_hierarchies(cgroup, mountinfo) == [Hierarchy(1, Path("/cg/blk"), Path("/cg/blk/a"))]


def test_unified_only_and_a_mount_of_part_of_the_hierarchy():
    # a container without a cgroup namespace: the mount shows only our part of the tree
    cgroup = "0::/docker/abc/inner\n"
    mountinfo = (
        "50 40 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
        "51 40 0:26 /other /mnt/x\\040y rw - cgroup2 cgroup2 rw\n"
    )
    assert find_hierarchies(cgroup, mountinfo) == [
        Hierarchy(2, Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/inner"))
    ]
    assert find_hierarchies(cgroup, mountinfo.splitlines()[1]) == []


def test_no_cgroups_at_all():
    assert find_hierarchies("", "31 23 0:28 / /sys rw - sysfs sysfs rw\n") == []


# --- the ledger's releaser ----------------------------------------------------------------


def test_a_cgroup_that_is_gone_is_already_released(ledger, tmp_path):
    res = ledger.add(
        "cgroup", path=str(tmp_path / "pgfsbench-1-0"), home=str(tmp_path / "cgroup.procs")
    )
    assert ledger.release(res) == []
    assert ledger.resources == []
