"""Where the per-visit "level" noise in TPC-B tps comes from, and what removes it.

    .venv/bin/python benchmarks/bench_noise.py collect /var/tmp/pgfsbench-noise/X \\
        --remedy NAME [--rounds 10] [--setting min_wal_size=1GB ...] \\
        [--prepare vacuum,checkpoint,sync] [--duration 8 --warmup 2] [--nice -10]  # root, ~10 min
    .venv/bin/python benchmarks/bench_noise.py extract DIR --remedy NAME   # CSV from a DIR
    .venv/bin/python benchmarks/bench_noise.py analyse benchmarks/data/noise-*.csv

``collect`` runs one real campaign through the CLI with a plan it writes: three
reused targets, two identical ext4 ("a", "b") and one xfs, visited in shuffled
rounds (a fixed count), each visit shaped like the default plan's (PostgreSQL
restarted, fio fdatasync 2 s, pg_test_fsync in the first 3 rounds, then pgbench
TPC-B with 4 clients, scale 10). ``--setting`` adds PostgreSQL settings,
``--prepare`` the pgbench workload's per-visit preparation, ``--duration`` and
``--warmup`` the pgbench visit's length. Then it keeps the per-round values in
``benchmarks/data/noise-<campaign id>.csv`` (campaign, remedy, round, target,
value = tps, seconds = the round's wall seconds, and per visit the sd of the log
per-second tps after the warm-up, its count, WAL MB and checkpoints) so they can
be re-analysed without the results directory. Keep results directories out of
the repository (under /var/tmp/pgfsbench-noise/).

``analyse`` prints per remedy (campaigns pooled) and per campaign:

- the paired sd of log tps (per round, b vs a: identical targets; xfs vs a);
- its decomposition: the variance the per-second noise inside a run explains
  (s^2/n of each run, both runs of a pair) and the rest, the per-visit level
  (sd per visit = sqrt((var(d) - within) / 2));
- the lag-1 autocorrelation of the paired log-ratios across rounds;
- minutes per round, and information per minute = 1 / (paired variance x
  minutes per round): what a campaign learns about a difference per minute;
- the mean per-second sd, WAL MB and checkpoints per measured run (the monitors'
  counts), and the CPU share other processes took during the runs (the product's
  ``bound.other_cpu_frac``): how a run's log tps follows it (correlation, slope)
  and the paired sd left once the pairs' difference in it is regressed out;
- tps by the visit's place in its round.

``--nice N`` runs the campaign under ``nice -n N`` (its children inherit it). The
CSVs of campaigns run before a column existed lack it; re-extract from the
results directory when it still exists.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
DATA = REPO / "benchmarks" / "data"

TARGETS = (("a", "ext4"), ("b", "ext4"), ("xfs", "xfs"))
PAIRS = (("b", "a"), ("xfs", "a"))
FIELDS = [
    "campaign",
    "remedy",
    "round",
    "target",
    "value",
    "seconds",
    "persec_sd",
    "persec_n",
    "persec_lag1",
    "wal_mb",
    "checkpoints",
    "other_cpu",
    "position",
]


def plan_text(
    rounds: int, settings: dict[str, str], prepare: list[str], duration: int, warmup: int
) -> str:
    conf = {"shared_buffers": "128MB", "max_wal_size": "1GB", **settings}
    lines = [
        'name = "noise-collect"',
        'description = "bench_noise.py: visit-level noise"',
        "",
        "[repetitions]",
        f"count = {rounds}",
        'order = "random"',
        "fresh = false",
        "",
        "[postgres.settings]",
        *(f'{k} = "{v}"' for k, v in conf.items()),
        "",
    ]
    for name, fs in TARGETS:
        lines += ["[[targets]]", f'name = "{name}"', f'fs = "{fs}"', 'size = "2G"', ""]
    lines += [
        "[[workloads]]",
        'type = "fsync-latency"',
        "seconds = 2",
        'size = "32M"',
        "",
        "[[workloads]]",
        'type = "pgbench-init"',
        "scale = 10",
        "repetitions = 1",
        "",
        "[[workloads]]",
        'type = "pgbench"',
        "clients = 4",
        f"duration = {duration}",
        f"warmup = {warmup}",
    ]
    if prepare:
        lines.append("prepare = [" + ", ".join(f'"{p}"' for p in prepare) + "]")
    lines += ["", "[[workloads]]", 'type = "fsync"', "seconds = 1", "repetitions = 3", ""]
    return "\n".join(lines)


def collect(args) -> None:
    settings = dict(s.split("=", 1) for s in args.setting)
    prepare = [p for p in (args.prepare or "").split(",") if p]
    plan = Path(tempfile.mkdtemp(prefix="bench-noise-")) / "noise.toml"
    plan.write_text(plan_text(args.rounds, settings, prepare, args.duration, args.warmup))
    # --nice: the whole campaign (PostgreSQL, pgbench, fio inherit it) at another CPU
    # priority than the machine's other work (-10: ~9x the CPU weight of nice 0).
    nice = ["nice", "-n", str(args.nice)] if args.nice else []
    done = subprocess.run(
        [
            *nice,
            sys.executable,
            "-m",
            "pgfsbench",
            "run",
            str(plan),
            "--results",
            str(args.results),
            "--wait",
        ]
    )
    if done.returncode:  # e.g. the summary failed after the rounds were stored
        print(f"pgfsbench run exited {done.returncode}; keeping what it stored", file=sys.stderr)
    print(extract(args.results, args.remedy))


def rows_of(results: Path, remedy: str) -> list[dict]:
    """The per-round pgbench values of one results directory, with the round's seconds."""
    from pgfsbench.store.read import load_campaign

    campaign = load_campaign(results)
    starts: dict[int, float] = {}
    # A round's wall time: from its first run's start to the next round's first start
    # (restarts and every workload of the round included); the last ends with the campaign.
    by_round: dict[int, float] = {}
    for run in campaign.runs:
        r = run.repetition if run.workload != "pgbench-init" else None
        if run.workload in ("fsync-latency", "pgbench") and r is not None:
            by_round[r] = min(by_round.get(r, math.inf), run.started)
    ordered = sorted(by_round)
    for i, r in enumerate(ordered):
        last = campaign.ended or max(run.ended or run.started for run in campaign.runs)
        end = by_round[ordered[i + 1]] if i + 1 < len(ordered) else last
        starts[r] = end - by_round[r]
    position = {}  # (round, target) -> 1, 2, 3: its place in the round's order
    for rnd, target in campaign.schedule.get("visits", []):
        position[(rnd, target)] = sum(1 for k in position if k[0] == rnd) + 1
    rows = []
    for run in campaign.runs:
        if run.workload != "pgbench" or run.status != "ok" or run.repetition < 1:
            continue
        named = {m.name: m.value for m in run.metrics}
        warm = named.get("pgbench.warmup_s") or 0
        points = run.series.get("pgbench.tps")
        # whole seconds after the warm-up; the last (partial) second left out
        vals = [v for t, v in (points.points if points else [])[:-1] if t >= warm and v > 0]
        logs = [math.log(v) for v in vals]
        sd = _sd(logs) if len(logs) > 1 else float("nan")
        rows.append(
            {
                "campaign": campaign.id,
                "remedy": remedy,
                "round": run.repetition,
                "target": run.target,
                "value": round(named["pgbench.tps"], 3),
                "seconds": round(starts.get(run.repetition, float("nan")), 1),
                "persec_sd": round(sd, 5),
                "persec_n": len(logs),
                "persec_lag1": round(_lag1(logs), 3) if len(logs) > 2 else 0.0,
                "wal_mb": round((named.get("mon.pg.wal_bytes") or 0) / 1e6, 1),
                "position": position.get((run.repetition, run.target), 0),
                "other_cpu": round(named.get("bound.other_cpu_frac") or 0.0, 3),
                "checkpoints": int(
                    (named.get("mon.pg.checkpoints_req") or 0)
                    + (named.get("mon.pg.checkpoints_timed") or 0)
                ),
            }
        )
    return sorted(rows, key=lambda r: (r["round"], r["target"]))


