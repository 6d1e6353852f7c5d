r"""The default plan beside a noisy neighbour: disturbed visits found, run again, and
what the answer keeps; and the discount for disturbed runs that were kept.

    .venv/bin/python benchmarks/bench_busy.py campaigns DIR [--count 5] [--neighbour both]
        [--duty 0.4] [--period 30] [--slow-iops 4600 | --slow-commit-delay 1]
        [--max-minutes 9] [--cpu-latency 0]                              # root, ~12 min each
    .venv/bin/python benchmarks/bench_busy.py extract DIR [DIR ...]        # CSV rows
    .venv/bin/python benchmarks/bench_busy.py summary [CSV ...]            # the goals' figures
    .venv/bin/python benchmarks/bench_busy.py storage DIR [DIR ...]        # the storage's part
    .venv/bin/python benchmarks/bench_busy.py replay DIR [DIR ...] [--weights pgbench=3 ...]
    .venv/bin/python benchmarks/bench_busy.py simulate [--campaigns 2000] [--sd 0.097]
        [--rounds 16] [--share 0 0.1 0.25 0.4] [--hit 0.95] [--false-alarm 0.02]

``campaigns`` runs ``--count`` fresh campaigns of the default plan's design (its
measurements, settings, 'auto' design and budget) on three ext4 loop targets: ``a``
and ``b`` identical, ``slow`` the same recipe with its device capped at ``--slow-iops``
write IOPS (provision/throttle.py; each campaign measures the slowdown again:
``slowdown``). With the CPUs held awake (``--cpu-latency 0``) TPC-B runs ~45% faster,
so the cap that makes it ~10% slower is higher: 6600 gave 15.8% in one quiet campaign,
and beside the neighbour 6600-7100 gave −1.0 to 10.1% (a cap is a ceiling). Left to
halt, as the default plan leaves them, 4600 gave about 10%, or ``--slow-commit-delay``, its server
sleeping before every WAL flush: 12.1% slower in one quiet campaign, 5.2-15.2% in four
beside the neighbour, where the cap's gave 1.9-10.5% with the CPUs taken (held awake,
commit_delay = 1 made TPC-B 6% *faster*, by hand: the waits group commits). Through the
CLI, one at a time,
``--neighbour off``, ``on`` or ``both`` (each pair: without, then with). With the
neighbour on, ``benchmarks/neighbour.py`` runs beside the whole campaign (CPU spinners
on every CPU and fsync'd writes, ``--duty`` of the time in bursts over cycles of
``--period`` seconds on average, its bursts logged beside the results); it is stopped
when the campaign ends. Each campaign is ``extract``\ed as it ends.

``extract`` keeps one row per campaign in ``benchmarks/data/busy-<campaign id>.csv``:
whether the neighbour ran, minutes from start to end (and measuring alone: the budget's
clock), rounds, the decisions of slow vs a, slow vs b and b vs a with the round and
minute each was decided at, the measured slowdown, the visits disturbed (run again,
counted from the seconds no burst touched, kept), the waits for quiet and their seconds, the causes (others' CPU, steal, others'
disk), the answer and its "disturbed" line.

``summary`` prints, per neighbour state and as *k of N campaigns*: the 10% difference
decided (slow worse than a and than b) within 12 minutes (neighbour on) or 10 minutes
(off); identical targets (a, b) ever split (better/worse); the visits run again and
kept per campaign, and why; the minutes.

``replay`` decides each stored campaign's TPC-B pairs again, through the product's own
table over its results.db (the rounds it ran, its runs left out and trimmed, its last
look), once as stored and once with ``--weights`` as its plan's ``[verdicts] weights``; and
prints each pair's paired sd of the log tps ratio over the rounds it counted (the noise
the decision saw).

``storage`` asks how much of each campaign's TPC-B noise goes with the storage's speed:
over the runs it counted, each run's log tps about its target's median against the
backing disk's mean await during the run (the run's own writes: how the noise reaches
tps, not a covariate a test could use, since a target's own I/O sets it) and against the
same visit's fio p50 fdatasync latency, measured on the same target seconds before; the
correlations, and the sd left once each is regressed out.

``simulate`` chooses how a disturbed run kept (the allowance to run it again spent) is
discounted, by **calibrated simulation with the product's functions**
(``sequential.decide`` over ``headline_family``, the default plan's design, one look at
``--rounds``), labelled as a simulation: three targets on the default plan's two
headline measurements, a and b identical, c identical (A/A) or 10% slower on tps; each
target's visit level normal with the paired sd ``--sd`` per round; a share ``--share``
of visits disturbed, each losing U(5%, 80%) of its throughput (its fio p99 raised
alike); the rule flags a disturbed visit with probability ``--hit`` and an undisturbed
one with ``--false-alarm``, on the machine's evidence, so a flag is independent of the
value given the disturbance. Methods: ``none`` (every run counted, as before),
``drop`` (the flagged runs left out: the paired test on the rounds each pair has
undisturbed), ``hl`` (every run, a Hodges-Lehmann estimate with Wilcoxon signed-rank
tests in place of the paired t, at the same levels), ``drop+hl``. Each row: A/A any
false claim (better, worse or equivalent wrongly), c 10% slower decided worse than a,
and than a and b. The two measurements share alpha equally (the figures in
``benchmarks/README.md`` were made so, before the default plan's weights).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import tomli_w

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))
DATA = REPO / "benchmarks" / "data"

from bench_verdicts import _false, _workload_toml, plan_design  # noqa: E402

from pgfsbench.analysis.stats import paired as paired_mod  # noqa: E402
from pgfsbench.analysis.stats.sequential import (  # noqa: E402
    HIGHER,
    LOWER,
    decide,
    headline_family,
)
from pgfsbench.plan.load import load_plan  # noqa: E402

FIELDS = [
    "campaign",
    "neighbour",
    "duty",
    "period_s",
    "slow_iops",
    "minutes",
    "measuring_minutes",
    "rounds",
    "slow_vs_a",
    "slow_vs_a_round",
    "slow_vs_a_minute",
    "slow_vs_b",
    "slow_vs_b_round",
    "slow_vs_b_minute",
    "b_vs_a",
    "slowdown",
    "visits",
    "counted_runs",
    "runs_flagged",
    "runs_in_bursts",
    "runs_in_bursts_flagged",
    "visits_disturbed",
    "runs_run_again",
    "runs_kept",
    "waits",
    "waited_s",
    "extra_s",
    "causes",
    "answer",
    "disturbed",
    "runs_trimmed",  # counted from the seconds no burst touched (absent in older rows)
    "from_budget_s",  # waits and runs again past the allowance, from the budget (newer rows)
    "slow_commit_delay",  # slow made so by commit_delay, not an IOPS cap (newer rows)
]
TPS = ("pgbench", "clients=4")


# --- campaigns ---------------------------------------------------------------------------
def _measured_from(run) -> float:
    """When a run's monitored seconds began: its record starts before a wait for quiet
    (campaign/quiet.py), which a burst may overlap without touching the run."""
    monitored = next((m.value for m in run.metrics if m.name == "disturb.monitored_s"), None)
    return max(run.started, run.ended - monitored) if monitored else run.started


def plan_text(
    slow_iops: int,
    max_minutes: float | None = None,
    commit_delay: int | None = None,
    cpu_latency: int | None = None,
) -> str:
    """The default plan's design (its repetitions, verdicts, settings and machine) on a,
    b (ext4) and slow (ext4, write IOPS capped, or with ``commit_delay``: its server
    sleeps before every WAL flush); ``cpu_latency``: its [machine] cpu_latency (CPUs held
    awake at 0), else the plan's."""
    quick = load_plan("quick")
    reps = quick.repetitions.model_dump(mode="json", exclude_none=True)
    if max_minutes is not None:
        reps["max_minutes"] = max_minutes
    verdicts = quick.verdicts.model_dump(mode="json", exclude_none=True)
    targets = "".join(
        f'[[targets]]\nname = "{t}"\nfs = "ext4"\nsize = "2G"\n'
        + (_slower(slow_iops, commit_delay) if t == "slow" else "")
        + "\n"
        for t in ("a", "b", "slow")
    )
    workloads = "\n".join(
        _workload_toml(w.model_dump(mode="json", exclude_none=True)) for w in quick.workloads
    )
    machine = quick.machine.model_dump(mode="json", exclude_none=True) | (
        {} if cpu_latency is None else {"cpu_latency": cpu_latency}
    )
    head = tomli_w.dumps(
        {
            "name": "busy-campaign",
            "description": "bench_busy.py: the default plan's design, two identical "
            "targets and a slower one",
            "repetitions": reps,
            "verdicts": verdicts,
            "postgres": {"settings": dict(quick.postgres.settings)},
        }
        | ({"machine": machine} if machine else {})  # no empty [machine] table
    )
    return f"{head}\n{targets}{workloads}"


