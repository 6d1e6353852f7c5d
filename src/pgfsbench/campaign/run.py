"""The ``Campaign``: a plan run on this machine, recorded in a new results directory.

It holds the run's context (plan, options, ledger, store, PostgreSQL user,
schedule) and walks it: rounds → targets → workloads, recording each outcome.
What touches the machine comes from a provisioner (``machine.py``) and how a
workload runs from ``run_workload``; both are constructor parameters, so a unit
test drives rounds, failures and interrupts with fakes. What happens is told to
an observer as events (``events.py``); how they are shown is the caller's choice.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import secrets
import subprocess
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pgfsbench import __version__, proc
from pgfsbench.analysis.caveats.bound import bound_metrics
from pgfsbench.analysis.caveats.disturbance import disturbance_metrics, floor_of
from pgfsbench.analysis.caveats.efficiency import derived_metrics
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.campaign import events as ev
from pgfsbench.campaign.disturbed import MOST_AGAIN, RoundRuns
from pgfsbench.campaign.machine import Machine, Provisioner
from pgfsbench.campaign.options import Options
from pgfsbench.campaign.quiet import PROBE_S, busy_lately, ended_busy, wait_for_quiet
from pgfsbench.campaign.resume import ResumePoint, plan_hash, restore, resume_point
from pgfsbench.campaign.signals import SignalGuard, signals_unwind_once
from pgfsbench.errors import CommandFailed, Interrupted, ResultsUnwritable, UserError
from pgfsbench.ledger import Ledger, stale_ledgers
from pgfsbench.machine_lock import machine_lock
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.monitor import SystemMonitor, monitors_for
from pgfsbench.plan.estimate import budget_seconds
from pgfsbench.plan.model import Plan, Target
from pgfsbench.proc import RunAs
from pgfsbench.provision import cpu_latency
from pgfsbench.provision.memory import merge_usage
from pgfsbench.provision.target import PreparedTarget
from pgfsbench.schedule import SETTLING, Schedule
from pgfsbench.store.db import Store, check_new_results_dir
from pgfsbench.workloads import registry
from pgfsbench.workloads.context import RunContext

Runner = Callable[[RunContext, object], WorkloadResult]  # (ctx, workload) -> its numbers


def run_workload(ctx: RunContext, workload) -> WorkloadResult:
    """Measure ``workload``: the one place its type's runner is looked up."""
    return registry.kind(workload.type).run(ctx, workload)


def prepare_workload(ctx: RunContext, workload) -> list[Metric]:
    """What its type does before the measurement (outside its monitors): its metrics."""
    prepare = registry.kind(workload.type).prepare
    return prepare(ctx, workload) if prepare else []


@dataclass
class TargetState:
    """What a target carries from one visit to the next."""

    target_id: int
    target: PreparedTarget | None = None  # provisioned and kept (repetitions.fresh = false)
    provenance: dict | None = None  # from the first visit
    failed: bool = False  # provisioning failed: no more visits
    init_failed: bool = False  # its pgbench tables are not (completely) loaded
    remade: bool = False  # resumed: its next provisioning is recorded as a re-make


@dataclass
class Started:
    """What a campaign's rounds read and write, made once its targets are recorded: the
    results store and the schedule. Neither exists before ``Campaign.run()`` starts."""

    store: Store
    schedule: Schedule


