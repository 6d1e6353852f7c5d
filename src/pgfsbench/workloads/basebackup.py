"""basebackup: pg_basebackup of the cluster onto the same filesystem (the XFS-vs-ext4 study).

The study times ``pg_basebackup -F p -D <dir on the same volume>`` and divides
the size by the time. We run ``pg_basebackup -Fp -Xstream -c fast``: a plain
copy with the WAL needed to restore it streamed beside it, after an immediate
checkpoint (so the time is the copy's, not a checkpoint_timeout wait). The
filesystem both reads the data directory and writes the copy, and
pg_basebackup fsyncs the copy at the end, as a real backup must.

The cluster's pg_hba.conf (initdb --auth-local=trust) trusts local
replication connections, so no password or extra setup is needed.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.proc import CommandResult
    from pgfsbench.workloads.context import RunContext

BACKUP_DIR = "basebackup"
# WAL written while the backup runs, on top of the data directory: a few segments.
WAL_ALLOWANCE = 64 * 2**20


class BasebackupWorkload(WorkloadBase):
    """pg_basebackup of the cluster onto the same filesystem (the XFS-vs-ext4 study)."""

    type: Literal["basebackup"]


def regular_files(root: Path) -> Iterator[os.stat_result]:
    """The lstat of every regular file under ``root`` (symlinks not followed)."""
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except FileNotFoundError:
                continue  # a running server removes temp files and recycles WAL as we walk
            if stat.S_ISREG(st.st_mode):
                yield st


def tree_bytes(root: Path) -> int:
    """Apparent size of every regular file under ``root`` (symlinks not followed)."""
    return sum(st.st_size for st in regular_files(root))


def take_basebackup(ctx: RunContext, dest: Path, stem: str, *extra: str) -> CommandResult:
    """``pg_basebackup -Fp -Xstream -c fast`` of the cluster into ``dest`` (a plain copy
    with the WAL to restore it, after an immediate checkpoint), its output kept as
    ``stem``; the one invocation basebackup and fs-snapshot time."""
    return ctx.tool(
        [
            ctx.cluster.bins.tool("pg_basebackup"),
            *ctx.cluster.conn_args(),
            "-D",
            str(dest),
            "-Fp",
            "-Xstream",
            "-c",
            "fast",
            *extra,
        ],
        stem,
    )


def backup_metrics(nbytes: int, seconds: float) -> list[Metric]:
    mb = nbytes / 2**20
    return [
        Metric("basebackup.seconds", seconds, "s", False, "pg_basebackup wall time"),
        Metric("basebackup.mb", mb, "MB", None, "informational: size of the backup"),
        Metric("basebackup.mb_per_s", mb / seconds, "MB/s", True, "backup size / time"),
    ]


def run(ctx: RunContext, params: BasebackupWorkload) -> WorkloadResult:
    dest = ctx.target.workdir / BACKUP_DIR
    shutil.rmtree(dest, ignore_errors=True)  # a crashed run's copy would make it refuse
    # The copy is at most the data directory (it skips temp files, unlogged data, old WAL).
    ctx.require_free(tree_bytes(ctx.cluster.pgdata) + WAL_ALLOWANCE, "pg_basebackup")
    try:
        out = take_basebackup(ctx, dest, "pg_basebackup", "--verbose")
        nbytes = tree_bytes(dest)
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    return WorkloadResult(metrics=backup_metrics(nbytes, out.seconds))


KIND = WorkloadKind(
    params=BasebackupWorkload,
    run=run,
    order=60,  # where plan errors and the schema list the type
    headline="basebackup.mb_per_s",
    labels={"basebackup.mb_per_s": "base backup MB/s"},
    seconds=lambda p: 5,
    disk_bytes=lambda p, tables: tables + WAL_ALLOWANCE,  # a copy of the loaded tables
)