def _slower(slow_iops: int, commit_delay: int | None) -> str:
    if commit_delay:
        return (
            f"postgres = {{ settings = {{ commit_delay = {commit_delay}, "
            "commit_siblings = 0 } }\n"
        )
    return f"throttle = {{ write_iops = {slow_iops} }}\n"


def campaigns(out: Path, count: int, mode: str, args: argparse.Namespace) -> None:
    out.mkdir(parents=True, exist_ok=True)
    plan = Path(tempfile.mkdtemp(prefix="bench-busy-")) / "busy.toml"
    plan.write_text(
        plan_text(args.slow_iops, args.max_minutes, args.slow_commit_delay, args.cpu_latency)
    )
    states = {"off": [False], "on": [True], "both": [False, True]}[mode]
    for i in range(1, count + 1):
        for on in states:
            name = f"{'on' if on else 'off'}-{time.strftime('%Y%m%d-%H%M%S')}-{i}"
            results = out / name
            neighbour = None
            if on:
                neighbour = subprocess.Popen(
                    [
                        sys.executable,
                        str(REPO / "benchmarks" / "neighbour.py"),
                        "--duty",
                        str(args.duty),
                        "--period",
                        str(args.period),
                        "--seconds",
                        str(60 * (args.max_minutes or 9) * 2 + 600),
                        "--log",
                        str(out / f"{name}.neighbour.log"),
                    ]
                )
            began = time.time()
            try:
                subprocess.run(
                    [sys.executable, "-m", "pgfsbench", "-q", "run", str(plan)]
                    + ["--results", str(results), "--wait"],
                    check=False,
                )
            finally:
                if neighbour is not None:
                    neighbour.terminate()
                    neighbour.wait(30)
            (out / f"{name}.bench.json").write_text(
                json.dumps(
                    {
                        "neighbour": on,
                        "duty": args.duty if on else 0.0,
                        "period_s": args.period if on else 0.0,
                        "slow_iops": "" if args.slow_commit_delay else args.slow_iops,
                        "slow_commit_delay": args.slow_commit_delay or "",
                        "cpu_latency": args.cpu_latency,
                        "wall_minutes": (time.time() - began) / 60,
                    }
                )
            )
            if not (results / "results.db").exists():  # the run said why, above
                sys.exit(f"{name}: the campaign stored nothing; stopping")
            extract(results)


