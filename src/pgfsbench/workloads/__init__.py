"""The workload catalogue: plan ``type`` → module with ``run(ctx, params)``."""

from pgfsbench.workloads import fsync, pgbench_init, pgbench_tpcb

CATALOGUE = {
    "fsync": fsync.run,
    "pgbench-init": pgbench_init.run,
    "pgbench": pgbench_tpcb.run,
}
