"""Running a plan: round by round, each target: provision → PostgreSQL → workloads → store.

With repetitions, the targets are visited in interleaved rounds (see
``schedule.py``); a visit makes the target afresh or reuses the one kept
from its first visit, as the plan says.

Failures are data: a target that cannot be provisioned or a workload that
fails is recorded with its reason and the campaign goes on. Whatever
happens (error, Ctrl-C, SIGTERM) the ledger undoes what was acquired.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import subprocess
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.markup import escape

from pgfsbench import __version__, proc
from pgfsbench.errors import CommandFailed, Interrupted, ResultsUnwritable, UserError
from pgfsbench.analysis.efficiency import derived_metrics
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.ledger import Ledger, stale_ledgers
from pgfsbench.machine_lock import machine_lock
from pgfsbench.monitor import monitors_for
from pgfsbench.plan.model import Plan, Target
from pgfsbench.postgres.binaries import PgBinaries
from pgfsbench.postgres.cluster import running_cluster
from pgfsbench.postgres.user import ensure_pg_user
from pgfsbench.preflight import (check_devices, check_dirs, check_settings, check_sizes,
                                 target_binaries)
from pgfsbench.proc import RunAs
from pgfsbench.provision.directory import directory_target
from pgfsbench.provision.filesystems import can_use_loop_devices, unavailable_reason
from pgfsbench.provision.host import host_facts
from pgfsbench.provision.knobs import os_knobs
from pgfsbench.provision.provenance import target_provenance
from pgfsbench.provision.loop import loop_target
from pgfsbench.provision.target import PreparedTarget
from pgfsbench.provision.throttle import throttled
from pgfsbench.schedule import Schedule
from pgfsbench.store.db import Store, check_new_results_dir
from pgfsbench.workloads import registry
from pgfsbench.workloads.base import RunContext
from pgfsbench.metrics import WorkloadResult

Say = Callable[[str], None]  # takes rich markup: dynamic text must be escaped


@dataclass
class Options:
    results_dir: Path
    bins: PgBinaries  # the default; a target may name its own (pg_bin)
    keep: bool = False
    allow_format: tuple[str, ...] = ()  # devices the command line allows to be formatted
    wipe_signatures: bool = False
    wait: bool = False  # for another campaign on this machine to finish, instead of refusing
    target_bins: dict[str, PgBinaries] = field(default_factory=dict)

    def bins_for(self, target: str) -> PgBinaries:
        return self.target_bins.get(target, self.bins)


@contextlib.contextmanager
def _signals_unwind_once() -> Iterator[None]:
    """The first SIGTERM or Ctrl-C becomes an exception, so every cleanup block runs.

    Later ones are only noted: a second Ctrl-C while a busy umount retries or
    PostgreSQL shuts down must not cut that cleanup short and leave loop
    devices, mounts or sysctls behind.
    """
    caught: list[int] = []

    def handler(signum, frame):
        if caught:
            os.write(2, b"pgfsbench: still cleaning up, exiting when done "
                        b"(kill -9 abandons it; then run 'pgfsbench cleanup')\n")
            return
        caught.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def effective_targets(plan: Plan, results_dir: Path, say: Say) -> list[Target]:
    """Without root there are no loop devices: fall back to one directory target."""
    if can_use_loop_devices():
        return list(plan.targets)
    say("[yellow]Not running as root (or no loop devices): cannot make filesystems. "
        f"Falling back to a directory target on {escape(str(results_dir))}'s own filesystem: "
        "no filesystem comparison is possible. Run as root to compare filesystems.[/]")
    return [Target(name="dir", dir=results_dir)]


@contextlib.contextmanager
def _provision(spec: Target, opts: Options, ledger: Ledger, user: RunAs
               ) -> Iterator[PreparedTarget]:
    if spec.kind == "dir":
        with directory_target(spec.name, Path(spec.dir), ledger, user) as target:
            yield target
    elif spec.kind == "device":
        from pgfsbench.provision.device import device_target

        with device_target(spec, ledger, user, opts.allow_format,
                           opts.wipe_signatures) as target:
            yield target
    else:
        with loop_target(spec, opts.results_dir / "images", ledger, opts.keep, user) as target:
            yield target


def _run_workloads(plan: Plan, spec: Target, store: Store, st: "TargetState",
                   target: PreparedTarget, measurements: list, round_no: int, tdir: Path,
                   opts: Options, ledger: Ledger, user: RunAs, say: Say,
                   backing_device: str | None, schedule: Schedule) -> dict:
    bins = opts.bins_for(spec.name)
    with running_cluster(bins, user, target.workdir, ledger, plan.server_settings(spec),
                         tdir / "postgres.log") as cluster:
        store.add_artifact("server-log", tdir / "postgres.log", target_id=st.target_id)
        provenance_pg = {"postgres_version": cluster.version(),
                         "postgres_bindir": str(bins.bindir),
                         "postgres_settings": cluster.changed_settings(),
                         "postgres_commands": [list(c.argv) for c in cluster.commands]}
        for workload in measurements:
            index = schedule.position(workload) + 1
            params = workload.model_dump(mode="json")
            run_id = store.start_run(st.target_id, workload.type, params, workload.label(),
                                     round_no)
            if workload.type == "pgbench" and st.init_failed:
                # Its tables would be missing or half loaded: a number from it would lie.
                store.finish_run(run_id, "failed", "not run: pgbench-init failed on this target")
                schedule.record(spec.name, workload, None, ok=False)
                continue
            ctx = RunContext(target, cluster, ledger, tdir / f"{index:02d}-{workload.type}")
            say(f"  {target.name}: {workload.type} {escape(workload.label())}...")
            watch = functools.partial(monitors_for, plan.monitors, target.device, backing_device,
                                      cluster)
            result = _run_one(store, st.target_id, run_id, ctx, workload, say, watch)
            if workload.type == "pgbench-init":
                st.init_failed = result is None
            schedule.record(spec.name, workload, _headline_value(workload, result),
                            ok=result is not None)
    return provenance_pg


def _headline_value(workload, result: WorkloadResult | None) -> float | None:
    if result is None:
        return None
    values = {m.name: m.value for m in result.metrics}
    name = headline_metric(workload.type, workload.model_dump(mode="json"), values)
    return values.get(name) if name else None


def _run_one(store: Store, target_id: int, run_id: int, ctx: RunContext, workload,
             say: Say, watch: Callable) -> WorkloadResult | None:
    """Run one workload with its monitors and record it, whatever happens; its result,
    or None when it failed. ``watch(origin)`` makes the monitors, on the workload's
    timeline."""
    name = f"{ctx.target.name}: {workload.type}"
    try:
        with watch(time.monotonic()) as monitors:
            result = registry.kind(workload.type).run(ctx, workload)
        result.series += monitors.series()
        result.metrics += monitors.totals()
        # Cost per unit of work and tps stalls, from the workload's numbers and the
        # monitors' together.
        result.metrics += derived_metrics(workload.type, workload.model_dump(mode="json"),
                                          result.metrics, {s.name: s for s in result.series})
    except Interrupted:
        store.finish_run(run_id, "interrupted", "interrupted by a signal")
        raise
    except KeyboardInterrupt:
        store.finish_run(run_id, "interrupted", "interrupted (Ctrl-C)")
        raise
    except (CommandFailed, UserError, ValueError, OSError, subprocess.TimeoutExpired) as exc:
        store.raise_if_unwritable(exc)  # our own results disk full: nothing more can be kept
        store.finish_run(run_id, "failed", str(exc))
        say(f"  [red]{name} failed: {escape(str(exc))}[/]")
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
        say(f"  [red]{name} failed (internal error): {escape(repr(exc))}[/]")
        return None
    finally:
        for a in ctx.kept:  # tool outputs: they explain a failure too
            store.add_artifact(a.kind, a.path, target_id=target_id, run_id=run_id,
                               command=a.command, exit_code=a.exit_code)
    store.add_result(run_id, target_id, result)  # with its status 'ok'
    return result


def run_campaign(plan: Plan, opts: Options, say: Say) -> str:
    """Run every target of ``plan``; returns the campaign status: 'ok' (every run
    completed), 'partial' (some did) or 'failed' (none did)."""
    # What can be known to fail is refused before anything is made: a wrong pg_bin,
    # settings the server refuses, a device that may not be formatted (device_target
    # checks again right before mkfs), a results directory that cannot take results.
    opts.target_bins = target_binaries(plan)
    check_sizes(plan)
    check_dirs(plan)
    check_settings(plan, opts.bins_for)
    check_devices(plan, opts.allow_format, opts.wipe_signatures)
    check_new_results_dir(opts.results_dir)
    campaign_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
    with _signals_unwind_once(), \
            machine_lock(campaign_id, "campaign", opts.wait, say, plan=plan.name,
                         results=str(opts.results_dir)) as lock:
        _refuse_leftovers()
        ledger = Ledger.create(campaign_id, opts.results_dir)
        ledger.add("lock", path=str(lock), holder=campaign_id)
        status, store = "failed", None
        try:
            user = ensure_pg_user()
            store = Store.create(opts.results_dir)
            store.start_campaign(campaign_id, plan.name, plan.model_dump(mode="json"),
                                 host_facts(opts.bins), __version__)
            targets = effective_targets(plan, opts.results_dir, say)
            _run_rounds(plan, targets, store, opts, ledger, user, say)
            status = store.outcome()
        except (Interrupted, KeyboardInterrupt):
            status = "interrupted"
            raise
        finally:
            problems = ledger.release_all()
            ledger.close()
            for p in problems:
                say(f"[red]cleanup: {escape(p)}[/] (run 'pgfsbench cleanup' to retry)")
            if store is not None:
                _record_end(store, status, say)
    return status


def _refuse_leftovers() -> None:
    """A killed campaign's leftovers must be undone first: its changed sysctls would be
    recorded as this campaign's 'before' values, and restored to them."""
    if stale := stale_ledgers():
        left = stale[0]
        raise UserError(f"a campaign was killed on this machine without cleaning up (pid "
                        f"{left.pid}, results {left.results_dir}); it left {left.summary()}: "
                        "run 'pgfsbench cleanup' first")


