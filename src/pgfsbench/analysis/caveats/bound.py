"""Did the run measure storage? What limited each run, from the monitors beside it.

Two halves, both pure:

- ``bound_metrics`` (when a run is recorded, like efficiency.py): the inputs, as
  ``bound.*`` metrics computed from the run's stored series and totals, so each one
  recomputes from what is kept;
- ``classify`` (on the read side: report, terminal, export): the classes from those
  metrics and the thresholds below.

Classes: ``cpu`` (the machine's CPUs saturated by our processes), ``other-load`` (CPU
or backing-disk I/O outside them), ``cached`` (a read workload whose reads never
reached the device) say the run did *not* measure the filesystem; ``device``
(target device saturated) and ``fsync`` (a WAL flush in progress most of the time)
say what in the storage stack limited it; ``cached-reads`` (a writing workload, TPC-B,
whose reads never reached the device: what it measured is the write path, WAL flushes
and writeback, not data-file reads) is said beside them; ``storage`` when nothing else
is flagged.

The device's share of the reads is ``bound.device_read_frac`` for a workload that only
reads and ``bound.data_read_frac`` for one that writes through the WAL: the name carries
what a low value means, so the read side needs nothing but the metrics.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from pgfsbench.analysis.caveats.efficiency import whole_run_transactions
from pgfsbench.metrics import Metric, Series
from pgfsbench.workloads import registry

CPU, DEVICE, FSYNC, CACHED, CACHED_READS, OTHER, STORAGE = (
    "cpu",
    "device",
    "fsync",
    "cached",
    "cached-reads",
    "other-load",
    "storage",
)
NOT_STORAGE = (CPU, OTHER, CACHED)  # a verdict resting on these runs compares something else

# Median per-second share of all CPUs busy (user+system): at 90% the run queue, not
# the disk, decides when a backend next runs (vmstat's rule of thumb for "CPU-bound").
CPU_BUSY = 0.90
# Median per-second %util of the target device: iostat's "saturated" for one queue.
DEVICE_UTIL = 0.90
# A WAL flush in progress more than half the run: commits wait on fsync, not on CPU.
FSYNC_SHARE = 0.50
# A workload that read less than a tenth of what it would uncached was served by the
# page cache (PostgreSQL's or the host's): a read workload then measured memory, a
# writing one (TPC-B) only its writes.
CACHED_READ = 0.10
# User CPU outside our processes, as a share of all CPUs: a tenth of a core is noise
# (a shell, an agent); 15% of the machine competes with the run. Kernel threads doing
# our own I/O run as system time and do not count (system.py).
OTHER_CPU = 0.15
# CPU the hypervisor gave to other guests (steal).
STEAL = 0.10
# Backing-disk I/O beyond what our loop device explains: both a share and a rate, as
# our own writes land there too: pgbench's transaction logs are about 30 B a
# transaction, 4 MB/s at 120,000 tps on this project's 2-core VMs.
OTHER_DISK_FRAC = 0.50
OTHER_DISK_MB_PER_S = 10.0

PAGE = 8192
MB = 1e6


@dataclass
class Bound:
    """What limited one run: its classes (never empty) and one reason per class."""

    classes: list[str]
    reasons: dict[str, str] = field(default_factory=dict)  # class → why, with the numbers

    @property
    def storage_bound(self) -> bool:
        return not any(c in NOT_STORAGE for c in self.classes)


# ---------------------------------------------------------------- record time


def bound_metrics(
    workload: str, params: dict, metrics: list[Metric], series: dict[str, Series]
) -> list[Metric]:
    """``bound.*``: the classifier's inputs; a figure the run's data cannot give is left out."""
    values = {m.name: float(m.value) for m in reversed(metrics) if m.value is not None}
    seconds = _window(series)
    out: list[Metric] = []

    def add(name: str, value: float | None, note: str, unit: str = "fraction") -> None:
        if value is not None:  # inputs of a judgement, not better or worse: no direction
            out.append(Metric(name, value, unit, None, note))

    busy = _combined(series, ("mon.cpu.user_pct", "mon.cpu.system_pct"))
    add(
        "bound.cpu_busy_frac",
        _median(busy, 100),
        "median per-second share of all CPUs busy (user+system)",
    )
    ours = _combined(series, ("mon.cpu.server_pct", "mon.cpu.client_pct"))
    times = {t for t, _ in ours}
    if ours and (b := sum(v for t, v in busy if t in times)) > 0:
        add(
            "bound.ours_cpu_frac",
            min(1.0, sum(v for _, v in ours) / b),
            "share of the busy CPU used by PostgreSQL, pgfsbench and the tools it started",
        )
    server = sum(v for _, v in _points(series, "mon.cpu.server_pct"))
    if ours and (o := sum(v for _, v in ours)) > 0:
        add("bound.server_cpu_frac", server / o, "PostgreSQL's share of our processes' CPU")
    add(
        "bound.other_cpu_frac",
        _mean(_points(series, "mon.cpu.other_user_pct"), 100),
        "user CPU outside our processes, as a share of all CPUs",
    )
    add(
        "bound.steal_frac",
        _mean(_points(series, "mon.cpu.steal_pct"), 100),
        "CPU time the hypervisor gave to others (steal)",
    )
    add(
        "bound.device_util_frac",
        _median(_points(series, "mon.disk.target.util_pct"), 100),
        "median per-second utilisation of the target device (iostat %util)",
    )
    _other_disk(values, seconds, add)
    _wal_sync(workload, values, series, seconds, add)
    _device_reads(workload, params, values, series, add)
    return out


def _other_disk(values: dict[str, float], seconds: float | None, add) -> None:
    keys = [
        f"mon.disk.{role}.{kind}_bytes"
        for role in ("backing", "target")
        for kind in ("read", "write")
    ]
    if any(k not in values for k in keys):
        return  # not a loop device, or a device missing from diskstats
    backing = values[keys[0]] + values[keys[1]]
    other = max(0.0, backing - values[keys[2]] - values[keys[3]])
    add(
        "bound.other_disk_frac",
        other / backing if backing > 0 else 0.0,
        "share of the backing disk's I/O beyond what our loop device did",
    )
    if seconds:
        add(
            "bound.other_disk_mb_per_s",
            other / seconds / MB,
            "backing-disk I/O beyond what our loop device did",
            "MB/s",
        )


def _wal_sync(
    workload: str, values: dict[str, float], series: dict[str, Series], seconds: float | None, add
) -> None:
    kind = registry.find(workload)
    if kind is None or not kind.writes_wal or not seconds:
        return
    if (ms := values.get("mon.pg.wal_sync_ms")) is not None:
        add(
            "bound.wal_sync_frac",
            ms / 1000 / seconds,
            "time PostgreSQL spent in WAL syncs, as a share of the run (track_wal_io_timing)",
        )
        return
    syncs, awaits = values.get("mon.pg.wal_syncs"), _points(series, "mon.disk.target.await_ms")
    if syncs is not None and awaits:
        # Without WAL I/O timing: each sync takes about one device request's time.
        add(
            "bound.wal_sync_frac",
            syncs * statistics.median(v for _, v in awaits) / 1000 / seconds,
            "estimated: WAL syncs × the target's median await, as a share of the "
            "run (track_wal_io_timing is off)",
        )


def _device_reads(
    workload: str, params: dict, values: dict[str, float], series: dict[str, Series], add
) -> None:
    kind = registry.find(workload)
    read = values.get("mon.disk.target.read_bytes")
    if kind is None or kind.read_bytes is None or read is None:
        return
    validated = registry.stored_params(kind, params)
    if validated is None:
        return
    tx = whole_run_transactions(values, series)
    if tx is not None:
        values = {**values, "pgbench.transactions": tx}
    try:
        uncached = kind.read_bytes(validated, values)
    except (KeyError, TypeError, ValueError):
        return
    if uncached:
        if kind.writes_wal and not validated.only_reads():
            add(
                "bound.data_read_frac",
                read / uncached,
                "bytes read from the target device / the least its transactions would "
                "read uncached (it writes too: low means its reads were cached)",
            )
        else:
            add(
                "bound.device_read_frac",
                read / uncached,
                "bytes read from the target device / the least it would read uncached",
            )


# ---------------------------------------------------------------- read side


def classify(metrics: list[Metric] | dict[str, float]) -> Bound | None:
    """The classes of a run from its ``bound.*`` metrics; None when it has none (results
    recorded before pgfsbench measured them, or no system monitor)."""
    raw = metrics if isinstance(metrics, dict) else {m.name: m.value for m in metrics}
    v = {
        k: float(x)
        for k, x in raw.items()
        if str(k).startswith("bound.")
        and isinstance(x, (int, float))
        and not isinstance(x, bool)
        and math.isfinite(x)
    }
    if not v:
        return None
    reasons: dict[str, str] = {}
    busy, ours = v.get("bound.cpu_busy_frac"), v.get("bound.ours_cpu_frac")
    others = v.get("bound.other_cpu_frac", 0.0) + v.get("bound.steal_frac", 0.0)
    # Saturated by us: our processes used at least as much of the machine as the user
    # CPU outside them (the rest is system time nobody can be billed for cheaply).
    if busy is not None and busy >= CPU_BUSY and (ours is None or busy * ours >= others):
        who = ""
        if (server := v.get("bound.server_cpu_frac")) is not None:
            who = (
                f", {server:.0%} of ours in the PostgreSQL server"
                if server >= 0.5
                else f", {1 - server:.0%} of ours in the client (pgbench or the tool)"
            )
        reasons[CPU] = f"CPUs {busy:.0%} busy (median per second){who}"
    other = []
    if (cpu := v.get("bound.other_cpu_frac", 0.0)) >= OTHER_CPU:
        other.append(f"{cpu:.0%} of the CPUs busy outside our processes")
    if (steal := v.get("bound.steal_frac", 0.0)) >= STEAL:
        other.append(f"{steal:.0%} of the CPU stolen by the hypervisor")
    if (
        v.get("bound.other_disk_frac", 0.0) >= OTHER_DISK_FRAC
        and (rate := v.get("bound.other_disk_mb_per_s", 0.0)) >= OTHER_DISK_MB_PER_S
    ):
        other.append(f"the backing disk did {rate:,.0f} MB/s beyond our loop device")
    if busy is not None and busy >= CPU_BUSY and CPU not in reasons:
        other.append(f"CPUs {busy:.0%} busy, mostly not by us")
    if other:
        reasons[OTHER] = "; ".join(other)
    if (read := v.get("bound.device_read_frac")) is not None and read < CACHED_READ:
        reasons[CACHED] = f"the device served {read:.1%} of the reads (the rest was cached)"
    if (util := v.get("bound.device_util_frac")) is not None and util >= DEVICE_UTIL:
        reasons[DEVICE] = f"target device {util:.0%} utilised (median per second)"
    if (sync := v.get("bound.wal_sync_frac")) is not None and sync >= FSYNC_SHARE:
        reasons[FSYNC] = f"a WAL sync in progress {min(sync, 1.0):.0%} of the time"
    if not reasons:
        reasons[STORAGE] = "no CPU, cache or other-load limit seen"
    # Said beside the others: a writing run with cached reads still measured storage.
    if (read := v.get("bound.data_read_frac")) is not None and read < CACHED_READ:
        reasons[CACHED_READS] = (
            f"the device served {read:.1%} of the reads: the data was cached, so this "
            "measured the writes (WAL flushes, writeback), not data-file reads"
        )
    return Bound(list(reasons), reasons)


def legend() -> str:
    """The classes and their thresholds in one sentence, for a report's legend."""
    return (
        f"{CPU}: all CPUs ≥ {CPU_BUSY:.0%} busy (median per second), more of it by "
        f"PostgreSQL and the tools pgfsbench started than by anyone else; {OTHER}: "
        f"≥ {OTHER_CPU:.0%} of the CPUs busy in user time outside them, ≥ {STEAL:.0%} "
        f"steal, or the backing disk ≥ {OTHER_DISK_MB_PER_S:g} MB/s (≥ "
        f"{OTHER_DISK_FRAC:.0%} of its I/O) beyond our loop device; {CACHED}: a read "
        f"workload whose device read < {CACHED_READ:.0%} of what it would uncached; "
        f"{DEVICE}: target device ≥ {DEVICE_UTIL:.0%} utilised; {FSYNC}: a WAL sync in "
        f"progress ≥ {FSYNC_SHARE:.0%} of the time; {CACHED_READS}: a writing workload "
        f"(TPC-B) whose device read < {CACHED_READ:.0%} of what its transactions would "
        "uncached, so it measured the writes, not data-file reads; "
        f"{STORAGE}: none of these. The first three mean the run did not measure the "
        "filesystem."
    )


# ---------------------------------------------------------------- helpers


def _points(series: dict[str, Series], name: str) -> list[tuple[float, float]]:
    s = series.get(name)
    return [(t, v) for t, v in s.points if v is not None] if s else []


def _combined(series: dict[str, Series], names: tuple[str, ...]) -> list[tuple[float, float]]:
    """Per-time sums of the series, at the times all of them have a point."""
    parts = [dict(_points(series, n)) for n in names]
    if not parts or not parts[0]:
        return []
    return [(t, sum(p[t] for p in parts)) for t in parts[0] if all(t in p for p in parts)]


def _median(points: list[tuple[float, float]], scale: float) -> float | None:
    return statistics.median(v for _, v in points) / scale if points else None


def _mean(points: list[tuple[float, float]], scale: float) -> float | None:
    return sum(v for _, v in points) / len(points) / scale if points else None


def _window(series: dict[str, Series]) -> float | None:
    """Seconds the monitors covered: their last point (the first sample is at 0)."""
    ends = [
        p[-1][0]
        for n in ("mon.cpu.user_pct", "mon.disk.target.util_pct")
        if (p := _points(series, n))
    ]
    return max(ends) if ends and max(ends) > 0 else None
