"""How the verdicts behave on this machine's real noise: false claims, power, time.

    .venv/bin/python benchmarks/bench_verdicts.py collect DIR [--rounds 20]   # root, ~12 min
    .venv/bin/python benchmarks/bench_verdicts.py analyse DIR [DIR ...] [--draws 2000]

``collect`` runs one real A/A campaign through the CLI: three *identical* ext4
loop targets (a, b, c) measured with the default plan's measurements (fio
fdatasync latency, TPC-B with 4 clients), reused across ``--rounds`` shuffled
interleaved rounds. Every difference between a, b and c in it is noise: the
machine's, the loop devices', PostgreSQL's.

``analyse`` replays the statistics on those real rounds, many times over.
One *simulated campaign* draws ``max`` rounds (the default plan's budget) at
random from the collected ones, keeping each round's three values together (a
round is a block: that is what pairing relies on), and shuffles which target
is called a, b and c. The same sequential procedure the product runs
(``analysis.sequential.decide`` with the default plan's design) then says,
after each round, which pairs are decided. From many such campaigns:

1. **A/A false-verdict rate**: the share of campaigns in which any pair of
   the identical targets is called better or worse (alpha is the promise),
   and how often they come out "equivalent" vs "inconclusive".
2. **Smallest difference detected at the default budget**: target b's values
   are multiplied by (1 - d), a real slowdown of d on top of real noise; the
   detection rate (b decided worse than a) per d, and the smallest d detected
   in at least 80% of campaigns.
3. **Time to decision**: for each d, the median round at which the
   sequential design decided, against the smallest fixed count whose single
   look reaches the same 80% detection; converted to minutes with this
   machine's measured time per round.

The collected rounds are reused by every simulated campaign, so the figures
carry the sampling error of one collection (20 rounds): more collections
(several DIRs) make them firmer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from pgfsbench.analysis.headline import headline_metric  # noqa: E402
from pgfsbench.analysis.sequential import (  # noqa: E402
    HIGHER,
    LOWER,
    EQUIVALENT,
    Design,
    decide,
    design_for,
    headline_family,
)
from pgfsbench.plan.load import load_plan  # noqa: E402
from pgfsbench.store.read import load_campaign  # noqa: E402

TARGETS = ["a", "b", "c"]
POWER = 0.80


def aa_plan(rounds: int) -> str:
    """The default plan's measurements on three identical targets, a fixed count."""
    quick = load_plan("quick")
    workloads = "\n".join(_workload_toml(w.model_dump(mode="json", exclude_none=True))
                          for w in quick.workloads)
    targets = "\n".join(f'[[targets]]\nname = "{t}"\nfs = "ext4"\nsize = "2G"\n'
                        for t in TARGETS)
    settings = "\n".join(f'{k} = {json.dumps(v)}' for k, v in quick.postgres.settings.items())
    return (f'name = "aa-collect"\ndescription = "bench_verdicts.py: A/A noise"\n\n'
            f'[repetitions]\ncount = {rounds}\norder = "random"\nfresh = false\n\n'
            f'[postgres.settings]\n{settings}\n\n{targets}\n{workloads}')


def _workload_toml(params: dict) -> str:
    lines = ["[[workloads]]"]
    for k, v in params.items():
        if k in ("tag",) or v is None:
            continue
        lines.append(f"{k} = {json.dumps(v)}")
    return "\n".join(lines) + "\n"


def collect(results: Path, rounds: int) -> None:
    plan = Path(tempfile.mkdtemp(prefix="bench-verdicts-")) / "aa.toml"
    plan.write_text(aa_plan(rounds))
    env = {**os.environ, "PGFSBENCH_STATE_DIR": str(plan.parent / "state")}
    subprocess.run([sys.executable, "-m", "pgfsbench", "run", str(plan), "--results",
                    str(results)], check=True, env=env)


def headline_rounds(results: Path) -> tuple[dict, float]:
    """values[(workload, label)][target][round], and the wall seconds per round."""
    campaign = load_campaign(results)
    values: dict = {}
    rounds = set()
    for run in campaign.runs:
        if run.status != "ok" or run.repetition < 1:
            continue
        named = {m.name: m.value for m in run.metrics}
        metric = headline_metric(run.workload, run.params, named)
        if metric is None or named.get(metric) is None:
            continue
        values.setdefault((run.workload, run.label), {}).setdefault(
            run.target, {})[run.repetition] = named[metric]
        rounds.add(run.repetition)
    # Measurements run once (the load) have no rounds to pair: no verdict is asked of them.
    values = {k: v for k, v in values.items()
              if all(len(v.get(t, {})) > 1 for t in TARGETS)}
    per_round = (campaign.ended - campaign.started) / max(1, len(rounds))
    return values, per_round


