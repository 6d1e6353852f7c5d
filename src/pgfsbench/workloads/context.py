"""What every workload gets: the prepared target, its cluster, where to keep files."""

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
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...  # "loop", "device" or "dir"

    @property
    def workdir(self) -> Path: ...  # a directory on the target's filesystem

    @property
    def device(self) -> str | None: ...  # what was formatted and mounted

    @property
    def io_devices(self) -> list[str]: ...  # the devices whose counters are its I/O


@dataclass
class RunContext:
    target: Target
    cluster: Cluster
    ledger: Ledger
    artifacts_dir: Path  # this run's folder in the results directory
    # Raw outputs kept so far; recorded by the campaign even when the workload fails.
    kept: list[Artifact] = field(default_factory=list)

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
