"""pgbench: TPC-B for a fixed time, numbers computed from its transaction logs.

pgbench writes one log line per transaction (one file per thread); we stream
them once for tps, latency and the per-second curve, then keep them gzipped.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from pgfsbench.plan.model import PgbenchWorkload
from pgfsbench.workloads.base import RunContext
from pgfsbench.workloads.pgbench_output import parse_run_summary, summarize_transaction_logs
from pgfsbench.workloads.result import Artifact, Metric, WorkloadResult

LOG_PREFIX = "pgbench_log"


def _keep_gzipped(logs: list[Path], dest_dir: Path) -> list[Artifact]:
    dest_dir.mkdir(parents=True, exist_ok=True)
    kept = []
    for log in logs:
        dest = dest_dir / f"{log.name}.gz"
        with open(log, "rb") as src, gzip.open(dest, "wb", compresslevel=3) as out:
            shutil.copyfileobj(src, out, 1 << 20)
        kept.append(Artifact("pgbench-log", dest))
    return kept


def run(ctx: RunContext, params: PgbenchWorkload) -> WorkloadResult:
    result = WorkloadResult()
    with ctx.scratch() as scratch:
        argv = [ctx.cluster.bins.tool("pgbench"), "-n", "-M", params.protocol,
                "-c", str(params.clients), "-j", str(params.jobs), "-T", str(params.duration),
                "-r", "-P", "1", "-l", f"--log-prefix={scratch / LOG_PREFIX}",
                *ctx.cluster.conn_args(), "postgres"]
        out = ctx.tool(argv, "pgbench", timeout=params.duration * 3 + 120)
        logs = sorted(scratch.glob(f"{LOG_PREFIX}.*"))
        summary = summarize_transaction_logs(logs)
        result.artifacts += _keep_gzipped(logs, ctx.artifacts_dir)
    reported = parse_run_summary(out.stdout)
    m = result.metrics
    # tps from the logs: committed transactions over the -T duration.
    m.append(Metric("pgbench.tps", summary.committed / params.duration, "tx/s", True))
    m.append(Metric("pgbench.tps_reported", reported.tps, "tx/s", True,
                    "pgbench's own figure, for cross-checking"))
    m.append(Metric("pgbench.transactions", summary.committed, "tx", True))
    m.append(Metric("pgbench.failed", summary.failed, "tx", False))
    m.append(Metric("pgbench.latency_avg_ms", summary.latency_mean_ms, "ms", False))
    m.append(Metric("pgbench.latency_stddev_ms", summary.latency_stddev_ms, "ms", False))
    m.append(Metric("pgbench.latency_p50_ms", summary.latency_p50_ms, "ms", False))
    m.append(Metric("pgbench.latency_p95_ms", summary.latency_p95_ms, "ms", False))
    m.append(Metric("pgbench.latency_p99_ms", summary.latency_p99_ms, "ms", False))
    m.append(Metric("pgbench.latency_max_ms", summary.latency_max_ms, "ms", False))
    result.series += [summary.tps, summary.latency_avg]
    return result
