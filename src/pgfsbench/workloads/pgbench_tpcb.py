"""pgbench: a fixed-time run, numbers computed from its transaction logs (seeds 000, 002).

pgbench writes one log line per transaction (one file per thread); we stream
them for tps, latency percentiles and the per-second curves, then keep them
gzipped. A client sweep arrives here as one run per client count.

Warm-up (``warmup``): the transactions completing in the first W seconds of the
run (up to the next whole second of the per-second series, so at most a second
more) are left out of tps, the transaction count and the latency statistics;
with ``"auto"`` MSER (``warmup.steady_state_start``) picks the series seconds
from the tps series. The series still show the whole run; ``pgbench.warmup_s``
is the series seconds dropped (what the charts shade) and its note the run
time. With a warm-up the logs are read twice (once for the series and the
run's origin, once trimmed).
"""

from __future__ import annotations

import gzip
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Self

from pydantic import Field, field_validator, model_validator

from pgfsbench.errors import UserError
from pgfsbench.metrics import Artifact, Metric, WorkloadResult
from pgfsbench.workloads import pgbench_prepare
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext
    from pgfsbench.workloads.pgbench_output import RunSummary, TxLogSummary

LOG_PREFIX = "pgbench_log"
BUILTIN = {"tpcb": "tpcb-like", "select-only": "select-only", "simple-update": "simple-update"}


class PgbenchWorkload(WorkloadBase):
    """pgbench for a fixed time (seeds 000, 002); needs a pgbench-init before it.

    ``clients`` may be a list: a client sweep, one measurement per count.
    """

    type: Literal["pgbench"]
    clients: int | list[int] = Field(
        4, description="clients (-c); a list is a client sweep, one measurement per count"
    )
    threads: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="-j; default: as many as clients (-c X -j X, "
        "as the studies do); capped at clients",
    )
    duration: int = Field(30, ge=1, le=86400, description="seconds (-T)")
    protocol: Literal["prepared", "simple", "extended"] = Field(
        "prepared", description="query protocol (-M)"
    )
    mode: Literal["tpcb", "select-only", "simple-update"] = Field(
        "tpcb", description="built-in script: TPC-B, -S or -N (a script replaces it)"
    )
    script: Path | None = Field(None, description="a custom pgbench script file (-f)")
    warmup: int | Literal["auto"] = Field(
        0,
        description="seconds at the start left out of tps and latency: a number, or "
        "'auto' to detect where the per-second tps settles (MSER rule)",
    )

    prepare: list[pgbench_prepare.Step] = Field(
        [],
        description="before the timed run, outside the numbers: 'vacuum' (what pgbench "
        "does without -n), 'checkpoint', 'sync' (the target's file system and "
        "a loop image's)",
    )

    @field_validator("warmup")
    @classmethod
    def _warmup_valid(cls, v: int | str) -> int | str:
        if isinstance(v, int) and v < 0:
            raise ValueError("warmup must be 0 or more seconds, or 'auto'")
        return v

    @model_validator(mode="after")
    def _warmup_shorter(self) -> PgbenchWorkload:
        if isinstance(self.warmup, int) and self.warmup >= self.duration:
            raise ValueError(
                f"warmup ({self.warmup} s) must be shorter than duration ({self.duration} s)"
            )
        return self

    @field_validator("clients")
    @classmethod
    def _clients_positive(cls, v: int | list[int]) -> int | list[int]:
        counts = v if isinstance(v, list) else [v]
        if not counts or any(c < 1 or c > 1000 for c in counts):
            raise ValueError("clients must be between 1 and 1000 (or a non-empty list of such)")
        return v

    @model_validator(mode="after")
    def _script_or_mode(self) -> PgbenchWorkload:
        if self.script is not None and self.mode != "tpcb":
            raise ValueError("give either mode or script, not both")
        return self

    def only_reads(self) -> bool:
        return self.mode == "select-only" and self.script is None

    def expand(self) -> list[Self]:
        if isinstance(self.clients, list):
            return [self.model_copy(update={"clients": c}) for c in self.clients]
        return [self]

    @property
    def jobs(self) -> int:
        assert isinstance(self.clients, int), "expand() a sweep first"
        return min(self.threads or self.clients, self.clients)

    def server_settings(self) -> dict[str, int]:
        most = max(self.clients) if isinstance(self.clients, list) else self.clients
        return {"max_connections": most + 10}

    def sweep_label(self) -> str:
        return f"clients={self.clients}"


def _keep_gzipped(logs: list[Path], dest_dir: Path) -> list[Artifact]:
    dest_dir.mkdir(parents=True, exist_ok=True)
    kept = []
    for log in logs:
        dest = dest_dir / f"{log.name}.gz"
        with open(log, "rb") as src, gzip.open(dest, "wb", compresslevel=3) as out:
            shutil.copyfileobj(src, out, 1 << 20)
        kept.append(Artifact("pgbench-log", dest))
    return kept


def _script_args(
    params: PgbenchWorkload, scratch: Path, owner_uid: int, owner_gid: int
) -> list[str]:
    if params.script is None:
        return ["-b", BUILTIN[params.mode]]
    source = Path(params.script)
    if not source.is_file():
        raise UserError(f"pgbench script {source} does not exist")
    # The PostgreSQL user may not be able to read the user's copy: hand it its own.
    copy = scratch / source.name
    shutil.copyfile(source, copy)
    shutil.chown(copy, owner_uid, owner_gid)
    return ["-f", str(copy)]


