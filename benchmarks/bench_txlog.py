"""Wall time and peak RSS of ``summarize_transaction_logs`` on large synthetic logs.

Usage::

    .venv/bin/python benchmarks/bench_txlog.py                 # 0.5M, 2M, 5M lines
    .venv/bin/python benchmarks/bench_txlog.py --lines 5000000 --gzip

Each size is written to a temporary directory as one log per thread (pgbench
``-l`` format), summarised in a fresh child process (so its peak RSS is the
summary's, not the generator's) and deleted afterwards.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START_EPOCH = 1_795_360_000
TPS_PER_THREAD = 10_000  # a 5M-line run then spans ~250 s, like a real -T run


def write_log(path: Path, thread: int, lines: int, seed: int, use_gzip: bool) -> None:
    """pgbench log lines: ``client txno latency_us 0 epoch us``, ~1% failed/skipped."""
    rng = random.Random(seed)
    opener = gzip.open if use_gzip else open
    now_us = START_EPOCH * 1_000_000
    step = 1_000_000 // TPS_PER_THREAD
    with opener(path, "wt") as out:  # type: ignore[operator]
        chunk: list[str] = []
        for txno in range(1, lines + 1):
            now_us += step + rng.randrange(0, step)
            r = rng.random()
            if r < 0.005:
                lat = "failed"
            elif r < 0.01:
                lat = "skipped"
            else:
                # Mostly ~1 ms, with a long tail to exercise many buckets.
                lat = str(
                    int(rng.lognormvariate(6.9, 0.6)) + (rng.randrange(200_000) if r > 0.999 else 0)
                )
            chunk.append(f"{thread} {txno} {lat} 0 {now_us // 1_000_000} {now_us % 1_000_000}\n")
            if len(chunk) == 10_000:
                out.write("".join(chunk))
                chunk.clear()
        out.write("".join(chunk))


def child(paths: list[str]) -> None:
    from pgfsbench.workloads.pgbench_output import summarize_transaction_logs

    base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    s = summarize_transaction_logs(Path(p) for p in paths)
    elapsed = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        json.dumps(
            {
                "seconds": elapsed,
                "base_rss_mb": base_kb / 1024,
                "peak_rss_mb": peak_kb / 1024,
                "lines": s.committed + s.failed + s.skipped + s.malformed_lines,
                "committed": s.committed,
                "p99_ms": s.latency_p99_ms,
                "series_points": len(s.tps.points),
            }
        )
    )


def bench(total_lines: int, files: int, use_gzip: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench_txlog_") as tmp:
        paths = []
        for thread in range(files):
            suffix = f".{thread}" if thread else ""
            path = Path(tmp) / f"pgbench_log.4242{suffix}{'.gz' if use_gzip else ''}"
            write_log(path, thread, total_lines // files, seed=thread, use_gzip=use_gzip)
            paths.append(path)
        size_mb = sum(p.stat().st_size for p in paths) / 1e6
        out = subprocess.run(
            [sys.executable, __file__, "--child", *map(str, paths)],
            check=True,
            capture_output=True,
            text=True,
        )
    result = json.loads(out.stdout)
    result["mb"] = size_mb
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, nargs="+", default=[500_000, 2_000_000, 5_000_000])
    ap.add_argument("--files", type=int, default=2, help="one log per pgbench thread")
    ap.add_argument("--gzip", action="store_true", help="write gzip-compressed logs")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    print(
        f"{'lines':>10} {'MB':>8} {'seconds':>8} {'lines/s':>10} {'base RSS MB':>12} {'peak RSS MB':>12}"
    )
    for n in args.lines:
        r = bench(n, args.files, args.gzip)
        print(
            f"{r['lines']:>10,} {r['mb']:>8.1f} {r['seconds']:>8.2f} {r['lines'] / r['seconds']:>10,.0f}"
            f" {r['base_rss_mb']:>12.1f} {r['peak_rss_mb']:>12.1f}"
        )


if __name__ == "__main__":
    main()
