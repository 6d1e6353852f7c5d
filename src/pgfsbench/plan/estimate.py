"""Rough cost of a plan before running it: disk space and time.

The figures are calibrated on a 2-core VM with loop images (see the README's
seed-plan table); they exist so `plan check` can warn about an afternoon-long
plan, not to predict to the second.
"""

from __future__ import annotations

from pgfsbench.plan.model import (
    BasebackupWorkload,
    FileioWorkload,
    FsyncLatencyWorkload,
    FsyncWorkload,
    ParallelScanWorkload,
    PgbenchInitWorkload,
    PgbenchWorkload,
    Plan,
    SeqwriteWorkload,
    Target,
    WorkloadBase,
)
from pgfsbench.units import size_to_bytes

PG_TEST_FSYNC_TESTS = 18  # tests pg_test_fsync runs, each for --secs-per-test
TARGET_SETUP_S = 8.0  # mkfs, mount, initdb, start, stop, teardown
RESTART_S = 3.0  # a reused target: PostgreSQL start and stop
MB = 2**20


def workload_seconds(w: WorkloadBase) -> float:
    match w:
        case FsyncWorkload():
            return PG_TEST_FSYNC_TESTS * w.seconds + 1
        case FsyncLatencyWorkload():
            return w.seconds + w.warmup + size_to_bytes(w.size) / (200 * MB)
        case PgbenchInitWorkload():
            return 1 + 0.25 * w.scale
        case PgbenchWorkload():
            return w.duration + 2
        case ParallelScanWorkload():
            load = w.rows / 400_000
            return load + len(w.workers) * (w.repeats + 1) * w.rows / 5_000_000 + 2
        case BasebackupWorkload():
            return 5
        case SeqwriteWorkload():
            return len(w.tools) * (size_to_bytes(w.size) / (200 * MB) + 1)
        case FileioWorkload():
            return (size_to_bytes(w.size) / (200 * MB)
                    + len(w.patterns) * len(w.block_sizes) * (w.seconds + w.warmup + 0.5))
    return 0.0


def workload_bytes(w: WorkloadBase, scale: int) -> int:
    """What a workload writes on the target at its peak (``scale``: the last pgbench -i)."""
    match w:
        case FsyncWorkload():
            return 16 * MB
        case FsyncLatencyWorkload() | FileioWorkload() | SeqwriteWorkload():
            return size_to_bytes(w.size)
        case PgbenchInitWorkload():
            return w.scale * 15 * MB
        case ParallelScanWorkload():
            return w.rows * 110
        case BasebackupWorkload():
            return scale * 15 * MB + 64 * MB
    return 0


def target_needs(plan: Plan, target: Target) -> dict:
    """Disk the target takes on the host, and the most its workloads write on it."""
    base = 48 * MB  # an initdb'd cluster plus its first WAL segments
    peak, scale = 0, 0
    for w in plan.measurements():
        if isinstance(w, PgbenchInitWorkload):
            scale = w.scale
        peak = max(peak, workload_bytes(w, scale) + (scale * 15 * MB
                                                     if not isinstance(w, PgbenchInitWorkload)
                                                     else 0))
    image = size_to_bytes(target.size) + (size_to_bytes(target.log_size)
                                          if target.log_size else 0)
    return {"image_bytes": image if target.kind == "loop" else 0,
            "workload_peak_bytes": base + peak}


def plan_seconds(plan: Plan, auto_rounds: int | None = None) -> float:
    """Every target's rounds, as the campaign's schedule runs them: a fresh target pays
    its setup (and pgbench its load) again each round; a reused one only restarts
    PostgreSQL. An 'auto' plan is costed at ``auto_rounds`` (default: its max)."""
    from pgfsbench.schedule import Schedule

    reps = plan.repetitions
    if reps.count == "auto":
        reps = reps.model_copy(update={"count": auto_rounds or reps.max})
    schedule = Schedule(reps, ["t"], plan.measurements())
    per_target = 0.0
    for round_no in range(1, schedule.max_rounds() + 1):
        setup = TARGET_SETUP_S if reps.fresh or round_no == 1 else RESTART_S
        visit = schedule.visit("t", round_no)
        for w in visit:  # so a reused target is known to hold its tables next round
            schedule.record("t", w, None, ok=True)
        per_target += setup + sum(workload_seconds(w) for w in visit)
    return per_target * len(plan.targets)