def extract(results: Path, remedy: str) -> Path:
    rows = rows_of(Path(results), remedy)
    DATA.mkdir(parents=True, exist_ok=True)
    out = DATA / f"noise-{rows[0]['campaign']}.csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    return out


def _mean(x):
    return sum(x) / len(x)


def _sd(x):
    m = _mean(x)
    return math.sqrt(sum((v - m) ** 2 for v in x) / (len(x) - 1))


def _lag1(x):
    m = _mean(x)
    den = sum((v - m) ** 2 for v in x)
    return sum((x[i] - m) * (x[i + 1] - m) for i in range(len(x) - 1)) / den if den else 0.0


def load_rows(paths: list[Path]) -> list[dict]:
    rows = []
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f):
                for k in ("round", "persec_n", "checkpoints", "position"):
                    r[k] = int(r[k])
                for k in ("value", "seconds", "persec_sd", "persec_lag1", "wal_mb", "other_cpu"):
                    r[k] = float(r[k])
                rows.append(r)
    return rows


def _run_var(r: dict, ar1: bool) -> float:
    """Variance of a run's mean log tps from its per-second noise: s^2/n, or with the
    AR(1) inflation (1 + rho) / (1 - rho) for the run's own lag-1 autocorrelation."""
    v = r["persec_sd"] ** 2 / r["persec_n"]
    if ar1:
        rho = min(max(r["persec_lag1"], -0.9), 0.9)
        v *= (1 + rho) / (1 - rho)
    return v