def extract(results: Path) -> Path:
    """One row: what deliverable 4 asks of a campaign."""
    from pgfsbench.analysis.caveats.disturbance import disturbed_runs
    from pgfsbench.analysis.caveats.durability import durabilities
    from pgfsbench.analysis.cells import collect
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts.answer import campaign_answer
    from pgfsbench.analysis.verdicts.disturbed import disturbed_visits
    from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
    from pgfsbench.store.read import load_campaign

    campaign = load_campaign(results, series=False)
    meta_file = results.parent / f"{results.name}.bench.json"
    meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
    ends = _round_ends(campaign)
    decisions = {
        (d["a"], d["b"]): d
        for d in campaign.schedule.get("decisions", [])
        if (d["workload"], d["label"]) == TPS
    }

    def decided(a: str, b: str) -> tuple[str, str, str]:
        d = decisions.get((a, b))
        if d is None:
            return "", "", ""
        at = d.get("at_round")
        minute = f"{(ends[at] - campaign.started) / 60:.2f}" if at in ends else ""
        return d["outcome"], str(at or ""), minute

    cells = {(k.target, k.workload, k.label, k.metric): c for k, c in collect(campaign).items()}
    a = cells.get(("a", *TPS, "pgbench.tps"))
    slow = cells.get(("slow", *TPS, "pgbench.tps"))
    slowdown = ""
    if a and slow:
        both = sorted(set(a.rounds) & set(slow.rounds))
        av, sv = dict(zip(a.rounds, a.values)), dict(zip(slow.rounds, slow.values))
        if both:
            slowdown = f"{1 - math.exp(np.mean([math.log(sv[r] / av[r]) for r in both])):.4f}"
    redo = campaign.schedule.get("redo") or {}
    causes = Counter(c for d in redo.get("disturbed", []) for c in d.get("causes", {}))
    lines = verdict_lines(comparison_table(campaign), durabilities(campaign))
    answer = campaign_answer(lines)
    found = disturbed_visits(campaign, answer)
    left_out = disturbed_runs(campaign.runs)
    counted = [r for r in campaign.runs if r.repetition >= 1 and r.status in ("ok", "redone")]
    sa, sb, ba = decided("a", "slow"), decided("b", "slow"), decided("a", "b")
    # The rule against the neighbour's own log: a counted run that overlapped one of its
    # bursts by a second or more was hit; flagged: run again ('redone') or kept and left out.
    bursts = []
    log = results.parent / f"{results.name}.neighbour.log"
    if log.exists():
        for line in log.read_text().splitlines():
            _, on, off = line.split()
            bursts.append((float(on), float(off)))
    measured = [r for r in counted if r.workload != "pgbench-init" and r.ended]
    flagged = {r.id for r in measured if r.status == "redone" or r.id in left_out}
    hit = {
        r.id
        for r in measured
        if any(min(r.ended, off) - max(_measured_from(r), on) >= 1.0 for on, off in bursts)
    }
    row = {
        "campaign": campaign.id,
        "neighbour": "on" if meta.get("neighbour") else "off",
        "duty": meta.get("duty", ""),
        "period_s": meta.get("period_s", ""),
        "slow_iops": meta.get("slow_iops", ""),
        "slow_commit_delay": meta.get("slow_commit_delay", ""),
        "minutes": f"{((campaign.ended or time.time()) - campaign.started) / 60:.2f}",
        "measuring_minutes": f"{((campaign.ended or 0) - campaign.started - float(redo.get('spent_s') or 0)) / 60:.2f}",
        "rounds": campaign.schedule.get("rounds", ""),
        "slow_vs_a": sa[0],
        "slow_vs_a_round": sa[1],
        "slow_vs_a_minute": sa[2],
        "slow_vs_b": sb[0],
        "slow_vs_b_round": sb[1],
        "slow_vs_b_minute": sb[2],
        "b_vs_a": ba[0],
        "slowdown": slowdown,
        "visits": len({(r.target, r.repetition) for r in counted}),
        "counted_runs": len(measured),
        "runs_flagged": len(flagged),
        "runs_in_bursts": len(hit),
        "runs_in_bursts_flagged": len(hit & flagged),
        "visits_disturbed": found.disturbed if found else 0,
        "runs_run_again": sum(r.status == "redone" for r in campaign.runs),
        "runs_kept": sum(not d.trimmed for d in left_out.values()),
        "runs_trimmed": sum(d.trimmed for d in left_out.values()),
        "waits": redo.get("waits", 0),
        "waited_s": redo.get("waited_s", 0),
        "extra_s": redo.get("spent_s", 0),
        "from_budget_s": redo.get("from_budget_s", 0),
        "causes": " ".join(f"{c}:{n}" for c, n in sorted(causes.items())),
        "answer": answer,
        "disturbed": found.text() if found else "",
    }
    DATA.mkdir(parents=True, exist_ok=True)
    out = DATA / f"busy-{campaign.id}.csv"
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerow(row)
    print(f"{out.relative_to(REPO)}: {json.dumps(row)}")
    return out


