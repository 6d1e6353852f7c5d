"""crash: cut the power many times and count what PostgreSQL lost (issue 37).

While clients commit write-heavy transactions and log every acknowledgement, the
recording layer under the target's loop image (``crash/recorder.py``) records every
write and every flush that reaches the device. Then crash states are built from the
recording the way a volatile disk cache could have left the device at a power cut
(``crash/states.py``: flush points, prefixes, random subsets and reorderings of the
unflushed writes, torn 4 kB halves of 8 kB pages), and each is recovered and checked
(``crash/check.py``): the filesystem's recovery (mount) and its read-only fsck,
PostgreSQL's recovery, every acknowledged commit present, amcheck, pg_checksums.

The measurements: states tried, states that lost acknowledged commits (how many, the
oldest one's age at the cut), states corrupt and by which check, recovery times. Every
state's result is kept (``crash-states.jsonl``); a state is replayed from the recording
(kept with ``keep_recording``) by its number and the seed. "0 of N states" bounds the
rate of bad states at 3/N with 95% confidence (the rule of three), no lower.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.errors import UserError
from pgfsbench.metrics import CRASH_CHECKS, Artifact, Metric, WorkloadResult
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

MB = 2**20
CHECKS = CRASH_CHECKS
# plan check's estimate: 0.4-1.0 s measured a state (2-core VM, 256 MB images; btrfs the
# slowest: benchmarks/README.md)
SECONDS_PER_STATE = 0.8


class CrashWorkload(WorkloadBase):
    """Power cuts: every write and flush recorded during a write-heavy run, then
    PostgreSQL recovered and checked in crash states built from them."""

    type: Literal["crash"]
    seconds: int = Field(
        10, ge=1, le=600, description="how long the clients commit while every write is recorded"
    )
    clients: int = Field(2, ge=1, le=32, description="client connections committing at once")
    states: int = Field(
        100,
        ge=1,
        le=100000,
        description="crash states to build and check (0 bad of N bounds the rate at 3/N, 95%)",
    )
    checkpoint_every: float = Field(
        2.0,
        ge=0,
        le=300,
        description="seconds between CHECKPOINTs while recording, so data pages are "
        "written and flushed too (0: none)",
    )
    accounts: int = Field(
        20000, ge=100, le=10_000_000, description="rows of the table the clients update"
    )
    seed: int = Field(0, ge=0, description="chooses the states: the same seed, the same states")
    keep_recording: bool = Field(
        False,
        description="keep the write log and base image with the run (large), to replay a "
        "state by its number",
    )


def _mount_of(path: Path) -> tuple[str, str, str]:
    """(mount point, fs type, options) of the mount holding ``path``."""
    best = ("", "", "")
    target = os.path.realpath(path)
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            point = fields[1].replace("\\040", " ")
            if (target == point or target.startswith(point.rstrip("/") + "/")) and len(point) > len(
                best[0]
            ):
                best = (point, fields[2], fields[3])
    return best


def _recorded_image(ctx: RunContext) -> Path:
    from pgfsbench.crash.recording import backing_file, recorder_of

    target = ctx.target
    devices = target.io_devices or ([target.device] if target.device else [])
    images = [backing_file(d) for d in devices]
    if len(images) != 1 or images[0] is None or recorder_of(images[0]) is None:
        raise UserError(
            f"target '{target.name}': the crash workload needs the target's one loop image "
            "in the recording layer, and this one is not (a target pgfsbench made for a "
            "plan with a crash workload is)"
        )
    return Path(images[0])


def run(ctx: RunContext, params: CrashWorkload) -> WorkloadResult:
    import contextlib

    from psycopg.conninfo import make_conninfo as psycopg_conninfo

    from pgfsbench import proc
    from pgfsbench.crash.check import Setup, check_state
    from pgfsbench.crash.client import drive, setup_sql
    from pgfsbench.crash.recorder import sparse_copy
    from pgfsbench.crash.recording import control, recorder_of
    from pgfsbench.crash.states import plan_states
    from pgfsbench.crash.workspace import workspace
    from pgfsbench.crash.writelog import read_files, read_ops
    from pgfsbench.filesystems.registry import find
    from pgfsbench.postgres.cluster import SUPERUSER

    image = _recorded_image(ctx)
    layer = recorder_of(image)
    assert layer is not None
    point, fstype, options = _mount_of(ctx.target.workdir)
    recipe = find(fstype)
    mount_options = ",".join(
        [
            *(o for o in options.split(",") if o not in ("rw", "ro")),
            *(recipe.clone_mount_options if recipe else ()),
        ]
    )
    cluster = ctx.cluster
    ctx.tool(cluster.psql_argv(setup_sql(params.accounts)), "crash-setup")
    checksums = cluster.data_checksums()
    conninfo = psycopg_conninfo(
        host=str(cluster.socket_dir), port=cluster.port, user=SUPERUSER, dbname="postgres"
    )
    size = image.stat().st_size
    ws_image = layer.parent / f".{ctx.target.name}-crash-workspace.img"
    states_path = ctx.artifacts_dir / "crash-states.jsonl"
    logs = ctx.artifacts_dir / "crash-states"
    logs.mkdir(parents=True, exist_ok=True)
    with workspace(ctx.ledger, ws_image, 3 * size + params.seconds * 200 * MB) as ws:
        recording = ws / "recording"
        proc.run(["sync", "--file-system", str(ctx.target.workdir)])
        control(layer, f"start {recording}")
        try:
            acks = drive(
                conninfo, params.clients, params.seconds, params.accounts, params.checkpoint_every
            )
        finally:
            recorded = control(layer, "stop")
        ops = read_ops(recording)
        setup = Setup(
            recording=recording,
            files=read_files(recording),
            ops=ops,
            workspace=ws,
            fstype=fstype,
            mount_options=mount_options,
            workdir=Path(os.path.relpath(ctx.target.workdir, point)),
            fsck=recipe.fsck if recipe else None,
            forget=recipe.forget_device if recipe else None,
            bins=cluster.bins,
            user=cluster.user,
            ledger=ctx.ledger,
            checksums=checksums,
            acks=acks,
            logs=logs,
        )
        results = []
        with open(states_path, "w") as out:
            ctx.kept.append(Artifact("crash-states", states_path))
            for state in plan_states(ops, params.states, params.seed):
                result = check_state(setup, state)
                results.append(result)
                out.write(json.dumps(result.describe()) + "\n")
                out.flush()
        if params.keep_recording:
            kept = ctx.artifacts_dir / "crash-recording"
            kept.mkdir(exist_ok=True)
            for path in recording.iterdir():
                sparse_copy(str(path), str(kept / path.name))
    with contextlib.suppress(OSError):
        logs.rmdir()  # nothing failed: no logs kept
    return WorkloadResult(
        _metrics(results, acks.total, recorded), artifacts=[Artifact("crash-states", states_path)]
    )


def _metrics(results: list, acked: int, recorded: dict) -> list[Metric]:
    n = len(results)
    lost = [r for r in results if r.lost]
    corrupt = [r for r in results if r.corrupt]
    bad = [r for r in results if r.bad]
    pg = [r.pg_recovery_s for r in results if r.pg_recovery_s is not None]
    fs = [r.fs_recovery_s for r in results if r.fs_recovery_s is not None]
    spent = sum(r.seconds for r in results)
    metrics = [
        # No direction: a crash test's sample is its states, not runs, so no verdict
        # between targets is drawn from runs of it (one run each would be "cannot tell");
        # what it found is said beside each target's durability class instead.
        Metric("crash.bad_state_pct", 100.0 * len(bad) / n if n else None, "%", None),
        Metric("crash.states", n, "states", None),
        Metric("crash.lost_commit_states", len(lost), "states", False),
        Metric("crash.corrupt_states", len(corrupt), "states", False),
        Metric(
            "crash.lost_commits_max", max((r.lost for r in results), default=0), "commits", False
        ),
        Metric(
            "crash.lost_seconds_max",
            max((r.lost_seconds for r in results), default=0.0),
            "s",
            False,
        ),
        *(
            Metric(
                f"crash.corrupt.{check}", sum(check in r.corrupt for r in results), "states", False
            )
            for check in CHECKS
        ),
        Metric("crash.pg_recovery_s", statistics.median(pg) if pg else None, "s", False),
        Metric("crash.pg_recovery_max_s", max(pg) if pg else None, "s", False),
        Metric("crash.fs_recovery_s", statistics.median(fs) if fs else None, "s", False),
        Metric("crash.commits_acked", acked, "commits", None),
        Metric("crash.recorded_writes", recorded.get("writes", 0), "writes", None),
        Metric("crash.recorded_flushes", recorded.get("flushes", 0), "flushes", None),
        Metric("crash.recorded_mb", recorded.get("bytes", 0) / MB, "MB", None),
        Metric("crash.states_per_minute", 60 * n / spent if spent else None, "states/min", True),
    ]
    return metrics


KIND = WorkloadKind(
    params=CrashWorkload,
    run=run,
    headline="crash.bad_state_pct",
    labels={
        "crash.bad_state_pct": "crash states lost or corrupt",
        "crash.lost_commit_states": "crash states that lost commits",
        "crash.corrupt_states": "corrupt crash states",
        "crash.lost_seconds_max": "acknowledged commits lost (s)",
        "crash.pg_recovery_s": "PostgreSQL recovery time",
    },
    seconds=lambda p: 15 + p.seconds + SECONDS_PER_STATE * p.states,
    disk_bytes=lambda p, tables: 128 * MB,
    records_device=True,
    order=68,
)
