"""Resuming an interrupted or killed campaign: where it stopped, and what continues.

Everything comes from what the campaign recorded, never from files on disk now:
the plan is the composed plan stored with it (a plan file edited since cannot
mix in), the order and seed are the recorded schedule's, the decisions of
'auto' are replayed from the stored rounds.

A round is a block for the paired statistics: its targets are measured close in
time, on the same generation of filesystems. So the campaign resumes at the
first round that did not end (``from_round``), run again whole; what that round
and any cut-short run had recorded is kept, marked 'superseded', never counted.
Every target is provisioned again (the old filesystems were torn down): reused
targets (``fresh = false``) get a new uncounted settling round first when the
plan settles, and a load they need again is stored uncounted (repetition 0).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from pgfsbench.analysis.caveats.disturbance import disturbed_runs
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.analysis.stats.stored_design import design_for
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger, state_dir
from pgfsbench.plan.model import Plan
from pgfsbench.schedule import Schedule, Stop
from pgfsbench.store.read import Campaign as Stored
from pgfsbench.store.read import load_campaign

RESUMABLE = ("interrupted", "killed", "running")
SAME_HOST = ("hostname", "machine_id")  # another machine: refused
NOTED_HOST = ("kernel", "cpu", "cpus", "memory_mb")  # changed since: told and recorded


class NothingToResume(Exception):
    """The campaign ran to its end: there is nothing to resume (not an error)."""

    def __init__(self, campaign: Stored) -> None:
        self.status = campaign.status
        super().__init__(
            f"campaign {campaign.id} in {campaign.results_dir} ended "
            f"'{campaign.status}': it ran to its end, there is nothing to "
            "resume (failed runs are results, not gaps)"
        )


def plan_hash(plan: dict) -> str:
    """The stored (composed, validated) plan as one hash: what a resume must run."""
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()


def stored_plan(results_dir: Path) -> Plan:
    """The plan the campaign in ``results_dir`` recorded; refuses one that ran to its end
    (``NothingToResume``) or whose plan this pgfsbench cannot run again."""
    campaign = load_campaign(results_dir, series=False)
    if campaign.status not in RESUMABLE:
        raise NothingToResume(campaign)
    recorded = campaign.schedule.get("plan_sha256")
    if recorded and recorded != plan_hash(campaign.plan):
        raise UserError(
            f"{results_dir}: the stored plan does not match the hash recorded "
            "with it (the results were changed): refusing to resume"
        )
    try:
        plan = Plan.model_validate(campaign.plan)
    except ValidationError as exc:
        raise UserError(
            f"{results_dir}: its stored plan is not valid for this pgfsbench "
            f"({exc.error_count()} problems; it was recorded by pgfsbench "
            f"{campaign.version}): resume it with that version"
        ) from None
    return plan


def check_same_plan(given: Plan, stored: Plan, results_dir: Path) -> None:
    """A plan named with --resume must be the one the campaign recorded."""
    if plan_hash(given.model_dump(mode="json")) != plan_hash(stored.model_dump(mode="json")):
        raise UserError(
            f"the plan given differs from the one the campaign in {results_dir} "
            "recorded; a resumed campaign runs its recorded plan: leave PLAN out "
            "of 'run --resume', or start a new campaign with --results"
        )


@dataclass
class ResumePoint:
    """Where a campaign resumes, and what it carries over."""

    campaign: Stored
    from_round: int  # the first counted round that did not end: run again whole
    spent_s: float  # measuring time of the earlier sessions
    settle_again: bool  # reused targets settle again (round 0) before from_round
    host_changes: dict = field(default_factory=dict)  # fact -> [recorded, now]

    def first_round(self, schedule: Schedule) -> int:
        """The first round this session runs: a settling round that may not have ended is
        run again with the round after it."""
        return schedule.first_round if self.from_round == 1 else self.from_round

    @property
    def session(self) -> int:
        """This session's number: 1 for the first resume."""
        return len(self.campaign.schedule.get("resumes", [])) + 1


def resume_point(results_dir: Path, host: dict, pg_version: str) -> ResumePoint:
    """Where the campaign in ``results_dir`` resumes; called holding the machine lock,
    after ``refuse_leftovers`` (a killed campaign's leftovers are cleaned first)."""
    campaign = load_campaign(results_dir, series=False)
    if campaign.status not in RESUMABLE:
        raise NothingToResume(campaign)
    if campaign.status == "running" and _alive(results_dir):
        raise UserError(
            f"the campaign in {results_dir} is still running (its process is "
            "alive): wait for it, or stop it first"
        )
    for key in SAME_HOST:
        then, now = campaign.host.get(key), host.get(key)
        if then and now and then != now:
            raise UserError(
                f"the campaign in {results_dir} ran on another machine ({key} "
                f"{then!r}, here {now!r}): a campaign is resumed on the machine "
                "it started on; run a new campaign here"
            )
    recorded_pg = str(campaign.host.get("postgresql") or "").split(" ")[0]
    if recorded_pg and pg_version and recorded_pg != pg_version:
        raise UserError(
            f"the campaign in {results_dir} ran PostgreSQL {recorded_pg}, this "
            f"run would use {pg_version}: give --pg-bin with the same version"
        )
    changes = {
        k: [campaign.host.get(k), host.get(k)]
        for k in NOTED_HOST
        if campaign.host.get(k) != host.get(k)
    }
    schedule = campaign.schedule
    from_round = int(schedule.get("rounds") or 0) + 1
    reps = Plan.model_validate(campaign.plan).repetitions
    counted_before = from_round > 1
    settles = schedule.get("settle", False)
    return ResumePoint(
        campaign,
        from_round,
        spent_seconds(campaign),
        settle_again=bool(settles) and counted_before and not reps.fresh,
        host_changes=changes,
    )