def _round_ends(campaign) -> dict[int, float]:
    """Round → when its last run ended (epoch seconds)."""
    ends: dict[int, float] = {}
    for r in campaign.runs:
        if r.ended:
            ends[r.repetition] = max(ends.get(r.repetition, 0.0), r.ended)
    return ends


def replay(dirs: list[Path], weights: dict[str, float]) -> None:
    """Each stored campaign's TPC-B decisions as the product makes them from its results,
    with its plan's ``[verdicts] weights`` and with ``weights`` instead; and each pair's
    paired sd of the log tps ratio over the rounds it counted."""
    from pgfsbench.analysis.cells import collect
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.store.read import load_campaign

    pairs = (("a", "slow"), ("b", "slow"), ("a", "b"))
    print(
        f"REPLAY of stored campaigns (the product's table over each results.db, the rounds "
        f"and last look each ran): TPC-B tps decisions as stored, then with weights "
        f"{weights}; paired sd of log(tps ratio) per pair over its counted rounds"
    )
    for results in dirs:
        meta_file = results.parent / f"{results.name}.bench.json"
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
        row: dict = {
            "campaign": results.name,
            "neighbour": "on" if meta.get("neighbour") else "off",
        }
        campaign = load_campaign(results, series=False)
        ends, stored = _round_ends(campaign), campaign.plan
        for name, given in (("as_stored", None), ("weighted", weights)):
            if given is not None:  # a new plan dict: its table is not the cached one
                verdicts = {**(stored.get("verdicts") or {}), "weights": given}
                campaign = replace(campaign, plan={**stored, "verdicts": verdicts})
            table = comparison_table(campaign, headline_only=True)
            tps = next(r for r in table.rows if (r.workload, r.label) == TPS)
            for a, b in pairs:
                f = table.pair(tps, a, b)
                at = f.through if f is not None else None
                minute = f" at {(ends[at] - campaign.started) / 60:.1f} min" if at in ends else ""
                row[f"{name}_{b}_vs_{a}"] = f"{f.outcome if f else '-'}{minute}"
        cells = {(k.target, k.workload, k.label, k.metric): c for k, c in collect(campaign).items()}
        for a, b in pairs:
            ca, cb = (cells.get((t, *TPS, "pgbench.tps")) for t in (a, b))
            if ca is None or cb is None:
                continue
            va, vb = dict(zip(ca.rounds, ca.values)), dict(zip(cb.rounds, cb.values))
            both = sorted(set(va) & set(vb) - {0})
            d = [math.log(vb[r] / va[r]) for r in both]
            row[f"sd_{b}_vs_{a}"] = round(float(np.std(d, ddof=1)), 3) if len(d) > 1 else None
            row[f"rounds_{b}_vs_{a}"] = len(both)
        print(json.dumps(row), flush=True)


