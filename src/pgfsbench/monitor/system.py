"""The machine beside a workload: CPU split, memory dirty/writeback, the target's and
the backing disk's I/O with iostat -x's definitions, all from /proc (three small
reads per tick, no subprocess).

Series (points at the end of each interval, seconds since ``origin``)::

    mon.cpu.{user,system,iowait,idle,steal}_pct   vmstat's us/sy/wa/id/st
    mon.cpu.procs_running                         vmstat's r (a gauge)
    mon.cpu.{server,client}_pct                   our processes (proctree.py): PostgreSQL,
                                                  and pgfsbench with the tools it started
    mon.cpu.other_user_pct                        user CPU outside them: other load
    mon.cpu.ctxt_per_s
    mon.mem.{dirty,writeback,cached,free}_mb      MB = 10**6 bytes
    mon.disk.<role>.{r_per_s,w_per_s,read_mb_per_s,write_mb_per_s,
                     avg_req_kb,await_ms,util_pct,queue_depth}   role: target, backing

avg_req_kb (KiB, as iostat) and await_ms have no point in an interval without I/O:
there is no request to average. An interval where a device is missing or a
counter went backwards (wrap, device re-created) has no disk points and adds
nothing to the byte totals; it is recorded in ``problems``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.metrics import Metric, Series
from pgfsbench.monitor.base import PeriodicMonitor
from pgfsbench.monitor.procfs import (
    CpuTimes,
    DiskStats,
    StatExtras,
    combined_disk,
    cpu_percentages,
    cpu_total,
    iostat_x,
    parse_diskstats,
    parse_meminfo,
    parse_proc_stat,
    parse_proc_stat_extras,
)
from pgfsbench.monitor.proctree import ProcessTree, TreeCpu

MB = 1e6
ROLES = ("target", "backing")
CPU_SERIES = {f"mon.cpu.{k}_pct": "%" for k in ("user", "system", "iowait", "idle", "steal")}
CPU_SERIES |= {"mon.cpu.procs_running": "tasks", "mon.cpu.ctxt_per_s": "1/s"}
CPU_SERIES |= {f"mon.cpu.{k}_pct": "%" for k in ("server", "client", "other_user")}
MEM_SERIES = {
    "mon.mem.dirty_mb": "Dirty",
    "mon.mem.writeback_mb": "Writeback",
    "mon.mem.cached_mb": "Cached",
    "mon.mem.free_mb": "MemFree",
}
DISK_SERIES = {
    "r_per_s": "1/s",
    "w_per_s": "1/s",
    "read_mb_per_s": "MB/s",
    "write_mb_per_s": "MB/s",
    "avg_req_kb": "KiB",
    "await_ms": "ms",
    "util_pct": "%",
    "queue_depth": "requests",
}


def device_name(device: str) -> str:
    """'/dev/loop3', a /dev/disk/by-* or /dev/mapper symlink, or 'loop3' → the diskstats name."""
    if "/" in device:
        return os.path.basename(os.path.realpath(device))
    return device


def series_names(roles: tuple[str, ...] = ROLES) -> list[str]:
    """Every series the system monitor can produce, in the order series() returns them."""
    return [
        *CPU_SERIES,
        *MEM_SERIES,
        *(f"mon.disk.{role}.{key}" for role in roles for key in DISK_SERIES),
    ]


@dataclass(frozen=True)
class _Snapshot:
    t: float
    cpu: CpuTimes | None
    extras: StatExtras | None
    mem: dict[str, int] | None
    disks: dict[str, DiskStats | None]  # role → counters; None: absent from diskstats
    tree: TreeCpu | None = None  # our processes' CPU ticks


class SystemMonitor(PeriodicMonitor):
    name = "system"

    def __init__(
        self,
        interval: float = 1.0,
        device: str | list[str] | None = None,
        backing_device: str | None = None,
        *,
        proc: Path = Path("/proc"),
        server_pidfile: Path | None = None,
        own_pid: int | None = None,
    ) -> None:
        """``device``: the target's device, or every device a filesystem spanning
        several is made on (their counters are summed: procfs.combined_disk)."""
        super().__init__(interval)
        self.tree = ProcessTree(own_pid, server_pidfile, proc)
        self._first_tree: TreeCpu | None = None
        self._last_tree: TreeCpu | None = None
        self._members = {
            role: tuple(device_name(d) for d in ([dev] if isinstance(dev, str) else dev))
            for role, dev in (("target", device), ("backing", backing_device))
            if dev
        }
        self.devices = {role: "+".join(names) for role, names in self._members.items()}
        self._proc = proc
        self._points: dict[str, list[tuple[float, float]]] = {}
        self._first: _Snapshot | None = None
        self._prev: _Snapshot | None = None
        self._first_cpu: CpuTimes | None = None
        self._last_cpu: CpuTimes | None = None
        self._bytes: dict[str, list[int] | None] = {role: None for role in self.devices}
        self.clock_ticks = os.sysconf("SC_CLK_TCK")

    # --- reading -------------------------------------------------------------------

    def _read(self, name: str) -> str | None:
        try:
            return (self._proc / name).read_text()
        except OSError as exc:
            self.problem(f"cannot read {self._proc / name}: {exc.strerror or exc}")
            return None

    def _snapshot(self) -> _Snapshot:
        now = time.monotonic()
        cpu = extras = mem = None
        if (text := self._read("stat")) is not None:
            try:
                cpu = parse_proc_stat(text)
                extras = parse_proc_stat_extras(text)
            except ValueError as exc:
                self.problem(str(exc))
        if (text := self._read("meminfo")) is not None:
            try:
                mem = parse_meminfo(text)
            except ValueError as exc:
                self.problem(str(exc))
        disks: dict[str, DiskStats | None] = {}
        if self.devices:
            stats = parse_diskstats(self._read("diskstats") or "")
            for role, names in self._members.items():
                found = [s for name in names if (s := stats.get(name)) is not None]
                disks[role] = (
                    None
                    if len(found) < len(names)  # a member is absent
                    else found[0]
                    if len(found) == 1
                    else combined_disk(found)
                )
        return _Snapshot(now, cpu, extras, mem, disks, self.tree.sample())

    # --- sampling ------------------------------------------------------------------

    def _sample(self, first: bool, final: bool) -> None:
        snap = self._snapshot()
        if snap.cpu is not None:
            self._first_cpu = self._first_cpu or snap.cpu
            self._last_cpu = snap.cpu
        if snap.tree is not None:
            self._first_tree = self._first_tree or snap.tree
            self._last_tree = snap.tree
        for text in self.tree.problems:
            self.problem(text)
        if first:
            self._first = self._prev = snap
            for role, name in self.devices.items():
                if snap.disks.get(role) is None:
                    self.problem(f"{role} device {name} is not in {self._proc}/diskstats")
            return
        assert self._prev is not None
        self._record(self._prev, snap)
        self._prev = snap

    def _add(self, name: str, t: float, value: float) -> None:
        self._points.setdefault(name, []).append((t, value))

    def _record(self, prev: _Snapshot, cur: _Snapshot) -> None:
        t, dt = self._t(cur.t), cur.t - prev.t
        if prev.cpu and cur.cpu and (pct := cpu_percentages(prev.cpu, cur.cpu)):
            for key, value in pct.items():
                self._add(f"mon.cpu.{key}_pct", t, value)
        if prev.cpu and cur.cpu and prev.tree and cur.tree:
            self._record_ours(t, (prev.cpu, prev.tree), (cur.cpu, cur.tree))
        if cur.extras and cur.extras.procs_running is not None:
            self._add("mon.cpu.procs_running", t, float(cur.extras.procs_running))
        if (
            prev.extras
            and cur.extras
            and prev.extras.ctxt is not None
            and cur.extras.ctxt is not None
            and dt > 0
        ):
            if cur.extras.ctxt >= prev.extras.ctxt:
                self._add("mon.cpu.ctxt_per_s", t, (cur.extras.ctxt - prev.extras.ctxt) / dt)
            else:
                self.problem("context switch counter went backwards; that interval is left out")
        if cur.mem:
            for name, field in MEM_SERIES.items():
                if field in cur.mem:
                    self._add(name, t, cur.mem[field] / MB)
        for role, dev in self.devices.items():
            before, after = prev.disks.get(role), cur.disks.get(role)
            io = iostat_x(before, after, dt)
            if io is None:
                if before and after:
                    self.problem(
                        f"{role} device {dev}: counters went backwards (wrap or "
                        "device re-created); that interval is left out"
                    )
                elif before and not after:
                    self.problem(f"{role} device {dev} disappeared from diskstats")
                elif after and not before:
                    self.problem(
                        f"{role} device {dev} appeared in diskstats while sampling; "
                        "intervals before it are left out"
                    )
                continue
            acc = self._bytes[role] or [0, 0]
            acc[0] += io.read_bytes
            acc[1] += io.written_bytes
            self._bytes[role] = acc
            p = f"mon.disk.{role}."
            self._add(p + "r_per_s", t, io.r_per_s)
            self._add(p + "w_per_s", t, io.w_per_s)
            self._add(p + "read_mb_per_s", t, io.read_bytes_per_s / MB)
            self._add(p + "write_mb_per_s", t, io.write_bytes_per_s / MB)
            if io.avg_req_kib is not None:
                self._add(p + "avg_req_kb", t, io.avg_req_kib)
            if io.await_ms is not None:
                self._add(p + "await_ms", t, io.await_ms)
            self._add(p + "util_pct", t, io.util_pct)
            self._add(p + "queue_depth", t, io.queue_depth)

    def _record_ours(
        self, t: float, prev: tuple[CpuTimes, TreeCpu], cur: tuple[CpuTimes, TreeCpu]
    ) -> None:
        """Our processes' share of all CPUs, and the user CPU nobody of ours used, from
        the machine's and our processes' CPU times at the interval's ends."""
        (prev_cpu, a), (cur_cpu, b) = prev, cur
        total = cpu_total(cur_cpu) - cpu_total(prev_cpu)
        if total <= 0:
            return
        # A process leaving the groups (never reaped by one of ours) lowers the sum:
        # that interval counts 0 for it, never negative.
        server = max(0, b.server_user + b.server_system - a.server_user - a.server_system)
        client = max(0, b.client_user + b.client_system - a.client_user - a.client_system)
        machine_user = max(0, cur_cpu.user + cur_cpu.nice - prev_cpu.user - prev_cpu.nice)
        # User time only: kernel threads doing our own I/O (loop workers, writeback,
        # journal) run as system time outside our processes and are not other load.
        other = max(0, machine_user - max(0, b.user - a.user))
        self._add("mon.cpu.server_pct", t, min(100.0, 100.0 * server / total))
        self._add("mon.cpu.client_pct", t, min(100.0, 100.0 * client / total))
        self._add("mon.cpu.other_user_pct", t, 100.0 * other / total)

    # --- results -------------------------------------------------------------------

    def series(self) -> list[Series]:
        units = {
            **CPU_SERIES,
            **{n: "MB" for n in MEM_SERIES},
            **{f"mon.disk.{r}.{k}": u for r in ROLES for k, u in DISK_SERIES.items()},
        }
        with self._lock:
            return [
                Series(name, units[name], list(self._points[name]))
                for name in series_names()
                if self._points.get(name)
            ]

    def busy_seconds(self) -> float | None:
        """user+nice+system+irq+softirq CPU seconds over all CPUs, first to last sample."""
        if self._first_cpu is None or self._last_cpu is None:
            return None
        jiffies = sum(
            max(0, getattr(self._last_cpu, f) - getattr(self._first_cpu, f))
            for f in ("user", "nice", "system", "irq", "softirq")
        )
        return jiffies / self.clock_ticks

    def group_seconds(self, group: str) -> float | None:
        """CPU seconds of our 'server' or 'client' processes, first to last sample."""
        if self._first_tree is None or self._last_tree is None:
            return None
        a, b = self._first_tree, self._last_tree
        ticks = sum(
            getattr(b, f"{group}_{k}") - getattr(a, f"{group}_{k}") for k in ("user", "system")
        )
        return max(0, ticks) / self.clock_ticks

    def window_cpu(self) -> dict[str, float] | None:
        """The CPU split over the whole window, exact (first and last /proc/stat)."""
        if self._first_cpu is None or self._last_cpu is None:
            return None
        return cpu_percentages(self._first_cpu, self._last_cpu)

    def totals(self) -> list[Metric]:
        with self._lock:
            # Totals grow with the work done: no direction (eff.* ranks per unit of work).
            out = [
                Metric(
                    "mon.cpu.busy_s",
                    self.busy_seconds(),
                    "s",
                    None,
                    "user+system CPU seconds summed over all CPUs",
                )
            ]
            for group, what in (
                ("server", "PostgreSQL's processes"),
                ("client", "pgfsbench and the tools it started"),
            ):
                out.append(
                    Metric(
                        f"mon.cpu.{group}_s",
                        self.group_seconds(group),
                        "s",
                        None,
                        f"user+system CPU seconds of {what}",
                    )
                )
            for role in ROLES:
                acc = self._bytes.get(role)
                note = (
                    ""
                    if role in self.devices and acc is not None
                    else f"no {role} device"
                    if role not in self.devices
                    else f"{role} device {self.devices[role]}: no readable interval"
                )
                for i, kind in ((1, "write"), (0, "read")):
                    value = float(acc[i]) if acc is not None else None
                    out.append(Metric(f"mon.disk.{role}.{kind}_bytes", value, "B", None, note))
            return out
