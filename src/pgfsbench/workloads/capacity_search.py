"""Capacity at a latency target: the probes' latency and the search over rates (pure).

Two users: pgbench-capacity (transactions at ``--rate``, below) and fsync-capacity (fio
writes each followed by fdatasync at ``--rate_iops``, fsync_capacity.py). What follows
describes the pgbench probes; the search is the same for both.

A probe is a short pgbench run at a fixed schedule rate (``--rate R``). pgbench then logs,
per transaction, its latency *measured from the scheduled start*, so it includes the
schedule lag (the time the transaction waited because the previous one of its client had
not finished): the latency a user arriving at rate R sees. That is the latency compared
with the target; the lag alone is kept beside it. With ``--latency-limit`` pgbench skips
transactions already late when their turn comes: a skipped (or failed) transaction counts
as one over the target (an infinitely slow one) in the percentile, so skipping cannot make
a rate look better.

The search: the first probe runs unthrottled (no ``--rate``). If the chosen percentile is
within the target there, the capacity is that throughput (the system saturates before the
latency target binds). Otherwise that throughput is an upper bound of the capacity; rates
are halved from it until one passes, then the bracket [passing, failing] is split at its
geometric mean until failing / passing <= 1 + resolution or the probe budget is spent. The
capacity is the highest passing rate. Each probe is taken at face value (no retries): the
campaign's repetitions give the spread.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench.metrics import Metric, Series
from pgfsbench.workloads.pgbench_output import LatencyHistogram, _open_log


@dataclass(frozen=True)
class ProbeLatency:
    """What one probe's transaction logs say (latencies in ms)."""

    committed: int
    over: int  # skipped (--latency-limit) or failed: counted as over any target
    seconds: float  # the span the counted transactions completed in
    latency: LatencyHistogram
    lag: LatencyHistogram  # schedule lag; empty without --rate

    def percentile_ms(self, pct: float) -> float:
        """Nearest-rank percentile of latency (schedule lag included) over every
        transaction scheduled, the skipped and failed ones as infinitely slow."""
        total = self.committed + self.over
        if total == 0:
            return math.inf
        rank = max(1, math.ceil(pct / 100 * total))
        if rank > self.committed:
            return math.inf
        # the rank among committed ones is the same: the 'over' ones sort after them
        return _ranked(self.latency, rank) / 1000

    def lag_percentile_ms(self, pct: float) -> float | None:
        value = self.lag.percentile(pct)
        return None if value is None else value / 1000

    @property
    def tps(self) -> float:
        return self.committed / self.seconds if self.seconds > 0 else 0.0


def _ranked(hist: LatencyHistogram, rank: int) -> float:
    """The ``rank``-th smallest value (1-based) as the histogram holds it."""
    seen = 0
    for key in sorted(hist.counts):
        seen += hist.counts[key]
        if seen >= rank:
            assert hist.min is not None and hist.max is not None
            return min(max(hist.bucket_midpoint(key), hist.min), hist.max)
    return math.inf


def read_probe_logs(paths: Iterable[Path], skip_s: float = 0.0) -> ProbeLatency:
    """Parse pgbench -l logs: ``client tx time script epoch_s epoch_us [lag [retries]]``.

    ``time`` is microseconds, or ``skipped``/``failed``/a failure kind. Transactions that
    completed within ``skip_s`` seconds of the earliest start are left out (the probe's
    warm-up: connections, cold plans).
    """
    rows: list[tuple[float, bytes, bytes | None]] = []  # (end, time, lag)
    first_start = math.inf
    for path in paths:
        with _open_log(path) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) < 6 or not parts[4].isdigit() or not parts[5].isdigit():
                    continue
                end = int(parts[4]) + int(parts[5]) / 1e6
                if parts[2].isdigit():
                    first_start = min(first_start, end - int(parts[2]) / 1e6)
                rows.append((end, parts[2], parts[6] if len(parts) > 6 else None))
    latency, lag = LatencyHistogram(), LatencyHistogram()
    committed = over = 0
    if not rows:
        return ProbeLatency(0, 0, 0.0, latency, lag)
    if first_start == math.inf:
        first_start = min(end for end, _, _ in rows)
    cutoff = first_start + skip_s
    kept_ends = []
    for end, time_us, lag_us in rows:
        if end < cutoff:
            continue
        kept_ends.append(end)
        if time_us.isdigit():
            committed += 1
            latency.add(int(time_us))
            if lag_us is not None and lag_us.isdigit():
                lag.add(int(lag_us))
        else:  # skipped, failed, serialization, deadlock, other
            over += 1
    seconds = (max(kept_ends) - cutoff) if kept_ends else 0.0
    return ProbeLatency(committed, over, seconds, latency, lag)


@dataclass(frozen=True)
class Probe:
    """One probe's outcome: the rate asked for (None: unthrottled) and what it got."""

    rate: float | None
    tps: float  # committed a second
    latency_ms: float  # the chosen percentile, schedule lag included (inf: over)
    lag_ms: float | None  # the same percentile of the schedule lag alone
    passed: bool
    count: int = 0  # transactions or syncs the percentile ranks (0: not known)


# Fewer transactions than this above a probe's percentile and a stall or two decides it
# (p99 of 120 transactions is their second slowest): the capacity then says so.
MIN_TAIL = 5


def thin_tail(count: int, percentile: float) -> bool:
    """Whether a percentile of ``count`` observations rests on fewer than MIN_TAIL above it."""
    return 0 < count and count * (1 - percentile / 100) < MIN_TAIL


