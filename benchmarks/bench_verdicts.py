r"""How the verdicts behave on this machine's real noise: false claims, power, time.

    .venv/bin/python benchmarks/bench_verdicts.py collect DIR [--rounds 16]   # root, ~10 min
    .venv/bin/python benchmarks/bench_verdicts.py extract DIR [DIR ...]       # CSV from DIRs
    .venv/bin/python benchmarks/bench_verdicts.py analyse [CSV ...] [--plan quick|thorough]
        [--margin 0.05] [--quiet 0.05] [--current] [--to-end] [--rounds N]
    .venv/bin/python benchmarks/bench_verdicts.py simulate [CSV ...] [--campaigns 2000]
        [--quiet 0.05] [--sd 0.09 [--spread 0.12] | --sd-range 0.07 0.11]
        [--clock FIRST PER] [--plan quick --rounds N]
    .venv/bin/python benchmarks/bench_verdicts.py joint [--campaigns 4000] [--sd 0.097]
        [--rounds 16] [--plan quick]
    .venv/bin/python benchmarks/bench_verdicts.py looks [--campaigns 1000]
    .venv/bin/python benchmarks/bench_verdicts.py weights [--campaigns 2000] [--ratios 1 3]

``collect`` runs one real A/A campaign through the CLI: three *identical* ext4
loop targets (a, b, c) with the default plan's measurements and settings, reused
across shuffled interleaved rounds, on the default plan's own path ('auto' with one
look at the last round, no time limit: ``--rounds`` of them), then ``extract``\s
it. Every difference between a, b and c is noise. Run one campaign at a time on a
machine with nothing else running: others' CPU use is the largest cause of the
visit level (``bench_noise.py``), and each run's share of it is kept.

``extract`` keeps a campaign's per-round headline values, small, in
``benchmarks/data/verdicts-<campaign id>.csv``: campaign, round, target,
measurement, value, seconds (the wall seconds from the campaign's start to the
end of that round), other_cpu (the run's ``bound.other_cpu_frac``). Keep results
directories out of the repository.

``analyse`` treats **each campaign as one independent campaign**: no rounds are
drawn, pooled or reordered across campaigns. It reads these CSVs and those of
``bench_noise.py`` (``noise-*.csv``: TPC-B tps of two identical ext4 targets
"a", "b" and one xfs). For each campaign that ran at least a built-in plan's
budget it replays the product's procedure (``analysis.stats.sequential.decide`` with
that plan's design: its planned looks, its margins, and a last look at the round
its budget would have ended the campaign at, from the campaign's own clock) and
counts, with the number of campaigns behind every figure:

1. **A/A false claims**: campaigns in which any pair of identical targets was
   called better or worse; and those where every tps pair came out equivalent;
2. **power on real noise**: the same campaign with target b's tps slowed by d
   (multiplied by 1 - d), or its fio p99 raised, on top of the campaign's real
   values: decided worse than a (and than c)? At which minute?

``--rounds N`` replays the plan's design with its one look at round N instead of
the round the campaign's own clock gives (campaigns of at least N rounds): for a
plan whose budget now reaches a round the campaign's older clock did not.

``simulate`` is a **calibrated simulation**, labelled as such wherever it is
quoted: per measurement, the per-round paired sd of each campaign is fitted
(its median and its spread between campaigns, on the log scale), and the
campaigns' clock (round 1's end, seconds per round after); many simulated
campaigns are drawn from that model (each target's visit level normal with sd =
paired sd / sqrt 2, campaign by campaign; half of the A/A ones with t(4) tails)
and decided by each built-in plan's design. It extends the real campaigns (more of
them), never replaces them.

``joint`` is a simulation of the **error control over every kind of claim at once**
(better, worse, equivalent), with the real functions (``sequential.decide`` over
``headline_family``, the plan's design and margins, a look at ``--rounds``): three
targets on the default plan's two headline measurements (six comparisons), a and b
identical, c placed where a false claim is likeliest: at the equivalence margin's
boundary (×1.10 and ×1/1.10), and 10% slower; the fio p99 measurement identical on
all three. Any false claim counts: a better/worse between identical targets, an
"equivalent" beyond the margin, a wrong direction. Normal and t(4) visit levels.

``looks`` is a simulation of **when** a 10% difference is decided under a design of looks
and a spending shape (``[repetitions] looks`` and ``spending``): c 10% slower on tps at a
quiet machine's paired sd (4%) and a busier one's (9.7%, 11.7%), fio p99 at 46%, the
share of campaigns that decided c worse than a by each look, and A/A false claims.

``weights`` is a simulation of the default plan's design with its ``[verdicts] weights``
set to each ``--ratios`` value for TPC-B tps against fio p99's 1: c 10% slower on tps at
a paired sd of 4% (by each look), 9.7% and 11.7% (round 16), and 10.6% with the budget's
last look at round 10 (the undisturbed rounds beside bench_busy.py's neighbour); c's fio
p99 45% higher (sd 46%); A/A false claims, normal and t(4).
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
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
DATA = REPO / "benchmarks" / "data"

from pgfsbench.analysis.stats.sequential import (  # noqa: E402
    EQUIVALENT,
    HIGHER,
    LOWER,
    Design,
    decide,
    headline_family,
)
from pgfsbench.analysis.stats.stored_design import design_for  # noqa: E402
from pgfsbench.plan.load import load_plan  # noqa: E402

TARGETS = ["a", "b", "c"]
IDENTICAL = {"a", "b", "c"}  # target names that are the same ext4 recipe in these campaigns
FIELDS = ["campaign", "round", "target", "measurement", "value", "seconds", "other_cpu"]
TPS = "pgbench clients=4 pgbench.tps"
FIO_P99 = "fsync-latency fsync_latency.sync_p99_us"
HIGHER_IS_BETTER = {"pgbench.tps": True, "fsync_latency.sync_p99_us": False}


# --- collect and extract ---------------------------------------------------------------
def aa_plan(rounds: int) -> str:
    """The default plan's measurements on three identical targets, a fixed count."""
    quick = load_plan("quick")
    workloads = "\n".join(
        _workload_toml(w.model_dump(mode="json", exclude_none=True)) for w in quick.workloads
    )
    targets = "\n".join(f'[[targets]]\nname = "{t}"\nfs = "ext4"\nsize = "2G"\n' for t in TARGETS)
    settings = "\n".join(f"{k} = {json.dumps(v)}" for k, v in quick.postgres.settings.items())
    return (
        f'name = "aa-collect"\ndescription = "bench_verdicts.py: A/A noise"\n\n'
        # 'auto' with one look at the last round and no time limit: the default
        # plan's path (its descriptive measurements skip the settling round), run
        # to a fixed number of rounds; analyse replays the budget from its clock
        f'[repetitions]\ncount = "auto"\nmin = 3\nmax = {rounds}\nlooks = 1\n'
        f'max_minutes = 180\norder = "random"\nfresh = false\n\n'
        f"[verdicts]\nnoise = {quick.verdicts.noise}\n\n"
        f"[postgres.settings]\n{settings}\n\n{targets}\n{workloads}"
    )


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
    subprocess.run(
        [sys.executable, "-m", "pgfsbench", "run", str(plan), "--results", str(results)],
        check=True,
        env=env,
    )
    extract(results)