def _alive(results_dir: Path) -> bool:
    """A live pgfsbench process has a ledger for these results."""
    directory = state_dir()
    for path in directory.glob("*.json") if directory.is_dir() else []:
        try:
            ledger = Ledger.load(path)
        except (OSError, ValueError, KeyError):
            continue
        if Path(ledger.results_dir) == results_dir and ledger.owner_alive():
            return True
    return False


def spent_seconds(campaign: Stored) -> float:
    """The time the campaign already measured, for its time budget: each session from
    its start (the campaign's, then each resumption's) to the last run it recorded; the
    time it stood stopped is not counted."""
    starts = [campaign.started] + [r["at"] for r in campaign.schedule.get("resumes", [])]
    spent = 0.0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else float("inf")
        stamps = [
            t
            for r in campaign.runs
            for t in (r.started, r.ended)
            if t is not None and start <= t < end
        ]
        spent += max(stamps, default=start) - start
    return spent


def restore(schedule: Schedule, point: ResumePoint) -> None:
    """Bring a new schedule to where the stored one stood when ``from_round`` began: the
    seeded order replayed (checked against the recorded visits), the counted samples
    of the rounds that ended, the stops taken, the targets that failed."""
    stored, before = point.campaign.schedule, point.from_round
    if stored.get("seed") is not None and stored["seed"] != schedule.seed:
        raise UserError("the recorded seed and the plan's disagree: the results were changed")
    schedule.visits = [tuple(v) for v in stored.get("visits", [])]
    if schedule.auto and "looks" not in (point.campaign.plan.get("repetitions") or {}):
        # Stored before planned looks: it goes on with the design it began with (a look
        # after every round), as its rounds will be replayed (stored_design.design_for).
        schedule.design = design_for(point.campaign.plan)
    start = point.first_round(schedule)
    for round_no, names in _first_blocks(schedule.visits):
        if round_no <= start:
            # Rounds that ended replay the seeded sequence; the one resumed is only checked.
            got = (
                schedule.order(round_no, names, record=False)
                if round_no == start
                else _replay(schedule, round_no, names)
            )
            if got != names:
                raise UserError(
                    f"the recorded order of round {round_no} ({', '.join(names)}) "
                    f"is not the schedule's ({', '.join(got)}): the results were "
                    "changed, or written by another pgfsbench"
                )
    by_key = {(m.type, m.label()): m for m in schedule.measurements}
    # Runs kept though disturbed are left out, as the statistics leave them out.
    left_out = disturbed_runs(point.campaign.runs)
    for run in point.campaign.runs:
        m = by_key.get((run.workload, run.label))
        if run.status != "ok" or m is None or not 1 <= run.repetition < before:
            continue
        trim = left_out.get(run.id)
        if trim is not None and not trim.trimmed:
            continue
        metrics = {x.name: x for x in run.metrics}
        name = headline_metric(run.workload, run.params, metrics)
        value = metrics[name].value if name in metrics else None
        if trim is not None and value is not None and trim.clean_ratio is not None:
            value *= trim.clean_ratio  # counted from the seconds the burst spared
        schedule.restore_sample(run.target, m, run.repetition, value)
    for s in stored.get("measurements", []):
        key = (s["workload"], s["label"])
        if key in by_key and s["round"] < before:
            schedule.stops[key] = Stop(
                s["reason"],
                s["round"],
                s.get("comparisons", 0),
                s.get("undecided", 0),
                # results from before budget stops kept their clock: the budget alone
                s.get("minutes", schedule.reps.max_minutes),
                s.get("ahead", False),
            )
    for s in stored.get("stops", []):
        if s["reason"] == "failed" and s["round"] < before:
            schedule.drop(s["target"], s["round"])
    schedule.last_round = before - 1
    if schedule.auto and before > 1:
        schedule.decisions = schedule._decide()
    schedule.resumes = list(stored.get("resumes", []))
    redo = stored.get("redo") or {}
    # The time spent on visits run again stays outside the budget's clock.
    schedule.extra_s = float(redo.get("spent_s") or 0.0)
    schedule.from_budget_s = float(redo.get("from_budget_s") or 0.0)
    schedule.disturbed = [d for d in redo.get("disturbed", []) if d.get("round", 0) < before]
    schedule.resettling = point.settle_again
    schedule.reloads_uncounted = not schedule.reps.fresh and before > 1
    schedule.started = schedule.clock() - point.spent_s


def _first_blocks(visits: list[tuple[int, str]]) -> list[tuple[int, list[str]]]:
    """Each round's first visit order (a resumed round appears again later)."""
    blocks: list[tuple[int, list[str]]] = []
    for round_no, name in visits:
        if blocks and blocks[-1][0] == round_no and name not in blocks[-1][1]:
            blocks[-1][1].append(name)
        else:
            blocks.append((round_no, [name]))
    seen: set[int] = set()
    out = []
    for round_no, names in blocks:
        if round_no not in seen:
            seen.add(round_no)
            out.append((round_no, names))
    return out


def _replay(schedule: Schedule, round_no: int, names: list[str]) -> list[str]:
    """The order the schedule gives ``round_no`` with the targets it visited, consuming
    the seeded sequence as the first session did."""
    got = schedule.order(round_no, names)
    del schedule.visits[-len(got) :]  # already recorded
    return got
