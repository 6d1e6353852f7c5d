"""The project's vocabulary for measurements: metrics, per-second series, kept raw outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# The seqwrite workload's own monitor samples this often (the report says so under its
# timeline): a write lasts a second or two, and at the campaign monitors' 1 s it got two
# points (one tick, then stop), too few to show how dirty pages drained. 10 Hz costs
# about 1.4 % of one core (benchmarks/bench_monitor.py: 1.4 ms a tick); the CPU split
# and the byte totals come from the first and last sample, so they do not depend on it.
# Here, with the vocabulary, so the read side need not import the workload.
SEQWRITE_SAMPLE_INTERVAL = 0.1
# The checks of a crash state (crash/check.py), each a ``crash.corrupt.<check>`` metric
# the durability column reads (analysis/crashtest.py).
CRASH_CHECKS = ("mount", "start", "read", "amcheck", "checksums", "fsck")


@dataclass(frozen=True)
class Metric:
    """One number with a stable dotted name (``pgbench.tps``).

    ``value`` is None when the measured thing is unsupported on this target
    (e.g. ``fsync_writethrough`` on Linux): unsupported is not zero.
    ``higher_is_better`` is None for figures that describe rather than rank
    (workers launched, database size): they get no star, ratio verdict or winner.
    """

    name: str
    value: float | None
    unit: str
    higher_is_better: bool | None  # None: informational (a count, a size), no "better"
    note: str = ""


@dataclass
class Series:
    """A per-second curve; ``points`` are (seconds since the run started, value)."""

    name: str
    unit: str
    points: list[tuple[float, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Artifact:
    """A raw output kept next to the numbers (stdout, stderr, logs)."""

    kind: str
    path: Path
    command: tuple[str, ...] = ()
    exit_code: int | None = None


@dataclass
class WorkloadResult:
    metrics: list[Metric] = field(default_factory=list)
    series: list[Series] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)

    def metric(self, name: str) -> Metric:
        for m in self.metrics:
            if m.name == name:
                return m
        raise KeyError(name)
