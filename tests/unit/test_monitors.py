"""The system monitor and MonitorSet on /proc snapshots captured on this machine
(the proc_* fixtures, described in test_procfs.py): between proc_*_a and _b,
32 MiB (65536 sectors, 8192 writes of 4 KiB) were written to loop1 with O_DIRECT.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from pgfsbench.monitor import MonitorSet, SystemMonitor, monitors_for
from pgfsbench.monitor.base import Monitor
from pgfsbench.monitor.procfs import (
    combined_disk,
    iostat_x,
    parse_diskstats,
    parse_proc_stat_extras,
)
from pgfsbench.monitor.system import series_names
from pgfsbench.plan.model import Monitors

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
DISK_KEYS = [
    "r_per_s",
    "w_per_s",
    "read_mb_per_s",
    "write_mb_per_s",
    "avg_req_kb",
    "await_ms",
    "util_pct",
    "queue_depth",
]
EXPECTED_SERIES = [
    "mon.cpu.user_pct",
    "mon.cpu.system_pct",
    "mon.cpu.iowait_pct",
    "mon.cpu.idle_pct",
    "mon.cpu.steal_pct",
    "mon.cpu.procs_running",
    "mon.cpu.ctxt_per_s",
    "mon.cpu.server_pct",
    "mon.cpu.client_pct",
    "mon.cpu.other_user_pct",
    "mon.mem.dirty_mb",
    "mon.mem.writeback_mb",
    "mon.mem.cached_mb",
    "mon.mem.free_mb",
    *(f"mon.disk.{role}.{k}" for role in ("target", "backing") for k in DISK_KEYS),
]


def text(name: str) -> str:
    return (FIXTURES / f"proc_{name}.txt").read_text()


class FakeProc:
    """A directory laid out like /proc whose files the test swaps between samples."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(exist_ok=True)

    def set(
        self,
        stat: str | None = "stat_a",
        meminfo: str | None = "meminfo_idle",
        diskstats: str | None = "diskstats_a",
    ) -> None:
        for name, fixture in (("stat", stat), ("meminfo", meminfo), ("diskstats", diskstats)):
            path = self.root / name
            if fixture is None:
                path.unlink(missing_ok=True)
            else:
                shutil.copy(FIXTURES / f"proc_{fixture}.txt", path)


@pytest.fixture
def proc(tmp_path) -> FakeProc:
    p = FakeProc(tmp_path / "proc")
    p.set()
    return p


def run(proc: FakeProc, steps: list[dict], device="/dev/loop1", backing="vda") -> SystemMonitor:
    """Start on the current files, then one sample per step (files set as given)."""
    mon = SystemMonitor(3600, device, backing, proc=proc.root)  # the thread never ticks
    mon.start(time.monotonic())
    for i, step in enumerate(steps):
        proc.set(**step)
        if i == len(steps) - 1:
            mon.stop()
        else:
            mon.sample_now()
    return mon


def by_name(mon) -> dict:
    return {s.name: s for s in mon.series()}


def totals(mon) -> dict:
    return {m.name: m.value for m in mon.totals()}


# --- the pure iostat -x arithmetic -----------------------------------------------


def test_iostat_x_definitions_on_a_captured_direct_write():
    a = parse_diskstats(text("diskstats_a"))["loop1"]
    b = parse_diskstats(text("diskstats_b"))["loop1"]
    io = iostat_x(a, b, 2.0)
    assert io.written_bytes == 32 * 2**20 and io.read_bytes == 0
    assert io.w_per_s == 8192 / 2 and io.r_per_s == 0
    assert io.write_bytes_per_s == 16 * 2**20
    assert io.avg_req_kib == 4.0  # 4 KiB writes, as dd bs=4k oflag=direct
    assert io.await_ms == pytest.approx((113415 - 113208) / 8192)
    assert io.util_pct == pytest.approx((63300 - 63100) / 10 / 2)
    assert io.queue_depth == pytest.approx((148346 - 148139) / 2000)


def test_iostat_x_no_io_has_no_await_nor_request_size():
    a = parse_diskstats(text("diskstats_a"))["zram0"]
    io = iostat_x(a, a, 1.0)
    assert io.await_ms is None and io.avg_req_kib is None
    assert io.w_per_s == 0 and io.util_pct == 0


def test_iostat_x_unknown_is_none_never_negative():
    before = parse_diskstats(text("diskstats_wrap32_before_edited"))["loop1"]
    after = parse_diskstats(text("diskstats_wrap32_after_edited"))["loop1"]
    assert iostat_x(before, after, 1.0) is None
    assert iostat_x(None, after, 1.0) is None and iostat_x(after, None, 1.0) is None


def test_stat_extras():
    extras = parse_proc_stat_extras(text("stat_a"))
    assert extras.ctxt == 29115289 and extras.procs_running == 1 and extras.cpus == 2


# --- the monitor ---------------------------------------------------------------------