def _metrics(params: PgbenchWorkload, logs: TxLogSummary, summary: RunSummary) -> list[Metric]:
    # Committed after the warm-up over the run time after it. The cut-off is on
    # the series' whole seconds, so the time dropped is trimmed_run_s (the run
    # started up to 1 s after the series' origin), not trimmed_s; 0 without one.
    tps = logs.committed / (params.duration - logs.trimmed_run_s)
    reported_note = "pgbench's own figure, for cross-checking" + (
        f"; it includes the {logs.trimmed_run_s:.2f} s warm-up" if logs.trimmed_s else ""
    )
    m = [
        # tps from the logs: committed transactions over the -T duration (after the warm-up).
        Metric("pgbench.tps", tps, "tx/s", True),
        Metric("pgbench.tps_reported", summary.tps, "tx/s", True, reported_note),
        # Whole seconds of the per-second series (what the charts shade); the run
        # time they stand for is in the note.
        Metric(
            "pgbench.warmup_s",
            logs.trimmed_s,
            "s",
            None,
            (
                "detected (MSER)"
                if params.warmup == "auto"
                else f"fixed {params.warmup:g} s"
                if params.warmup
                else "fixed"
            )
            + (
                f": the first {logs.trimmed_s:g} s of the per-second series, "
                f"{logs.trimmed_run_s:.2f} s of the run"
                if logs.trimmed_s
                else ""
            ),
        ),
        Metric("pgbench.transactions", logs.committed, "tx", None),
        Metric("pgbench.failed", logs.failed, "tx", False),
        Metric("pgbench.latency_avg_ms", logs.latency_mean_ms, "ms", False),
        Metric("pgbench.latency_stddev_ms", logs.latency_stddev_ms, "ms", False),
        Metric("pgbench.latency_p50_ms", logs.latency_p50_ms, "ms", False),
        Metric("pgbench.latency_p95_ms", logs.latency_p95_ms, "ms", False),
        Metric("pgbench.latency_p99_ms", logs.latency_p99_ms, "ms", False),
        Metric("pgbench.latency_max_ms", logs.latency_max_ms, "ms", False),
    ]
    if summary.retried_transactions is not None:
        m.append(Metric("pgbench.retried", summary.retried_transactions, "tx", False))
    # -r: average latency of each statement of the script, in script order.
    for n, st in enumerate(summary.statements, start=1):
        m.append(Metric(f"pgbench.statement_{n:02d}_ms", st.latency_ms, "ms", False, st.statement))
    return m


def prepare(ctx: RunContext, params: PgbenchWorkload) -> list[Metric]:
    """The run's preparation (``pgbench_prepare``), each step timed: its metrics."""
    from pgfsbench import proc

    metrics = []
    for step in pgbench_prepare.ordered(params.prepare, params.script is not None):
        started = time.monotonic()
        if step == "vacuum":
            for statement in pgbench_prepare.VACUUM_SQL:
                ctx.cluster.sql(statement)
        elif step == "checkpoint":
            ctx.cluster.sql("CHECKPOINT")
        else:
            backing = (
                pgbench_prepare.loop_backing_file(ctx.target.device)
                if ctx.target.kind == "loop"
                else None
            )
            for path in pgbench_prepare.sync_paths(ctx.target.workdir, backing):
                proc.run(["sync", "--file-system", path])
        metrics.append(
            Metric(
                f"pgbench.prepare_{step}_s",
                time.monotonic() - started,
                "s",
                None,
                "before the timed run, not in tps",
            )
        )
    return metrics


def run(ctx: RunContext, params: PgbenchWorkload) -> WorkloadResult:
    from pgfsbench.workloads.pgbench_output import parse_run_summary, summarize_transaction_logs

    result = WorkloadResult()
    user = ctx.cluster.user
    with ctx.scratch() as scratch:
        argv = [
            ctx.cluster.bins.tool("pgbench"),
            "-n",
            "-M",
            params.protocol,
            *_script_args(params, scratch, user.uid, user.gid),
            "-c",
            str(params.clients),
            "-j",
            str(params.jobs),
            "-T",
            str(params.duration),
            "-r",
            "-P",
            "1",
            "-l",
            f"--log-prefix={scratch / LOG_PREFIX}",
            *ctx.cluster.conn_args(),
            "postgres",
        ]
        out = ctx.tool(argv, "pgbench", timeout=params.duration * 3 + 120)
        logs = sorted(scratch.glob(f"{LOG_PREFIX}.*"))
        summary = summarize_transaction_logs(logs, skip_before_s=params.warmup)
        result.artifacts += _keep_gzipped(logs, ctx.artifacts_dir)
    result.metrics = _metrics(params, summary, parse_run_summary(out.stdout))
    result.series += [summary.tps, summary.latency_avg]
    return result


KIND = WorkloadKind(
    params=PgbenchWorkload,
    run=run,
    order=40,  # where plan errors and the schema list the type
    headline="pgbench.tps",
    labels={"pgbench.tps": "TPC-B tps"},
    seconds=lambda p: p.duration + 2,
    disk_bytes=lambda p, tables: 0,  # it writes into the tables pgbench-init loaded
    needs="pgbench-init",
    writes_wal=True,
    prepare=prepare,
    # Every built-in script reads one pgbench_accounts row a transaction (select-only
    # looks it up; TPC-B and simple-update update it and select it back): uncached, at
    # least its heap page. A custom script: unknown.
    read_bytes=lambda p, values: (
        8192 * values["pgbench.transactions"]
        if p.script is None and "pgbench.transactions" in values
        else None
    ),
)
