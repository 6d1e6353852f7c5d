"""The /proc sampler, on /proc snapshots captured on this machine.

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

import shutil
import time
from pathlib import Path

import pytest

from pgfsbench.monitor.procfs import CpuTimes, DiskStats
from pgfsbench.monitor.sampler import (
    Sampler,
    cpu_percentages,
    device_name,
    disk_rates,
    parse_diskstats,
    parse_meminfo,
    parse_proc_stat,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / f"proc_{name}.txt").read_text()


# --- /proc/stat ------------------------------------------------------------------

def test_parse_proc_stat_aggregate_line():
    cpu = parse_proc_stat(fixture("stat_a"))
    assert cpu == CpuTimes(user=92857, nice=173, system=28275, idle=190137, iowait=28236,
                           irq=0, softirq=4177, steal=5196)


def test_cpu_percentages_between_captured_snapshots():
    pct = cpu_percentages(parse_proc_stat(fixture("stat_a")), parse_proc_stat(fixture("stat_b")))
    # deltas: user 4, nice 0, system 58, idle 97, iowait 77, irq 0, softirq 14, steal 10 = 260
    assert pct == pytest.approx({"user": 400 / 260, "system": 7200 / 260,
                                 "iowait": 7700 / 260, "idle": 9700 / 260, "steal": 1000 / 260})
    assert sum(pct.values()) == pytest.approx(100)


def test_cpu_counter_going_backwards_is_not_negative():
    pct = cpu_percentages(parse_proc_stat(fixture("stat_a")),
                          parse_proc_stat(fixture("stat_iowait_backwards_edited")))
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
        reads=2275, sectors_read=18134, read_ms=110, writes=679754, sectors_written=10549539,
        write_ms=113208, in_flight=0, io_ms=63100, weighted_ms=148139)


def test_parse_diskstats_old_14_field_lines_and_junk():
    text = ("   7       0 loop0 1 0 8 0 2 0 16 0 0 4 4\n"  # before kernel 4.18
            "garbage line\n   8 0 sda x y z 1 2 3 4 5 6 7 8 9 10\n")
    assert parse_diskstats(text) == {"loop0": DiskStats(
        reads=1, sectors_read=8, read_ms=0, writes=2, sectors_written=16, write_ms=0,
        in_flight=0, io_ms=4, weighted_ms=4)}


def test_disk_rates_between_captured_snapshots():
    a = parse_diskstats(fixture("diskstats_a"))["loop1"]
    b = parse_diskstats(fixture("diskstats_b"))["loop1"]
    rates = disk_rates(a, b, 2.0)
    assert rates.written_bytes == 32 * 2**20  # what dd wrote
    assert rates.write_bytes_per_s == 16 * 2**20
    assert rates.read_bytes == 0
    assert 0 <= rates.util_pct <= 100


def test_device_that_disappears_or_is_recreated_gives_no_rate():
    written = parse_diskstats(fixture("diskstats_loop231_written"))
    gone = parse_diskstats(fixture("diskstats_loop231_gone"))
    back = parse_diskstats(fixture("diskstats_loop231_recreated"))
    assert written["loop231"].sectors_written == 32768
    assert "loop231" not in gone
    assert disk_rates(written["loop231"], gone.get("loop231"), 1.0) is None
    assert disk_rates(gone.get("loop231"), back["loop231"], 1.0) is None
    assert disk_rates(written["loop231"], back["loop231"], 1.0) is None  # reset to zero


def test_counter_wrap_gives_no_rate():
    before = parse_diskstats(fixture("diskstats_wrap32_before_edited"))["loop1"]
    after = parse_diskstats(fixture("diskstats_wrap32_after_edited"))["loop1"]
    assert after.sectors_written < before.sectors_written
    assert disk_rates(before, after, 1.0) is None


def test_device_name():
    assert device_name("loop3") == "loop3"
    assert device_name("/dev/loop3") == "loop3"


# --- the sampler, on a fake /proc -------------------------------------------------

def _fake_proc(tmp_path: Path, stat: str, meminfo: str, diskstats: str) -> Path:
    for name, fixture_name in (("stat", stat), ("meminfo", meminfo), ("diskstats", diskstats)):
        shutil.copyfile(FIXTURES / f"proc_{fixture_name}.txt", tmp_path / name)
    return tmp_path


def test_sampler_series_and_summary_from_snapshots(tmp_path):
    proc = _fake_proc(tmp_path, "stat_a", "meminfo_idle", "diskstats_a")
    # An hour's interval: only the explicit samples below happen.
    with Sampler(interval=3600, device="/dev/loop1", proc=proc) as s:
        _fake_proc(tmp_path, "stat_b", "meminfo_dirty", "diskstats_b")
    series = {x.name: x for x in s.series()}
    assert list(series) == ["cpu.user_pct", "cpu.system_pct", "cpu.iowait_pct", "cpu.idle_pct",
                            "cpu.steal_pct", "mem.dirty_mb", "mem.writeback_mb", "mem.cached_mb",
                            "mem.free_mb", "disk.write_mb_per_s", "disk.read_mb_per_s",
                            "disk.util_pct"]
    assert len(series["cpu.iowait_pct"].points) == 1  # the final sample at exit
    (t, iowait), = series["cpu.iowait_pct"].points
    assert t >= 0 and iowait == pytest.approx(7700 / 260)
    assert series["mem.dirty_mb"].points[0][1] == pytest.approx(342360 * 1024 / 1e6)
    assert series["mem.dirty_mb"].unit == "MB" and series["disk.write_mb_per_s"].unit == "MB/s"
    summary = s.summary()
    assert summary.written_bytes == 32 * 2**20 and summary.read_bytes == 0
    assert summary.disk_gaps == 0
    assert summary.cpu["iowait"] == pytest.approx(7700 / 260)
    assert s.problems == []


def test_sampler_survives_a_device_that_vanishes_and_returns(tmp_path):
    proc = _fake_proc(tmp_path, "stat_a", "meminfo_idle", "diskstats_loop231_written")
    with Sampler(interval=3600, device="loop231", proc=proc) as s:
        _fake_proc(tmp_path, "stat_b", "meminfo_idle", "diskstats_loop231_gone")
        s.sample_now()
        _fake_proc(tmp_path, "stat_b", "meminfo_idle", "diskstats_loop231_recreated")
        s.sample_now()
        (tmp_path / "diskstats").write_text(fixture("diskstats_loop231_written"))
    series = {x.name: x for x in s.series()}
    assert len(series["mem.dirty_mb"].points) == 3  # written → gone → re-created → written
    # Only the last interval (0 → 32768 sectors on the re-created device) is known.
    (_, rate), = series["disk.write_mb_per_s"].points
    assert rate > 0
    summary = s.summary()
    assert summary.written_bytes == 32768 * 512
    assert summary.disk_gaps == 2
    assert len(series["cpu.user_pct"].points) == 1  # later intervals had no CPU time
    assert all(v >= 0 for x in series.values() for _, v in x.points)
    assert any("disappeared" in p for p in s.problems)


def test_sampler_survives_a_wrap_and_unreadable_files(tmp_path):
    proc = _fake_proc(tmp_path, "stat_a", "meminfo_idle", "diskstats_wrap32_before_edited")
    with Sampler(interval=3600, device="loop1", proc=proc) as s:
        _fake_proc(tmp_path, "stat_b", "meminfo_idle", "diskstats_wrap32_after_edited")
        s.sample_now()
        (tmp_path / "meminfo").unlink()
        (tmp_path / "stat").write_text("garbage\n")
    series = {x.name: x for x in s.series()}
    # The wrapped interval is left out; the one after it (no change) is a known zero.
    assert [v for _, v in series["disk.write_mb_per_s"].points] == [0.0]
    summary = s.summary()
    assert (summary.written_bytes, summary.disk_gaps) == (0, 1)
    assert summary.cpu["iowait"] == pytest.approx(7700 / 260)  # up to the last readable stat
    assert len(series["mem.dirty_mb"].points) == 1
    assert any("backwards" in p for p in s.problems)
    assert any("meminfo" in p for p in s.problems)
    assert any("/proc/stat: no aggregate" in p for p in s.problems)


def test_sampler_missing_device_still_samples_cpu(tmp_path):
    proc = _fake_proc(tmp_path, "stat_a", "meminfo_idle", "diskstats_a")
    with Sampler(interval=3600, device="nvme9n1", proc=proc) as s:
        _fake_proc(tmp_path, "stat_b", "meminfo_idle", "diskstats_b")
    assert {x.name for x in s.series()} >= {"cpu.user_pct", "mem.dirty_mb"}
    assert s.summary().written_bytes is None
    assert s.problems == [f"device nvme9n1 is not in {proc}/diskstats"]


def test_sampler_thread_on_the_real_proc():
    with Sampler(interval=0.05) as s:
        time.sleep(0.35)
    user = next(x for x in s.series() if x.name == "cpu.user_pct").points
    assert len(user) >= 4
    times = [t for t, _ in user]
    assert times == sorted(times) and times[0] > 0
    summary = s.summary()
    assert sum(summary.cpu.values()) == pytest.approx(100)
    assert summary.seconds == pytest.approx(0.35, abs=0.2)


def test_sampler_prefix_and_bad_interval():
    with pytest.raises(ValueError):
        Sampler(interval=0)
    with Sampler(interval=10) as s:
        pass
    assert all(x.name.startswith("seqwrite.dd.cpu.") or x.name.startswith("seqwrite.dd.mem.")
               for x in s.series(prefix="seqwrite.dd."))