def pair_stats(rows: list[dict]) -> dict:
    """Paired figures of one campaign (or campaigns pooled: the pairs are per round of a
    campaign, the variances pooled over campaigns by their degrees of freedom)."""
    per = defaultdict(dict)
    for r in rows:
        per[(r["campaign"], r["round"])][r["target"]] = r
    out = {}
    for x, y in PAIRS:
        by_campaign = defaultdict(list)
        for (camp, rnd), t in sorted(per.items()):
            if x in t and y in t:
                by_campaign[camp].append((rnd, t[x], t[y]))
        ss = df = within = within_ar = lag_num = lag_den = 0.0
        ds, cs = [], []  # centred per campaign: log-ratio, and others' CPU share difference
        n = 0
        for items in by_campaign.values():
            d = [math.log(a["value"]) - math.log(b["value"]) for _, a, b in items]
            if len(d) < 2:
                continue
            m = _mean(d)
            c = [a["other_cpu"] - b["other_cpu"] for _, a, b in items]
            ds += [v - m for v in d]
            cs += [v - _mean(c) for v in c]
            ss += sum((v - m) ** 2 for v in d)
            df += len(d) - 1
            lag_num += sum((d[i] - m) * (d[i + 1] - m) for i in range(len(d) - 1))
            lag_den += sum((v - m) ** 2 for v in d)
            within += sum(_run_var(a, False) + _run_var(b, False) for _, a, b in items)
            within_ar += sum(_run_var(a, True) + _run_var(b, True) for _, a, b in items)
            n += len(d)
        if not df:
            continue
        var = ss / df
        w = within / n
        w_ar = within_ar / n
        # Others' load (CPU used by other processes during the run): the slope of the
        # log-ratio on the runs' difference in it, and the paired sd left once it is removed.
        sxx = sum(v * v for v in cs)
        slope = sum(a * b for a, b in zip(ds, cs)) / sxx if sxx else 0.0
        resid = sum((a - slope * b) ** 2 for a, b in zip(ds, cs)) / max(df - 1, 1)
        out[f"{x}/{y}"] = {
            "rounds": n,
            "sd": math.sqrt(var),
            "within_var": w,
            "other_cpu_slope": slope,
            "sd_without_others": math.sqrt(resid),
            "within_share": w / var if var else float("nan"),
            "within_share_ar1": w_ar / var if var else float("nan"),
            "level_sd": math.sqrt(max(var - w, 0.0) / 2),
            "lag1": lag_num / lag_den if lag_den else 0.0,
            "var": var,
        }
    return out


