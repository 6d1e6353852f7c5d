"""What the monitors cost: CPU time of their own sampling threads at a given rate.

    .venv/bin/python benchmarks/bench_monitor.py                  # system monitor, 60 s at 1 Hz
    .venv/bin/python benchmarks/bench_monitor.py --postgres       # + pg monitor (root: throwaway cluster)
    .venv/bin/python benchmarks/bench_monitor.py --seconds 30 --interval 0.1
    .venv/bin/python benchmarks/bench_monitor.py --postgres --clients 90  # a big server tree

Each monitor's thread measures its own CPU (time.thread_time), so monitors running
side by side do not blur each other. For the PostgreSQL monitor the server side is
measured too: the CPU of the backend serving the monitor's connection (utime+stime
from /proc/<pid>/stat). With --postgres the system monitor also reads the server's
processes each tick (our process tree, proctree.py); --clients N opens N idle
connections, so that tree has N more backends to read. Target: under 1 % of one core
at 1 Hz.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from pgfsbench.monitor import PgMonitor, SystemMonitor


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def throwaway_cluster(stack: ExitStack):
    from pgfsbench.ledger import Ledger
    from pgfsbench.postgres.binaries import find_binaries
    from pgfsbench.postgres.cluster import running_cluster
    from pgfsbench.postgres.user import ensure_pg_user

    base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-monitor-")))
    os.chmod(base, 0o755)
    os.environ["PGFSBENCH_STATE_DIR"] = str(base / "state")
    ledger = Ledger.create("bench-monitor", base)
    stack.callback(ledger.close)
    stack.callback(ledger.release_all)
    user = ensure_pg_user()
    work = base / "work"
    work.mkdir()
    os.chown(work, user.uid, user.gid)
    return stack.enter_context(
        running_cluster(find_binaries(), user, work, ledger, {}, base / "pg.log")
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument(
        "--device",
        default=None,
        help="a block device for the disk series "
        "(default: the disk / is on is not guessed; e.g. /dev/vda)",
    )
    ap.add_argument("--postgres", action="store_true", help="also a pg monitor (needs root)")
    ap.add_argument(
        "--clients",
        type=int,
        default=0,
        help="with --postgres: idle connections held open (backends to read)",
    )
    args = ap.parse_args()

    with ExitStack() as stack:
        monitors = [SystemMonitor(args.interval, args.device, args.device)]
        backend = None
        if args.postgres:
            import psycopg

            cluster = throwaway_cluster(stack)
            monitors = [
                SystemMonitor(
                    args.interval,
                    args.device,
                    args.device,
                    server_pidfile=cluster.pgdata / "postmaster.pid",
                )
            ]
            for _ in range(args.clients):
                conn = psycopg.connect(
                    host=str(cluster.socket_dir),
                    port=cluster.port,
                    user="postgres",
                    dbname="postgres",
                )
                stack.callback(conn.close)
            pg = PgMonitor(cluster, args.interval)
            monitors.append(pg)
        origin = time.monotonic()
        cpu0 = time.process_time()
        for m in monitors:
            m.start(origin)
        if args.postgres:
            backend = int(pg._conn.execute("SELECT pg_backend_pid()").fetchone()[0])
            backend_cpu0 = proc_cpu(backend)
        time.sleep(args.seconds)
        if backend is not None:
            backend_cpu = proc_cpu(backend) - backend_cpu0
        for m in monitors:
            m.stop()
        wall = time.monotonic() - origin
        process_cpu = time.process_time() - cpu0

    print(
        f"{wall:.1f} s at {1 / args.interval:g} Hz, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"{'monitor':<10} {'ticks':>6} {'thread CPU s':>13} {'% of a core':>12} "
        f"{'ms/tick':>8} {'series':>7} problems"
    )
    for m in monitors:
        pct = 100 * m.cpu_seconds / wall
        per_tick = 1000 * m.cpu_seconds / max(1, m.ticks)
        print(
            f"{m.name:<10} {m.ticks:>6} {m.cpu_seconds:>13.4f} {pct:>11.3f}% "
            f"{per_tick:>8.3f} {len(m.series()):>7} {len(m.problems)}"
        )
    if backend is not None:
        print(
            f"{'pg server':<10} {'':>6} {backend_cpu:>13.4f} {100 * backend_cpu / wall:>11.3f}%"
            "   (the backend serving the monitor's queries)"
        )
    print(
        f"whole process CPU (incl. main thread, start/stop): {process_cpu:.3f} s "
        f"= {100 * process_cpu / wall:.3f}% of a core"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
