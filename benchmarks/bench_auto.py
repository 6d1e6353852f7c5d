"""Auto repetitions vs a fixed count: wall time to reach the same CI width.

    .venv/bin/python benchmarks/bench_auto.py                       # ci_width 0.03, max 10
    .venv/bin/python benchmarks/bench_auto.py --ci-width 0.05 --max 8
    .venv/bin/python benchmarks/bench_auto.py --results-dir /var/tmp/ba --keep

Needs root (loop devices, mkfs, mount). Runs two campaigns through the CLI
(``python -m pgfsbench run PLAN --results DIR``) on the same small plan, two
1 GB loop targets (ext4, xfs) reused across rounds (``fresh = false``):

1. AUTO: ``[repetitions] count = "auto"``: rounds are added until every cell's
   headline metric has a 95% CI of the median within ±ci_width (or ``max``).
2. FIXED: the same plan with ``count = N``, where N is the largest n any auto
   cell needed: the one fixed count that, without knowing in advance which cell
   is the noisy one, gives every cell at least as many samples as auto did.

For each it reads ``pgfsbench export --format json``: the campaign's wall time
(campaign.started → ended), the number of runs, and per cell the n, why it
stopped and the CI half-width (relative to the median) of its headline metric.
It prints a table, the time auto saved (or lost) and a JSON summary line last.

Each campaign cleans up after itself; afterwards this script checks that no loop
device backs an image under its results directory, nothing of ours is mounted and
no pgfsbench cgroup of the child is left. The ledgers go to a private state
directory, so a leftover is cleaned with ``pgfsbench cleanup`` without touching
any other run's. Results go under a temporary directory, removed at the end
unless --keep.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VENV_PYTHON = REPO / ".venv" / "bin" / "python"

PLAN = """\
name = "{name}"
description = "bench_auto.py: {what}"

[repetitions]
{repetitions}
fresh = false       # each target is made once and reused in every round

[postgres.settings]
shared_buffers = "128MB"

[[targets]]
name = "ext4"
fs = "ext4"
size = "1G"

[[targets]]
name = "xfs"
fs = "xfs"
size = "1G"

[[workloads]]
type = "fsync-latency"
seconds = 2
size = "32M"

[[workloads]]
type = "pgbench-init"
scale = 2
repetitions = 1     # loaded once; the reused target keeps the tables