@dataclass
class Capacity:
    """The search's answer: ``tps`` is the highest passing rate (None: none passed)."""

    tps: float | None
    low: float | None  # the bracket: highest passing rate ...
    high: float | None  # ... and lowest failing one (None: the unthrottled run passed)
    bound: str  # "latency", "throughput" (the unthrottled run passed), "none"
    probes: list[Probe] = field(default_factory=list)
    stopped: str = ""  # "resolution", "budget", "floor"

    @property
    def bracket_ratio(self) -> float | None:
        if self.low is None or self.high is None or self.low <= 0:
            return None
        return self.high / self.low

    def at_capacity(self) -> Probe | None:
        """The passing probe the capacity is: the highest rate held, or the unthrottled
        one where the target does not bind below saturation."""
        return next(
            (
                p
                for p in self.probes
                if p.passed
                and (p.rate == self.low or (p.rate is None and self.bound == "throughput"))
            ),
            None,
        )

    def _thin_note(self, percentile: float) -> str:
        deciding = [
            p for p in self.probes if p.rate is not None and p.rate in (self.low, self.high)
        ]
        thin = [p for p in deciding if thin_tail(p.count, percentile)]
        if not thin:
            return ""
        fewest = min(p.count for p in thin)
        above = max(1, round(fewest * (1 - percentile / 100)))
        return (
            f"; a deciding probe counted {fewest}, so its p{percentile:g} is set by its "
            f"{above} slowest: a stall or two moves the capacity (longer probes steady it)"
        )

    def curves(self, latency: str, rate: str, rate_unit: str, lag: str = "") -> list[Series]:
        """The probes as curves over the rate asked for (the unthrottled one at the rate
        it reached), named ``latency`` (ms), ``rate`` (what each probe got, in
        ``rate_unit``) and ``lag`` (ms; "": none); a probe over the target by skips or
        failures (infinite percentile) has no latency point."""
        lat = Series(latency, "ms")
        got = Series(rate, rate_unit)
        lags = Series(lag, "ms")
        for p in sorted(self.probes, key=lambda p: p.rate if p.rate is not None else p.tps):
            x = p.rate if p.rate is not None else p.tps
            got.points.append((x, p.tps))
            if math.isfinite(p.latency_ms):
                lat.points.append((x, p.latency_ms))
            if lag and p.lag_ms is not None:
                lags.points.append((x, p.lag_ms))
        return [s for s in (lat, got, lags) if s.points]

    def metrics(
        self,
        prefix: str,
        name: str,
        unit: str,
        *,
        how: dict[str, str],
        resolution: str,
        max_probes: int,
        unthrottled: str,
        latency: str,
        percentile: float,
    ) -> list[Metric]:
        """The figures every capacity search gives, named ``prefix.name`` (the capacity),
        ``prefix.max_name``, ``prefix.bracket_high``, ``prefix.probes`` and, where a
        probe is the capacity, ``prefix.latency_ms``: ``how`` says for each bound how the
        capacity was found, ``resolution`` what stopped a search at its resolution,
        ``unthrottled`` what the unthrottled probe's figure is, ``latency`` what the
        latency at the capacity is; the capacity's note says when a probe that decided
        it (the highest passing, the lowest failing) was too short for ``percentile``."""
        stop = {
            "resolution": resolution,
            "budget": f"probe budget ({max_probes}) spent",
            "floor": "below the lowest rate",
        }.get(self.stopped, self.stopped)
        note = f"{how[self.bound]}; {stop}{self._thin_note(percentile)}"
        metrics = [
            Metric(f"{prefix}.{name}", self.tps, unit, True, note),
            Metric(f"{prefix}.max_{name}", self.probes[0].tps, unit, True, unthrottled),
            Metric(
                f"{prefix}.bracket_high",
                self.high,
                unit,
                None,
                "the lowest rate probed that missed the target",
            ),
            Metric(f"{prefix}.probes", len(self.probes), "probes", None, stop),
        ]
        if (at := self.at_capacity()) is not None:
            metrics.append(Metric(f"{prefix}.latency_ms", at.latency_ms, "ms", None, latency))
        return metrics


def search(
    probe: Callable[[float | None], Probe],
    *,
    resolution: float,
    max_probes: int,
    min_rate: float = 1.0,
    whole: bool = False,
) -> Capacity:
    """Find the highest rate whose probe passes (see the module's text).

    ``probe(None)`` runs unthrottled; ``probe(R)`` at ``--rate R``. ``max_probes`` counts
    every probe, the unthrottled one too. ``whole``: rates are whole numbers (fio's
    ``--rate_iops``); the search also stops when the bracket's ends are adjacent.
    """
    first = probe(None)
    probes = [first]
    if first.passed:
        return Capacity(first.tps, first.tps, None, "throughput", probes, "resolution")
    low: float | None = None
    high = max(first.tps, min_rate)
    rate = high / 2
    stopped = "budget"
    while len(probes) < max_probes:
        if low is None:
            if rate < min_rate:
                stopped = "floor"
                break
        elif high / low <= 1 + resolution:
            stopped = "resolution"
            break
        if whole:
            rate = float(round(rate))
            if rate in (low, high):  # adjacent whole rates: nothing left between them
                stopped = "resolution"
                break
        p = probe(rate)
        probes.append(p)
        if p.passed:
            low = rate
        else:
            high = rate
        rate = high / 2 if low is None else math.sqrt(low * high)
    else:
        if low is not None and high / low <= 1 + resolution:
            stopped = "resolution"
    if low is None:
        return Capacity(None, None, high, "none", probes, stopped)
    return Capacity(low, low, high, "latency", probes, stopped)
