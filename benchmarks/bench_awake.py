r"""CPUs held awake or left to halt: TPC-B runs alternating between the two.

    .venv/bin/python benchmarks/bench_awake.py [--runs 30] [--neighbour] [--duty 0.4]
        [--pad 1] [--seed S] [--no-cpu | --no-disk] [--rows F]   # root, ~4-5 min per 30 runs

One ext4 loop image (2 GiB, direct I/O, as pgfsbench makes targets) in a temporary
directory under /var/tmp; the embedded PostgreSQL with the default plan's settings
(shared_buffers 128MB, min_wal_size = max_wal_size = 1GB); ``pgbench -i -s 10``; then
``--runs`` TPC-B runs (``pgbench -n -c 4 -j 2 -T 8``, tps the mean of the per-second
figures after the first 2 s), each prepared as the default plan prepares one (VACUUM of
branches and tellers, TRUNCATE of history, CHECKPOINT, a sync of the target and of the
file system holding its image). Odd runs hold the CPUs' wake-up latency at 0 µs
(``provision/cpu_latency.py``, what a plan's ``[machine] cpu_latency = 0`` does), even runs leave the CPUs to halt when idle: the two arms alternate, so a drift of
the machine reaches both alike.

``--neighbour``: ``benchmarks/neighbour.py`` bursts beside the runs (``--duty`` of the
time, cycles of 30 s on average), its bursts logged; a run no burst came within ``--pad``
seconds of is *clean*, the others *disturbed*. ``--no-cpu`` / ``--no-disk``: only its disk
bursts, or only its CPU spinners (which of the two makes the clean runs noisier).

Prints, per arm: the clean runs' count, median tps and sd of log tps (the run-to-run
noise a paired test sees twice), and the disturbed runs' median tps and its loss against
the clean median. Everything it made (server, mount, loop device, image) is taken apart
at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from pgfsbench.postgres.binaries import find_binaries  # noqa: E402
from pgfsbench.postgres.user import PG_USER, ensure_pg_user  # noqa: E402
from pgfsbench.provision import cpu_latency  # noqa: E402
from pgfsbench.workloads.pgbench_prepare import VACUUM_SQL  # noqa: E402

PORT = 55439
SETTINGS = ("shared_buffers=128MB", "max_wal_size=1GB", "min_wal_size=1GB")
# As the default plan prepares a TPC-B run: its vacuum, then a checkpoint.
PREPARE = (*VACUUM_SQL, "CHECKPOINT")


def sh(*argv: str, user: bool = False) -> str:
    cmd = (["runuser", "-u", PG_USER, "--"] if user else []) + list(argv)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def tps_after_warmup(progress: str, warmup: int = 2) -> float:
    """The mean of pgbench's per-second tps (-P 1) after the first ``warmup`` seconds."""
    per_second = [
        float(m) for m in re.findall(r"^progress: [\d.]+ s, ([\d.]+) tps", progress, re.M)
    ]
    return statistics.mean(per_second[warmup:])


