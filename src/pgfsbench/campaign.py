"""Running a plan: for each target, provision → PostgreSQL → workloads → store.

Failures are data: a target that cannot be provisioned or a workload that
fails is recorded with its reason and the campaign goes on. Whatever
happens (error, Ctrl-C, SIGTERM) the ledger undoes what was acquired.
"""

from __future__ import annotations

import contextlib
import functools
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
from pgfsbench.errors import CommandFailed, Interrupted, UserError
from pgfsbench.analysis.efficiency import derived_metrics
from pgfsbench.ledger import Ledger
from pgfsbench.monitor import monitors_for
from pgfsbench.plan.model import Plan, Target
from pgfsbench.postgres.binaries import PgBinaries, find_binaries
from pgfsbench.postgres.cluster import running_cluster
from pgfsbench.postgres.user import ensure_pg_user
from pgfsbench.proc import RunAs
from pgfsbench.provision.directory import directory_target
from pgfsbench.provision.safety import check_formattable
from pgfsbench.provision.filesystems import can_use_loop_devices, unavailable_reason
from pgfsbench.provision.host import host_facts
from pgfsbench.provision.knobs import os_knobs
from pgfsbench.provision.provenance import target_provenance
from pgfsbench.provision.loop import loop_target
from pgfsbench.provision.target import PreparedTarget
from pgfsbench.store.db import Store
from pgfsbench.workloads import runner
from pgfsbench.workloads.base import RunContext

Say = Callable[[str], None]  # takes rich markup: dynamic text must be escaped


@dataclass
class Options:
    results_dir: Path
    bins: PgBinaries  # the default; a target may name its own (pg_bin)
    keep: bool = False
    allow_format: tuple[str, ...] = ()  # devices the command line allows to be formatted
    wipe_signatures: bool = False
    target_bins: dict[str, PgBinaries] = field(default_factory=dict)

    def bins_for(self, target: str) -> PgBinaries:
        return self.target_bins.get(target, self.bins)


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into an exception so every cleanup block runs."""
    def handler(signum, frame):
        raise Interrupted(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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


def _run_workloads(plan: Plan, spec: Target, store: Store, target_id: int,
                   target: PreparedTarget, opts: Options, ledger: Ledger, user: RunAs,
                   say: Say, backing_device: str | None) -> dict:
    tdir = opts.results_dir / "artifacts" / target.name
    bins = opts.bins_for(spec.name)
    with running_cluster(bins, user, target.workdir, ledger, plan.server_settings(spec),
                         tdir / "postgres.log") as cluster:
        store.add_artifact("server-log", tdir / "postgres.log", target_id=target_id)
        provenance_pg = {"postgres_version": cluster.version(),
                         "postgres_bindir": str(bins.bindir),
                         "postgres_settings": cluster.changed_settings(),
                         "postgres_commands": [list(c.argv) for c in cluster.commands]}
        failed: set[str] = set()
        for index, workload in enumerate(plan.measurements(), start=1):
            params = workload.model_dump(mode="json")
            run_id = store.start_run(target_id, workload.type, params, workload.label())
            if workload.type == "pgbench" and "pgbench-init" in failed:
                # Its tables would be missing or half loaded: a number from it would lie.
                store.finish_run(run_id, "failed", "not run: pgbench-init failed on this target")
                continue
            ctx = RunContext(target, cluster, ledger, tdir / f"{index:02d}-{workload.type}")
            say(f"  {target.name}: {workload.type} ...")
            watch = functools.partial(monitors_for, plan.monitors, target.device, backing_device,
                                      cluster)
            if not _run_one(store, target_id, run_id, ctx, workload, say, watch):
                failed.add(workload.type)
    return provenance_pg


def _run_one(store: Store, target_id: int, run_id: int, ctx: RunContext, workload,
             say: Say, watch: Callable) -> bool:
    """Run one workload with its monitors and record it, whatever happens; True when it
    succeeded. ``watch(origin)`` makes the monitors, on the workload's timeline."""
    name = f"{ctx.target.name}: {workload.type}"
    try:
        with watch(time.monotonic()) as monitors:
            result = runner(workload.type)(ctx, workload)
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
        store.finish_run(run_id, "failed", str(exc))
        say(f"  [red]{name} failed: {escape(str(exc))}[/]")
        return False
    except Exception as exc:  # a bug of ours: keep the traceback, go on
        ctx.artifacts_dir.mkdir(parents=True, exist_ok=True)
        tb = ctx.artifacts_dir / "traceback.txt"
        tb.write_text(traceback.format_exc())
        store.add_artifact("traceback", tb, target_id=target_id, run_id=run_id)
        store.finish_run(run_id, "failed", f"internal error: {exc!r}")
        say(f"  [red]{name} failed (internal error): {escape(repr(exc))}[/]")
        return False
    finally:
        for a in ctx.kept:  # tool outputs: they explain a failure too
            store.add_artifact(a.kind, a.path, target_id=target_id, run_id=run_id,
                               command=a.command, exit_code=a.exit_code)
    store.add_result(run_id, target_id, result)
    store.finish_run(run_id, "ok")
    return True


