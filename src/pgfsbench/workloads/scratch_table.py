"""What the workloads that load a scratch table over psql share (cold-scan,
parallel-scan): one psql session kept as an artifact, the state of a contrib extension,
and the cleanup that leaves the cluster as they found it."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

from pgfsbench.errors import CommandFailed

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext


def psql(ctx: RunContext, commands: list[str], stem: str) -> str:
    """One psql session running ``commands`` in order; its output kept as an artifact."""
    return ctx.tool(ctx.cluster.psql_argv(commands), stem).stdout


def extension_state(ctx: RunContext, name: str) -> str:
    """'' without the extension (no contrib), '-' when available, else its installed version."""
    return ctx.cluster.sql(
        "SELECT coalesce(installed_version, '-') FROM "
        f"pg_available_extensions WHERE name = '{name}'"
    )


def drop_scratch(ctx: RunContext, table: str, extension: str, state: str, ok: bool) -> None:
    """Leave the cluster as we found it for the workloads that follow: drop ``table``, and
    ``extension`` when we installed it (its ``state`` was '-'). A failure is raised only
    when the run went well (``ok``); else the server may be gone, and the run's first
    error is the one to report."""
    cleanup = [f"DROP TABLE IF EXISTS {table}"]
    if state == "-":  # we installed it
        cleanup.append(f"DROP EXTENSION IF EXISTS {extension}")
    try:
        psql(ctx, cleanup, "drop")
    except (CommandFailed, OSError, subprocess.TimeoutExpired):
        if ok:
            raise
