"""A vmstat-like sampler beside a workload: CPU split, dirty memory, device I/O.

Reads /proc directly from a background thread (three small files per tick,
no vmstat subprocess), so it costs next to nothing while the workload runs::

    with Sampler(interval=1.0, device="/dev/loop3") as s:
        run_the_workload()
    s.series()   # cpu.user_pct, mem.dirty_mb, disk.write_mb_per_s, ...
    s.summary()  # the CPU split and bytes written over the whole window

Every point is the interval ending at its time ``t`` (seconds since the
sampler started, or since ``origin``), as vmstat reports. Sizes are decimal
megabytes (10**6 B), the unit dd prints, so rates compare with it directly.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.monitor.procfs import (
    CpuTimes,
    DiskStats,
    cpu_percentages,
    disk_rates,
    parse_diskstats,
    parse_meminfo,
    parse_proc_stat,
)
from pgfsbench.workloads.result import Series

__all__ = ["Sampler", "WindowSummary", "device_name", "parse_proc_stat", "parse_meminfo",
           "parse_diskstats", "cpu_percentages", "disk_rates"]

MB = 1e6

# Series name → unit, in the order series() returns them.
CPU_SERIES = {f"cpu.{k}_pct": "%" for k in ("user", "system", "iowait", "idle", "steal")}
MEM_SERIES = {  # series name → /proc/meminfo field
    "mem.dirty_mb": "Dirty", "mem.writeback_mb": "Writeback",
    "mem.cached_mb": "Cached", "mem.free_mb": "MemFree",
}
DISK_SERIES = {"disk.write_mb_per_s": "MB/s", "disk.read_mb_per_s": "MB/s", "disk.util_pct": "%"}


def device_name(device: str) -> str:
    """'/dev/loop3', a /dev/disk/by-* or /dev/mapper symlink, or 'loop3' → the diskstats name."""
    if "/" in device:
        return os.path.basename(os.path.realpath(device))
    return device


@dataclass(frozen=True)
class Snapshot:
    t: float  # time.monotonic()
    cpu: CpuTimes | None  # None: the file could not be read or parsed this time
    mem: dict[str, int] | None
    disk: DiskStats | None  # None also when the device is (momentarily) absent


@dataclass(frozen=True)
class WindowSummary:
    """The whole sampled window at once, exact rather than an average of points."""

    seconds: float
    cpu: dict[str, float] | None  # user/system/iowait/idle/steal, % of all CPUs
    written_bytes: int | None  # on the device, summed over intervals where it was readable
    read_bytes: int | None
    disk_gaps: int = 0  # intervals left out (device absent, counters reset or wrapped)


class Sampler:
    def __init__(self, interval: float = 1.0, device: str | None = None, *,
                 origin: float | None = None, proc: Path = Path("/proc")) -> None:
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"sampling interval must be a positive number, not {interval!r}")
        self.interval = interval
        self.device = device_name(device) if device else None
        self.problems: list[str] = []  # why some points are missing: data, not prints
        self._origin = origin
        self._proc = proc
        self._points: dict[str, list[tuple[float, float]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._first: Snapshot | None = None
        self._prev: Snapshot | None = None
        self._written_bytes: int | None = None
        self._read_bytes: int | None = None
        self._disk_gaps = 0
        self._last_cpu: CpuTimes | None = None  # the latest readable /proc/stat

    # --- lifecycle ---------------------------------------------------------------

    def __enter__(self) -> "Sampler":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("a Sampler runs once; make a new one")
        self._first = self._prev = self._snapshot()
        self._last_cpu = self._first.cpu
        if self._origin is None:
            self._origin = self._first.t
        if self.device and self._first.disk is None:
            self._problem(f"device {self.device} is not in {self._proc}/diskstats")
        self._thread = threading.Thread(target=self._loop, name="pgfsbench-sampler",
                                        daemon=True)  # never keeps the program alive
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None or self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        # A last, partial interval: a workload shorter than one tick still gets a point.
        self._sample_safely()

    def _loop(self) -> None:
        assert self._first is not None
        start = self._first.t
        tick = 1
        # Deadlines on a fixed grid, so the period does not drift by the sampling cost.
        while not self._stop.wait(max(0.0, start + tick * self.interval - time.monotonic())):
            self._sample_safely()
            # After a stall (suspended VM, overloaded box) skip the missed ticks, no burst.
            tick = max(tick + 1, math.floor((time.monotonic() - start) / self.interval) + 1)

    # --- sampling ----------------------------------------------------------------

    def _read_proc(self, name: str) -> str | None:
        try:
            return (self._proc / name).read_text()
        except OSError as exc:
            self._problem(f"cannot read {self._proc / name}: {exc.strerror or exc}")
            return None

    def _snapshot(self) -> Snapshot:
        now = time.monotonic()
        cpu = mem = disk = None
        if (text := self._read_proc("stat")) is not None:
            try:
                cpu = parse_proc_stat(text)
            except ValueError as exc:
                self._problem(str(exc))
        if (text := self._read_proc("meminfo")) is not None:
            try:
                mem = parse_meminfo(text)
            except ValueError as exc:
                self._problem(str(exc))
        if self.device and (text := self._read_proc("diskstats")) is not None:
            disk = parse_diskstats(text).get(self.device)
        return Snapshot(now, cpu, mem, disk)

    def sample_now(self) -> None:
        """Close the current interval now (the thread does this every ``interval``)."""
        with self._lock:  # snapshot inside: two callers must not record out of order
            assert self._prev is not None, "start the sampler first"
            snap = self._snapshot()
            self._last_cpu = snap.cpu or self._last_cpu
            self._record(self._prev, snap)
            self._prev = snap

    def _sample_safely(self) -> None:
        try:
            self.sample_now()
        except Exception as exc:  # a bug of ours must end neither sampling nor the workload
            self._problem(f"sampling failed: {exc!r}")

    def _record(self, prev: Snapshot, cur: Snapshot) -> None:
        assert self._origin is not None
        t = round(cur.t - self._origin, 3)
        if prev.cpu and cur.cpu and (pct := cpu_percentages(prev.cpu, cur.cpu)):
            for key, value in pct.items():
                self._add(f"cpu.{key}_pct", t, value)
        if cur.mem:
            for name, field in MEM_SERIES.items():
                if field in cur.mem:
                    self._add(name, t, cur.mem[field] / MB)
        if self.device:
            rates = disk_rates(prev.disk, cur.disk, cur.t - prev.t)
            if rates is None:
                self._disk_gaps += 1
                if prev.disk and cur.disk:
                    self._problem(f"{self.device}: counters went backwards (reset or wrap); "
                                  "that interval is left out")
                elif prev.disk and not cur.disk:
                    self._problem(f"{self.device} disappeared from diskstats while sampling")
                return
            self._written_bytes = (self._written_bytes or 0) + rates.written_bytes
            self._read_bytes = (self._read_bytes or 0) + rates.read_bytes
            self._add("disk.write_mb_per_s", t, rates.write_bytes_per_s / MB)
            self._add("disk.read_mb_per_s", t, rates.read_bytes_per_s / MB)
            self._add("disk.util_pct", t, rates.util_pct)

    def _add(self, name: str, t: float, value: float) -> None:
        self._points.setdefault(name, []).append((t, value))

    def _problem(self, text: str) -> None:
        if text not in self.problems:  # once each: a missing device is not news every second
            self.problems.append(text)

    # --- results -----------------------------------------------------------------

    def series(self, prefix: str = "") -> list[Series]:
        """Every series that has points; ``prefix="seqwrite.dd."`` → seqwrite.dd.cpu.user_pct."""
        units = {**CPU_SERIES, **{n: "MB" for n in MEM_SERIES}, **DISK_SERIES}
        with self._lock:
            return [Series(prefix + name, unit, list(self._points[name]))
                    for name, unit in units.items() if self._points.get(name)]

    def summary(self) -> WindowSummary:
        """The CPU split from the first to the last snapshot, and device bytes moved."""
        with self._lock:
            first, last = self._first, self._prev
            if first is None or last is None:
                raise RuntimeError("the sampler has not run")
            cpu = (cpu_percentages(first.cpu, self._last_cpu)
                   if first.cpu and self._last_cpu else None)
            return WindowSummary(last.t - first.t, cpu, self._written_bytes, self._read_bytes,
                                 self._disk_gaps)
