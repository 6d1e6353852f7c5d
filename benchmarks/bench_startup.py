"""How long a person waits for each read command, as a ratio to `pgfsbench --help`.

    .venv/bin/python benchmarks/bench_startup.py RESULTS_DIR [--runs 5] [--cold]

Each command runs as a whole process (what a person starts), `--runs` rounds of every
command, each run right after a `--help` run so that both see the same machine; the table
gives each command's median wall time, the median of its runs' ratios to the `--help` run
beside them, and the peak RSS of its largest run (from wait4). RESULTS_DIR is any
stored campaign (`make demo` leaves one); the read commands keep their bootstrap
intervals in RESULTS_DIR/analysis-cache.json, so give a copy of a campaign you may not
write into. `--cold` deletes that cache before every timed run (what the first read of
a campaign costs when nothing wrote it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI = [str(REPO / ".venv" / "bin" / "pgfsbench")]


def commands(results: str) -> dict[str, list[str]]:
    return {
        "show": ["show", results],
        "show --full": ["show", results, "--full"],
        "compare": ["compare", results],
        "advise": ["advise", results],
        "list": ["list", results],
        "history": ["history", results],
        "export json": ["export", results],
        "export markdown": ["export", results, "--format", "markdown"],
        "plans": ["plans"],
        "plan check quick": ["plan", "check", "quick"],
        "doctor": ["doctor"],
    }


# As an installed program runs: with its bytecode cached. A PYTHONDONTWRITEBYTECODE in
# the caller's environment would make every run compile the sources again (~0.2 s of
# each command here); the cache goes outside the tree.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault(
    "PYTHONPYCACHEPREFIX", str(Path.home() / ".cache" / "pgfsbench-bench-pycache")
)


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run, its output discarded."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: the command with its output thrown away
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a stored campaign's results directory")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--cold", action="store_true", help="delete the analysis cache before every timed run"
    )
    args = parser.parse_args()
    cache = Path(args.results) / "analysis-cache.json"
    todo = commands(args.results)
    for argv in todo.values():  # untimed: the bytecode cache (and the analysis cache) filled
        timed([*CLI, *argv])
    help_times: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in todo}
    ratios: dict[str, list[float]] = {name: [] for name in todo}
    rss: dict[str, int] = dict.fromkeys(todo, 0)
    # Round by round, every command beside its own --help run: a spell when the machine
    # is slower (they last seconds here) falls on both, and on every command alike.
    for _ in range(args.runs):
        for name, argv in todo.items():
            base = timed([*CLI, "--help"])[0]
            if args.cold:
                cache.unlink(missing_ok=True)
            seconds, peak = timed([*CLI, *argv])
            help_times.append(base)
            times[name].append(seconds)
            ratios[name].append(seconds / base)
            rss[name] = max(rss[name], peak)
    print(
        f"--help: median {statistics.median(help_times):.3f} s over {len(help_times)} runs"
        f"{' (analysis cache deleted before each command)' if args.cold else ''}"
    )
    print(f"{'command':<20} {'median s':>9} {'× --help':>9} {'peak RSS MB':>12}")
    for name in todo:
        print(
            f"{name:<20} {statistics.median(times[name]):>9.3f} "
            f"{statistics.median(ratios[name]):>9.2f} {rss[name] / 1024:>12.0f}"
        )


if __name__ == "__main__":
    sys.exit(main())