def simulate(pool: list[dict], design: Design, draws: int, slowdown: float,
             higher_is_better: dict, seed: int = 1) -> dict:
    """Run ``draws`` campaigns drawn from the pooled rounds; b slowed by ``slowdown``.

    With no slowdown: how often any pair of the identical targets got a claim. With
    one: per measurement, how often b was decided worse than a, and at which round.
    """
    rng = np.random.default_rng(seed)
    false_claim = equivalent_all = 0
    detected = {key: 0 for key in pool[0]}
    decided_at: dict = {key: [] for key in pool[0]}
    keys = list(pool[0])
    for _ in range(draws):
        picks = rng.choice(len(pool), size=min(design.last_look, len(pool)), replace=False)
        names = list(rng.permutation(TARGETS))  # which real target plays a, b, c
        values: dict = {}
        for n, i in enumerate(picks, start=1):
            for key in keys:
                for role, real in zip(TARGETS, names):
                    v = pool[i][key][real]
                    if role == "b" and slowdown:
                        v = v * (1 - slowdown) if higher_is_better[key] else v / (1 - slowdown)
                    values.setdefault(key, {}).setdefault(role, {})[n] = v
        decisions = decide(headline_family(values, TARGETS), design)
        if slowdown == 0:
            false_claim += any(d.outcome in (HIGHER, LOWER) for d in decisions.values())
            equivalent_all += all(d.outcome == EQUIVALENT for d in decisions.values())
            continue
        for key in keys:  # b against a: 'worse' is lower for a higher-is-better metric
            d = decisions[(*key, "a", "b")]
            if d.outcome == (LOWER if higher_is_better[key] else HIGHER):
                detected[key] += 1
                decided_at[key].append(d.at_round)
    if slowdown == 0:
        return {"draws": draws, "false_claim_rate": false_claim / draws,
                "all_equivalent_rate": equivalent_all / draws}
    return {"draws": draws, "slowdown": slowdown,
            "detection_rate": {f"{w} {l}".strip(): detected[(w, l)] / draws for w, l in keys},
            "median_decision_round": {f"{w} {l}".strip(): (float(np.median(decided_at[(w, l)]))
                                                           if decided_at[(w, l)] else None)
                                      for w, l in keys}}


def analyse(dirs: list[Path], draws: int) -> None:
    pool: list[dict] = []
    seconds_per_round = []
    for d in dirs:
        values, per_round = headline_rounds(d)
        seconds_per_round.append(per_round)
        rounds = sorted(set.intersection(*[set(v[t]) for v in values.values() for t in TARGETS]))
        pool += [{key: {t: values[key][t][r] for t in TARGETS} for key in values}
                 for r in rounds]
    campaign = load_campaign(dirs[0])
    higher = {}
    for run in campaign.runs:
        named = {m.name: m for m in run.metrics}
        metric = headline_metric(run.workload, run.params, list(named))
        if metric in named:
            higher[(run.workload, run.label)] = named[metric].higher_is_better
    design = design_for(load_plan("quick").model_dump(mode="json"))
    per_round = float(np.median(seconds_per_round))
    print(f"pool: {len(pool)} real rounds from {len(dirs)} campaign(s); "
          f"{per_round:.0f} s per round of 3 targets; measurements: {sorted(pool[0])}")
    print(f"default design: alpha {design.alpha}, margin ±{design.noise:.0%}, looks after "
          f"rounds {design.first_look}..{design.last_look}")
    # Round-to-round noise of each measurement, pairing removes the shared part.
    for key in sorted(pool[0]):
        x = np.array([[r[key][t] for t in TARGETS] for r in pool])
        logs = np.log(x)
        unpaired = float(np.std(logs[:, 1], ddof=1))
        paired = float(np.std(logs[:, 1] - logs[:, 0], ddof=1))
        print(f"  {key}: sd of log(value) {unpaired:.3f}; of a paired log-ratio {paired:.3f}")
    aa = simulate(pool, design, draws, 0.0, higher)
    print(json.dumps({"a_a": aa}))
    summary = {"a_a": aa, "seconds_per_round": per_round, "slowdowns": []}
    for d in (0.03, 0.05, 0.075, 0.10, 0.15, 0.20):
        seq = simulate(pool, design, draws, d, higher)
        fixed_n: dict = {m: None for m in seq["detection_rate"]}
        for n in range(2, design.last_look + 1):
            fixed = simulate(pool, Design.fixed(design.alpha, design.noise, n), draws // 4,
                             d, higher)
            for m, rate in fixed["detection_rate"].items():
                if fixed_n[m] is None and rate >= POWER:
                    fixed_n[m] = n
            if all(v is not None for v in fixed_n.values()):
                break
        row = {**seq, "fixed_count_for_80pct": fixed_n}
        summary["slowdowns"].append(row)
        print(json.dumps(row))
    summary["smallest_detected_80pct"] = {
        m: next((r["slowdown"] for r in summary["slowdowns"] if r["detection_rate"][m] >= POWER),
                None)
        for m in summary["slowdowns"][0]["detection_rate"]}
    print(json.dumps(summary))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("results", type=Path)
    c.add_argument("--rounds", type=int, default=20)
    a = sub.add_parser("analyse")
    a.add_argument("results", type=Path, nargs="+")
    a.add_argument("--draws", type=int, default=2000)
    args = parser.parse_args()
    if args.command == "collect":
        collect(args.results, args.rounds)
    else:
        analyse(args.results, args.draws)


if __name__ == "__main__":
    main()
