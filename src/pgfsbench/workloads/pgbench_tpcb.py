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
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.plan.model import PgbenchWorkload
from pgfsbench.workloads.base import RunContext
from pgfsbench.workloads.pgbench_output import (
    RunSummary,
    TxLogSummary,
    parse_run_summary,
    summarize_transaction_logs,
)
from pgfsbench.metrics import Artifact, Metric, WorkloadResult

LOG_PREFIX = "pgbench_log"
BUILTIN = {"tpcb": "tpcb-like", "select-only": "select-only", "simple-update": "simple-update"}


def _keep_gzipped(logs: list[Path], dest_dir: Path) -> list[Artifact]:
    dest_dir.mkdir(parents=True, exist_ok=True)
    kept = []
    for log in logs:
        dest = dest_dir / f"{log.name}.gz"
        with open(log, "rb") as src, gzip.open(dest, "wb", compresslevel=3) as out:
            shutil.copyfileobj(src, out, 1 << 20)
        kept.append(Artifact("pgbench-log", dest))
    return kept


def _script_args(params: PgbenchWorkload, scratch: Path, owner_uid: int, owner_gid: int
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
        f"; it includes the {logs.trimmed_run_s:.2f} s warm-up" if logs.trimmed_s else "")
    m = [
        # tps from the logs: committed transactions over the -T duration (after the warm-up).
        Metric("pgbench.tps", tps, "tx/s", True),
        Metric("pgbench.tps_reported", summary.tps, "tx/s", True, reported_note),
        # Whole seconds of the per-second series (what the charts shade); the run
        # time they stand for is in the note.
        Metric("pgbench.warmup_s", logs.trimmed_s, "s", None,
               ("detected (MSER)" if params.warmup == "auto"
                else f"fixed {params.warmup:g} s" if params.warmup else "fixed")
               + (f": the first {logs.trimmed_s:g} s of the per-second series, "
                  f"{logs.trimmed_run_s:.2f} s of the run" if logs.trimmed_s else "")),
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
        m.append(Metric(f"pgbench.statement_{n:02d}_ms", st.latency_ms, "ms", False,
                        st.statement))
    return m


def run(ctx: RunContext, params: PgbenchWorkload) -> WorkloadResult:
    result = WorkloadResult()
    user = ctx.cluster.user
    with ctx.scratch() as scratch:
        argv = [ctx.cluster.bins.tool("pgbench"), "-n", "-M", params.protocol,
                *_script_args(params, scratch, user.uid, user.gid),
                "-c", str(params.clients), "-j", str(params.jobs), "-T", str(params.duration),
                "-r", "-P", "1", "-l", f"--log-prefix={scratch / LOG_PREFIX}",
                *ctx.cluster.conn_args(), "postgres"]
        out = ctx.tool(argv, "pgbench", timeout=params.duration * 3 + 120)
        logs = sorted(scratch.glob(f"{LOG_PREFIX}.*"))
        summary = summarize_transaction_logs(logs, skip_before_s=params.warmup)
        result.artifacts += _keep_gzipped(logs, ctx.artifacts_dir)
    result.metrics = _metrics(params, summary, parse_run_summary(out.stdout))
    result.series += [summary.tps, summary.latency_avg]
    return result