def storage(dirs: list[Path]) -> None:
    """How much of each campaign's TPC-B noise, over the runs it counted, goes with the
    storage's speed during the visit: each run's log tps about its target's median,
    against the backing disk's mean await during the run (the run's own writes: a
    mechanism, not a covariate a test may use) and against the same visit's fio p50
    fdatasync latency, measured on the same target seconds before (log, about its
    target's median)."""
    from pgfsbench.analysis.caveats.disturbance import disturbed_runs
    from pgfsbench.store.read import load_campaign

    print(
        "STORAGE: r = correlation of a counted TPC-B run's log tps (about its target's "
        "median) with the backing disk's mean await during it, and with its visit's fio "
        "p50 fdatasync latency (log, about its target's median); sd = the runs' sd, "
        "then what is left once each is regressed out"
    )
    for results in dirs:
        meta_file = results.parent / f"{results.name}.bench.json"
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {}
        campaign = load_campaign(results, series=True)
        left_out = disturbed_runs(campaign.runs)
        fio = {
            (r.target, r.repetition): {m.name: m.value for m in r.metrics}.get(
                "fsync_latency.sync_p50_us"
            )
            for r in campaign.runs
            if r.workload == "fsync-latency" and r.status == "ok"
        }
        by_target: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
        for r in campaign.runs:
            if r.workload != "pgbench" or r.status != "ok" or r.repetition < 1:
                continue
            trim = left_out.get(r.id)
            if trim is not None and not trim.trimmed:
                continue
            tps = {m.name: m.value for m in r.metrics}.get("pgbench.tps")
            await_ = r.series.get("mon.disk.backing.await_ms")
            p50 = fio.get((r.target, r.repetition))
            if not tps or await_ is None or not await_.points or not p50:
                continue
            if trim is not None and trim.clean_ratio is not None:
                tps *= trim.clean_ratio
            mean_await = float(np.mean([v for _, v in await_.points]))
            by_target[r.target].append((math.log(tps), mean_await, math.log(p50)))
        if sum(map(len, by_target.values())) < 5:
            continue
        # each target about its own level (median): the run-to-run part alone
        centred = np.concatenate(
            [np.array(v) - np.median(np.array(v), axis=0) for v in by_target.values()]
        )
        y, aw, p50s = centred.T
        row = {
            "campaign": results.name,
            "neighbour": "on" if meta.get("neighbour") else "off",
            "runs": len(y),
            "sd": round(float(np.std(y, ddof=1)), 3),
        }
        for name, x in (("await", aw), ("fio_p50", p50s)):
            fit = np.polyfit(x, y, 1)
            row[f"r_{name}"] = round(float(np.corrcoef(x, y)[0, 1]), 2)
            row[f"sd_without_{name}"] = round(float(np.std(y - np.polyval(fit, x), ddof=2)), 3)
        print(json.dumps(row), flush=True)


