"""Cost per unit of work, and tps stalls with what the monitors saw during them.

Pure functions of a run's stored metrics and series (the monitors' ``mon.*``
values beside the workload's own), so they can be computed when a run is
recorded or again from a results directory. Every derived number is skipped,
never invented, when an input is missing, None or zero.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from pgfsbench.metrics import Metric, Series
from pgfsbench.workloads import registry
from pgfsbench.workloads.kind import WorkloadKind

TPS_SERIES = "pgbench.tps"

# What stall_context compares, during the stalls vs the rest of the run: key -> series.
CONTEXT_SERIES = {
    "dirty_mb": "mon.mem.dirty_mb",
    "writeback_mb": "mon.mem.writeback_mb",
    "write_mb_per_s": "mon.disk.target.write_mb_per_s",
    "await_ms": "mon.disk.target.await_ms",
    "iowait_pct": "mon.cpu.iowait_pct",
}
CHECKPOINT_SERIES = "mon.pg.checkpoints"


@dataclass(frozen=True)
class Stall:
    """Consecutive seconds with tps below the threshold; ``start``/``end`` are series times."""

    start: float
    end: float
    seconds: int  # samples in the stall
    min_tps: float


# ---------------------------------------------------------------- efficiency


def efficiency_metrics(
    workload: str, params: dict, metrics: list[Metric], series: dict[str, Series]
) -> list[Metric]:
    """``eff.*`` metrics that this run's values allow; all lower-is-better.

    The monitors' totals cover the whole run, so the transactions they are
    divided by must too: with a pgbench warm-up, ``pgbench.transactions``
    leaves the first seconds out, while the per-second tps series does not.
    """
    values = _values(metrics)
    tx = whole_run_transactions(values, series)
    wal = values.get("mon.pg.wal_bytes")
    dev = values.get("mon.disk.target.write_bytes")
    cpu = values.get("mon.cpu.busy_s")
    out: list[Metric] = []

    def add(
        name: str, num: float | None, den: float | None, unit: str, note: str, scale: float = 1.0
    ) -> None:
        if num is not None and den:  # den None or 0: nothing to divide by
            out.append(Metric(name, num / den * scale, unit, False, note))

    add(
        "eff.wal_bytes_per_tx",
        wal,
        tx,
        "B/tx",
        "WAL bytes (LSN difference) per committed transaction",
    )
    add(
        "eff.device_bytes_per_tx",
        dev,
        tx,
        "B/tx",
        "bytes written to the target's block device per committed transaction",
    )
    kind = registry.find(workload)
    if kind is not None and kind.writes_wal:  # elsewhere the WAL is noise, the ratio absurd
        add(
            "eff.device_bytes_per_wal_byte",
            dev,
            wal,
            "B/B",
            "device bytes written per WAL "
            "byte: the filesystem's write amplification (data files included)",
        )
    add(
        "eff.cpu_s_per_1000_tx",
        cpu,
        tx,
        "s",
        "CPU seconds (user+system, whole machine) per 1000 committed transactions",
        scale=1000.0,
    )
    if kind is not None and kind.logical_bytes is not None and dev is not None:
        logical, how = logical_bytes(kind, params, values)
        add(
            "eff.device_bytes_per_logical_byte",
            dev,
            logical,
            "B/B",
            f"device bytes written per byte the workload wrote ({how})",
        )
    return out


def whole_run_transactions(values: dict[str, float], series: dict[str, Series]) -> float | None:
    """Transactions over the monitors' whole window: a warm-up leaves the first seconds out
    of ``pgbench.transactions``, not out of the per-second tps series."""
    tx = values.get("pgbench.transactions")
    if values.get("pgbench.warmup_s") and (tps := series.get("pgbench.tps")) and tps.points:
        tx = sum(v for _, v in tps.points)
    return tx


def logical_bytes(
    kind: WorkloadKind, params: dict, values: dict[str, float]
) -> tuple[float | None, str]:
    """Bytes the workload itself wrote, and how that was worked out; None when unknown."""
    validated = registry.stored_params(kind, params)
    if kind.logical_bytes is None or validated is None:
        return None, "unknown"
    return kind.logical_bytes(validated, values)


def _values(metrics: list[Metric]) -> dict[str, float]:
    """name -> value of every metric with a value; the first non-None one wins."""
    out: dict[str, float] = {}
    for m in metrics:
        if m.value is not None and m.name not in out:
            out[m.name] = float(m.value)
    return out


# ---------------------------------------------------------------- stalls


def find_stalls(tps: Series, fraction: float = 0.5) -> list[Stall]:
    """Runs of consecutive seconds where tps < fraction × the run's median tps.

    A run whose median is 0 (or that has no points) has no stalls: "below half
    of nothing" does not describe a dip.
    """
    points = sorted((t, v) for t, v in tps.points if v is not None)
    if not points:
        return []
    median = statistics.median(v for _, v in points)
    threshold = fraction * median
    if median <= 0:
        return []
    step = _step(points)
    stalls: list[Stall] = []
    current: list[tuple[float, float]] = []
    for t, v in points:
        if v < threshold:
            if current and t - current[-1][0] > step * 1.5:  # a gap in the series
                stalls.append(_stall(current))
                current = []
            current.append((t, v))
        elif current:
            stalls.append(_stall(current))
            current = []
    if current:
        stalls.append(_stall(current))
    return stalls


def _step(points: list[tuple[float, float]]) -> float:
    gaps = [b[0] - a[0] for a, b in zip(points, points[1:]) if b[0] > a[0]]
    return statistics.median(gaps) if gaps else 1.0


def _stall(points: list[tuple[float, float]]) -> Stall:
    return Stall(points[0][0], points[-1][0], len(points), min(v for _, v in points))


def stall_context(stalls: Stall | list[Stall], series: dict[str, Series]) -> dict:
    """Monitor averages during the stall(s) vs outside them, and whether a checkpoint finished.

    Returns ``{key: (during, outside)}`` for each of CONTEXT_SERIES (either side
    None when no sample falls there; the key absent when the series is missing)
    and ``"checkpoint": True/False`` (None without the checkpoint series).
    """
    stalls = [stalls] if isinstance(stalls, Stall) else list(stalls)
    step = max((_step(sorted(s.points)) for s in (series.get(TPS_SERIES),) if s), default=1.0)

    def inside(t: float) -> bool:
        return any(s.start - step / 2 <= t <= s.end + step / 2 for s in stalls)

    out: dict = {}
    for key, name in CONTEXT_SERIES.items():
        s = series.get(name)
        if s is None or not s.points:
            continue
        during = [v for t, v in s.points if v is not None and inside(t)]
        outside = [v for t, v in s.points if v is not None and not inside(t)]
        out[key] = (_mean(during), _mean(outside))
    cp = series.get(CHECKPOINT_SERIES)
    out["checkpoint"] = (
        None if cp is None else any(v is not None and v > 0 and inside(t) for t, v in cp.points)
    )
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def stall_metrics(
    series: dict[str, Series],
    fraction: float = 0.5,
    tps_name: str = TPS_SERIES,
    trim_edges: bool = False,
) -> list[Metric]:
    """``stall.seconds`` and ``stall.count`` (lower is better); [] without a tps series.

    ``trim_edges`` leaves out the first and last points: for a series bucketed by
    whole seconds (pgbench's), those seconds are partial.
    """
    tps = series.get(tps_name)
    if trim_edges and tps is not None and len(tps.points) > 2:
        # The first and last seconds are partial (the run starts and ends mid-second):
        # their low counts are not stalls.
        tps = Series(tps.name, tps.unit, sorted(tps.points)[1:-1])
    points = [v for _, v in tps.points if v is not None] if tps else []
    if tps is None or not points:
        return []
    stalls = find_stalls(tps, fraction)
    seconds = sum(s.seconds for s in stalls)
    median = statistics.median(points)
    note = stall_note(stalls, series, fraction, median)
    return [
        Metric("stall.seconds", float(seconds), "s", False, note),
        Metric(
            "stall.count",
            float(len(stalls)),
            "stalls",
            False,
            f"runs of consecutive seconds below {fraction:.0%} of the median tps",
        ),
    ]


def stall_note(
    stalls: list[Stall], series: dict[str, Series], fraction: float, median: float
) -> str:
    """One sentence: how long tps stalled and what the monitors showed meanwhile."""
    seconds = sum(s.seconds for s in stalls)
    head = f"{seconds} s below {fraction:.0%} of median tps ({median:,.0f} tx/s)" + (
        f" in {len(stalls)} stall{'s' if len(stalls) != 1 else ''}" if stalls else ""
    )
    if not stalls:
        return head
    ctx = stall_context(stalls, series)
    parts = []
    for key, label, unit in (
        ("dirty_mb", "dirty", " MB"),
        ("writeback_mb", "writeback", " MB"),
        ("write_mb_per_s", "device writes", " MB/s"),
        ("await_ms", "await", " ms"),
        ("iowait_pct", "iowait", "%"),
    ):
        during, outside = ctx.get(key, (None, None))
        if during is not None and outside is not None:
            parts.append(f"{label} {during:,.0f}{unit} vs {outside:,.0f}{unit}")
    text = head
    if parts:
        text += "; during them " + ", ".join(parts)
    if ctx.get("checkpoint"):
        text += ", a checkpoint finished" if parts else "; a checkpoint finished in them"
    return text


def derived_metrics(
    workload: str,
    params: dict,
    metrics: list[Metric],
    series: dict[str, Series],
    fraction: float = 0.5,
) -> list[Metric]:
    """Everything this module derives for one run: efficiency, then stalls."""
    return efficiency_metrics(workload, params, metrics, series) + stall_metrics(
        series, fraction, trim_edges=True
    )