def _record_end(store: Store, status: str, say: Say) -> None:
    """Record how the campaign ended, with the reserve's room if the disk is full."""
    try:
        try:
            store.end_campaign(status)
        except ResultsUnwritable:
            store.release_reserve()
            store.end_campaign(status)
    except ResultsUnwritable as exc:
        say(f"[red]could not record the campaign's end ({escape(status)}): "
            f"{escape(str(exc))}[/]")
    finally:
        store.close()


@dataclass
class TargetState:
    """What a target carries from one visit to the next."""

    target_id: int
    target: PreparedTarget | None = None  # provisioned and kept (repetitions.fresh = false)
    provenance: dict | None = None  # from the first visit
    failed: bool = False  # provisioning failed: no more visits
    init_failed: bool = False  # its pgbench tables are not (completely) loaded


def _run_rounds(plan: Plan, targets: list[Target], store: Store, opts: Options,
                ledger: Ledger, user: RunAs, say: Say) -> None:
    """Visit the targets round by round, interleaved, until the schedule is done."""
    specs: dict[str, Target] = {}
    states: dict[str, TargetState] = {}
    for position, spec in enumerate(targets):
        target_id = store.add_target(spec.name, position, spec.kind, spec.fs or "dir",
                                     spec.model_dump(mode="json"))
        if spec.kind == "loop" and (reason := unavailable_reason(spec.fs)):
            store.set_target(target_id, "skipped", reason)
            say(f"[yellow]{spec.name}: skipped: {escape(reason)}[/]")
            continue
        specs[spec.name] = spec
        states[spec.name] = TargetState(target_id)
    schedule = Schedule(plan.repetitions, list(specs), plan.measurements())
    rounds = schedule.max_rounds()
    # Reused targets stay provisioned across rounds; the ledger still undoes them.
    with contextlib.ExitStack() as kept:
        try:
            for round_no in range(1, rounds + 1):
                active = [t for t in schedule.active_targets(round_no) if not states[t].failed]
                if not active:
                    break
                if rounds > 1:
                    say(f"[bold]round {round_no}[/] of at most {rounds}: {', '.join(active)}")
                for name in schedule.order(round_no, active):
                    _visit(plan, specs[name], states[name], round_no, rounds, schedule, kept,
                           store, opts, ledger, user, say)
                    if states[name].failed:
                        schedule.drop(name)
                schedule.end_round(round_no)
                store.set_schedule(schedule.describe())
        except (Interrupted, KeyboardInterrupt):
            # Every target visited so far stopped short of its rounds, not just this one.
            for st in states.values():
                if st.provenance is not None and not st.failed:
                    store.set_target(st.target_id, "interrupted", "interrupted")
            raise
        finally:
            store.set_schedule(schedule.describe())
    for name, st in states.items():
        if not st.failed:
            store.set_target(st.target_id, "ok")


