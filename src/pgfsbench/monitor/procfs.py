"""Pure parsers for /proc/stat, /proc/meminfo and /proc/diskstats, and their deltas.

No I/O here: each function takes the file's text (or parsed snapshots), so
it can be tested against captured snapshots. Counters are cumulative; a
counter that goes backwards (wrap, device re-created, iowait's documented
non-monotonicity) must never become a negative rate.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size


# --- /proc/stat ------------------------------------------------------------------


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative jiffies of the aggregate ``cpu`` line of /proc/stat.

    guest and guest_nice are left out: the kernel already counts them in
    user and nice.
    """

    user: int = 0
    nice: int = 0
    system: int = 0
    idle: int = 0
    iowait: int = 0
    irq: int = 0
    softirq: int = 0
    steal: int = 0


_CPU_FIELDS = [f.name for f in fields(CpuTimes)]


def parse_proc_stat(text: str) -> CpuTimes:
    """The all-CPU line of /proc/stat; fields an old kernel lacks are 0."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            try:
                values = [int(v) for v in parts[1 : 1 + len(_CPU_FIELDS)]]
            except ValueError:
                raise ValueError(f"/proc/stat: unreadable cpu line: {line!r}") from None
            if len(values) < 4:
                raise ValueError(f"/proc/stat: cpu line has {len(values)} fields: {line!r}")
            return CpuTimes(*values)
    raise ValueError("/proc/stat: no aggregate 'cpu' line")


def cpu_percentages(before: CpuTimes, after: CpuTimes) -> dict[str, float] | None:
    """CPU time split between two snapshots, in % of all CPUs, grouped as vmstat does.

    user = user + nice, system = system + irq + softirq, then iowait, idle and
    steal (vmstat's us/sy/wa/id/st columns, so the studies' figures compare).
    A field that went backwards counts as 0; None when no time passed.
    """
    delta = {name: max(0, getattr(after, name) - getattr(before, name)) for name in _CPU_FIELDS}
    total = sum(delta.values())
    if total <= 0:
        return None
    pct = {name: 100.0 * value / total for name, value in delta.items()}
    return {
        "user": pct["user"] + pct["nice"],
        "system": pct["system"] + pct["irq"] + pct["softirq"],
        "iowait": pct["iowait"],
        "idle": pct["idle"],
        "steal": pct["steal"],
    }


# --- /proc/meminfo ---------------------------------------------------------------


def parse_meminfo(text: str) -> dict[str, int]:
    """Every /proc/meminfo field in bytes ('Dirty: 2292 kB' → 2346, HugePages_* stay counts)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        parts = rest.split()
        if not sep or not parts:
            continue
        try:
            value = int(parts[0])
        except ValueError:
            continue
        # The kernel writes "kB" but means KiB.
        out[key.strip()] = value * 1024 if len(parts) > 1 and parts[1] == "kB" else value
    if not out:
        raise ValueError("/proc/meminfo: no fields")
    return out


# --- /proc/diskstats -------------------------------------------------------------

# --- /proc/diskstats, every field iostat -x needs ----------------------------------


@dataclass(frozen=True)
class DiskStats:
    """All cumulative /proc/diskstats fields iostat -x uses, for one device."""

    reads: int
    sectors_read: int
    read_ms: int
    writes: int
    sectors_written: int
    write_ms: int
    in_flight: int  # a gauge, not a counter
    io_ms: int  # time with I/O in flight: %util
    weighted_ms: int  # time × requests in flight: the average queue depth


def parse_diskstats(text: str) -> dict[str, DiskStats]:
    """Device name → every iostat -x counter; malformed lines are skipped (14, 18 or 20
    fields are fine)."""
    out: dict[str, DiskStats] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 14:
            continue
        try:
            n = [int(v) for v in parts[3:14]]
        except ValueError:
            continue
        out[parts[2]] = DiskStats(
            reads=n[0],
            sectors_read=n[2],
            read_ms=n[3],
            writes=n[4],
            sectors_written=n[6],
            write_ms=n[7],
            in_flight=n[8],
            io_ms=n[9],
            weighted_ms=n[10],
        )
    return out


def combined_disk(members: list[DiskStats]) -> DiskStats:
    """The devices a filesystem spans (btrfs or ZFS over several disks) as one: requests,
    bytes, times and queue depth summed; %util the members' mean (the set is busy when
    they all are), so it stays in 0..100."""
    total = {
        name: sum(getattr(m, name) for m in members) for name in (*_DISK_COUNTERS, "in_flight")
    }
    total["io_ms"] = total["io_ms"] // len(members)
    return DiskStats(**total)