def summary(paths: list[Path]) -> None:
    rows = [r for p in paths for r in csv.DictReader(p.open())]
    by = defaultdict(list)
    for r in rows:  # the slowdown's kind: an IOPS cap's moves with the machine's load
        by[(r["neighbour"], "commit_delay" if r.get("slow_commit_delay") else "iops cap")].append(r)
    for (state, slower), rs in sorted(by.items()):
        n = len(rs)
        limit = 12.0 if state == "on" else 10.0

        def within(r: dict, key: str, limit: float = limit) -> bool:
            return (
                r[key] == LOWER and r[f"{key}_minute"] != "" and float(r[f"{key}_minute"]) <= limit
            )

        decided = sum(within(r, "slow_vs_a") and within(r, "slow_vs_b") for r in rs)
        decided_a = sum(within(r, "slow_vs_a") for r in rs)
        split = sum(r["b_vs_a"] in (HIGHER, LOWER) for r in rs)
        causes: Counter[str] = Counter()
        for r in rs:
            for part in r["causes"].split():
                c, _, k = part.partition(":")
                causes[c] += int(k)
        print(
            json.dumps(
                {
                    "neighbour": state,
                    "slow_by": slower,
                    "campaigns": n,
                    f"10%_decided_vs_a_and_b_within_{limit:g}_min": f"{decided} of {n}",
                    f"10%_decided_vs_a_within_{limit:g}_min": f"{decided_a} of {n}",
                    "identical_targets_split": f"{split} of {n}",
                    "minutes": sorted(float(r["minutes"]) for r in rs),
                    "rounds": sorted(int(r["rounds"]) for r in rs),
                    "from_budget_s": [float(r.get("from_budget_s") or 0) for r in rs],
                    "slowdown_measured": sorted(float(r["slowdown"]) for r in rs if r["slowdown"]),
                    # the rule: runs a burst overlapped that it flagged; runs it flagged
                    # that no burst of the neighbour's touched (others' load, or false)
                    "hit_rate": _ratio(rs, "runs_in_bursts_flagged", "runs_in_bursts"),
                    "flagged_outside_bursts": f"{_flagged_outside(rs)} of "
                    f"{sum(int(r['counted_runs']) - int(r['runs_in_bursts']) for r in rs)} runs",
                    "visits_disturbed_per_campaign": [int(r["visits_disturbed"]) for r in rs],
                    "runs_run_again_per_campaign": [int(r["runs_run_again"]) for r in rs],
                    "runs_kept_per_campaign": [int(r["runs_kept"]) for r in rs],
                    "runs_trimmed_per_campaign": [int(r.get("runs_trimmed") or 0) for r in rs],
                    "waits_per_campaign": [int(r["waits"]) for r in rs],
                    "why (runs, by cause)": dict(causes),
                }
            )
        )