[[workloads]]
type = "pgbench"
clients = 2
duration = 5
"""


class Terminated(Exception):
    pass


def _on_sigterm(signum, frame):  # noqa: ARG001
    raise Terminated()


# --- running one campaign ------------------------------------------------------------

def run_campaign(python: str, plan: Path, results: Path, env: dict, tag: str,
                 log: Path, child_pids: list[int]) -> tuple[int, float]:
    """``pgfsbench run``; its output goes to ``log`` and, prefixed, to stderr.

    Returns (exit code, seconds of the whole process). SIGINT reaches the child
    from the terminal; a SIGTERM to this script is passed on, and the child
    (which unwinds its ledger on SIGTERM) is waited for.
    """
    argv = [python, "-m", "pgfsbench", "run", str(plan), "--results", str(results)]
    start = time.monotonic()
    with open(log, "w") as out:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, env=env, cwd=REPO)
        # No shell: this pid is pgfsbench itself, whose cgroups are pgfsbench-<pid>-<n>.
        child_pids.append(child.pid)
        try:
            assert child.stdout is not None
            for line in child.stdout:
                out.write(line)
                out.flush()
                sys.stderr.write(f"[{tag}] {line}")
            code = child.wait()
        except (KeyboardInterrupt, Terminated):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=300)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            raise
    return code, time.monotonic() - start


def export(python: str, results: Path, env: dict) -> dict:
    done = subprocess.run([python, "-m", "pgfsbench", "export", str(results), "--format",
                           "json"], capture_output=True, text=True, env=env, cwd=REPO,
                          check=True)
    return json.loads(done.stdout)


# --- reading the export --------------------------------------------------------------

def cell_name(target: str, workload: str, label: str) -> str:
    return f"{target}/{workload}" + (f"[{label}]" if label else "")


def figures(data: dict) -> dict:
    """Wall time, runs and per cell: n, stop reason, half-widths (schedule and table)."""
    camp = data["campaign"]
    wall = (camp["ended"] - camp["started"]) if camp.get("ended") and camp.get("started") \
        else None
    runs = data.get("runs") or []
    cells: dict[str, dict] = {}
    for stop in (data.get("schedule") or {}).get("stops") or []:
        cells[cell_name(stop["target"], stop["workload"], stop["label"])] = {
            "n": stop["n"], "reason": stop["reason"],
            "half_width_schedule": stop["half_width"]}
    for row in (data.get("comparison") or {}).get("rows") or []:
        if not row.get("headline"):
            continue
        for target, c in row["cells"].items():
            name = cell_name(target, row["workload"], row["label"])
            entry = cells.setdefault(name, {"n": c.get("n"), "reason": None,
                                            "half_width_schedule": None})
            entry["metric"] = row["metric"]
            entry["median"] = c.get("median")
            entry["n_table"] = c.get("n")
            ci, med = c.get("ci95"), c.get("median")
            entry["half_width"] = ((ci[1] - ci[0]) / 2 / abs(med)
                                   if ci and med else None)
    return {
        "status": camp.get("status"),
        "wall_s": wall,
        "runs": len(runs),
        "runs_ok": sum(1 for r in runs if r.get("status") == "ok"),
        "runs_by_workload": _count_by(runs, "workload"),
        "cells": dict(sorted(cells.items())),
    }


def _count_by(runs: list[dict], key: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in runs:
        out[r[key]] = out.get(r[key], 0) + 1
    return out


# --- leftovers -----------------------------------------------------------------------

def leftovers(base: Path, child_pids: list[int]) -> list[str]:
    """Loop devices on our images, mounts of ours, cgroups the children made."""
    found: list[str] = []
    try:
        lines = subprocess.run(["losetup", "-a"], capture_output=True, text=True,
                               check=False).stdout.splitlines()
    except OSError as exc:
        lines = [f"losetup -a failed: {exc}"]
    found += [f"loop: {ln}" for ln in lines if str(base) in ln]
    with open("/proc/self/mounts") as f:
        found += [f"mount: {ln.strip()}" for ln in f if str(base) in ln]
    for pid in child_pids:
        for pattern in (f"/sys/fs/cgroup/pgfsbench-{pid}-*",
                        f"/sys/fs/cgroup/*/pgfsbench-{pid}-*"):
            found += [f"cgroup: {p}" for p in glob.glob(pattern)]
    return found


def foreign_pgfsbench() -> dict[str, int]:
    """pgfsbench loop devices and cgroups of other processes (for the record only)."""
    lines = subprocess.run(["losetup", "-a"], capture_output=True, text=True,
                           check=False).stdout.splitlines()
    cgroups = glob.glob("/sys/fs/cgroup/pgfsbench-*") + glob.glob("/sys/fs/cgroup/*/pgfsbench-*")
    return {"loop": sum("pgfsbench" in ln for ln in lines), "cgroups": len(cgroups)}


# --- output --------------------------------------------------------------------------

def pct(x: float | None) -> str:
    return "-" if x is None else f"±{x * 100:.2f} %"


def print_table(plans: dict[str, dict], ci_width: float) -> None:
    print()
    print(f"{'plan':<10} {'wall s':>8} {'runs':>5}")
    for name, f in plans.items():
        wall = "-" if f["wall_s"] is None else f"{f['wall_s']:.1f}"
        print(f"{name:<10} {wall:>8} {f['runs']:>5}")
    print()
    names = sorted({c for f in plans.values() for c in f["cells"]})
    head = f"{'cell':<34}" + "".join(f" {p + ' n':>8} {p + ' ±CI':>12} {p + ' stop':>12}"
                                     for p in plans)
    print(head)
    for c in names:
        line = f"{c:<34}"
        for f in plans.values():
            e = f["cells"].get(c, {})
            line += f" {e.get('n', '-')!s:>8} {pct(e.get('half_width')):>12} " \
                    f"{(e.get('reason') or '-'):>12}"
        print(line)
    print(f"(±CI: 95% CI half-width of the median, relative to it; target ±{ci_width:.0%})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results-dir", type=Path, default=None,
                    help="parent directory for the plans and both results directories "
                         "(default: a new temporary directory)")
    ap.add_argument("--ci-width", type=float, default=0.03,
                    help="auto: target CI half-width relative to the median")
    ap.add_argument("--min", type=int, default=3, help="auto: rounds before the first check")
    ap.add_argument("--max", type=int, default=10, help="auto: most rounds")
    ap.add_argument("--keep", action="store_true", help="keep the results directories")
    ap.add_argument("--python", default=str(VENV_PYTHON if VENV_PYTHON.exists()
                                            else sys.executable),
                    help="the Python that has pgfsbench installed")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench_auto.py needs root (loop devices, mkfs, mount)", file=sys.stderr)
        return 2

    made_base = args.results_dir is None
    base = (Path(tempfile.mkdtemp(prefix="pgfsbench-bench-auto-")) if made_base
            else args.results_dir.resolve())
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o755)  # the postgres user works below it
    env = dict(os.environ, PGFSBENCH_STATE_DIR=str(base / "state"))
    signal.signal(signal.SIGTERM, _on_sigterm)

    load_before = os.getloadavg()
    summary: dict = {"ci_width": args.ci_width, "min": args.min, "max": args.max,
                     "base": str(base), "load_before": [round(x, 2) for x in load_before],
                     "foreign_before": foreign_pgfsbench()}
    plans: dict[str, dict] = {}
    child_pids: list[int] = []
    made: list[Path] = []
    code = 0
    try:
        for kind in ("auto", "fixed"):
            if kind == "auto":
                reps = (f'count = "auto"\nci_width = {args.ci_width}\nmin = {args.min}\n'
                        f"max = {args.max}\nmax_minutes = 120")
                what = f"auto repetitions to ±{args.ci_width:.0%}"
            else:
                # The largest n any auto cell needed (at least min: auto never stops before).
                n = max([args.min] + [c["n"] for c in plans["auto"]["cells"].values()
                                      if c.get("n") is not None])
                summary["fixed_n"] = n
                reps = f"count = {n}"
                what = f"fixed count {n}"
            plan = base / f"plan-{kind}.toml"
            plan.write_text(PLAN.format(name=f"bench-{kind}", what=what, repetitions=reps))
            results = base / kind
            made += [plan, results, base / f"run-{kind}.log"]
            print(f"== {kind}: {what}; plan {plan}, results {results}", file=sys.stderr)
            rc, proc_s = run_campaign(args.python, plan, results, env, kind,
                                      base / f"run-{kind}.log", child_pids)
            if rc != 0:
                print(f"== {kind}: pgfsbench run exited with {rc}; see "
                      f"{base / f'run-{kind}.log'}", file=sys.stderr)
                code = 1
            f = figures(export(args.python, results, env))
            f["process_s"] = proc_s
            f["exit_code"] = rc
            plans[kind] = f
            left = leftovers(base, child_pids)
            if left:
                summary.setdefault("leftovers", {})[kind] = left
            if rc != 0:
                break
    except (KeyboardInterrupt, Terminated):
        print("interrupted", file=sys.stderr)
        code = 130
    except Exception as exc:  # still clean up and report what was measured
        print(f"error: {exc!r}", file=sys.stderr)
        code = 1
    finally:
        left = _clean_leftovers(args.python, base, env, child_pids)
        summary["leftovers_final"] = left
        if left:
            print("LEFTOVERS (not cleaned):\n  " + "\n  ".join(left), file=sys.stderr)
            code = code or 1
        else:
            print("cleanup check: no loop device, mount or cgroup of this run is left",
                  file=sys.stderr)
        summary["foreign_after"] = foreign_pgfsbench()
        summary["load_after"] = [round(x, 2) for x in os.getloadavg()]
        if not args.keep:
            if made_base:
                shutil.rmtree(base, ignore_errors=True)
            else:
                for p in made + [base / "state"]:
                    if p.is_dir():
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.unlink(missing_ok=True)
            summary["kept"] = False
        else:
            summary["kept"] = True
            print(f"results kept in {base}", file=sys.stderr)

    if plans:
        print_table(plans, args.ci_width)
    a, x = plans.get("auto"), plans.get("fixed")
    if a and x and a["wall_s"] and x["wall_s"]:
        saved = (x["wall_s"] - a["wall_s"]) / x["wall_s"]
        summary["auto_saved_pct"] = round(saved * 100, 1)
        print(f"\nauto: {a['wall_s']:.1f} s, {a['runs']} runs; fixed N={summary['fixed_n']}: "
              f"{x['wall_s']:.1f} s, {x['runs']} runs; auto "
              f"{'saved' if saved >= 0 else 'lost'} {abs(saved) * 100:.1f} % of the time")
        reached = {c: (e.get("half_width") is not None and e["half_width"] <= args.ci_width)
                   for c, e in x["cells"].items() if (e.get("n") or 0) >= 2}
        summary["fixed_reached_width"] = reached
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} (1 min)")
    summary["plans"] = plans
    print(json.dumps(summary, sort_keys=True))
    return code


def _clean_leftovers(python: str, base: Path, env: dict, child_pids: list[int]) -> list[str]:
    """Check; if anything of ours is left, 'pgfsbench cleanup' on our private ledgers."""
    left = leftovers(base, child_pids)
    if left:
        print("leftovers found, running pgfsbench cleanup on this run's ledgers:\n  "
              + "\n  ".join(left), file=sys.stderr)
        subprocess.run([python, "-m", "pgfsbench", "cleanup"], env=env, cwd=REPO, check=False)
        left = leftovers(base, child_pids)
    return left


if __name__ == "__main__":
    sys.exit(main())