def experiment(runs: int, work: Path) -> list[tuple[bool, float, float, float]]:
    """(held awake, started, ended, tps) of each run."""
    bins = find_binaries()
    ensure_pg_user()
    image, mnt, sock = work / "image", work / "mnt", work / "sock"
    mnt.mkdir()
    sock.mkdir()
    with open(image, "wb") as f:
        f.truncate(2 * 2**30)
    loop = sh("losetup", "--direct-io=on", "-f", "--show", str(image)).strip()
    mounted = started = False
    try:
        sh("mkfs.ext4", "-q", "-F", loop)
        sh("mount", loop, str(mnt))
        mounted = True
        shutil.chown(mnt, PG_USER)
        shutil.chown(sock, PG_USER)
        data = mnt / "data"
        sh(bins.tool("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", user=True)
        opts = " ".join(
            [f"-c port={PORT}", f"-c unix_socket_directories={sock}", "-c listen_addresses="]
            + [f"-c {s}" for s in SETTINGS]
        )
        sh(
            bins.tool("pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(mnt / "log"),
            "-w",
            "-o",
            opts,
            "start",
            user=True,
        )
        started = True
        conn = ("-h", str(sock), "-p", str(PORT), "-U", "postgres")
        sh(bins.tool("pgbench"), *conn, "-i", "-s", "10", "-q", "postgres", user=True)
        out = []
        for i in range(1, runs + 1):
            awake = i % 2 == 1
            sh(
                bins.tool("psql"),
                *conn,
                "-q",
                *(a for s in PREPARE for a in ("-c", s)),
                "postgres",
                user=True,
            )
            sh("sync", "--file-system", str(mnt))
            sh("sync", "--file-system", str(work))
            with cpu_latency.held(0 if awake else None):
                began = time.time()
                progress = subprocess.run(
                    ["runuser", "-u", PG_USER, "--", bins.tool("pgbench"), *conn]
                    + ["-n", "-c", "4", "-j", "2", "-T", "8", "-P", "1", "postgres"],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stderr
                ended = time.time()
            out.append((awake, began, ended, tps_after_warmup(progress)))
            print(f"run {i}: {'awake' if awake else 'as is'} {out[-1][3]:.0f} tps", file=sys.stderr)
        return out
    finally:
        if started:
            subprocess.run(
                ["runuser", "-u", PG_USER, "--", bins.tool("pg_ctl"), "-D", str(mnt / "data")]
                + ["-m", "fast", "stop"],
                capture_output=True,
            )
        if mounted:
            subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", loop], check=False)


def bursts(log: Path) -> list[tuple[float, float]]:
    return [
        (float(p[1]), float(p[2]))
        for line in log.read_text().splitlines()
        if (p := line.split()) and p[0] == "burst"
    ]


def _clean(began: float, ended: float, burst: list[tuple[float, float]], pad: float) -> bool:
    """Whether no burst came within ``pad`` seconds of a run."""
    return not any(b0 < ended + pad and b1 > began - pad for b0, b1 in burst)


def report(
    rows: list[tuple[bool, float, float, float]], burst: list[tuple[float, float]], pad: float
) -> None:
    for awake in (False, True):
        clean, disturbed = [], []
        for a, began, ended, tps in rows:
            if a != awake:
                continue
            (clean if _clean(began, ended, burst, pad) else disturbed).append(tps)
        line = f"{'held awake' if awake else 'as is'}: clean runs {len(clean)}"
        if len(clean) > 1:
            logs = [math.log(t) for t in clean]
            line += f", median {statistics.median(clean):,.0f} tps, sd of log tps {statistics.stdev(logs):.3f}"
        if disturbed and clean:
            d = statistics.median(disturbed)
            line += (
                f"; disturbed runs {len(disturbed)}, median {d:,.0f} tps "
                f"({1 - d / statistics.median(clean):.0%} below the clean median)"
            )
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--neighbour", action="store_true")
    parser.add_argument("--duty", type=float, default=0.4)
    parser.add_argument("--pad", type=float, default=1.0)
    parser.add_argument("--seed", type=int)
    half = parser.add_mutually_exclusive_group()
    half.add_argument("--no-cpu", action="store_true", help="the neighbour's disk bursts only")
    half.add_argument("--no-disk", action="store_true", help="the neighbour's CPU bursts only")
    parser.add_argument("--rows", type=Path, help="write each run as a CSV line here")
    args = parser.parse_args()
    if os.geteuid() != 0:
        parser.error("needs root (a loop device, mkfs, mount, /dev/cpu_dma_latency)")
    # SIGTERM unwinds through the finally blocks below, so the server, mount and loop
    # device are taken apart (a shell's background job ignores SIGINT: TERM stops it).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = Path(tempfile.mkdtemp(prefix="bench-awake-", dir="/var/tmp"))
    work.chmod(0o755)  # the PostgreSQL user reaches its mount and socket through it
    log = work / "neighbour.log"
    neighbour = None
    try:
        if args.neighbour:
            neighbour = subprocess.Popen(
                [
                    sys.executable,
                    str(REPO / "benchmarks" / "neighbour.py"),
                    "--duty",
                    str(args.duty),
                ]
                + ["--seconds", str(20 * args.runs + 120), "--log", str(log), "--dir", str(work)]
                + (["--seed", str(args.seed)] if args.seed is not None else [])
                + (["--no-cpu"] if args.no_cpu else [])
                + (["--no-disk"] if args.no_disk else [])
            )
        rows = experiment(args.runs, work)
    finally:
        if neighbour is not None:
            neighbour.terminate()
            neighbour.wait(30)
        burst = bursts(log) if log.exists() else []
        shutil.rmtree(work, ignore_errors=True)
    kind = " (disk only)" if args.no_cpu else " (CPU only)" if args.no_disk else ""
    print(
        f"TPC-B, pgbench -c 4 -j 2 -T 8 on one ext4 loop image, {args.runs} runs alternating "
        f"held awake / as is, neighbour "
        + (f"on at duty {args.duty}{kind}" if args.neighbour else "off")
    )
    report(rows, burst, args.pad)
    if args.rows:
        write_rows(args.rows, rows, burst, args.pad)


def write_rows(
    path: Path,
    rows: list[tuple[bool, float, float, float]],
    burst: list[tuple[float, float]],
    pad: float,
) -> None:
    """One line per run: its arm, times, tps, whether it is clean (no burst within
    ``pad`` seconds) and the seconds from its start back to the last burst's end and
    from its end on to the next burst's start (blank: none)."""
    lines = ["awake,started,ended,tps,clean,since_burst_s,to_burst_s"]
    for awake, began, ended, tps in rows:
        clean = _clean(began, ended, burst, pad)
        since = min((began - b1 for _, b1 in burst if b1 <= began), default=None)
        to = min((b0 - ended for b0, _ in burst if b0 >= ended), default=None)
        cells = [str(int(awake)), f"{began:.1f}", f"{ended:.1f}", f"{tps:.1f}", str(int(clean))]
        cells += ["" if x is None else f"{x:.1f}" for x in (since, to)]
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