def extract(results: Path) -> Path:
    """The campaign's counted headline values, one row per run, as CSV under DATA."""
    from pgfsbench.analysis.headline import headline_metric
    from pgfsbench.store.read import load_campaign

    campaign = load_campaign(results)
    ends: dict[int, float] = {}
    rows = []
    for run in campaign.runs:
        if run.ended:
            ends[run.repetition] = max(ends.get(run.repetition, 0.0), run.ended)
        if run.status != "ok" or run.repetition < 1:
            continue
        named = {m.name: m.value for m in run.metrics}
        metric = headline_metric(run.workload, run.params, named)
        if metric is None or named.get(metric) is None:
            continue
        rows.append(
            {
                "campaign": campaign.id,
                "round": run.repetition,
                "target": run.target,
                "measurement": f"{run.workload} {run.label} {metric}".replace("  ", " "),
                "value": f"{named[metric]:.6g}",
                # the share of the CPU other processes used meanwhile: how quiet it was
                "other_cpu": f"{named.get('bound.other_cpu_frac') or 0.0:.3f}",
            }
        )
    for r in rows:
        r["seconds"] = f"{ends[r['round']] - campaign.started:.1f}"
    DATA.mkdir(parents=True, exist_ok=True)
    out = DATA / f"verdicts-{campaign.id}.csv"
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(sorted(rows, key=lambda r: (r["round"], r["measurement"], r["target"])))
    print(f"{out.relative_to(REPO)}: {len(rows)} values")
    return out