def _visit(plan: Plan, spec: Target, st: TargetState, round_no: int, rounds: int,
           schedule: Schedule, kept: contextlib.ExitStack, store: Store, opts: Options,
           ledger: Ledger, user: RunAs, say: Say) -> None:
    """One round on one target: (provision,) OS settings, PostgreSQL, its measurements."""
    fs = spec.fs or "dir"
    tdir = opts.results_dir / "artifacts" / spec.name
    if rounds > 1:
        tdir = tdir / f"round-{round_no:02d}"
    try:
        with contextlib.ExitStack() as visit:
            target = st.target
            if target is None:
                say(f"[bold]{spec.name}[/]: provisioning {spec.kind} target ({fs})")
                stack = visit if plan.repetitions.fresh else kept
                target = stack.enter_context(_provision(spec, opts, ledger, user))
                _keep_commands(store, st.target_id, target, tdir)
                if not plan.repetitions.fresh:
                    st.target = target
                st.init_failed = False  # a fresh filesystem has nothing loaded yet
            else:
                say(f"[bold]{spec.name}[/]: reusing the {fs} target")
            device = target.device if spec.kind != "dir" else None
            limits = visit.enter_context(throttled(device, spec.throttle, ledger)) \
                if spec.throttle is not None and device else {}
            # Inside the target: after a crash, cleanup restores these before detaching.
            knobs = visit.enter_context(os_knobs(dict(spec.sysctls), dict(spec.queue),
                                                 device, ledger))
            first = st.provenance is None
            if first:
                st.provenance = {**target_provenance(target, spec), "os_settings": knobs,
                                 "throttle": limits}
                store.set_target(st.target_id, "running", provenance=st.provenance,
                                 fs=target.fs)
            backing = (st.provenance.get("backing_device") or {}).get("device")
            measurements = schedule.visit(spec.name, round_no)
            prov_pg = _run_workloads(plan, spec, store, st, target, measurements, round_no,
                                     tdir, opts, ledger, user, say, backing, schedule)
            if first:
                st.provenance.update(prov_pg)
                store.set_target(st.target_id, "running", provenance=st.provenance)
        for problem in knobs.get("restore_problems", []):
            say(f"[red]{spec.name}: could not restore {escape(str(problem))}[/]")
    except (CommandFailed, UserError, OSError, subprocess.TimeoutExpired) as exc:
        store.raise_if_unwritable(exc)
        # One target's failure (a tool that failed or hung) is recorded; the rest go on.
        st.failed = True
        store.set_target(st.target_id, "failed", str(exc))
        say(f"[red]{spec.name}: failed: {escape(str(exc))}[/]")
    except (Interrupted, KeyboardInterrupt):
        store.set_target(st.target_id, "interrupted", "interrupted")
        raise


def _keep_commands(store: Store, target_id: int, target: PreparedTarget, tdir: Path) -> None:
    """Keep each provisioning command (losetup, mkfs, mount) with its output."""
    for n, result in enumerate(target.commands, start=1):
        tool = Path(result.argv[0]).name
        path = proc.save(result, tdir, f"provision-{n:02d}-{tool}")
        store.add_artifact("command", path, target_id=target_id, command=result.argv,
                           exit_code=result.exit_code)