@dataclass(frozen=True)
class IostatX:
    """One interval of one device, as iostat -x defines each column."""

    read_bytes: int
    written_bytes: int
    r_per_s: float
    w_per_s: float
    read_bytes_per_s: float
    write_bytes_per_s: float
    avg_req_kib: float | None  # (sectors read + written) / requests, in KiB; None: no I/O
    await_ms: float | None  # (ms reading + ms writing) / requests; None: no I/O
    util_pct: float
    queue_depth: float  # aqu-sz: weighted ms / elapsed ms


_DISK_COUNTERS = (
    "reads",
    "sectors_read",
    "read_ms",
    "writes",
    "sectors_written",
    "write_ms",
    "io_ms",
    "weighted_ms",
)


def iostat_x(before: DiskStats | None, after: DiskStats | None, seconds: float) -> IostatX | None:
    """iostat -x between two snapshots; None when a device is missing or a counter went
    backwards (32-bit wrap, device re-created): unknown, never negative."""
    if before is None or after is None or seconds <= 0:
        return None
    d = {name: getattr(after, name) - getattr(before, name) for name in _DISK_COUNTERS}
    if any(v < 0 for v in d.values()):
        return None
    ios = d["reads"] + d["writes"]
    sectors = d["sectors_read"] + d["sectors_written"]
    return IostatX(
        read_bytes=d["sectors_read"] * SECTOR_BYTES,
        written_bytes=d["sectors_written"] * SECTOR_BYTES,
        r_per_s=d["reads"] / seconds,
        w_per_s=d["writes"] / seconds,
        read_bytes_per_s=d["sectors_read"] * SECTOR_BYTES / seconds,
        write_bytes_per_s=d["sectors_written"] * SECTOR_BYTES / seconds,
        avg_req_kib=sectors * SECTOR_BYTES / 1024 / ios if ios else None,
        await_ms=(d["read_ms"] + d["write_ms"]) / ios if ios else None,
        util_pct=min(100.0, d["io_ms"] / 10.0 / seconds),
        queue_depth=d["weighted_ms"] / 1000.0 / seconds,
    )


# --- /proc/stat, the rest of what vmstat shows ------------------------------------


@dataclass(frozen=True)
class StatExtras:
    ctxt: int | None  # context switches since boot (a counter)
    procs_running: int | None  # runnable tasks now (a gauge: vmstat's r)
    cpus: int  # cpuN lines


def parse_proc_stat_extras(text: str) -> StatExtras:
    ctxt = running = None
    cpus = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        key = parts[0]
        if key.startswith("cpu") and key[3:].isdigit():
            cpus += 1
        elif key == "ctxt" and parts[1].isdigit():
            ctxt = int(parts[1])
        elif key == "procs_running" and parts[1].isdigit():
            running = int(parts[1])
    return StatExtras(ctxt, running, cpus)


# --- /proc/<pid>/stat and .../children: CPU time of one process -----------------------


@dataclass(frozen=True)
class ProcCpu:
    """Cumulative clock ticks of one process (all its threads) and of its children
    that have exited and been waited for (cutime/cstime)."""

    ppid: int
    utime: int
    stime: int
    cutime: int
    cstime: int

    @property
    def user(self) -> int:
        return self.utime + self.cutime

    @property
    def system(self) -> int:
        return self.stime + self.cstime


def parse_pid_stat(text: str) -> ProcCpu:
    """/proc/<pid>/stat → its CPU ticks. The command name may hold spaces and ')', so
    the fields are counted from its last ')'."""
    head, sep, rest = text.rpartition(")")
    parts = rest.split(None, 16)
    if not sep or len(parts) < 15:
        raise ValueError(f"/proc/<pid>/stat: unreadable: {text[:80]!r}")
    try:
        # after ')': state ppid pgrp session tty tpgid flags minflt cminflt majflt
        # cmajflt utime stime cutime cstime (proc(5) fields 3-17)
        return ProcCpu(
            int(parts[1]), int(parts[11]), int(parts[12]), int(parts[13]), int(parts[14])
        )
    except ValueError:
        raise ValueError(f"/proc/<pid>/stat: unreadable: {text[:80]!r}") from None


def parse_children(text: str) -> list[int]:
    """/proc/<pid>/task/<tid>/children: space-separated pids."""
    return [int(p) for p in text.split() if p.isdigit()]


def cpu_total(times: CpuTimes) -> int:
    """Every jiffy of /proc/stat's cpu line: the capacity of all CPUs in the window."""
    return sum(getattr(times, name) for name in _CPU_FIELDS)