def test_series_names_are_exactly_the_documented_ones():
    assert series_names() == EXPECTED_SERIES


def test_monitor_on_captured_snapshots(proc):
    mon = run(proc, [dict(stat="stat_b", diskstats="diskstats_b", meminfo="meminfo_dirty")])
    series = by_name(mon)
    # our processes are not in this fake /proc: unknown, so no such series (test_proctree)
    assert set(series) == set(EXPECTED_SERIES) - {
        "mon.cpu.server_pct",
        "mon.cpu.client_pct",
        "mon.cpu.other_user_pct",
    }
    for s in series.values():
        assert len(s.points) == 1 and s.points[0][1] >= 0
    # cpu split of the whole-CPU line sums to 100
    cpu = sum(
        series[f"mon.cpu.{k}_pct"].points[0][1]
        for k in ("user", "system", "iowait", "idle", "steal")
    )
    assert cpu == pytest.approx(100)
    assert series["mon.cpu.procs_running"].points[0][1] == 1
    assert series["mon.disk.target.avg_req_kb"].points[0][1] == 4.0
    assert series["mon.disk.target.avg_req_kb"].unit == "KiB"
    dirty_kb = int(
        next(l for l in text("meminfo_dirty").splitlines() if l.startswith("Dirty:")).split()[1]
    )
    assert series["mon.mem.dirty_mb"].points[0][1] == dirty_kb * 1024 / 1e6
    t = totals(mon)
    assert t["mon.disk.target.write_bytes"] == 32 * 2**20
    assert t["mon.disk.target.read_bytes"] == 0
    assert t["mon.disk.backing.write_bytes"] == (65245534 - 65149104) * 512
    assert t["mon.disk.backing.read_bytes"] == (6713299 - 6713267) * 512
    busy = (92861 - 92857) + (173 - 173) + (28333 - 28275) + (4191 - 4177)
    assert t["mon.cpu.busy_s"] == pytest.approx(busy / mon.clock_ticks)
    assert mon.problems == []


def test_points_are_on_the_origin_timeline(proc):
    origin = time.monotonic() - 10.0  # the workload started 10 s ago
    mon = SystemMonitor(3600, "loop1", proc=proc.root)
    mon.start(origin)
    proc.set(stat="stat_b", diskstats="diskstats_b")
    mon.stop()
    t = by_name(mon)["mon.cpu.user_pct"].points[0][0]
    assert 10.0 <= t < 11.0


def test_counter_wrap_leaves_the_interval_out(proc):
    proc.set(diskstats="diskstats_wrap32_before_edited")
    mon = run(
        proc,
        [
            dict(stat="stat_b", diskstats="diskstats_wrap32_after_edited"),
            dict(stat="stat_b", diskstats="diskstats_b"),
        ],
    )
    series = by_name(mon)
    w = series["mon.disk.target.write_mb_per_s"].points
    assert len(w) == 1 and all(v >= 0 for _, v in w)  # only the interval after the wrap
    assert totals(mon)["mon.disk.target.write_bytes"] == (10615075 - 65240) * 512
    assert any("went backwards" in p for p in mon.problems)


def test_device_vanishes_and_is_recreated(proc):
    proc.set(diskstats="diskstats_loop231_written")
    mon = run(
        proc,
        [
            dict(diskstats="diskstats_loop231_gone"),
            dict(diskstats="diskstats_loop231_recreated"),
            dict(diskstats="diskstats_loop231_written"),
        ],
        device="/dev/loop231",
    )
    w = by_name(mon)["mon.disk.target.write_mb_per_s"].points
    assert len(w) == 1  # only recreated → written
    assert totals(mon)["mon.disk.target.write_bytes"] == 32768 * 512
    assert any("disappeared" in p for p in mon.problems)
    assert any("appeared" in p for p in mon.problems)


def test_device_absent_throughout(proc):
    mon = run(proc, [dict(stat="stat_b")], device="/dev/loop231", backing=None)
    t = {m.name: m for m in mon.totals()}
    assert t["mon.disk.target.write_bytes"].value is None
    assert t["mon.disk.backing.write_bytes"].value is None
    assert "no backing device" in t["mon.disk.backing.write_bytes"].note
    assert not any(s.name.startswith("mon.disk.") for s in mon.series())
    assert any("loop231 is not in" in p for p in mon.problems)


def test_iowait_backwards_never_negative(proc):
    mon = run(proc, [dict(stat="stat_iowait_backwards_edited")])
    assert all(v >= 0 for s in mon.series() for _, v in s.points)


def test_unreadable_files_are_problems_not_crashes(proc):
    mon = run(proc, [dict(stat=None, meminfo=None, diskstats=None)])
    assert not by_name(mon).get("mon.cpu.user_pct")
    assert any("cannot read" in p for p in mon.problems)
    assert totals(mon)["mon.disk.target.write_bytes"] is None


