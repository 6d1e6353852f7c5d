"""What every workload gets: the prepared target, its cluster, where to keep files.

A workload kind's ``run(ctx, params)`` and ``prepare(ctx, params)`` receive a
``RunContext``: the target it measures (a ``Target``, whatever made it), the PostgreSQL
cluster running on it, the ledger that undoes what the run acquires, and the run's
folder in the results directory. It runs every tool through ``ctx.tool`` (as the
PostgreSQL user, its output kept) and refuses early with ``ctx.require_free``.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.ledger import Ledger
from pgfsbench.metrics import Artifact
from pgfsbench.postgres.cluster import Cluster
from pgfsbench.scratch import private_dir


class Target(Protocol):
    """What a workload sees of its prepared target (provision's ``PreparedTarget`` is
    one): workloads depend on this, not on provisioning."""

    @property
    def name(self) -> str:
        """The target's name in the plan."""
        ...

    @property
    def kind(self) -> str:
        """``"loop"``, ``"device"`` or ``"dir"``."""
        ...

    @property
    def workdir(self) -> Path:
        """A directory on the target's filesystem, for the workload's files."""
        ...

    @property
    def device(self) -> str | None:
        """What was formatted and mounted (None for a directory target)."""
        ...

    @property
    def io_devices(self) -> list[str]:
        """The devices whose counters are the target's I/O."""
        ...


@dataclass
class RunContext:
    """What one measurement gets: its target, the server on it, the ledger, its folder."""

    target: Target
    """The prepared target: mounted, its PostgreSQL data directory on it."""

    cluster: Cluster
    """The running PostgreSQL cluster: ``cluster.bins.tool("pgbench")`` finds a client
    tool, ``cluster.conn_args()`` and ``cluster.libpq_env()`` reach the server on its
    private socket, ``cluster.psql_argv(commands)`` is one psql session."""

    ledger: Ledger
    """Where anything the workload acquires is recorded before it is acquired, with
    its undo (``ledger.add``), so a crash or Ctrl-C still releases it."""

    artifacts_dir: Path
    """This run's folder in the results directory: raw outputs kept with the numbers."""

    kept: list[Artifact] = field(default_factory=list)
    """Raw outputs kept so far; recorded by the campaign even when the workload fails."""

    def tool(self, argv: list[str], stem: str, **kwargs) -> proc.CommandResult:
        """Run a tool as the PostgreSQL user; keep its output whatever happens."""
        log_offset = self.cluster.log_size()
        result = self.cluster.run(argv, check=False, **kwargs)
        path = proc.save(result, self.artifacts_dir, stem)
        self.kept.append(Artifact("command", path, result.argv, result.exit_code))
        if not result.ok:
            problems = self.cluster.log_problems_since(log_offset)
            raise CommandFailed(result, "server log: " + " | ".join(problems) if problems else "")
        return result

    def require_free(self, needed_bytes: int, what: str) -> None:
        """Refuse before starting when the target cannot hold what the workload writes."""
        st = os.statvfs(self.target.workdir)
        free = st.f_bavail * st.f_frsize
        if free < needed_bytes:
            raise UserError(
                f"{what} needs {needed_bytes / 2**20:.0f} MB but the target "
                f"'{self.target.name}' has {free / 2**20:.0f} MB free; give the "
                "target a larger size or the workload a smaller one"
            )

    def scratch(self) -> contextlib.AbstractContextManager[Path]:
        """A private directory off the target for tool logs, removed afterwards.

        Off the target so that writing logs does not disturb what is measured.
        """
        return private_dir(self.ledger, "pgfsbench-run-", "/var/tmp", self.cluster.user)
