"""pgbench-capacity: the highest rate a target holds at a latency target.

"ext4 holds 2,400 tx/s at p99 <= 10 ms; btrfs 900": a series of short pgbench probes at
fixed schedule rates (``--rate``), searched as ``capacity_search`` describes, the latency
of each probe measured from the scheduled start of each transaction (schedule lag
included: what a user arriving at that rate sees). The result is one capacity a round,
so the campaign's repetitions give it a CI like any other headline; the per-rate latency
curve is kept as series for the report's chart.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from pgfsbench.metrics import Metric, Series, WorkloadResult
from pgfsbench.workloads.capacity_search import Capacity, Probe, read_probe_logs, search
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

LOG_PREFIX = "pgbench_log"
BUILTIN = {"tpcb": "tpcb-like", "select-only": "select-only", "simple-update": "simple-update"}
# The series of the per-rate curve: x is the rate asked for (the unthrottled probe: the
# throughput it reached), not seconds.
CURVE = "pgbench_capacity.curve_latency_ms"
CURVE_TPS = "pgbench_capacity.curve_tps"
CURVE_LAG = "pgbench_capacity.curve_lag_ms"


class PgbenchCapacityWorkload(WorkloadBase):
    """The highest pgbench rate at which a latency percentile stays within a target;
    needs a pgbench-init before it."""

    type: Literal["pgbench-capacity"]
    latency_ms: float = Field(
        10.0,
        gt=0,
        le=600_000,
        description="the latency target in milliseconds, schedule lag included",
    )
    percentile: float = Field(
        99.0, gt=0, lt=100, description="the latency percentile held to the target (99: p99)"
    )
    resolution: float = Field(
        0.05,
        ge=0.01,
        le=1.0,
        description="stop when the highest passing and lowest "
        "failing rate are within this fraction "
        "(0.05: 5%)",
    )
    max_probes: int = Field(
        10,
        ge=2,
        le=40,
        description="the most probes a search runs, the unthrottled first one included",
    )
    probe_seconds: int = Field(10, ge=2, le=3600, description="seconds each probe runs (-T)")
    probe_warmup: int = Field(
        1, ge=0, le=600, description="seconds at the start of each probe left out of its latency"
    )
    min_rate: float = Field(
        1.0, gt=0, description="give up below this rate (tx/s): the capacity is then not measured"
    )
    latency_limit: bool = Field(
        False,
        description="also pass --latency-limit=latency_ms: "
        "pgbench skips transactions already late "
        "(counted as over the target)",
    )
    clients: int = Field(4, ge=1, le=1000, description="clients (-c)")
    threads: int | None = Field(
        None, ge=1, le=1000, description="-j; default: as many as clients, capped at clients"
    )
    protocol: Literal["prepared", "simple", "extended"] = Field(
        "prepared", description="query protocol (-M)"
    )
    mode: Literal["tpcb", "select-only", "simple-update"] = Field(
        "tpcb", description="built-in script: TPC-B, -S or -N"
    )

    def server_settings(self) -> dict[str, int]:
        return {"max_connections": self.clients + 10}

    def sweep_label(self) -> str:
        return f"p{self.percentile:g}<={self.latency_ms:g}ms"

    @property
    def jobs(self) -> int:
        return min(self.threads or self.clients, self.clients)


def pgbench_argv(
    pgbench: str,
    params: PgbenchCapacityWorkload,
    rate: float | None,
    log_prefix: str,
    conn: list[str],
) -> list[str]:
    argv = [
        pgbench,
        "-n",
        "-M",
        params.protocol,
        "-b",
        BUILTIN[params.mode],
        "-c",
        str(params.clients),
        "-j",
        str(params.jobs),
        "-T",
        str(params.probe_seconds),
        "-l",
        f"--log-prefix={log_prefix}",
    ]
    if rate is not None:
        argv += ["--rate", f"{rate:.3f}"]
        if params.latency_limit:
            argv += ["--latency-limit", f"{params.latency_ms:g}"]
    return argv + [*conn, "postgres"]


def _metrics(params: PgbenchCapacityWorkload, cap: Capacity) -> list[Metric]:
    target = f"p{params.percentile:g} <= {params.latency_ms:g} ms"
    m = cap.metrics(
        "pgbench_capacity",
        "tps",
        "tx/s",
        how={
            "latency": f"the highest rate probed whose {target} (schedule lag included)",
            "throughput": f"the unthrottled throughput: its {target} already, so the "
            "target does not bind below saturation",
            "none": f"no rate down to {params.min_rate:g} tx/s held {target}",
        },
        resolution=f"bracket within {params.resolution:.0%}",
        max_probes=params.max_probes,
        unthrottled="the unthrottled probe's throughput",
        latency=f"p{params.percentile:g} at the capacity, schedule lag included",
        percentile=params.percentile,
    )
    at = cap.at_capacity()
    if at is not None and at.lag_ms is not None:
        m.append(
            Metric(
                "pgbench_capacity.lag_ms",
                at.lag_ms,
                "ms",
                None,
                f"p{params.percentile:g} of the schedule lag alone at the capacity",
            )
        )
    return m


def curve(cap: Capacity) -> list[Series]:
    """The probes' latency, tps and schedule lag over the rate asked for."""
    return cap.curves(CURVE, CURVE_TPS, "tx/s", CURVE_LAG)


def run(ctx: RunContext, params: PgbenchCapacityWorkload) -> WorkloadResult:
    from pgfsbench.workloads.pgbench_tpcb import _keep_gzipped

    result = WorkloadResult()
    count = 0
    with ctx.scratch() as scratch:

        def probe(rate: float | None) -> Probe:
            nonlocal count
            count += 1
            prefix = scratch / f"probe{count:02d}" / LOG_PREFIX
            prefix.parent.mkdir()
            user = ctx.cluster.user
            shutil.chown(prefix.parent, user.uid, user.gid)
            argv = pgbench_argv(
                ctx.cluster.bins.tool("pgbench"), params, rate, str(prefix), ctx.cluster.conn_args()
            )
            ctx.tool(argv, f"pgbench-probe{count:02d}", timeout=params.probe_seconds * 3 + 120)
            logs = sorted(prefix.parent.glob(f"{LOG_PREFIX}.*"))
            stats = read_probe_logs(logs, skip_s=params.probe_warmup)
            result.artifacts.extend(_keep_gzipped(logs, ctx.artifacts_dir / f"probe{count:02d}"))
            latency = stats.percentile_ms(params.percentile)
            lag = stats.lag_percentile_ms(params.percentile) if rate is not None else None
            passed = latency <= params.latency_ms
            return Probe(rate, stats.tps, latency, lag, passed, stats.committed + stats.over)

        cap = search(
            probe,
            resolution=params.resolution,
            max_probes=params.max_probes,
            min_rate=params.min_rate,
        )
    result.metrics = _metrics(params, cap)
    result.series = curve(cap)
    return result


KIND = WorkloadKind(
    params=PgbenchCapacityWorkload,
    run=run,
    order=45,
    headline="pgbench_capacity.tps",
    # plan check's budget: the most it can take, every probe of the budget run
    labels={"pgbench_capacity.tps": "tx/s held at the latency target"},
    seconds=lambda p: p.max_probes * (p.probe_seconds + 1),
    disk_bytes=lambda p, tables: 0,  # it writes into the tables pgbench-init loaded
    needs="pgbench-init",
    writes_wal=True,
)