class Campaign:
    """One run of ``plan``: ``Campaign(plan, options, observe).run()`` returns its status.

    ``observe(event)`` is told what happens (``events.py``), commands included;
    ``machine(campaign)`` makes the provisioner (the real ``Machine`` by default);
    ``run_workload(ctx, workload)`` measures one workload (its type's runner).
    ``resume=True`` continues the interrupted or killed campaign recorded in the
    results directory (``resume.py``); ``plan`` is then the plan it recorded.
    """

    def __init__(
        self,
        plan: Plan,
        options: Options,
        observe: ev.Observer = ev.ignore,
        *,
        machine: Callable[[Campaign], Provisioner] = Machine,
        run_workload: Runner = run_workload,
        resume: bool = False,
    ) -> None:
        self.plan = plan
        self.options = options
        self.resuming = resume
        self.point: ResumePoint | None = None  # where it resumes, once known
        self.emit = ev.shielded(observe)
        self.machine = machine(self)
        self.run_workload = run_workload
        # Set while it runs:
        self.id = ""
        self._ledger: Ledger | None = None
        self._user: RunAs | None = None
        self.specs: dict[str, Target] = {}  # the targets that run, by name
        self.states: dict[str, TargetState] = {}
        self.signals = SignalGuard()  # replaced by the installed one while it runs
        self.round_runs = RoundRuns()  # the counted runs of the round in progress
        self.last_busy = False  # the last run ended in someone else's burst
        self.disturbed_round: int | None = None  # the last round a visit was disturbed in
        # the last counted runs' metrics: the load the machine has anyway (a floor)
        self.recent: collections.deque[list[Metric]] = collections.deque(maxlen=6)

    @property
    def ledger(self) -> Ledger:
        """What the campaign acquired, to undo; it exists once ``run()`` holds the lock."""
        if self._ledger is None:
            raise RuntimeError("the campaign has not started: it has no ledger yet")
        return self._ledger

    @property
    def user(self) -> RunAs:
        """The user PostgreSQL and its tools run as; known once ``run()`` has started."""
        if self._user is None:
            raise RuntimeError("the campaign has not started: it has no PostgreSQL user yet")
        return self._user

    def _command(self, argv: tuple[str, ...], result) -> None:
        if result is None:  # new work: a signal a finalizer swallowed stops it here
            self.signals.raise_if_lost()
        self.emit(
            ev.CommandStarted(argv)
            if result is None
            else ev.CommandFinished(argv, result.exit_code, result.seconds)
        )

    def run(self) -> str:
        """Run every target of the plan; returns the campaign status: 'ok' (every run
        completed), 'partial' (some did) or 'failed' (none did)."""
        # What can be known to fail is refused before anything is made; so is a
        # results directory that cannot take results.
        self.machine.preflight()
        results_dir = self.options.results_dir
        if self.resuming:
            self.id = stored_plan_id(results_dir)
        else:
            check_new_results_dir(results_dir)
            self.id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        with (
            signals_unwind_once() as self.signals,
            proc.watching(self._command),
            machine_lock(
                self.id,
                "campaign",
                self.options.wait,
                lambda text: self.emit(ev.Note(text)),
                plan=self.plan.name,
                results=str(results_dir),
            ) as lock,
            cpu_latency.held(self.plan.machine.cpu_latency) as awake,
        ):
            refuse_leftovers()
            host = self.machine.host_facts()
            if awake:
                host["cpu_latency"] = awake
                if not awake["held"]:
                    self.emit(
                        ev.Note(
                            f"cannot hold the CPUs' wake-up latency at {awake['asked_us']} "
                            f"µs ({awake['why_not']}): measuring with the machine as it is",
                            "warning",
                        )
                    )
            if self.resuming:  # holding the lock: the campaign cannot be running now
                self.point = resume_point(results_dir, host, self.options.bins.version)
            ledger = self._ledger = Ledger.create(self.id, results_dir)
            ledger.add("lock", path=str(lock), holder=self.id)
            status = "failed"
            store: Store | None = None
            try:
                self._user = self.machine.pg_user()
                if self.point is None:
                    store = Store.create(results_dir)
                    store.start_campaign(
                        self.id,
                        self.plan.name,
                        self.plan.model_dump(mode="json"),
                        host,
                        __version__,
                    )
                    self._run_rounds(store, self.machine.targets())
                else:
                    store = Store.reopen(results_dir)
                    self._resume_rounds(store, self.point)
                status = store.outcome()
            except (Interrupted, KeyboardInterrupt):
                status = "interrupted"
                raise
            finally:
                problems = ledger.release_all()
                ledger.close()
                for p in problems:
                    self.emit(ev.Note(f"cleanup: {p} (run 'pgfsbench cleanup' to retry)", "error"))
                if store is not None:
                    self._record_end(store, status)
                self.emit(ev.CampaignEnded(status))
        return status

    def _record_end(self, store: Store, status: str) -> None:
        """Record how the campaign ended, with the reserve's room if the disk is full."""
        try:
            try:
                store.end_campaign(status)
            except ResultsUnwritable:
                store.release_reserve()
                store.end_campaign(status)
        except ResultsUnwritable as exc:
            self.emit(ev.Note(f"could not record the campaign's end ({status}): {exc}", "error"))
        finally:
            store.close()

    # --- rounds ----------------------------------------------------------------
    def _run_rounds(self, store: Store, targets: list[Target]) -> None:
        """Visit the targets round by round, interleaved, until the schedule is done."""
        states = self.states
        for position, spec in enumerate(targets):
            target_id = store.add_target(
                spec.name, position, spec.kind, spec.fs or "dir", spec.model_dump(mode="json")
            )
            if reason := self.machine.unavailable(spec):
                store.set_target(target_id, "skipped", reason)
                self.emit(ev.TargetSkipped(spec.name, reason))
                continue
            self.specs[spec.name] = spec
            states[spec.name] = TargetState(target_id)
        schedule = Schedule(
            self.plan.repetitions, list(self.specs), self.plan.measurements(), self.plan.verdicts
        )
        schedule.plan_sha256 = plan_hash(self.plan.model_dump(mode="json"))
        schedule.budget_s = redo_base_s(self.plan)
        self._walk(Started(store, schedule), range(schedule.first_round, schedule.max_rounds() + 1))

    def _resume_rounds(self, store: Store, point: ResumePoint) -> None:
        """Continue the recorded campaign: its targets as recorded, its schedule restored
        (seed, order, samples, stops), from the first round that did not end."""
        stored = point.campaign
        for t in stored.targets:
            if t.status == "skipped":
                self.emit(ev.TargetSkipped(t.name, t.reason or "skipped"))
                continue
            spec = Target.model_validate(t.spec)
            if t.status != "failed" and (reason := self.machine.unavailable(spec)):
                raise UserError(
                    f"target '{t.name}' cannot be made here any more ({reason}): "
                    "the campaign cannot be resumed on this machine as it is"
                )
            self.specs[t.name] = spec
            self.states[t.name] = TargetState(
                t.id, provenance=t.provenance or None, remade=bool(t.provenance)
            )
        schedule = Schedule(
            self.plan.repetitions,
            list(self.specs),
            self.plan.measurements(),
            self.plan.verdicts,
            seed=stored.schedule.get("seed"),
        )
        schedule.plan_sha256 = plan_hash(stored.plan)
        schedule.budget_s = redo_base_s(self.plan)
        restore(schedule, point)
        for name in schedule.failed:
            self.states[name].failed = True
        first = point.first_round(schedule)
        superseded = store.resume_campaign(point.from_round, settling_again=first == 0)
        schedule.resumes.append(
            {
                "at": time.time(),
                "from_round": point.from_round,
                "first_round": first,
                "settling_again": point.settle_again,
                "superseded_runs": superseded,
                "spent_minutes": round(point.spent_s / 60, 3),
                "previous_status": stored.status,
                "pgfsbench_version": __version__,
                "host_changes": point.host_changes,
            }
        )
        store.set_schedule(schedule.describe())
        self.emit(
            ev.Note(
                f"resuming campaign {self.id} ({stored.status}) at round {point.from_round}"
                + (" after a settling round" if point.settle_again else "")
                + f": {superseded} earlier run(s) of that round or cut short are kept, not "
                f"counted; {point.spent_s / 60:.1f} min already spent count toward the budget; "
                "every target is provisioned again"
            )
        )
        for fact, (then, now) in point.host_changes.items():
            self.emit(
                ev.Note(f"{fact} changed since the campaign started: {then} -> {now}", "warning")
            )
        rounds = list(range(first, schedule.max_rounds() + 1))
        if point.settle_again and rounds:  # nothing to settle for when no round is left
            rounds = [SETTLING] + rounds
        self._walk(Started(store, schedule), rounds)

    def _walk(self, started: Started, round_numbers: Sequence[int]) -> None:
        """Visit the targets of each round in ``round_numbers``, interleaved, until the
        schedule is done; records the schedule after every round."""
        store, states, schedule = started.store, self.states, started.schedule
        rounds = schedule.max_rounds()
        reps = self.plan.repetitions
        first = round_numbers[0] if len(round_numbers) else schedule.first_round
        self.emit(
            ev.CampaignStarted(
                self.id,
                self.plan.name,
                tuple(self.specs),
                first,
                rounds,
                schedule.auto,
                schedule.design.planned_looks()[0] if schedule.auto else rounds,
                reps.max_minutes if schedule.auto else None,
                self.point.from_round if self.point else 0,
            )
        )
        store.set_schedule(schedule.describe())  # the seed, before anything runs
        # Reused targets stay provisioned across rounds; the ledger still undoes them.
        with contextlib.ExitStack() as kept:
            try:
                for i, round_no in enumerate(round_numbers):
                    resettle = (
                        self.point is not None
                        and round_no == SETTLING
                        and self.point.settle_again
                        and i == 0
                    )
                    schedule.resettling = resettle
                    # A resumed settling round settles for the round after it, in its order.
                    due = round_numbers[i + 1] if resettle else round_no
                    active = [t for t in schedule.active_targets(due) if not states[t].failed]
                    if not active:
                        break
                    order = schedule.order(due, active, record=not resettle)
                    if resettle:
                        schedule.visits += [(SETTLING, n) for n in order]
                    self.emit(ev.RoundStarted(round_no, rounds, tuple(order)))
                    self.round_runs = RoundRuns()
                    for name in order:
                        self._visit(started, name, round_no, rounds, kept)
                        if states[name].failed:
                            schedule.drop(name, round_no)
                    self._disturbed(started, round_no, rounds, kept)
                    stopped_before = set(schedule.stops)
                    schedule.end_round(round_no)
                    store.set_schedule(schedule.describe())
                    self._round_ended(schedule, round_no, stopped_before)
            except (Interrupted, KeyboardInterrupt):
                # Every target visited so far stopped short of its rounds, not just this one.
                for st in states.values():
                    if st.provenance is not None and not st.failed:
                        store.set_target(st.target_id, "interrupted", "interrupted")
                raise
            finally:
                store.set_schedule(schedule.describe())
        for st in states.values():
            if not st.failed:
                store.set_target(st.target_id, "ok")

    def _round_ended(self, schedule: Schedule, round_no: int, stopped_before: set) -> None:
        stopped = tuple(
            ev.MeasurementStopped(w, label, stop.reason, stop.text())
            for (w, label), stop in schedule.stops.items()
            if (w, label) not in stopped_before
        )
        running = tuple(
            (m.type, m.label())
            for m in schedule.measurements
            if (m.type, m.label()) not in schedule.stops
        )
        live = tuple(t for t in schedule.targets if t not in schedule.failed)
        self.emit(ev.RoundEnded(round_no, stopped, running, live, schedule.extra_s))

    def _disturbed(
        self, started: Started, round_no: int, rounds: int, kept: contextlib.ExitStack
    ) -> None:
        """At the round's end: run its disturbed visits again, later in the same round,
        while the allowance lasts (each at most ``MOST_AGAIN`` times), but for the runs a
        burst touched only in part, counted from the seconds it spared (``trimmed``); the
        runs still disturbed after that are kept, marked and left out of the statistics. Judged on
        the machine's evidence within the round (``analysis/disturbance.py``), never on
        the runs' results."""
        store, schedule = started.store, started.schedule
        if self.round_runs.disturbed() or self.round_runs.disturbed(trimmed=True):
            self.disturbed_round = round_no  # look for quiet before this round's visits on
        tries: dict[str, int] = {}
        while True:
            found = self.round_runs.disturbed()  # those a burst spared no part of
            todo = [t for t in found if tries.get(t, 0) < MOST_AGAIN and not self.states[t].failed]
            if not todo or not schedule.may_redo():
                break
            for target in todo:
                if not schedule.may_redo():
                    break
                runs = found[target]
                tries[target] = tries.get(target, 0) + 1
                self.emit(
                    ev.VisitDisturbed(
                        target,
                        round_no,
                        tuple(
                            ev.Disturbed(r.workload.type, r.workload.label(), d.text())
                            for r, d in runs
                        ),
                        again=True,
                        spent_s=schedule.extra_s,
                        allowance_s=schedule.redo_allowance_s(),
                    )
                )
                began = schedule.clock()
                try:
                    self._visit(
                        started,
                        target,
                        round_no,
                        rounds,
                        kept,
                        again=[r.workload for r, _ in runs],
                        attempt=tries[target],
                    )
                finally:
                    schedule.spend(schedule.clock() - began)
                for r, d in runs:
                    if self.round_runs.latest(target, r.workload) is not r:  # replaced
                        store.mark_redone(r.run_id, f"run again: {d.text()}")
                        schedule.disturbed.append(
                            _disturbed_record(round_no, target, r.workload, d, "run again")
                        )
                if self.states[target].failed:
                    schedule.drop(target, round_no)
        for target, runs in self.round_runs.disturbed(trimmed=True).items():
            for r, d in runs:
                assert d.clean_ratio is not None  # trimmed: it has one
                schedule.trim(target, r.workload, round_no, d.clean_ratio)
                names = [m.name for m in r.metrics]
                params = r.workload.model_dump(mode="json")
                if headline := headline_metric(r.workload.type, params, names):
                    store.mark_trimmed(r.run_id, headline, d.clean_ratio)
                schedule.disturbed.append(
                    _disturbed_record(round_no, target, r.workload, d, "trimmed")
                )
            self.emit(
                ev.VisitDisturbed(
                    target,
                    round_no,
                    tuple(
                        ev.Disturbed(
                            r.workload.type, r.workload.label(), f"{d.text()}; {d.trim_text()}"
                        )
                        for r, d in runs
                    ),
                    again=False,
                    spent_s=schedule.extra_s,
                    allowance_s=schedule.redo_allowance_s(),
                    trimmed=True,
                )
            )
        for target, runs in self.round_runs.disturbed().items():
            for r, d in runs:
                why = "kept and left out of the statistics: " + d.text()
                store.mark_left_out(r.run_id, why)
                schedule.discount(target, r.workload, round_no)
                schedule.disturbed.append(
                    _disturbed_record(round_no, target, r.workload, d, "kept")
                )
            self.emit(
                ev.VisitDisturbed(
                    target,
                    round_no,
                    tuple(
                        ev.Disturbed(r.workload.type, r.workload.label(), d.text()) for r, d in runs
                    ),
                    again=False,
                    spent_s=schedule.extra_s,
                    allowance_s=schedule.redo_allowance_s(),
                    from_budget=schedule.auto,
                    redo_open=schedule.may_redo(),
                )
            )

    def _visit(
        self,
        started: Started,
        name: str,
        round_no: int,
        rounds: int,
        kept: contextlib.ExitStack,
        again: list | None = None,
        attempt: int = 0,
    ) -> None:
        """One round on one target: (provision,) OS settings, PostgreSQL, its measurements.
        ``again``: the measurements of a disturbed visit run again (its ``attempt``)."""
        spec, st, store = self.specs[name], self.states[name], started.store
        fs = spec.fs or "dir"
        tdir = self.options.results_dir / "artifacts"
        if self.point is not None:  # the first session's artifacts stay as they were
            tdir = tdir / f"resume-{self.point.session}"
        tdir = tdir / spec.name
        if rounds > 1 or started.schedule.settling:
            tdir = tdir / f"round-{round_no:02d}"  # round-00: the settling round
        if attempt:
            tdir = tdir.with_name(f"{tdir.name}-again-{attempt}")
        try:
            with contextlib.ExitStack() as visit:
                target = st.target
                self.emit(
                    ev.VisitStarted(spec.name, round_no, spec.kind, fs, target is None, attempt)
                )
                if target is None:
                    stack = visit if self.plan.repetitions.fresh else kept
                    target = stack.enter_context(self.machine.target(spec))
                    self._keep_commands(store, st.target_id, target, tdir)
                    if not self.plan.repetitions.fresh:
                        st.target = target
                    st.init_failed = False  # a fresh filesystem has nothing loaded yet
                    if st.remade:
                        self._record_remade(store, spec, st, target, round_no)
                settings = visit.enter_context(self.machine.os_settings(spec, target))
                first = st.provenance is None
                if st.provenance is None:
                    st.provenance = {**self.machine.provenance(spec, target), **settings}
                    store.set_target(
                        st.target_id, "running", provenance=st.provenance, fs=target.fs
                    )
                provenance = st.provenance
                backing = (provenance.get("backing_device") or {}).get("device")
                measurements = started.schedule.visit(spec.name, round_no, only=again)
                prov_pg = self._measure(
                    started, spec, st, target, measurements, round_no, tdir, backing, again
                )
                if first:
                    provenance.update(prov_pg)
                    store.set_target(st.target_id, "running", provenance=provenance)
                elif merge_usage(provenance.get("memory") or {}, settings.get("memory") or {}):
                    # a later visit's memory cgroup: its peak and refusals count too
                    store.set_target(st.target_id, "running", provenance=provenance)
            for problem in settings["os_settings"].get("restore_problems", []):
                self.emit(ev.Note(f"{spec.name}: could not restore {problem}", "error"))
        except (CommandFailed, UserError, OSError, subprocess.TimeoutExpired) as exc:
            store.raise_if_unwritable(exc)
            # One target's failure (a tool that failed or hung) is recorded; the rest go on.
            st.failed = True
            store.set_target(st.target_id, "failed", str(exc))
            self.emit(ev.TargetFailed(spec.name, round_no, str(exc)))
        except (Interrupted, KeyboardInterrupt):
            store.set_target(st.target_id, "interrupted", "interrupted")
            raise

    def _record_remade(
        self, store: Store, spec: Target, st: TargetState, target: PreparedTarget, round_no: int
    ) -> None:
        """A resumed campaign made the target again: a new filesystem, which may differ
        from the one measured before; its provenance says at which round."""
        assert self.point is not None  # only a resumed campaign's targets are remade
        st.remade = False
        before = st.provenance or {}  # remade: it was provisioned in an earlier session
        fresh = self.machine.provenance(spec, target)
        remade = {
            "round": round_no,
            "session": self.point.session,
            "settling_again": round_no == SETTLING,
            "why": "the campaign was resumed: the target was provisioned again (a new mkfs)",
        }
        changed = sorted(k for k, v in fresh.items() if k in before and before[k] != v)
        if changed:
            remade["differs_in"] = changed
        st.provenance = {**before, "remade": [*before.get("remade", []), remade]}
        store.set_target(st.target_id, "running", provenance=st.provenance)

    def _keep_commands(
        self, store: Store, target_id: int, target: PreparedTarget, tdir: Path
    ) -> None:
        """Keep each provisioning command (losetup, mkfs, mount) with its output."""
        for n, result in enumerate(target.commands, start=1):
            tool = Path(result.argv[0]).name
            path = proc.save(result, tdir, f"provision-{n:02d}-{tool}")
            store.add_artifact(
                "command",
                path,
                target_id=target_id,
                command=result.argv,
                exit_code=result.exit_code,
            )

    # --- workloads -------------------------------------------------------------
    def _measure(
        self,
        started: Started,
        spec: Target,
        st: TargetState,
        target: PreparedTarget,
        measurements: list,
        round_no: int,
        tdir: Path,
        backing: str | None,
        again: list | None = None,
    ) -> dict:
        """Start PostgreSQL on the target and run this visit's measurements; returns the
        server's provenance. ``again``: a disturbed visit's measurements run again; the
        others in ``measurements`` (a load they need) are stored uncounted."""
        store, schedule = started.store, started.schedule
        with self.machine.server(spec, target, tdir / "postgres.log") as cluster:
            store.add_artifact("server-log", tdir / "postgres.log", target_id=st.target_id)
            provenance_pg = {
                "postgres_version": cluster.version(),
                "postgres_bindir": str(self.options.bins_for(spec.name).bindir),
                "postgres_settings": cluster.changed_settings(),
                # defaults included: what a commit costs (fsync, synchronous_commit,
                # wal_sync_method...) and how the server does its I/O (io_method...)
                "postgres_io_settings": cluster.io_settings(),
                # on by default from PostgreSQL 18: a PG 15 vs 18 comparison
                # must show it
                "data_checksums": cluster.data_checksums(),
                "postgres_commands": [list(c.argv) for c in cluster.commands],
            }
            for workload in measurements:
                self.signals.raise_if_lost()
                index = schedule.position(workload) + 1
                params = workload.model_dump(mode="json")
                needed = again is not None and not any(workload is m for m in again)
                # A settling run is stored as repetition 0: kept, never counted; so is a
                # load a visit run again needs.
                repetition = SETTLING if needed else schedule.repetition(workload, round_no)
                run_id = store.start_run(
                    st.target_id, workload.type, params, workload.label(), repetition
                )
                if workload.type == "pgbench" and st.init_failed:
                    # Its tables would be missing or half loaded: a number from it would lie.
                    why = "not run: pgbench-init failed on this target"
                    store.finish_run(run_id, "failed", why)
                    schedule.record(
                        spec.name, workload, None, ok=False, round_no=round_no, counted=not needed
                    )
                    self.emit(
                        ev.RunFinished(
                            spec.name,
                            workload.type,
                            workload.label(),
                            round_no,
                            "not run",
                            0.0,
                            error=why,
                        )
                    )
                    continue
                ctx = RunContext(
                    target, cluster, self.ledger, tdir / f"{index:02d}-{workload.type}"
                )
                self.emit(ev.RunStarted(spec.name, workload.type, workload.label(), round_no))
                watch = functools.partial(
                    monitors_for, self.plan.monitors, target.io_devices, backing, cluster
                )
                counted = repetition != SETTLING and workload.type != "pgbench-init"
                quiet = (
                    functools.partial(
                        self._wait_for_quiet,
                        schedule,
                        spec.name,
                        round_no,
                        workload,
                        target,
                        backing,
                        cluster,
                    )
                    if counted
                    else None
                )
                result = self._run_one(
                    store, st.target_id, run_id, ctx, workload, watch, round_no, quiet
                )
                if result is not None:
                    if counted:
                        self.recent.append(result.metrics)
                    self.last_busy = ended_busy(
                        {s.name: s for s in result.series}, floor_of(self.recent)
                    )
                if workload.type == "pgbench-init":
                    st.init_failed = result is None
                schedule.record(
                    spec.name,
                    workload,
                    _headline_value(workload, result),
                    ok=result is not None,
                    round_no=round_no,
                    counted=not needed,
                )
                if result is not None and counted:
                    # A counted run: judged with its round's at the round's end.
                    self.round_runs.add(spec.name, workload, run_id, result.metrics)
        return provenance_pg

    def _wait_for_quiet(
        self,
        schedule: Schedule,
        name: str,
        round_no: int,
        workload,
        target: PreparedTarget,
        backing: str | None,
        cluster,
    ) -> None:
        """Before a counted run, while the machine is busy lately (``quiet.busy_lately``):
        wait until it is quiet (``campaign/quiet.py``), within the allowance."""
        lately = busy_lately(self.last_busy, self.disturbed_round, round_no)
        if not (lately and self.plan.monitors.system and schedule.may_redo()):
            return
        pgdata = getattr(cluster, "pgdata", None)
        probe = SystemMonitor(
            PROBE_S,
            target.io_devices,
            backing,
            server_pidfile=pgdata / "postmaster.pid" if pgdata is not None else None,
        )
        waited = wait_for_quiet(probe, floor_of(self.recent))
        schedule.waited(waited.seconds, waited.quiet)
        self.last_busy = not waited.quiet
        self.emit(
            ev.Waited(name, round_no, workload.type, workload.label(), waited.seconds, waited.quiet)
        )

    def _run_one(
        self,
        store: Store,
        target_id: int,
        run_id: int,
        ctx: RunContext,
        workload,
        watch: Callable,
        round_no: int,
        before: Callable[[], None] | None = None,
    ) -> WorkloadResult | None:
        """Run one workload with its monitors and record it, whatever happens; its result,
        or None when it failed. ``watch(origin)`` makes the monitors, on the workload's
        timeline; ``before()`` runs after its preparation, right before them."""
        started = time.monotonic()

        def finished(
            status: str, error: str | None = None, result: WorkloadResult | None = None
        ) -> None:
            self.emit(
                ev.RunFinished(
                    ctx.target.name,
                    workload.type,
                    workload.label(),
                    round_no,
                    status,
                    time.monotonic() - started,
                    _headline(workload, result),
                    error,
                )
            )

        try:
            prepared = prepare_workload(ctx, workload)
            if before is not None:
                before()
            with watch(time.monotonic()) as monitors:
                result = self.run_workload(ctx, workload)
            result.metrics += prepared
            result.series += monitors.series()
            result.metrics += monitors.totals()
            # Cost per unit of work and tps stalls, from the workload's numbers and the
            # monitors' together.
            params, series = workload.model_dump(mode="json"), {s.name: s for s in result.series}
            result.metrics += derived_metrics(workload.type, params, result.metrics, series)
            # What limited the run (CPU, device, cache, others' load): its inputs.
            result.metrics += bound_metrics(workload.type, params, result.metrics, series)
            # Someone else's load during it, second by second: a disturbed visit's evidence,
            # and its headline over the seconds no burst touched.
            result.metrics += disturbance_metrics(series, *_headline_curve(workload, result))
        except Interrupted:
            store.finish_run(run_id, "interrupted", "interrupted by a signal")
            finished("interrupted", "interrupted by a signal")
            raise
        except KeyboardInterrupt:
            store.finish_run(run_id, "interrupted", "interrupted (Ctrl-C)")
            finished("interrupted", "interrupted (Ctrl-C)")
            raise
        except (CommandFailed, UserError, ValueError, OSError, subprocess.TimeoutExpired) as exc:
            store.raise_if_unwritable(exc)  # our own results disk full: nothing more can be kept
            store.finish_run(run_id, "failed", str(exc))
            finished("failed", str(exc))
            return None
        except Exception as exc:  # a bug of ours: keep the traceback, go on
            try:
                ctx.artifacts_dir.mkdir(parents=True, exist_ok=True)
                tb = ctx.artifacts_dir / "traceback.txt"
                tb.write_text(traceback.format_exc())
            except OSError as unwritable:
                store.raise_if_unwritable(unwritable)
                raise
            store.add_artifact("traceback", tb, target_id=target_id, run_id=run_id)
            store.finish_run(run_id, "failed", f"internal error: {exc!r}")
            finished("failed", f"internal error: {exc!r}")
            return None
        finally:
            # tool outputs: they explain a failure too
            store.add_artifacts(ctx.kept, target_id=target_id, run_id=run_id)
        store.add_result(run_id, target_id, result)  # with its status 'ok'
        finished("ok", result=result)
        return result


