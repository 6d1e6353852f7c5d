"""The machine a campaign runs on: what it checks, makes, sets and starts there.

``Campaign`` asks a provisioner for everything that touches the real machine
(loop devices, mkfs, mount, sysctls, cgroups, the PostgreSQL user and server)
and never does it itself. ``Machine`` is the real one; a unit test passes a
fake with the same methods (``Provisioner``) to run rounds without root.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager as ContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pgfsbench.campaign.events import Note
from pgfsbench.plan.model import Target
from pgfsbench.postgres.cluster import Cluster, running_cluster
from pgfsbench.postgres.user import ensure_pg_user
from pgfsbench.preflight import RUN, CheckContext, run_checks, target_binaries
from pgfsbench.proc import RunAs
from pgfsbench.provision.directory import directory_target
from pgfsbench.provision.filesystems import can_use_loop_devices, unavailable_reason
from pgfsbench.provision.host import host_facts
from pgfsbench.provision.knobs import os_knobs
from pgfsbench.provision.loop import loop_target
from pgfsbench.provision.memory import memory_limited
from pgfsbench.provision.memory import usage as memory_usage
from pgfsbench.provision.provenance import target_provenance
from pgfsbench.provision.target import PreparedTarget
from pgfsbench.provision.throttle import throttled
from pgfsbench.provision.volume import unavailable_reason as volume_unavailable

if TYPE_CHECKING:
    from pgfsbench.campaign.run import Campaign


class Provisioner(Protocol):
    """What a campaign asks of the machine; ``Machine(campaign)`` is the real one.

    The context managers undo what they did on exit (through ``campaign.ledger``).
    """

    def preflight(self) -> None:
        """Refuse (UserError) what can be known to fail, before anything is made."""

    def pg_user(self) -> RunAs:
        """The user PostgreSQL and its tools run as."""

    def host_facts(self) -> dict:
        """The machine and its tools, stored with the campaign."""

    def targets(self) -> list[Target]:
        """The targets to run: the plan's, or what this machine can make instead."""

    def unavailable(self, spec: Target) -> str | None:
        """Why this target cannot be made here (it is skipped), or None."""

    def target(self, spec: Target) -> ContextManager[PreparedTarget]:
        """The target made (loop image, device, directory) and mounted."""

    def os_settings(self, spec: Target, target: PreparedTarget) -> ContextManager[dict]:
        """Throttling and OS knobs for a visit; yields ``{"os_settings": {...,
        "restore_problems": [...]}, "throttle": {...}}`` (problems filled on exit)."""

    def provenance(self, spec: Target, target: PreparedTarget) -> dict:
        """Everything recorded about the made target."""

    def server(
        self, spec: Target, target: PreparedTarget, log_dest: Path
    ) -> ContextManager[Cluster]:
        """PostgreSQL started on the target; its log copied to ``log_dest`` when it stops."""


class Machine:
    """The real machine: needs root for loop devices, mkfs, mount, sysctls, cgroups."""

    def __init__(self, campaign: Campaign) -> None:
        self.campaign = campaign
        self._memory: dict[str, dict] = {}  # target name -> its visit's memory cgroup

    def preflight(self) -> None:
        # A wrong pg_bin, then every check of the run stage (preflight.py): settings the
        # server refuses, an image too small for its filesystem, mkfs options mkfs
        # refuses, a device that may not be formatted (device_target checks again right
        # before mkfs), sysctl and queue values the kernel would refuse (os_knobs judges
        # them again on the target's own device).
        plan, opts = self.campaign.plan, self.campaign.options
        opts.target_bins = target_binaries(plan)
        run_checks(plan, RUN, CheckContext(opts.bins_for, opts.allow_format, opts.wipe_signatures))

    def pg_user(self) -> RunAs:
        return ensure_pg_user()

    def host_facts(self) -> dict:
        return host_facts(self.campaign.options.bins)

    def targets(self) -> list[Target]:
        """Without root there are no loop devices: fall back to one directory target."""
        plan, results_dir = self.campaign.plan, self.campaign.options.results_dir
        if can_use_loop_devices():
            return list(plan.targets)
        self.campaign.emit(
            Note(
                "Not running as root (or no loop devices): cannot make filesystems. "
                f"Falling back to a directory target on {results_dir}'s own "
                "filesystem: no filesystem comparison is possible. Run as root to compare "
                "filesystems.",
                "warning",
            )
        )
        return [Target(name="dir", dir=results_dir)]

    def unavailable(self, spec: Target) -> str | None:
        if spec.dir is not None:  # kind "dir": nothing to make
            return None
        # Not a dir target: the plan model requires its fs.
        if spec.kind == "loop" and spec.fs is not None and (reason := unavailable_reason(spec.fs)):
            return reason
        return volume_unavailable(spec.volume)

    @contextlib.contextmanager
    def target(self, spec: Target) -> Iterator[PreparedTarget]:
        c = self.campaign
        if spec.dir is not None:  # kind "dir"
            with directory_target(spec.name, spec.dir, c.ledger, c.user) as target:
                yield target
        elif spec.kind == "device":
            from pgfsbench.provision.device import device_target

            with device_target(
                spec, c.ledger, c.user, c.options.allow_format, c.options.wipe_signatures
            ) as target:
                yield target
        else:
            with loop_target(
                spec,
                c.options.results_dir / "images",
                c.ledger,
                c.options.keep,
                c.user,
                recorded=c.plan.records_device(),
            ) as target:
                yield target

    @contextlib.contextmanager
    def os_settings(self, spec: Target, target: PreparedTarget) -> Iterator[dict]:
        ledger = self.campaign.ledger
        device = target.device if spec.kind != "dir" else None
        with contextlib.ExitStack() as stack:
            limits = (
                stack.enter_context(throttled(device, spec.throttle, ledger))
                if spec.throttle is not None and device
                else {}
            )
            # Inside the target: after a crash, cleanup restores these before detaching.
            knobs = stack.enter_context(
                os_knobs(dict(spec.sysctls), dict(spec.queue), device, ledger)
            )
            # Last: the target's cache is dropped right before the server starts in it.
            # Told of the throttle: with cgroup v2 the two share one cgroup (cgroups.py).
            memory = stack.enter_context(
                memory_limited(
                    self.campaign.plan.memory_limit(spec), target.workdir, ledger, limits
                )
            )
            self._memory[spec.name] = memory
            stack.callback(self._memory.pop, spec.name, None)
            yield {"os_settings": knobs, "throttle": limits, "memory": memory}

    def provenance(self, spec: Target, target: PreparedTarget) -> dict:
        return target_provenance(target, spec)

    def server(
        self, spec: Target, target: PreparedTarget, log_dest: Path
    ) -> ContextManager[Cluster]:
        c = self.campaign
        memory = self._memory.get(spec.name) or {}
        cluster = running_cluster(
            c.options.bins_for(spec.name),
            c.user,
            target.workdir,
            c.ledger,
            c.plan.server_settings(spec),
            log_dest,
            c.plan.data_checksums(spec),
            cgroup=memory.get("procs"),
        )
        if not memory:
            return cluster
        return _reading_usage(cluster, memory)


@contextlib.contextmanager
def _reading_usage(cluster: ContextManager[Cluster], memory: dict) -> Iterator[Cluster]:
    """The server's context; once it has stopped, the memory cgroup's peak and limit hits
    are added to its provenance record (the first visit's is what is stored)."""
    try:
        with cluster as running:
            yield running
    finally:
        memory_usage(memory)