def _ratio(rows: list[dict], part: str, whole: str) -> str:
    k, n = sum(int(r[part] or 0) for r in rows), sum(int(r[whole] or 0) for r in rows)
    return f"{k} of {n} runs" + (f" ({k / n:.0%})" if n else "")


def _flagged_outside(rows: list[dict]) -> int:
    return sum(int(r["runs_flagged"] or 0) - int(r["runs_in_bursts_flagged"] or 0) for r in rows)


# --- the discount, simulated -----------------------------------------------------------
def _hl_compare(pairs, margin, threshold=None):
    """``paired.compare_paired`` with a Hodges-Lehmann estimate and Wilcoxon signed-rank
    tests (difference; TOST within ``margin``) in place of the paired t."""
    from scipy.stats import wilcoxon

    c = _t_compare(pairs, margin, threshold)
    if c.n < 3 or c.p_value is None:
        return c
    d = np.log(np.array([o for _, o in pairs]) / np.array([b for b, _ in pairs]))
    walsh = (d[:, None] + d[None, :])[np.triu_indices(len(d))] / 2
    hl = float(np.median(walsh))
    bound = math.log1p(margin)
    p = float(wilcoxon(d).pvalue)
    p_low = float(wilcoxon(d + bound, alternative="greater").pvalue)
    p_high = float(wilcoxon(d - bound, alternative="less").pvalue)
    return replace(c, mean_log=hl, ratio=math.exp(hl), p_value=p, p_equivalent=max(p_low, p_high))


_t_compare = paired_mod.compare_paired


def simulate(n: int, sd: float, rounds: int, shares: list[float], hit: float, false: float) -> None:
    design, _ = plan_design("quick")
    design = replace(design, looks=(rounds,), last_look=rounds, first_look=rounds, final=None)
    targets = ["a", "b", "c"]
    measures = [("tps", True), ("p99", False)]
    print(
        f"SIMULATION (product's decide over headline_family, quick's design with one look at "
        f"round {rounds}: alpha {design.alpha}, claims from {design.noise:.0%}, equivalent "
        f"within ±{design.equivalence:.0%}); paired sd {sd:.3f} a round on both measurements; "
        f"a disturbed visit loses U(5%, 80%); the rule flags {hit:.0%} of the disturbed visits "
        f"and {false:.0%} of the others; {n} campaigns per row"
    )
    for share in shares:
        for method in ("none", "drop", "hl", "drop+hl"):
            rng = np.random.default_rng(7)
            false_claims = hits = both = 0
            used = []
            for case in ("aa", "slow"):
                for _ in range(n):
                    values: dict = {}
                    for m, higher in measures:
                        for t in targets:
                            level = rng.normal(0, sd / math.sqrt(2), rounds)
                            if case == "slow" and m == "tps" and t == "c":
                                level = level + math.log(0.9)
                            disturbed = rng.random(rounds) < share
                            loss = np.where(disturbed, np.log1p(-rng.uniform(0.05, 0.8, rounds)), 0)
                            flagged = np.where(
                                disturbed, rng.random(rounds) < hit, rng.random(rounds) < false
                            )
                            v = level + (loss if higher else -loss)
                            values.setdefault((m, ""), {})[t] = {
                                r + 1: 1000 * math.exp(v[r])
                                for r in range(rounds)
                                if not (method.startswith("drop") and flagged[r])
                            }
                            used.append(len(values[(m, "")][t]))
                    if method.endswith("hl"):
                        paired_mod.compare_paired = _hl_compare
                    try:
                        dec = decide(headline_family(values, targets), design)
                    finally:
                        paired_mod.compare_paired = _t_compare
                    effect = math.log(0.9) if case == "slow" else 0.0
                    false_claims += any(
                        _false(k, d.outcome, effect, design.equivalence, tps="tps")
                        for k, d in dec.items()
                    )
                    if case == "slow":
                        # a pair with no undisturbed round in common has no decision
                        ac = _outcome(dec, ("tps", "", "a", "c")) == LOWER
                        hits += ac
                        both += ac and _outcome(dec, ("tps", "", "b", "c")) == LOWER
            print(
                json.dumps(
                    {
                        "disturbed_share": share,
                        "method": method,
                        "any_false_claim": round(false_claims / (2 * n), 4),
                        "power_10%_c_vs_a": round(hits / n, 4),
                        "power_10%_c_vs_a_and_b": round(both / n, 4),
                        "rounds_used_mean": round(float(np.mean(used)), 2),
                        "campaigns": n,
                    }
                ),
                flush=True,
            )


