"""`pgfsbench plan check`: what a plan will do, without doing any of it."""

from __future__ import annotations

from typing import Any

from pgfsbench.plan.estimate import budget_seconds, target_needs, workload_seconds
from pgfsbench.plan.model import Plan, Target
from pgfsbench.plan.stripe import idle_stripe_options, stripe_mkfs_options
from pgfsbench.schedule import Schedule
from pgfsbench.units import size_to_bytes


def describe(plan: Plan) -> dict:
    """The expanded plan: targets, the runs on each, space, time and problems."""
    targets, problems = [], []
    for t in plan.targets:
        needs = target_needs(plan, t)
        if t.kind == "loop" and needs["workload_peak_bytes"] > size_to_bytes(t.size) * 0.9:
            problems.append(
                f"target '{t.name}': its workloads write up to "
                f"{needs['workload_peak_bytes'] / 2**20:.0f} MB on a {t.size} filesystem; "
                "give it a larger size"
            )
        if warning := idle_stripe_options(t):
            problems.append(warning)
        mkfs, geometry = stripe_mkfs_options(t)
        targets.append(
            {
                "name": t.name,
                "kind": t.kind,
                "fs": t.fs,
                "where": _where(t),
                "members": t.member_count,
                "volume": t.volume.model_dump() if t.volume else None,
                "stripe_geometry": geometry,
                "mkfs": mkfs,
                "plan_mkfs": t.mkfs,
                "mount": t.mount,
                "log_size": t.log_size,
                "zfs": t.zfs,
                "zpool": t.zpool,
                "direct_io": t.direct_io,
                "sysctls": t.sysctls,
                "queue": t.queue,
                "throttle": t.throttle.model_dump(exclude_none=True) if t.throttle else {},
                "memory": plan.memory_limit(t),
                "postgres_settings": plan.server_settings(t),
                "data_checksums": plan.data_checksums(t),
                "pg_bin": str(t.pg_bin) if t.pg_bin else None,
                **needs,
            }
        )
    reps = plan.repetitions
    auto = reps.count == "auto"
    schedule = Schedule(reps, [t.name for t in plan.targets], plan.measurements())
    most, settle = schedule.max_rounds(), schedule.settling
    # The settling round runs every measurement uncounted, but a load done once counts.
    runs: list[dict[str, Any]] = [  # JSON data
        {
            "workload": w.type,
            "label": w.label(),
            "estimated_seconds": round(workload_seconds(w), 1),
            "repetitions": reps.fixed(w) or reps.max,  # auto: at most
            "settling": (
                settle and not schedule.loads_once_in_settling(w) and not schedule.skips_settling(w)
            ),
            "params": w.model_dump(mode="json", exclude={"type", "repetitions"}),
        }
        for w in schedule.measurements
    ]
    notes = []
    if reps.ci_width is not None:
        notes.append(
            "repetitions.ci_width is ignored: 'auto' no longer stops on a CI "
            "width but when every headline comparison is decided (remove it)"
        )
    shortest, longest = budget_seconds(plan)
    return {
        "name": plan.name,
        "description": plan.description,
        "targets": targets,
        "runs_per_target": runs,
        "repetitions": reps.model_dump(mode="json"),
        # Settling runs (round 0) are extra: run on every target, never counted.
        "total_runs": sum(r["repetitions"] + r["settling"] for r in runs) * len(targets),
        "budget": {
            "most_rounds": most,
            "settling_round": settle,
            "first_look": reps.look_rounds()[0] if auto else most,
            "looks": reps.look_rounds() if auto else [most],
            "max_minutes": reps.max_minutes if auto else None,
        },
        "host_disk_bytes": sum(t["image_bytes"] for t in targets),
        # 'auto' stops between its first look and its budget: give both ends.
        "estimated_seconds": round(shortest),
        "estimated_seconds_max": round(longest),
        "problems": problems,
        "notes": notes,
    }


def _where(t: Target) -> str:
    if t.dir is not None:
        return str(t.dir)
    where = " ".join(map(str, t.member_devices)) or (
        f"loop image {t.size}" if t.images == 1 else f"{t.images} loop images of {t.size}"
    )
    if t.volume is not None:
        where += f", {t.volume.kind} (stripe {t.volume.stripe})"
    elif t.member_count > 1:
        where += f", spanned by {t.fs}"
    return where