def redo_base_s(plan: Plan) -> float:
    """What ``[repetitions] redo`` is a share of: an 'auto' plan's budget, a fixed
    count's expected length (``plan/estimate.py``)."""
    reps = plan.repetitions
    return reps.max_minutes * 60 if reps.count == "auto" else budget_seconds(plan)[1]


def _disturbed_record(round_no: int, target: str, workload, d, action: str) -> dict:
    """A disturbed run as the schedule keeps it (``Schedule.describe()['redo']``)."""
    return {
        "round": round_no,
        "target": target,
        "workload": workload.type,
        "label": workload.label(),
        # "run again", "trimmed" (counted from the seconds no burst touched) or "kept"
        # (left out of the statistics)
        "action": action,
        **d.record(),
    }


def _headline(workload, result: WorkloadResult | None) -> ev.Headline | None:
    """The run's headline metric, when it measured one."""
    if result is None:
        return None
    metrics: dict[str, Metric] = {m.name: m for m in result.metrics}
    name = headline_metric(workload.type, workload.model_dump(mode="json"), metrics)
    m = metrics.get(name) if name else None
    if m is None or m.value is None:
        return None
    return ev.Headline(m.name, m.value, m.unit, m.higher_is_better)


def _headline_curve(workload, result: WorkloadResult) -> tuple[str | None, float]:
    """The headline's name (its per-second curve, where the run has one, is the series of
    that name) and the warm-up seconds at the curve's start (``<prefix>.warmup_s``)."""
    headline = _headline(workload, result)
    if headline is None:
        return None, 0.0
    values = {m.name: m.value for m in result.metrics}
    warmup = values.get(headline.metric.split(".")[0] + ".warmup_s")
    return headline.metric, float(warmup) if isinstance(warmup, (int, float)) else 0.0


def _headline_value(workload, result: WorkloadResult | None) -> float | None:
    headline = _headline(workload, result)
    return headline.value if headline else None


def stored_plan_id(results_dir: Path) -> str:
    """The readable id of the campaign recorded in ``results_dir``."""
    from pgfsbench.store.read import load_campaign

    return load_campaign(results_dir, series=False).id


def refuse_leftovers() -> None:
    """A killed campaign's leftovers must be undone first: its changed sysctls would be
    recorded as this campaign's 'before' values, and restored to them."""
    if stale := stale_ledgers():
        left = stale[0]
        raise UserError(
            f"a campaign was killed on this machine without cleaning up (pid "
            f"{left.pid}, results {left.results_dir}); it left {left.summary()}: "
            "run 'pgfsbench cleanup' first"
        )