def _outcome(decisions: dict, key: tuple) -> str | None:
    return d.outcome if (d := decisions.get(key)) is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("campaigns")
    c.add_argument("out", type=Path)
    c.add_argument("--count", type=int, default=5)
    c.add_argument("--neighbour", choices=["off", "on", "both"], default="both")
    c.add_argument("--duty", type=float, default=0.4)
    c.add_argument("--period", type=float, default=30.0)
    c.add_argument("--slow-iops", type=int, default=4600)
    c.add_argument(
        "--slow-commit-delay",
        type=int,
        metavar="US",
        help="make slow slower by commit_delay (with commit_siblings = 0) instead of an "
        "IOPS cap: a cost per commit that someone else's load does not take away",
    )
    c.add_argument("--max-minutes", type=float, help="the budget (default: the plan's)")
    c.add_argument(
        "--cpu-latency",
        type=int,
        metavar="US",
        help="[machine] cpu_latency for the campaigns (0: CPUs held awake); default: the plan's",
    )
    e = sub.add_parser("extract")
    e.add_argument("results", type=Path, nargs="+")
    rp = sub.add_parser("replay")
    rp.add_argument("results", type=Path, nargs="+")
    rp.add_argument(
        "--weights",
        nargs="+",
        default=["pgbench=3", "fsync-latency=1"],
        help="[verdicts] weights to decide with, as type=weight",
    )
    st = sub.add_parser("storage")
    st.add_argument("results", type=Path, nargs="+")
    s = sub.add_parser("summary")
    s.add_argument("csv", type=Path, nargs="*")
    m = sub.add_parser("simulate")
    m.add_argument("--campaigns", type=int, default=2000)
    m.add_argument("--sd", type=float, default=0.097)
    m.add_argument("--rounds", type=int, default=16)
    m.add_argument("--share", type=float, nargs="+", default=[0.0, 0.1, 0.25, 0.4])
    m.add_argument("--hit", type=float, default=0.95)
    m.add_argument("--false-alarm", type=float, default=0.02)
    args = parser.parse_args()
    if args.command == "campaigns":
        if os.geteuid() != 0:
            parser.error("campaigns need root (loop devices, mkfs, mount)")
        campaigns(args.out, args.count, args.neighbour, args)
    elif args.command == "extract":
        for d in args.results:
            extract(d)
    elif args.command == "replay":
        given = dict(w.split("=", 1) for w in args.weights)
        replay(args.results, {k: float(v) for k, v in given.items()})
    elif args.command == "storage":
        storage(args.results)
    elif args.command == "summary":
        summary(args.csv or sorted(DATA.glob("busy-*.csv")))
    else:
        simulate(args.campaigns, args.sd, args.rounds, args.share, args.hit, args.false_alarm)


if __name__ == "__main__":
    main()