def run_campaign(plan: Plan, opts: Options, say: Say) -> str:
    """Run every target of ``plan``; returns the campaign status."""
    # Every target's PostgreSQL is found before anything is made: a wrong pg_bin is a
    # plan error, not a failed target an hour in.
    opts.target_bins = {t.name: find_binaries(t.pg_bin) for t in plan.targets if t.pg_bin}
    # Likewise a device that may not be formatted stops the run before anything is made
    # (device_target checks again right before mkfs).
    for t in plan.targets:
        if t.kind == "device":
            try:
                check_formattable(str(t.device), opts.allow_format, opts.wipe_signatures)
            except UserError as exc:
                raise UserError(f"target '{t.name}': {exc}") from None
    user = ensure_pg_user()
    store = Store.create(opts.results_dir)
    campaign_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
    status = "failed"
    with _sigterm_unwinds():
        ledger = Ledger.create(campaign_id, opts.results_dir)
        try:
            store.start_campaign(campaign_id, plan.name, plan.model_dump(mode="json"),
                                 host_facts(opts.bins), __version__)
            targets = effective_targets(plan, opts.results_dir, say)
            for position, spec in enumerate(targets):
                _run_target(plan, spec, position, store, opts, ledger, user, say)
            status = "ok"
        except (Interrupted, KeyboardInterrupt):
            status = "interrupted"
            raise
        finally:
            problems = ledger.release_all()
            ledger.close()
            for p in problems:
                say(f"[red]cleanup: {escape(p)}[/] (run 'pgfsbench cleanup' to retry)")
            store.end_campaign(status)
            store.close()
    return status


def _run_target(plan: Plan, spec: Target, position: int, store: Store, opts: Options,
                ledger: Ledger, user: RunAs, say: Say) -> None:
    fs = spec.fs or "dir"
    target_id = store.add_target(spec.name, position, spec.kind, fs,
                                 spec.model_dump(mode="json"))
    if spec.kind == "loop" and (reason := unavailable_reason(spec.fs)):
        store.set_target(target_id, "skipped", reason)
        say(f"[yellow]{spec.name}: skipped: {escape(reason)}[/]")
        return
    say(f"[bold]{spec.name}[/]: provisioning {spec.kind} target ({fs})")
    try:
        with _provision(spec, opts, ledger, user) as target:
            _keep_commands(store, target_id, target, opts.results_dir)
            # Inside the target: after a crash, cleanup restores these before detaching.
            with os_knobs(dict(spec.sysctls), dict(spec.queue),
                          target.device if spec.kind != "dir" else None, ledger) as knobs:
                prov = {**target_provenance(target, spec), "os_settings": knobs}
                store.set_target(target_id, "running", provenance=prov, fs=target.fs)
                backing = (prov.get("backing_device") or {}).get("device")
                prov.update(_run_workloads(plan, spec, store, target_id, target, opts, ledger,
                                           user, say, backing))
            for problem in knobs.get("restore_problems", []):
                say(f"[red]{spec.name}: could not restore {escape(str(problem))}[/]")
            store.set_target(target_id, "ok", provenance=prov)
    except (CommandFailed, UserError, OSError) as exc:
        store.set_target(target_id, "failed", str(exc))
        say(f"[red]{spec.name}: failed: {escape(str(exc))}[/]")
    except (Interrupted, KeyboardInterrupt):
        store.set_target(target_id, "interrupted", "interrupted")
        raise


def _keep_commands(store: Store, target_id: int, target: PreparedTarget,
                   results_dir: Path) -> None:
    """Keep each provisioning command (losetup, mkfs, mount) with its output."""
    tdir = results_dir / "artifacts" / target.name
    for n, result in enumerate(target.commands, start=1):
        tool = Path(result.argv[0]).name
        path = proc.save(result, tdir, f"provision-{n:02d}-{tool}")
        store.add_artifact("command", path, target_id=target_id, command=result.argv,
                           exit_code=result.exit_code)