def test_thread_samples_on_its_own(tmp_path):
    mon = SystemMonitor(0.05, None, None)  # the real /proc
    mon.start(time.monotonic())
    # wait for ticks rather than a fixed time: a busy CI machine may starve the thread
    deadline = time.monotonic() + 10
    while mon.ticks < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    mon.stop()
    pts = by_name(mon)["mon.cpu.idle_pct"].points
    assert len(pts) >= 4
    assert [t for t, _ in pts] == sorted(t for t, _ in pts)
    assert mon.cpu_seconds >= 0 and mon.ticks >= 3


def test_bad_interval_refused():
    with pytest.raises(ValueError):
        SystemMonitor(0)


# --- MonitorSet ------------------------------------------------------------------------


class Broken(Monitor):
    name = "broken"

    def start(self, origin):
        raise RuntimeError("boom")

    def stop(self):
        raise RuntimeError("bang")

    def series(self):
        return []

    def totals(self):
        return []


def test_monitors_for_follows_the_settings():
    assert [m.name for m in monitors_for(Monitors(), "/dev/loop1", None, None, 0.0).monitors] == [
        "system"
    ]
    assert monitors_for(Monitors(system=False), None, None, None, 0.0).monitors == []
    ms = monitors_for(Monitors(interval=2.5), None, None, object(), 0.0)
    assert [m.name for m in ms.monitors] == ["system", "postgres"]
    assert all(m.interval == 2.5 for m in ms.monitors)


def test_monitor_set_never_breaks_the_run(proc):
    good = SystemMonitor(3600, "loop1", proc=proc.root)
    with MonitorSet([Broken(), good], time.monotonic()) as ms:
        proc.set(stat="stat_b", diskstats="diskstats_b")
    assert "could not start" in ms.problems[0] and "could not stop" in ms.problems[1]
    assert {m.name: m.value for m in ms.totals()}["mon.disk.target.write_bytes"] == 32 * 2**20
    assert ms.series()


# --- a filesystem over several devices -------------------------------------------------
# proc_diskstats_members_a/_b, captured here: between them dd wrote 16 MiB to loop0
# (4096 writes of 4 KiB) and 8 MiB to loop1 (1024 writes of 8 KiB), both O_DIRECT.


def test_the_members_of_a_spanning_filesystem_are_summed(proc):
    a, b = (parse_diskstats(text(f"diskstats_members_{x}")) for x in "ab")
    both = iostat_x(
        combined_disk([a["loop0"], a["loop1"]]), combined_disk([b["loop0"], b["loop1"]]), 2.0
    )
    assert both.written_bytes == 24 * 2**20 and both.w_per_s == (4096 + 1024) / 2
    assert both.avg_req_kib == 24 * 1024 / (4096 + 1024)
    util = [iostat_x(a[d], b[d], 2.0).util_pct for d in ("loop0", "loop1")]
    assert both.util_pct == pytest.approx(sum(util) / 2, abs=0.05)  # the members' mean
    queue = [iostat_x(a[d], b[d], 2.0).queue_depth for d in ("loop0", "loop1")]
    assert both.queue_depth == pytest.approx(sum(queue))

    proc.set(diskstats="diskstats_members_a")
    mon = run(
        proc,
        [dict(stat="stat_b", diskstats="diskstats_members_b")],
        device=["/dev/loop0", "loop1"],
        backing=None,
    )
    assert mon.devices == {"target": "loop0+loop1"}
    assert totals(mon)["mon.disk.target.write_bytes"] == 24 * 2**20
    assert mon.problems == []
    # one member gone from diskstats: the set is unknown, said once, not a partial sum
    proc.set(diskstats="diskstats_members_a")
    mon = run(
        proc,
        [dict(stat="stat_b", diskstats="diskstats_members_b")],
        device=["loop0", "loop1", "loop9"],
        backing=None,
    )
    assert totals(mon)["mon.disk.target.write_bytes"] is None
    assert mon.problems == [f"target device loop0+loop1+loop9 is not in {proc.root}/diskstats"]


def test_which_devices_a_target_is_watched_on(tmp_path):
    from pgfsbench.provision.mountinfo import MountEntry
    from pgfsbench.provision.target import PreparedTarget

    mount = MountEntry("/mnt", "btrfs", "/dev/loop3", "rw", "rw", 42)

    def target(device, devices):
        return PreparedTarget("t", "loop", "btrfs", tmp_path, device, mount, devices=devices)

    members = ["/dev/loop3", "/dev/loop4", "/dev/loop5"]
    assert target("/dev/loop3", members).io_devices == members  # btrfs or ZFS over them
    assert target("/dev/md0", members).io_devices == ["/dev/md0"]  # an array: its own
    assert target("/dev/loop3", ["/dev/loop3"]).io_devices == ["/dev/loop3"]
    assert target("/dev/vda1", []).io_devices == ["/dev/vda1"]  # a directory's filesystem
    assert target(None, []).io_devices == []
