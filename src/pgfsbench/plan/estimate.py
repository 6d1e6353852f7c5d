"""Rough cost of a plan before running it: disk space and time.

The figures are calibrated on a 2-core VM with loop images (see the built-in
plans table in docs/getting-started.md); they exist so `plan check` can warn about an afternoon-long
plan, not to predict to the second.
"""

from __future__ import annotations

from pgfsbench.plan.model import Plan, Target
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads.kind import MB, WorkloadBase
from pgfsbench.workloads.registry import kind

TARGET_SETUP_S = 8.0  # mkfs, mount, initdb, start, stop, teardown
RESTART_S = 3.0  # a reused target: PostgreSQL start and stop


def workload_seconds(w: WorkloadBase) -> float:
    return kind(w.type).seconds(w)


def target_needs(plan: Plan, target: Target) -> dict:
    """Disk the target takes on the host, and the most its workloads write on it."""
    base = 48 * MB  # an initdb'd cluster plus its first WAL segments
    peak, tables = 0, 0  # tables: bytes of the loaded database tables on the target
    for w in plan.measurements():
        k = kind(w.type)
        if k.loads_tables is not None:
            tables = 0  # a load drops the tables it replaces first
        peak = max(peak, tables + k.disk_bytes(w, tables))
        if k.loads_tables is not None:
            tables = k.loads_tables(w)
    image = size_to_bytes(target.size) * target.images + (
        size_to_bytes(target.log_size) if target.log_size else 0
    )
    return {
        "image_bytes": image if target.kind == "loop" else 0,
        "workload_peak_bytes": base + peak,
    }


def round_visits(
    plan: Plan, auto_rounds: int | None = None
) -> list[tuple[int, float, list[WorkloadBase]]]:
    """One target's visit in each round, as the campaign's schedule runs them, the
    settling round (reused targets) first: (round, setup seconds, the measurements it
    runs). A fresh target pays its setup (and pgbench its load) again each round; a
    reused one only restarts PostgreSQL. An 'auto' plan runs ``auto_rounds`` (default:
    its max)."""
    from pgfsbench.schedule import Schedule

    reps = plan.repetitions
    settle = reps.settles(Schedule(reps, ["t"], plan.measurements()).max_rounds())
    if reps.count == "auto":
        # A fixed count of that many rounds, with the settling round the plan would have.
        reps = reps.model_copy(update={"count": auto_rounds or reps.max, "settle": settle})
    schedule = Schedule(reps, ["t"], plan.measurements())
    out = []
    for round_no in range(schedule.first_round, schedule.max_rounds() + 1):
        setup = TARGET_SETUP_S if reps.fresh or round_no == schedule.first_round else RESTART_S
        visit = schedule.visit("t", round_no)
        for w in visit:  # so a reused target is known to hold its tables next round
            schedule.record("t", w, None, ok=True, round_no=round_no)
        out.append((round_no, setup, visit))
    return out


def round_seconds(plan: Plan, auto_rounds: int | None = None) -> list[float]:
    """Each round's seconds over every target (see ``round_visits``)."""
    return [
        (setup + sum(workload_seconds(w) for w in visit)) * len(plan.targets)
        for _, setup, visit in round_visits(plan, auto_rounds)
    ]


def plan_seconds(plan: Plan, auto_rounds: int | None = None) -> float:
    """The whole plan's seconds (an 'auto' plan at ``auto_rounds``, default its max)."""
    return sum(round_seconds(plan, auto_rounds))


def budget_seconds(plan: Plan) -> tuple[float, float]:
    """The expected duration, shortest to longest. A fixed count: its rounds. 'auto':
    from every comparison decided at the first planned look to the budget spent:
    max rounds, or the rounds started within max_minutes (a round started runs out)."""
    reps = plan.repetitions
    if reps.count != "auto":
        total = plan_seconds(plan)
        return total, total
    cap, spent = reps.max_minutes * 60, 0.0
    for seconds in round_seconds(plan):
        if spent >= cap:
            break
        spent += seconds
    return min(plan_seconds(plan, reps.look_rounds()[0]), spent), spent
