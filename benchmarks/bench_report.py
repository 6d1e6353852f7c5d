"""How long the statistics and the report take, stage by stage, as repetitions grow.

Builds a synthetic results directory per size (T targets x R repetitions of a
pgbench run with 40 metrics and a 60-point tps series, and of an fsync-latency
run with 8 metrics), or times an existing one with --results, then times in
this process:

  import   importing the report code (scipy.stats dominates)
  load     load_campaign from SQLite
  table    the comparison table, cold (every cell's bootstrap and every test)
  again    the same table again (shared per campaign: should be ~0)
  terminal the rich table and verdict lines, rendered to a null console
  figures  every chart of the report
  report   write_report with the loaded campaign (template + figures + table)

    .venv/bin/python benchmarks/bench_report.py                     # 3 targets, 2/6/12/24 reps
    .venv/bin/python benchmarks/bench_report.py --targets 5 --reps 10
    .venv/bin/python benchmarks/bench_report.py --results /path/to/results
"""

from __future__ import annotations

import argparse
import io
import random
import tempfile
import time
from pathlib import Path

T0 = time.perf_counter()
from rich.console import Console  # noqa: E402

from pgfsbench.analysis.table import comparison_table  # noqa: E402
from pgfsbench.metrics import Metric, Series, WorkloadResult  # noqa: E402
from pgfsbench.report.figures import render_figures  # noqa: E402
from pgfsbench.report.html import write_report  # noqa: E402
from pgfsbench.report.terminal import render_table  # noqa: E402
from pgfsbench.store.db import Store  # noqa: E402
from pgfsbench.store.read import load_campaign  # noqa: E402

IMPORT_S = time.perf_counter() - T0
PGBENCH_METRICS = 40
FSYNC_METRICS = [
    "sync_p50_us",
    "sync_p90_us",
    "sync_p99_us",
    "sync_p99_9_us",
    "sync_max_us",
    "sync_mean_us",
    "syncs_per_s",
    "warmup_s",
]


def build(results: Path, targets: int, reps: int, seed: int = 1) -> Path:
    """A finished campaign: every target measured `reps` times, round-robin."""
    rng = random.Random(seed)
    store = Store.create(results)
    store.start_campaign(
        "bench", "bench-report", {"name": "bench-report"}, {"kernel": "synthetic"}, "bench"
    )
    names = [f"t{i}" for i in range(targets)]
    ids = {n: store.add_target(n, i, "loop", "ext4", {}) for i, n in enumerate(names)}
    for n in names:
        store.set_target(
            ids[n], "ok", provenance={"fs": "ext4", "effective_mount_options": ["rw", "relatime"]}
        )
    for r in range(1, reps + 1):
        for i, n in enumerate(names):
            speed = 1 + 0.05 * i  # each target 5% apart, with 3% run-to-run noise
            tps = 2000 * speed * rng.gauss(1, 0.03)
            run = store.start_run(
                ids[n], "pgbench", {"clients": 4, "duration": 60}, "clients=4", repetition=r
            )
            metrics = [Metric("pgbench.tps", tps, "tps", True)]
            metrics += [
                Metric(f"pgbench.m{k}", 10 * (k + 1) * rng.gauss(speed, 0.05), "ms", False)
                for k in range(PGBENCH_METRICS - 1)
            ]
            series = [
                Series("pgbench.tps", "tps", [(s, tps * rng.gauss(1, 0.1)) for s in range(60)])
            ]
            store.add_result(run, ids[n], WorkloadResult(metrics, series))
            store.finish_run(run, "ok")
            run = store.start_run(ids[n], "fsync-latency", {"seconds": 10}, repetition=r)
            store.add_result(
                run,
                ids[n],
                WorkloadResult(
                    [
                        Metric(
                            f"fsync_latency.{m}",
                            300 * rng.gauss(speed, 0.1),
                            "syncs/s" if m == "syncs_per_s" else "µs",
                            m == "syncs_per_s",
                        )
                        for m in FSYNC_METRICS
                    ]
                ),
            )
            store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return results


def timed(results: Path) -> dict[str, float]:
    out: dict[str, float] = {}

    def stage(name, fn):
        t = time.perf_counter()
        value = fn()
        out[name] = time.perf_counter() - t
        return value

    campaign = stage("load", lambda: load_campaign(results))
    stage("table", lambda: comparison_table(campaign))
    stage("again", lambda: comparison_table(campaign))
    stage("terminal", lambda: render_table(campaign, Console(file=io.StringIO(), width=200)))
    stage("figures", lambda: render_figures(campaign))
    stage("report", lambda: write_report(results, campaign))
    out["runs"] = len(campaign.runs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, default=3)
    ap.add_argument("--reps", default="2,6,12,24", help="comma-separated repetition counts")
    ap.add_argument("--results", type=Path, help="time this results directory instead")
    args = ap.parse_args()
    print(f"import {IMPORT_S:.2f} s")
    header = f"{'targets':>7} {'reps':>4} {'runs':>5}" + "".join(
        f" {k:>8}" for k in ("load", "table", "again", "terminal", "figures", "report")
    )
    print(header)

    def row(targets, reps, results: Path) -> None:
        t = timed(results)
        print(
            f"{targets:>7} {reps:>4} {t['runs']:>5}"
            + "".join(
                f" {t[k]:>8.2f}"
                for k in ("load", "table", "again", "terminal", "figures", "report")
            ),
            flush=True,
        )

    if args.results:
        row("-", "-", args.results)
        return
    for reps in (int(x) for x in args.reps.split(",")):
        with tempfile.TemporaryDirectory(prefix="bench-report-") as d:
            row(args.targets, reps, build(Path(d) / "r", args.targets, reps))


if __name__ == "__main__":
    main()