# --- reading campaigns ---------------------------------------------------------------------
class Campaign:
    """One campaign's headline values: values[measurement][target][round], and the
    seconds from its start to the end of each round."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
        self.seconds: dict[int, float] = {}
        self.remedy = ""
        self.other_cpu: list[float] = []  # each run's others' CPU share, when recorded

    def rounds(self) -> list[int]:
        return sorted(self.seconds)


def load(paths: list[Path]) -> list[Campaign]:
    """Every campaign in the CSVs (this script's and bench_noise.py's), one each."""
    campaigns: dict[str, Campaign] = {}
    for path in paths:
        with path.open() as f:
            for row in csv.DictReader(f):
                c = campaigns.setdefault(row["campaign"], Campaign(row["campaign"]))
                c.remedy = row.get("remedy") or c.remedy
                measurement = row.get("measurement") or TPS  # bench_noise.py: tps only
                r = int(row["round"])
                if r < 1 or not row.get("value"):
                    continue
                c.values[measurement][row["target"]][r] = float(row["value"])
                if row.get("other_cpu"):
                    c.other_cpu.append(float(row["other_cpu"]))
                if row.get("seconds"):
                    c.seconds[r] = max(c.seconds.get(r, 0.0), float(row["seconds"]))
    for c in campaigns.values():
        if c.remedy and c.seconds:
            # bench_noise.py keeps each round's own wall seconds (no settling round, no
            # load): made cumulative, they run a little short of the campaign's clock
            total, cumulative = 0.0, {}
            for r in sorted(c.seconds):
                total += c.seconds[r]
                cumulative[r] = total
            c.seconds = cumulative
    return list(campaigns.values())


def identical(c: Campaign, measurement: str) -> list[str]:
    return [t for t in sorted(c.values[measurement]) if t in IDENTICAL]


# The product's (workload type, label) of each measurement these CSVs name, so that a
# plan's [verdicts] weights reach the keys the replays and simulations decide on.
PRODUCT_KEYS = {TPS: ("pgbench", "clients=4"), FIO_P99: ("fsync-latency", "")}


def plan_design(plan: str = "quick") -> tuple[Design, float]:
    """A built-in plan's design and its budget in minutes (``quick``: the default), its
    weights named as these CSVs name the measurements."""
    loaded = load_plan(plan)
    design = design_for(loaded.model_dump(mode="json"))
    return with_weights(design, dict(design.weights)), loaded.repetitions.max_minutes


def with_weights(design: Design, weights: dict[str, float]) -> Design:
    """``design`` with ``weights`` (keyed by workload type or "type label", as a plan's)
    given to the measurements as this file names them."""
    probe = replace(design, weights=tuple(weights.items()))
    named = tuple((m, probe.weight((w, label))) for m, (w, label) in PRODUCT_KEYS.items())
    return replace(design, weights=named)


def budget_round(c: Campaign, design: Design, max_minutes: float, rounds: int | None = None) -> int:
    """The last round an 'auto' campaign would have run: rounds start while the clock is
    under the budget (the settling round and loads included in the campaign's clock).
    ``rounds``: the look at that round whatever the clock says."""
    if rounds is not None:
        return min(rounds, len(c.rounds()))
    last = 0
    for r in c.rounds():
        if r > design.last_look:
            break
        last = r
        if c.seconds[r] >= max_minutes * 60:
            break
    return last


def replay(
    c: Campaign,
    design: Design,
    max_minutes: float,
    slow: dict[str, float],
    rounds: int | None = None,
) -> tuple[dict, int]:
    """The decisions the default design gives on this campaign's rounds (b slowed by
    ``slow[measurement]``), as an 'auto' campaign with the default budget would."""
    n = budget_round(c, design, max_minutes, rounds)
    d = design.at_budget(n) if n < design.last_look else design
    values = {}
    # measurements the plan only describes (pg_test_fsync, the load) are outside the
    # family: keyed here by the CSV's "workload label metric" name, not (workload, label)
    descriptive = {w for w, _ in design.descriptive} | {"pgbench-init"}
    for m, by_target in c.values.items():
        if m.split()[0] in descriptive:
            continue
        f = slow.get(m, 0.0)
        higher = HIGHER_IS_BETTER.get(m.split()[-1], True)
        values[(m, "")] = {
            t: {
                r: (v * (1 - f) if higher else v / (1 - f)) if t == "b" else v
                for r, v in rounds.items()
                if r <= n
            }
            for t, rounds in by_target.items()
        }
    return decide(headline_family(values, sorted({t for v in c.values.values() for t in v})), d), n


def paired_sd(c: Campaign, m: str, a: str = "a", b: str = "b") -> float | None:
    x, y = c.values[m].get(a, {}), c.values[m].get(b, {})
    d = [math.log(y[r] / x[r]) for r in sorted(x.keys() & y.keys())]
    return float(np.std(d, ddof=1)) if len(d) >= 3 else None


def _minute(c: Campaign, decision) -> float | None:
    return c.seconds[decision.at_round] / 60 if decision.at_round in c.seconds else None


def pooled_sd(c: Campaign, m: str) -> float | None:
    """The per-round paired sd of every pair of identical targets, pooled (rms)."""
    ts = identical(c, m)
    sds = [paired_sd(c, m, a, b) for i, a in enumerate(ts) for b in ts[i + 1 :]]
    sds = [x for x in sds if x]
    return float(np.sqrt(np.mean(np.square(sds)))) if sds else None


def analyse(
    paths: list[Path],
    plan: str = "quick",
    margin: float | None = None,
    quiet: float | None = None,
    current: bool = False,
    to_end: bool = False,
    rounds: int | None = None,
) -> None:
    """``to_end``: a campaign that ended before the plan's budget counts too, its last
    look at its last round (fewer rounds than the budget allows: a lower bound on power).
    ``rounds``: the one look at that round (campaigns with at least that many)."""
    design, minutes = plan_design(plan)
    if margin is not None:  # another equivalence margin than the plan's, to compare
        design = replace(design, margin=margin)
    # a campaign counts for a plan only if it ran as long as that plan's budget would
    campaigns = [
        c
        for c in load(paths)
        if len(identical(c, TPS)) >= 2
        and (
            len(c.rounds()) >= rounds
            if rounds
            else (
                max(c.seconds.values(), default=0) >= minutes * 60
                or len(c.rounds()) >= design.last_look
                or to_end
            )
        )
    ]
    if quiet is not None:
        campaigns = [c for c in campaigns if c.other_cpu and np.mean(c.other_cpu) <= quiet]
    if current:
        campaigns = [c for c in campaigns if current_shape(c)]
    print(
        f"{len(campaigns)} independent campaigns with two or more identical targets that "
        f"ran {plan}'s budget; design: looks after rounds {list(design.planned_looks())}, "
        f"alpha {design.alpha}, claims from ±{design.noise:.0%}, equivalence within "
        f"±{design.equivalence:.0%}, budget {minutes:g} min"
        + (
            f"; REPLAYED WITH THE LOOK AT ROUND {rounds}, not at the campaigns' clock"
            if rounds
            else ""
        )
    )
    aa_false = aa_equiv_all = aa_equiv_any = 0
    rounds_run = []
    for c in campaigns:
        decisions, n = replay(c, design, minutes, {}, rounds)
        rounds_run.append(n)
        same = [k for k in decisions if k[2] in IDENTICAL and k[3] in IDENTICAL]
        false = [k for k in same if decisions[k].outcome in (HIGHER, LOWER)]
        tps_pairs = [k for k in same if k[0] == TPS]
        equivalent = [k for k in tps_pairs if decisions[k].outcome == EQUIVALENT]
        aa_false += bool(false)
        aa_equiv_all += bool(tps_pairs) and len(equivalent) == len(tps_pairs)
        aa_equiv_any += bool(equivalent)
        sd = {m.split()[-1]: pooled_sd(c, m) for m in c.values}
        others = f"{np.mean(c.other_cpu):.0%}" if c.other_cpu else "not recorded"
        print(
            f"  {c.name} {c.remedy}: {len(c.rounds())} rounds, {n} within the budget "
            f"({c.seconds.get(n, 0) / 60:.1f} min); paired sd "
            f"{json.dumps({k: round(v, 3) for k, v in sd.items() if v})}; others' CPU "
            f"{others}; false claims {len(false)}; tps pairs equivalent "
            f"{len(equivalent)} of {len(tps_pairs)}"
        )
    k = len(campaigns)
    print(
        json.dumps(
            {
                "campaigns": k,
                "aa_false_claim": f"{aa_false} of {k}",
                "aa_tps_all_pairs_equivalent": f"{aa_equiv_all} of {k}",
                "aa_tps_some_pair_equivalent": f"{aa_equiv_any} of {k}",
                "rounds_within_budget": rounds_run,
            }
        )
    )
    # power on real noise: b's tps slowed by d (or its fio p99 raised by d) on top of the
    # campaign's real values; decided worse than a, and than both twins?
    for m in (TPS, FIO_P99):
        for d in (0.05, 0.10, 0.15, 0.20):
            hit = both = 0
            at: list[float] = []
            for c in campaigns:
                if m not in c.values:
                    continue
                decisions, _ = replay(c, design, minutes, {m: d}, rounds)
                x = decisions.get((m, "", "a", "b"))
                y = decisions.get((m, "", "b", "c"))
                # worse: b's tps below a's (b/a lower), b's latency above (b/a higher)
                worse, better = (
                    (LOWER, HIGHER) if HIGHER_IS_BETTER[m.split()[-1]] else (HIGHER, LOWER)
                )
                if x is not None and x.outcome == worse:
                    hit += 1
                    at.append(round(_minute(c, x) or 0, 1))
                    both += y is not None and y.outcome == better
            n_m = sum(m in c.values for c in campaigns)
            print(
                json.dumps(
                    {
                        "measurement": m.split()[-1],
                        "slowdown": d,
                        "b_decided_worse_than_a": f"{hit} of {n_m}",
                        "and_than_c": f"{both} of {n_m}",
                        "minutes_at_decision": sorted(at),
                    }
                )
            )


# --- the calibrated simulation -----------------------------------------------------------
def fit(campaigns: list[Campaign]) -> dict:
    """Per measurement: each campaign's paired sd (``pooled_sd``), their median and the
    sd of their logs."""
    sds: dict[str, list[float]] = defaultdict(list)
    for c in campaigns:
        for m in c.values:
            if (sd := pooled_sd(c, m)) is not None:
                sds[m].append(sd)
    return {
        m: {
            "campaigns": len(v),
            "median_sd": float(np.median(v)),
            "log_spread": float(np.std(np.log(v), ddof=1)) if len(v) > 1 else 0.0,
        }
        for m, v in sds.items()
    }


def shape(c: Campaign) -> str:
    """The default plan's shape a campaign was collected with: "2026-11-27" no
    pg_test_fsync; "2026-11-26" pg_test_fsync once, in round 1; "before" pg_test_fsync in
    rounds 0-3 (~2.5 minutes fewer rounds in the budget). The rounds after the first are
    the same in the last two: only round 1's clock differs."""
    fsync = [m for m in c.values if m.split()[0] == "fsync"]
    if not c.other_cpu or FIO_P99 not in c.values:  # bench_noise.py's: tps only
        return "before"
    if not fsync:
        return "2026-11-27"
    once = all(max(len(rounds) for rounds in c.values[m].values()) <= 1 for m in fsync)
    return "2026-11-26" if once else "before"


def current_shape(c: Campaign) -> bool:
    """The default plan's rounds as they are (the last two shapes)."""
    return shape(c) != "before"


def fit_clock(campaigns: list[Campaign]) -> tuple[float, float]:
    """Seconds to the end of round 1 (settling round, loads) and per round after it:
    medians over the campaigns of the newest shape (per round: of both current shapes)."""
    firsts: dict[str, list[float]] = defaultdict(list)
    pers = []
    for c in campaigns:
        r = c.rounds()
        if not current_shape(c) or len(r) < 3:
            continue
        firsts[shape(c)].append(c.seconds[r[0]])
        pers.append((c.seconds[r[-1]] - c.seconds[r[0]]) / (len(r) - 1))
    if not pers:  # none measured yet: make demo's shape before the plan changed
        return 225.0, 33.0
    newest = firsts["2026-11-27"] or firsts["2026-11-26"]
    return float(np.median(newest)), float(np.median(pers))


def simulated_campaign(
    rng,
    design: Design,
    noise: dict,
    effects: dict,
    max_minutes: float,
    clock: tuple[float, float],
    tails: int | None = None,
    fixed: int | None = None,
) -> tuple[dict, int]:
    """``fixed``: that many rounds and the one look there, whatever the clock."""
    first, per = clock
    rounds = fixed or 0
    if fixed:
        design = replace(
            design, looks=(fixed,), last_look=fixed, first_look=min(design.first_look, fixed)
        )
    while not fixed and rounds < design.last_look:  # rounds start while under the budget
        if rounds and (first + per * (rounds - 1)) * rng.normal(1, 0.02) >= max_minutes * 60:
            break
        rounds += 1
    d = design.at_budget(rounds) if rounds < design.last_look else design
    values = {}
    for m, fit_m in noise.items():
        if "range" in fit_m:  # given as a range: one draw per campaign, uniform
            sd = rng.uniform(*fit_m["range"])
        else:
            sd = fit_m["median_sd"] * math.exp(rng.normal(0, fit_m["log_spread"]))
        for t in TARGETS:
            e = (
                rng.standard_t(tails, rounds) * math.sqrt((tails - 2) / tails)
                if tails
                else rng.normal(0, 1, rounds)
            )
            level = e * sd / math.sqrt(2) + effects.get((m, t), 0.0)
            values.setdefault((m, ""), {})[t] = {
                r + 1: 1000 * math.exp(level[r]) for r in range(rounds)
            }
    return decide(headline_family(values, TARGETS), d), rounds


def simulate(
    paths: list[Path],
    n: int,
    sd: float | None = None,
    spread: float = 0.12,
    sd_range: list[float] | None = None,
    quiet: float | None = None,
    plans: tuple[str, ...] = ("quick", "thorough"),
    rounds: int | None = None,
    clock: tuple[float, float] | None = None,
    current: bool = False,
) -> None:
    """Each built-in plan's design on simulated campaigns calibrated on the real ones:
    A/A false claims (normal and t(4) tails), A/A equivalence of every tps pair, and
    power for c slower by the effect the plan is for (quick 10%, thorough 5%; also the
    other's), decided worse than a, and than both a and b."""
    campaigns = load(paths)
    if quiet is not None:  # only campaigns whose runs had little of others' CPU
        campaigns = [c for c in campaigns if c.other_cpu and np.mean(c.other_cpu) <= quiet]
    if current:  # only the default plan's present rounds
        campaigns = [c for c in campaigns if current_shape(c)]
    noise = fit(campaigns)
    if sd is not None:  # the tps noise given, not fitted
        noise[TPS] = {"campaigns": 0, "median_sd": sd, "log_spread": spread}
    if sd_range:
        noise[TPS] = {"campaigns": 0, "range": tuple(sd_range)}
    noise = {m: v for m, v in noise.items() if m in (TPS, FIO_P99)}
    noise.setdefault(TPS, {"campaigns": 0, "median_sd": 0.09, "log_spread": 0.12})
    noise.setdefault(FIO_P99, {"campaigns": 0, "median_sd": 0.094, "log_spread": 0.12})
    clock = clock or fit_clock(campaigns)
    print(
        "SIMULATION calibrated on "
        + json.dumps(
            {
                m.split()[-1]: {k: round(v, 3) if isinstance(v, float) else v for k, v in f.items()}
                for m, f in noise.items()
            }
        )
        + f"; clock: round 1 ends at {clock[0]:.0f} s, then {clock[1]:.1f} s a round; "
        f"{n} simulated campaigns per row"
    )
    first_end, per = clock
    for plan in plans:
        design, minutes = plan_design(plan)
        rng = np.random.default_rng(1)
        false = false_t4 = equiv = pairs_equiv = 0
        power: dict[float, list[int]] = {0.05: [0, 0], 0.10: [0, 0]}
        ran = []
        for _ in range(n):
            aa, k = simulated_campaign(rng, design, noise, {}, minutes, clock, fixed=rounds)
            ran.append(k)
            false += any(x.outcome in (HIGHER, LOWER) for x in aa.values())
            tps = [x.outcome == EQUIVALENT for key, x in aa.items() if key[0] == TPS]
            equiv += all(tps)
            pairs_equiv += sum(tps)
            aa, _ = simulated_campaign(
                rng, design, noise, {}, minutes, clock, tails=4, fixed=rounds
            )
            false_t4 += any(x.outcome in (HIGHER, LOWER) for x in aa.values())
            for d, hits in power.items():
                dec, _ = simulated_campaign(
                    rng, design, noise, {(TPS, "c"): math.log(1 - d)}, minutes, clock, fixed=rounds
                )
                hits[0] += dec[(TPS, "", "a", "c")].outcome == LOWER
                hits[1] += (
                    dec[(TPS, "", "a", "c")].outcome == LOWER
                    and dec[(TPS, "", "b", "c")].outcome == LOWER
                )
        last = first_end + per * (int(np.median(ran)) - 1)
        print(
            json.dumps(
                {
                    "plan": plan,
                    "budget_min": minutes,
                    "rounds": int(np.median(ran)),
                    "fixed_rounds": bool(rounds),
                    "minutes_at_decision": round(last / 60, 1),
                    "aa_false_claim": round(false / n, 4),
                    "aa_false_claim_t4_tails": round(false_t4 / n, 4),
                    "aa_all_tps_pairs_equivalent": round(equiv / n, 4),
                    "aa_tps_pair_equivalent": round(pairs_equiv / (3 * n), 4),
                    **{f"power_{d:.0%}_c_vs_a": round(h[0] / n, 4) for d, h in power.items()},
                    **{f"power_{d:.0%}_c_vs_a_and_b": round(h[1] / n, 4) for d, h in power.items()},
                    "campaigns": n,
                }
            ),
            flush=True,
        )


def joint(n: int, sd: float, rounds: int, plan: str) -> None:
    """Any false claim of any kind, per configuration of c (see the module docstring)."""
    design, _ = plan_design(plan)
    design = replace(design, looks=(rounds,), last_look=rounds, first_look=rounds)
    margin = design.equivalence
    noise = {TPS: {"range": (sd, sd)}, FIO_P99: {"range": (sd, sd)}}
    boundary = math.log1p(margin)
    cases = {
        "A/A (all identical)": 0.0,
        f"c at +{margin:.0%} (the margin's upper boundary)": boundary,
        f"c at ×1/{1 + margin:g} (the lower boundary)": -boundary,
        "c 10% slower (×0.90)": math.log(0.90),
    }
    print(
        f"SIMULATION: plan {plan}, one look at round {rounds}, paired sd {sd:.3f} a round, "
        f"margin ±{margin:.0%}, threshold {design.noise:.0%}, alpha {design.alpha}, "
        f"{len(TARGETS) * (len(TARGETS) - 1)} comparisons; {n} campaigns per row"
    )
    for name, effect in cases.items():
        rng = np.random.default_rng(11)
        false = {None: 0, 4: 0}
        for tails in (None, 4):
            for _ in range(n):
                dec, _ = simulated_campaign(
                    rng, design, noise, {(TPS, "c"): effect}, 1e9, (0.0, 1.0), tails, rounds
                )
                false[tails] += any(
                    _false(key, d.outcome, effect, margin) for key, d in dec.items()
                )
        print(
            json.dumps(
                {
                    "case": name,
                    "any_false_claim": round(false[None] / n, 4),
                    "any_false_claim_t4_tails": round(false[4] / n, 4),
                    "campaigns": n,
                }
            ),
            flush=True,
        )


def looks(n: int) -> None:
    """When c's 10% slowdown is decided, per design of looks and spending."""
    designs = [((16,), 2.0), ((6, 8, 16), 3.0), ((6, 8, 16), 4.0), ((6, 8, 12, 16), 3.0)]
    print(
        f"SIMULATION: three targets, tps and fio p99 (paired sd 46%), margin ±10%, "
        f"threshold 3%, c 10% slower on tps; {n} campaigns per row, one decided at each look"
    )
    for rounds, rho in designs:
        design = replace(Design.planned(0.05, 0.03, rounds, rho=rho), margin=0.10)
        for sd, effect in (
            (0.04, math.log(0.9)),
            (0.097, math.log(0.9)),
            (0.117, math.log(0.9)),
            (0.097, 0.0),
        ):
            rng = np.random.default_rng(3)
            noise = {TPS: {"range": (sd, sd)}, FIO_P99: {"range": (0.46, 0.46)}}
            when: list[int] = []
            false = 0
            for _ in range(n):
                # no time limit: the rounds run to the last look, every look made
                dec, _ = simulated_campaign(
                    rng, design, noise, {(TPS, "c"): effect}, 1e9, (0.0, 1.0)
                )
                if effect:
                    d = dec[(TPS, "", "a", "c")]
                    if d.outcome == LOWER and d.at_round is not None:
                        when.append(d.at_round)
                else:
                    false += any(x.outcome in (HIGHER, LOWER) for x in dec.values())
            row = {"looks": list(rounds), "spending": rho, "paired_sd": sd}
            if effect:
                row |= {f"decided_by_{r}": round(sum(w <= r for w in when) / n, 3) for r in rounds}
            else:
                row["aa_false_claim"] = round(false / n, 4)
            print(json.dumps(row | {"campaigns": n}), flush=True)


def weights(n: int, ratios: list[float]) -> None:
    """The default plan's design with TPC-B tps weighing ``ratio`` against fio p99's 1:
    power at 10% on tps (quiet, noisy, busy), at 45% on fio p99, A/A false claims."""
    base, _ = plan_design("quick")
    a_c, b_c = (TPS, "", "a", "c"), (TPS, "", "b", "c")
    p99_a_c = (FIO_P99, "", "a", "c")
    print(
        f"SIMULATION: the quick plan's design (looks {list(base.planned_looks())}, spending "
        f"{base.rho:g}, margin ±{base.equivalence:.0%}), three targets, TPC-B tps and fio p99 "
        f"(paired sd 46%); {n} campaigns per figure"
    )
    cases = [  # name, tps sd, effects, clock (first, per) and budget minutes, tails
        ("quiet", 0.04, {(TPS, "c"): math.log(0.9)}, None, None),
        ("noisy", 0.097, {(TPS, "c"): math.log(0.9)}, None, None),
        ("noisier", 0.117, {(TPS, "c"): math.log(0.9)}, None, None),
        # beside the neighbour: undisturbed rounds' median paired sd, the budget's last
        # look at round 10 (bench_busy.py campaigns ran 9-11 rounds)
        ("busy", 0.106, {(TPS, "c"): math.log(0.9)}, ((60.0, 60.0), 9.5), None),
        ("p99", 0.097, {(FIO_P99, "c"): math.log(1.45)}, None, None),
        ("aa", 0.097, {}, None, None),
        ("aa-t4", 0.097, {}, None, 4),
    ]
    for ratio in ratios:
        design = with_weights(base, {"pgbench": ratio, "fsync-latency": 1.0})
        row: dict = {"tps_weight": ratio, "fio_p99_weight": 1.0, "campaigns": n}
        for name, sd, effects, budget, tails in cases:
            rng = np.random.default_rng(11)
            noise = {TPS: {"range": (sd, sd)}, FIO_P99: {"range": (0.46, 0.46)}}
            clock, minutes = budget or ((0.0, 1.0), 1e9)
            when, both, false = [], 0, 0
            for _ in range(n):
                dec, _ = simulated_campaign(rng, design, noise, effects, minutes, clock, tails)
                if name.startswith("aa"):
                    false += any(x.outcome in (HIGHER, LOWER) for x in dec.values())
                    continue
                key, worse = (p99_a_c, HIGHER) if name == "p99" else (a_c, LOWER)
                d = dec[key]
                if d.outcome == worse and d.at_round is not None:
                    when.append(d.at_round)
                    both += name != "p99" and dec[b_c].outcome == LOWER
            if name.startswith("aa"):
                row[f"{name}_false_claims"] = round(false / n, 4)
            elif name == "quiet":
                for r in base.planned_looks():
                    row[f"quiet_by_{r}"] = round(sum(w <= r for w in when) / n, 3)
            else:
                row[f"{name}_c_vs_a"] = round(len(when) / n, 3)
            if name in ("quiet", "noisy", "noisier", "busy"):
                row[f"{name}_c_vs_both"] = round(both / n, 3)
        print(json.dumps(row), flush=True)


def _false(key: tuple, outcome: str, effect: float, margin: float, tps: str = TPS) -> bool:
    """Whether a decision on ``key`` (measurement, label, a, b) is a false claim when c
    sits at ``effect`` (log ratio against a and b) on ``tps`` and everything else is
    equal."""
    m, _, a, b = key
    true = effect if m == tps and b == "c" else -effect if m == tps and a == "c" else 0.0
    if outcome == EQUIVALENT:
        return abs(true) >= math.log1p(margin) - 1e-12
    if outcome in (HIGHER, LOWER):
        return true == 0.0 or (outcome == HIGHER) != (true > 0)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("results", type=Path)
    c.add_argument("--rounds", type=int, default=12)
    e = sub.add_parser("extract")
    e.add_argument("results", type=Path, nargs="+")
    j = sub.add_parser("joint")
    j.add_argument("--campaigns", type=int, default=4000)
    j.add_argument("--sd", type=float, default=0.097, help="paired sd a round, both measurements")
    j.add_argument("--rounds", type=int, default=16)
    j.add_argument("--plan", default="quick")
    lk = sub.add_parser("looks")
    lk.add_argument("--campaigns", type=int, default=1000)
    w = sub.add_parser("weights")
    w.add_argument("--campaigns", type=int, default=2000)
    w.add_argument("--ratios", type=float, nargs="+", default=[1, 2, 4, 9])
    for name in ("analyse", "simulate"):
        a = sub.add_parser(name)
        a.add_argument("csv", type=Path, nargs="*")
        a.add_argument(
            "--plan",
            default="quick",
            help="the built-in plan whose design and budget are replayed (quick, thorough)",
        )
        a.add_argument(
            "--margin",
            type=float,
            help="an equivalence margin other than the plan's (0.05 for ±5%%)",
        )
        a.add_argument(
            "--quiet",
            type=float,
            help="only campaigns whose runs' mean share "
            "of others' CPU was at most this (e.g. 0.05)",
        )
        a.add_argument(
            "--current",
            action="store_true",
            help="only campaigns of the "
            "default plan's present rounds (pg_test_fsync once or not at all)",
        )
        a.add_argument(
            "--rounds",
            type=int,
            help="the one look at this round, not at the "
            "round the budget gives on the clock (simulate: the --plan only)",
        )
        a.add_argument(
            "--to-end",
            action="store_true",
            help="campaigns shorter than the budget too, decided at their last round",
        )
        if name == "simulate":
            a.add_argument("--campaigns", type=int, default=2000)
            a.add_argument(
                "--sd",
                type=float,
                help="tps paired sd per round (median), instead of the campaigns' fit",
            )
            a.add_argument(
                "--spread",
                type=float,
                default=0.12,
                help="with --sd: its sd between campaigns, log scale",
            )
            a.add_argument(
                "--sd-range",
                type=float,
                nargs=2,
                metavar=("LOW", "HIGH"),
                help="tps paired sd uniform in LOW..HIGH, one draw per campaign",
            )
            a.add_argument(
                "--clock",
                type=float,
                nargs=2,
                metavar=("FIRST", "PER"),
                help="seconds to round 1's end and per round, instead of the fit",
            )
            a.add_argument(
                "--all-plans",
                action="store_true",
                help="quick and thorough (the default without --rounds)",
            )

    args = parser.parse_args()
    if args.command == "collect":
        collect(args.results, args.rounds)
    elif args.command == "extract":
        for d in args.results:
            extract(d)
    elif args.command == "joint":
        joint(args.campaigns, args.sd, args.rounds, args.plan)
    elif args.command == "looks":
        looks(args.campaigns)
    elif args.command == "weights":
        weights(args.campaigns, args.ratios)
    else:
        paths = args.csv or sorted(DATA.glob("*.csv"))
        if args.command == "analyse":
            analyse(
                paths, args.plan, args.margin, args.quiet, args.current, args.to_end, args.rounds
            )
        else:
            plans = (
                (args.plan,)
                if args.rounds or not args.all_plans and args.plan != "quick"
                else ("quick", "thorough")
            )
            simulate(
                paths,
                args.campaigns,
                args.sd,
                args.spread,
                args.sd_range,
                args.quiet,
                plans,
                args.rounds,
                tuple(args.clock) if args.clock else None,
                args.current,
            )


if __name__ == "__main__":
    main()