def analyse(args) -> None:
    rows = load_rows(args.csv)
    groups = defaultdict(list)
    for r in rows:
        groups[r["remedy"]].append(r)
    print(
        "remedy | campaigns | rounds | pair | paired sd | per-second share (iid; AR(1)) | "
        "visit level sd | lag-1 | min/round | info/min | per-second sd | WAL MB/visit | "
        "checkpoints/visit | others' CPU/visit | paired sd without others' CPU"
    )
    for remedy, rs in groups.items():
        camps = sorted({r["campaign"] for r in rs})
        sets = [("pooled", rs)] + (
            [(c, [r for r in rs if r["campaign"] == c]) for c in camps] if len(camps) > 1 else []
        )
        for label, subset in sets:
            rounds = {(r["campaign"], r["round"]): r["seconds"] for r in subset}
            minutes = _mean([s for s in rounds.values() if s == s]) / 60
            persec = _mean([r["persec_sd"] for r in subset])
            wal = _mean([r["wal_mb"] for r in subset])
            cps = _mean([r["checkpoints"] for r in subset])
            others = _mean([r["other_cpu"] for r in subset])
            ncamp = len({r["campaign"] for r in subset})
            for pair, s in pair_stats(subset).items():
                info = 1 / (s["var"] * minutes)
                print(
                    f"{remedy}{'' if label == 'pooled' else ' ' + label} | {ncamp} | "
                    f"{s['rounds']} | {pair} | {100 * s['sd']:.1f}% | "
                    f"{100 * s['within_share']:.0f}%; {100 * s['within_share_ar1']:.0f}% | "
                    f"{100 * s['level_sd']:.1f}% | "
                    f"{s['lag1']:+.2f} | {minutes:.2f} | {info:.0f} | {100 * persec:.1f}% | "
                    f"{wal:.0f} | {cps:.2f} | {100 * others:.0f}% | "
                    f"{100 * s['sd_without_others']:.1f}%"
                )
        r_cpu, slope = others_effect(rs)
        print(
            f"{remedy}: log tps vs others' CPU share: r = {r_cpu:+.2f}, "
            f"{100 * (math.exp(0.1 * slope) - 1):+.1f}% tps per 10 points of others' CPU"
        )
        effect = position_effect(rs)
        print(
            f"{remedy}: tps by place in the round (vs the target's mean): "
            + ", ".join(
                f"{p}: {100 * (math.exp(m) - 1):+.1f}% (n={n})" for p, (m, n) in effect.items()
            )
        )


def position_effect(rows: list[dict]) -> dict[int, tuple[float, int]]:
    """Mean log tps by place in the round, relative to the target's mean in its campaign."""
    means = defaultdict(list)
    for r in rows:
        means[(r["campaign"], r["target"])].append(math.log(r["value"]))
    by_pos = defaultdict(list)
    for r in rows:
        by_pos[r["position"]].append(
            math.log(r["value"]) - _mean(means[(r["campaign"], r["target"])])
        )
    return {p: (_mean(v), len(v)) for p, v in sorted(by_pos.items())}


def others_effect(rows: list[dict]) -> tuple[float, float]:
    """Correlation of a run's log tps (centred on its target in its campaign) with the
    CPU share other processes used during it, and the slope (log tps per unit share)."""
    means = defaultdict(list)
    for r in rows:
        means[(r["campaign"], r["target"])].append(r)
    xs, ys = [], []
    for runs in means.values():
        ly = [math.log(r["value"]) for r in runs]
        cx = [r["other_cpu"] for r in runs]
        xs += [v - _mean(cx) for v in cx]
        ys += [v - _mean(ly) for v in ly]
    sxx, syy = sum(v * v for v in xs), sum(v * v for v in ys)
    sxy = sum(a * b for a, b in zip(xs, ys))
    return (sxy / math.sqrt(sxx * syy) if sxx and syy else 0.0, sxy / sxx if sxx else 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="run one campaign (root) and keep its CSV")
    c.add_argument("results", type=Path)
    c.add_argument("--remedy", required=True, help="a label for the CSV and the analysis")
    c.add_argument("--rounds", type=int, default=10)
    c.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE")
    c.add_argument("--prepare", help="pgbench's per-visit preparation, comma-separated")
    c.add_argument("--duration", type=int, default=8)
    c.add_argument("--warmup", type=int, default=2)
    c.add_argument(
        "--nice",
        type=int,
        default=0,
        help="run the campaign under nice -n N (e.g. -10: above other work)",
    )
    e = sub.add_parser("extract", help="the CSV of an existing results directory")
    e.add_argument("results", type=Path)
    e.add_argument("--remedy", required=True)
    a = sub.add_parser("analyse", help="paired sd, decomposition, information per minute")
    a.add_argument("csv", type=Path, nargs="+")
    args = ap.parse_args()
    if args.cmd == "collect":
        if os.geteuid() != 0:
            sys.exit("collect runs a campaign: run it as root")
        collect(args)
    elif args.cmd == "extract":
        print(extract(args.results, args.remedy))
    else:
        analyse(args)


if __name__ == "__main__":
    main()
