"""The /proc parsers, on /proc snapshots captured on this machine.

Captured (kernel 6.18, 2 CPUs):
- proc_stat_a/b, proc_diskstats_a/b, proc_meminfo_idle: before and ~1 s after
  ``dd of=/dev/loop1 bs=4k count=8192 oflag=direct`` (32 MiB = 65536 sectors).
- proc_meminfo_dirty: right after a 300 MB buffered dd without fsync.
- proc_diskstats_loop231_*: a loop device added with LOOP_CTL_ADD, 16 MiB written
  (32768 sectors), removed with LOOP_CTL_REMOVE (gone), then added again
  (same name, counters back at zero: a real reset).
Edited copies (``*_edited``), for what this 64-bit kernel cannot produce:
- proc_diskstats_wrap32_*: loop1's sectors written near 2**32, then small.
- proc_stat_iowait_backwards: proc_stat_b with iowait lowered (proc(5): it can decrease).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.monitor.procfs import (
    CpuTimes,
    DiskStats,
    cpu_percentages,
    parse_diskstats,
    parse_meminfo,
    parse_proc_stat,
)
from pgfsbench.monitor.system import device_name

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / f"proc_{name}.txt").read_text()


# --- /proc/stat ------------------------------------------------------------------


def test_parse_proc_stat_aggregate_line():
    cpu = parse_proc_stat(fixture("stat_a"))
    assert cpu == CpuTimes(
        user=92857,
        nice=173,
        system=28275,
        idle=190137,
        iowait=28236,
        irq=0,
        softirq=4177,
        steal=5196,
    )


def test_cpu_percentages_between_captured_snapshots():
    pct = cpu_percentages(parse_proc_stat(fixture("stat_a")), parse_proc_stat(fixture("stat_b")))
    # deltas: user 4, nice 0, system 58, idle 97, iowait 77, irq 0, softirq 14, steal 10 = 260
    assert pct == pytest.approx(
        {
            "user": 400 / 260,
            "system": 7200 / 260,
            "iowait": 7700 / 260,
            "idle": 9700 / 260,
            "steal": 1000 / 260,
        }
    )
    assert sum(pct.values()) == pytest.approx(100)


def test_cpu_counter_going_backwards_is_not_negative():
    pct = cpu_percentages(
        parse_proc_stat(fixture("stat_a")), parse_proc_stat(fixture("stat_iowait_backwards_edited"))
    )
    assert pct["iowait"] == 0
    assert all(v >= 0 for v in pct.values())
    assert sum(pct.values()) == pytest.approx(100)


def test_cpu_no_time_passed_is_none():
    cpu = parse_proc_stat(fixture("stat_a"))
    assert cpu_percentages(cpu, cpu) is None
    # everything backwards (e.g. snapshots swapped): nothing known, not negative
    assert cpu_percentages(parse_proc_stat(fixture("stat_b")), cpu) is None


def test_old_kernel_stat_has_fewer_fields():
    assert parse_proc_stat("cpu  10 0 5 100\nintr 1\n") == CpuTimes(10, 0, 5, 100)


@pytest.mark.parametrize("text", ["", "intr 1 2 3\n", "cpu  a b c d\n", "cpu  1 2\n"])
def test_bad_proc_stat_raises(text):
    with pytest.raises(ValueError, match="/proc/stat"):
        parse_proc_stat(text)


# --- /proc/meminfo ---------------------------------------------------------------


def test_parse_meminfo_in_bytes():
    idle, dirty = parse_meminfo(fixture("meminfo_idle")), parse_meminfo(fixture("meminfo_dirty"))
    assert idle["Dirty"] == 2332 * 1024
    assert idle["Writeback"] == 0
    assert idle["MemFree"] > 0 and idle["Cached"] > 0
    assert dirty["Dirty"] == 342360 * 1024  # the 300 MB not yet written back
    assert idle["HugePages_Total"] == 0  # a count, not kB


def test_bad_meminfo_raises():
    with pytest.raises(ValueError, match="/proc/meminfo"):
        parse_meminfo("nothing here\n")


# --- /proc/diskstats -------------------------------------------------------------


def test_parse_diskstats_20_field_lines():
    disks = parse_diskstats(fixture("diskstats_a"))
    assert "loop1" in disks and "vda" in disks
    assert disks["loop1"] == DiskStats(
        reads=2275,
        sectors_read=18134,
        read_ms=110,
        writes=679754,
        sectors_written=10549539,
        write_ms=113208,
        in_flight=0,
        io_ms=63100,
        weighted_ms=148139,
    )


def test_parse_diskstats_old_14_field_lines_and_junk():
    text = (
        "   7       0 loop0 1 0 8 0 2 0 16 0 0 4 4\n"  # before kernel 4.18
        "garbage line\n   8 0 sda x y z 1 2 3 4 5 6 7 8 9 10\n"
    )
    assert parse_diskstats(text) == {
        "loop0": DiskStats(
            reads=1,
            sectors_read=8,
            read_ms=0,
            writes=2,
            sectors_written=16,
            write_ms=0,
            in_flight=0,
            io_ms=4,
            weighted_ms=4,
        )
    }


def test_device_name():
    assert device_name("loop3") == "loop3"
    assert device_name("/dev/loop3") == "loop3"
