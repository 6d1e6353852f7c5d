"""clone-db: ``CREATE DATABASE ... STRATEGY = FILE_COPY`` with PostgreSQL 18's
``file_copy_method = clone`` against ``copy``.

A template database of pgbench scale ``scale`` is built once on the target (kept for
later visits, outside the numbers). Each measurement creates a database from it twice,
once per method, each after a CHECKPOINT of its own (FILE_COPY checkpoints before it
copies; the earlier writes are not its cost), and drops it again. Space: the
filesystem's free bytes (statvfs, after a sync) before and after each creation.

``clone`` asks the kernel to share the template's blocks (a reflink, through
copy_file_range on Linux): on XFS with reflink=1 and on btrfs the new database takes
almost no space; where the filesystem cannot share blocks (ext4) the kernel copies them
instead, so the database takes as much space as a copy. A clone is "offered" when it
used less than half the template's bytes (``clone_db.reflink`` 1, else 0).

Crash safety and restore: a cloned database is an ordinary database (PostgreSQL WAL-logs
the CREATE DATABASE and checkpoints around it); its shared blocks are copied on the first
write to them, so later writes to it (or the template) take space then.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.errors import CommandFailed
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

MB = 2**20
TEMPLATE = "pgfsbench_clone_template"
CLONE = "pgfsbench_clone"
# pgbench tables and indexes: about 15 MB per scale unit
BYTES_PER_SCALE = 16 * MB
# A clone that used less than this share of the template's bytes shared its blocks.
SHARED_BELOW = 0.5
METHODS = ("copy", "clone")


class CloneDbWorkload(WorkloadBase):
    """CREATE DATABASE ... STRATEGY = FILE_COPY, file_copy_method clone against copy."""

    type: Literal["clone-db"]
    scale: int = Field(
        2,
        ge=1,
        le=10000,
        description="pgbench scale of the template database the new "
        "databases are created from (about 15 MB per unit)",
    )


def free_bytes(path: str) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def reflink_offered(used_bytes: float, template_bytes: float) -> bool:
    """Whether a clone shared the template's blocks (used under half its bytes)."""
    return template_bytes > 0 and used_bytes < SHARED_BELOW * template_bytes


def clone_metrics(
    template_bytes: int,
    seconds: dict[str, float | None],
    used: dict[str, float | None],
    why_not: str = "",
) -> list[Metric]:
    """The metrics of one measurement: per method its time and the space it took."""
    clone_used = used.get("clone")
    offered = None if clone_used is None else float(reflink_offered(clone_used, template_bytes))
    note = why_not or (
        "blocks shared (reflink)"
        if offered
        else "not offered: the filesystem copied the blocks (no reflink)"
    )
    metrics = [
        Metric(
            "clone_db.template_mb",
            template_bytes / MB,
            "MB",
            None,
            "informational: size of the template database",
        ),
        Metric(
            "clone_db.reflink",
            offered,
            "",
            None,
            "informational: 1 when file_copy_method=clone shared blocks; " + note,
        ),
    ]
    for method in METHODS:
        s, u = seconds.get(method), used.get(method)
        metrics.append(
            Metric(
                f"clone_db.{method}_s",
                s,
                "s",
                False,
                f"CREATE DATABASE STRATEGY=FILE_COPY, file_copy_method={method}"
                + (f" ({why_not})" if s is None and why_not else ""),
            )
        )
        metrics.append(
            Metric(
                f"clone_db.{method}_mb_used",
                None if u is None else u / MB,
                "MB",
                None,
                f"informational: filesystem space the new "
                f"database took (file_copy_method={method})",
            )
        )
    return metrics


def _template_ready(ctx: RunContext, scale: int) -> bool:
    found = ctx.cluster.sql(f"SELECT 1 FROM pg_database WHERE datname = '{TEMPLATE}'")
    if found != "1":
        return False
    return ctx.cluster.sql("SELECT count(*) FROM pgbench_branches", TEMPLATE) == str(scale)


def prepare(ctx: RunContext, params: CloneDbWorkload) -> list[Metric]:
    """Build the template database (once per target and scale), outside the numbers."""
    if _template_ready(ctx, params.scale):
        return []
    ctx.require_free(3 * params.scale * BYTES_PER_SCALE, "clone-db's template")
    ctx.tool(
        ctx.cluster.psql_argv(
            [f"DROP DATABASE IF EXISTS {TEMPLATE}", f"CREATE DATABASE {TEMPLATE}"]
        ),
        "clone-db-template-create",
    )
    out = ctx.tool(
        [
            ctx.cluster.bins.tool("pgbench"),
            *ctx.cluster.conn_args(),
            "-i",
            "-q",
            "-s",
            str(params.scale),
            TEMPLATE,
        ],
        "clone-db-template-load",
    )
    return [
        Metric(
            "clone_db.template_load_s",
            out.seconds,
            "s",
            None,
            "informational: loading the template (not measured)",
        )
    ]


def _create(ctx: RunContext, method: str) -> tuple[float | None, float | None, str]:
    """Time and space of one CREATE DATABASE; (None, None, why) when the server refused."""
    psql = ctx.cluster.psql_argv
    ctx.tool(
        psql([f"DROP DATABASE IF EXISTS {CLONE}", "CHECKPOINT"]),
        f"clone-db-{method}-before",
    )
    os.sync()
    before = free_bytes(str(ctx.target.workdir))
    try:
        out = ctx.tool(
            psql(
                [
                    f"SET file_copy_method = {method}",
                    f"CREATE DATABASE {CLONE} TEMPLATE {TEMPLATE} STRATEGY = FILE_COPY",
                ]
            ),
            f"clone-db-{method}",
        )
    except CommandFailed as exc:
        lines = [ln for ln in exc.result.stderr.splitlines() if "ERROR" in ln]
        return None, None, "not offered: " + (lines[0].strip() if lines else "server refused")
    os.sync()
    used = max(0, before - free_bytes(str(ctx.target.workdir)))
    ctx.tool(psql([f"DROP DATABASE {CLONE}"]), f"clone-db-{method}-drop")
    return out.seconds, float(used), ""


def run(ctx: RunContext, params: CloneDbWorkload) -> WorkloadResult:
    template_bytes = int(ctx.cluster.sql(f"SELECT pg_database_size('{TEMPLATE}')"))
    ctx.require_free(template_bytes + 64 * MB, "clone-db")
    seconds: dict[str, float | None] = {}
    used: dict[str, float | None] = {}
    why_not = ""
    for method in METHODS:
        seconds[method], used[method], why = _create(ctx, method)
        why_not = why_not or why
    return WorkloadResult(metrics=clone_metrics(template_bytes, seconds, used, why_not))


KIND = WorkloadKind(
    params=CloneDbWorkload,
    run=run,
    prepare=prepare,
    order=65,
    headline="clone_db.clone_s",
    labels={
        "clone_db.clone_s": "CREATE DATABASE time (file_copy_method=clone)",
        "clone_db.copy_s": "CREATE DATABASE time (file_copy_method=copy)",
    },
    seconds=lambda p: 4 + p.scale * 0.5,
    disk_bytes=lambda p, tables: 2 * p.scale * BYTES_PER_SCALE + 64 * MB,
)
