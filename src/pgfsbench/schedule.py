"""Which target runs which measurement in which round: repetitions, interleaved.

Pure bookkeeping, no I/O, so the order and the stopping rule are testable
without a filesystem. A *measurement* is a workload type + label; a *cell* is
target × measurement. A fixed count stops a measurement after N rounds. 'auto'
is a sequential design (``analysis/stats/sequential.py``): after every round the
headline comparisons are tested at the plan's looks (``[repetitions] looks``),
and a measurement goes on, on every target together, until all its comparisons
are decided or the budget (``max`` rounds, ``max_minutes``) runs out; the round
the time budget ends at is a last look with the alpha left. Stopping one target
while its peers go on would leave the remaining rounds unpaired, so a
measurement always stops for all. A measurement with its own fixed count in an
'auto' plan runs its rounds and is described, not tested: it stays out of the
verdict family.

Reused targets may first run a *settling round* (round 0): the first round after
a load runs slow, so it is run, stored as repetition 0, and not counted.
"""

from __future__ import annotations

import math
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from pgfsbench.analysis.stats.sequential import Decision, decide, headline_family
from pgfsbench.analysis.stats.stored_design import design_for
from pgfsbench.plan.design import Repetitions, Verdicts
from pgfsbench.workloads.kind import WorkloadBase

Cell = tuple[str, str, str]  # target, workload type, label
Key = tuple[str, str]  # workload type, label: one measurement

SETTLING = 0  # the round, and the stored repetition, of a settling run


@dataclass
class Stop:
    """Why a measurement (or a failed target's cells) stopped, after which round."""

    reason: str  # "count", "decided", "max rounds", "budget", "nothing to compare", "failed"
    round: int
    comparisons: int = 0  # between targets still running
    undecided: int = 0
    minutes: float = 0.0  # the budget, for its text
    # a busy campaign's budget: not reached, but another round at its pace would pass it
    ahead: bool = False

    def text(self, n: int | None = None) -> str:
        """Why it stopped; ``n``: the cell's counted runs, when it is about one cell."""
        runs = "" if n is None else f" (n={n})"
        open_ = f", {self.undecided} of {self.comparisons} comparisons undecided"
        return {
            "count": f"fixed count reached at round {self.round}{runs}",
            "decided": f"decided at round {self.round}: "
            f"{_plural(self.comparisons, 'comparison')}{runs}",
            "max rounds": f"max rounds: {self.round} reached{open_}{runs}",
            "budget": (
                f"budget: another round would end past {self.minutes:g} min, so round "
                f"{self.round} was the last{open_}{runs}"
                if self.ahead
                else f"budget: {self.minutes:g} min reached at round {self.round}{open_}{runs}"
            ),
            "nothing to compare": f"nothing to compare at round {self.round}: fewer than two "
            f"targets gave its headline{runs}",
            "failed": f"stopped at round {self.round}: the target failed{runs}",
        }.get(self.reason, self.reason)


def _plural(k: int, word: str) -> str:
    return f"{k} {word}" + ("" if k == 1 else "s")


@dataclass
class Schedule:
    reps: Repetitions
    targets: list[str]
    measurements: list[WorkloadBase]
    verdicts: Verdicts = field(default_factory=Verdicts)  # alpha and noise of the decisions
    seed: int | None = None  # random order: the plan's, a resumed campaign's, or chosen
    # time.monotonic as it is when the schedule is made (a test may replace it)
    clock: Callable[[], float] = field(default_factory=lambda: time.monotonic)
    # clock() when it is made; a resumed campaign's is moved back by the time it spent
    started: float = field(init=False)
    visits: list[tuple[int, str]] = field(default_factory=list)
    samples: dict[Cell, dict[int, float]] = field(default_factory=dict)  # round → headline
    no_headline: dict[Cell, int] = field(default_factory=dict)  # ok runs with nothing to judge by
    stops: dict[Key, Stop] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)  # target → the round it failed in
    decisions: dict = field(default_factory=dict)  # the latest look's, by comparison
    last_round: int = 0
    loaded: dict[str, int | None] = field(default_factory=dict)  # target → its tables' init
    resumes: list[dict] = field(default_factory=list)  # each resumption (campaign/resume.py)
    resettling: bool = False  # a resumed campaign's round 0: it settles re-made targets only
    reloads_uncounted: bool = False  # reused targets re-made on resume: a reload counts 0
    plan_sha256: str = ""  # the recorded plan's hash (campaign/resume.py checks it)
    # Seconds spent running disturbed visits again and waiting for quiet: on top of the
    # budget, at most reps.redo of it (analysis/disturbance.py)
    extra_s: float = 0.0
    # The same beyond that allowance, in an 'auto' plan: paid from its budget (fewer
    # rounds, each undisturbed), so the campaign still ends within budget + allowance
    from_budget_s: float = 0.0
    # The campaign's expected length (an 'auto' plan: its budget), which reps.redo is a
    # share of; None: the time spent measuring so far
    budget_s: float | None = None
    disturbed: list[dict] = field(default_factory=list)  # each disturbed run, as recorded
    waits: list[float] = field(default_factory=lambda: [0, 0.0, 0])  # count, seconds, quiet

    def __post_init__(self) -> None:
        if self.seed is None and self.reps.order == "random":
            self.seed = self.reps.seed if self.reps.seed is not None else secrets.randbelow(2**31)
        elif self.seed is None:
            self.seed = 0
        self._rng = random.Random(self.seed)
        self.started = self.clock()
        self.design = design_for(
            {
                "repetitions": self.reps.model_dump(mode="json"),
                "verdicts": self.verdicts.model_dump(mode="json"),
            }
        )
        if self.auto and not self.design.every_round:
            # As design_for reads the stored plan: fixed counts in 'auto' are described.
            self.design = replace(
                self.design,
                descriptive=frozenset(
                    (m.type, m.label()) for m in self.measurements if self.reps.fixed(m) is not None
                ),
            )
        self.settling = self.reps.settles(self.max_rounds())

    def measuring_s(self) -> float:
        """Seconds spent measuring so far: the campaign's, less the time spent running
        disturbed visits again (the budget counts these; ``extra_s`` the rest)."""
        return self.clock() - self.started - self.extra_s

    def redo_allowance_s(self) -> float:
        """The most seconds visits run again (and waits for quiet) may take: ``redo`` of
        the campaign's expected length (``budget_s``: an 'auto' plan's budget, a fixed
        count's rounds as estimated), else of the time spent measuring so far."""
        return self.reps.redo * (self.budget_s or self.measuring_s())

    def may_redo(self) -> bool:
        """Whether a disturbed visit may be run again now, and a run wait for quiet: while
        the allowance lasts, and after it (an 'auto' plan) while its budget does. A busy
        machine spends the budget on fewer, undisturbed rounds rather than on rounds
        whose disturbed runs would be left out anyway."""
        if self.reps.redo <= 0:
            return False
        if self.extra_s < self.redo_allowance_s():
            return True
        return self.auto and self.measuring_s() < self.reps.max_minutes * 60

    def spend(self, seconds: float) -> None:
        """Time run again or waited: in the allowance while it lasts (on top of the
        budget), then (an 'auto' plan) from the budget."""
        if not self.auto:
            self.extra_s += seconds
            return
        room = max(0.0, self.redo_allowance_s() - self.extra_s)
        self.extra_s += min(seconds, room)
        self.from_budget_s += max(0.0, seconds - room)

    def waited(self, seconds: float, quiet: bool) -> None:
        """A wait for quiet before a run (``spend``)."""
        self.spend(seconds)
        self.waits = [self.waits[0] + 1, self.waits[1] + seconds, self.waits[2] + quiet]

    def discount(self, target: str, m: WorkloadBase, round_no: int) -> None:
        """A disturbed run kept (not run again): its value is left out of the samples."""
        cell = (target, m.type, m.label())
        self.samples.get(cell, {}).pop(self.repetition(m, round_no), None)

    def trim(self, target: str, m: WorkloadBase, round_no: int, ratio: float) -> None:
        """A disturbed run counted from the seconds the burst spared: its headline times
        ``ratio`` (``Disturbance.clean_ratio``)."""
        samples = self.samples.get((target, m.type, m.label()), {})
        rep = self.repetition(m, round_no)
        if rep in samples:
            samples[rep] *= ratio

    @property
    def auto(self) -> bool:
        return self.reps.count == "auto"

    def max_rounds(self) -> int:
        return max(self.reps.fixed(m) or self.reps.max for m in self.measurements)

    @property
    def first_round(self) -> int:
        return SETTLING if self.settling else 1

    # --- what runs -------------------------------------------------------------
    def order(self, round_no: int, active: list[str], record: bool = True) -> list[str]:
        """Targets of one round: rotated one step per round, or shuffled (seeded).
        ``record=False`` only looks: the seeded sequence and the visits stay as they are."""
        names = [t for t in self.targets if t in active]
        if self.reps.order == "random":
            state = self._rng.getstate()
            self._rng.shuffle(names)
            if not record:
                self._rng.setstate(state)
        elif names:
            k = (round_no - 1) % len(names)
            names = names[k:] + names[:k]
        if record:
            self.visits += [(round_no, n) for n in names]
        return names

    def loads_once_in_settling(self, m: WorkloadBase) -> bool:
        """A load that runs once: its run in the settling round is the one that counts
        (the load is its own measurement, not disturbed by a load before it)."""
        return (
            self.settling
            and not self.resettling
            and m.type == "pgbench-init"
            and self.reps.fixed(m) == 1
        )

    @staticmethod
    def skips_settling(m: WorkloadBase) -> bool:
        """A measurement with its own count (in an 'auto' plan: described, not tested)
        is not what the settling round steadies: a run of it there would only spend the
        budget (pg_test_fsync: ~19 s a visit). A load keeps its run there."""
        return bool(m.repetitions) and m.type != "pgbench-init"

    def repetition(self, m: WorkloadBase, round_no: int) -> int:
        """The repetition a run of ``m`` in ``round_no`` is stored as (0: settling)."""
        if round_no == SETTLING:
            return 1 if self.loads_once_in_settling(m) else SETTLING
        if self.reloads_uncounted and (m.type, m.label()) in self.stops:
            # A resumed campaign re-made a reused target: the load it needs again is not
            # one of the measurement's counted runs (those completed before).
            return SETTLING
        return round_no

    def wanted(self, target: str, round_no: int) -> list[WorkloadBase]:
        """The measurements this target still needs in this round (the settling round
        runs everything round 1 would)."""
        if target in self.failed:
            return []
        out = []
        for m in self.measurements:
            if (m.type, m.label()) in self.stops:
                continue
            fixed = self.reps.fixed(m)
            if round_no >= 1 and fixed is not None and round_no > fixed:
                continue
            if round_no == 1 and self.loads_once_in_settling(m):
                continue  # counted in round 0
            if round_no == SETTLING and self.skips_settling(m):
                continue
            out.append(m)
        return out

    def position(self, m: WorkloadBase) -> int:
        """Where m stands in the plan (by identity: two measurements may compare equal)."""
        return next(i for i, x in enumerate(self.measurements) if x is m)

    def visit(
        self, target: str, round_no: int, only: list[WorkloadBase] | None = None
    ) -> list[WorkloadBase]:
        """What a visit runs: the wanted measurements (``only``: a disturbed visit's, run
        again), in plan order.

        A pgbench measures the tables of the nearest pgbench-init before it in
        the plan. When the target does not hold those tables (a fresh
        filesystem, or a reused one where another init ran since), that init
        runs again first.
        """
        wanted = self.wanted(target, round_no) if only is None else only
        held = None if self.reps.fresh else self.loaded.get(target)
        governing: int | None = None
        out = []
        for i, m in enumerate(self.measurements):
            is_wanted = any(m is w for w in wanted)
            if m.type == "pgbench-init":
                governing = i
                if is_wanted:
                    out.append(m)
                    held = i
            elif is_wanted:
                if m.type == "pgbench" and governing is not None and held != governing:
                    out.append(self.measurements[governing])
                    held = governing
                out.append(m)
        return out

    def active_targets(self, round_no: int) -> list[str]:
        return [t for t in self.targets if self.wanted(t, round_no)]

    # --- what was measured -----------------------------------------------------
    def record(
        self,
        target: str,
        m: WorkloadBase,
        headline: float | None,
        ok: bool,
        round_no: int = 1,
        counted: bool = True,
    ) -> None:
        """A run's headline; ``counted=False``: a load a visit run again needed (stored
        uncounted), which only says what tables the target holds."""
        cell = (target, m.type, m.label())
        if m.type == "pgbench-init":
            # Which tables the target now holds; a failed load leaves none usable.
            self.loaded[target] = self.position(m) if ok else None
        if not counted:
            return
        rep = self.repetition(m, round_no)
        if rep == SETTLING:
            return  # run, stored, but counted for nothing
        if ok and headline is not None and math.isfinite(headline):
            self.samples.setdefault(cell, {})[rep] = headline
        elif ok:
            self.no_headline[cell] = self.no_headline.get(cell, 0) + 1
        # A failed run adds nothing: its round is simply missing from the pairs.

    def restore_sample(
        self, target: str, m: WorkloadBase, repetition: int, headline: float | None
    ) -> None:
        """A counted run stored by an earlier session of a resumed campaign."""
        cell = (target, m.type, m.label())
        if headline is not None and math.isfinite(headline):
            self.samples.setdefault(cell, {})[repetition] = headline
        else:
            self.no_headline[cell] = self.no_headline.get(cell, 0) + 1

    def drop(self, target: str, round_no: int) -> None:
        """The target cannot be measured any more (provisioning failed)."""
        self.failed.setdefault(target, round_no)

    def end_round(self, round_no: int) -> None:
        """Stop the measurements whose count is reached, or (auto) whose comparisons are
        all decided, or whose budget ran out; each stops on every target at once."""
        if round_no == SETTLING:
            return
        self.last_round = round_no
        out_of_time = self._out_of_time(round_no)
        if self.auto and out_of_time and round_no < self.reps.max:
            # No round starts after this one: it is the last look, with the alpha left.
            self.design = self.design.at_budget(round_no)
        self.decisions = self._decide() if self.auto else {}
        live = [t for t in self.targets if t not in self.failed]
        for m in self.measurements:
            key = (m.type, m.label())
            if key in self.stops:
                continue
            fixed = self.reps.fixed(m)
            if fixed is not None:
                if round_no >= fixed:
                    self.stops[key] = Stop("count", round_no)
                continue
            mine = [
                d
                for k, d in self.decisions.items()
                if k[:2] == key and k[2] in live and k[3] in live
            ]
            k, undecided = len(mine), sum(not d.decided for d in mine)
            if round_no >= self.reps.min and not mine:
                self.stops[key] = Stop("nothing to compare", round_no)
            elif round_no >= self.reps.min and undecided == 0:
                self.stops[key] = Stop("decided", round_no, k)
            elif round_no >= self.reps.max:
                self.stops[key] = Stop("max rounds", round_no, k, undecided)
            elif out_of_time:
                # a busy campaign's: the budget and the allowance, the clock it kept to
                minutes = self.reps.max_minutes + (
                    round(self.redo_allowance_s() / 60, 1) if self.from_budget_s else 0
                )
                ahead = self.measuring_s() < self.reps.max_minutes * 60
                self.stops[key] = Stop("budget", round_no, k, undecided, minutes, ahead)

    def _out_of_time(self, round_no: int) -> bool:
        """No round starts after ``round_no``: the budget's measuring time is spent, or,
        while waits and runs again are paid from it (a busy machine), another round of
        the length they have had would end past budget and allowance together."""
        budget_s = self.reps.max_minutes * 60
        if self.measuring_s() >= budget_s:
            return True
        if not self.from_budget_s:
            return False
        spent = self.clock() - self.started
        per_round = spent / max(1, round_no - self.first_round + 1)
        return spent + per_round > budget_s + self.redo_allowance_s()

    def _decide(self) -> dict:
        """Every headline comparison's decision so far: the measurements 'auto' decides
        in one family, as the report decides them from the stored rounds."""
        values: dict[Key, dict[str, dict[int, float]]] = {}
        for (target, workload, label), by_round in self.samples.items():
            values.setdefault((workload, label), {})[target] = by_round
        return decide(headline_family(values, self.targets, self.design.descriptive), self.design)

    def describe(self) -> dict:
        """What the results keep: the order, the seed, the design, and why each
        measurement (and cell) stopped."""
        d = self.design
        return {
            "count": self.reps.count,
            "order": self.reps.order,
            "seed": self.seed if self.reps.order == "random" else None,
            **({"plan_sha256": self.plan_sha256} if self.plan_sha256 else {}),
            "fresh": self.reps.fresh,
            "settle": self.settling,  # round 0 ran (or would run) uncounted
            "design": (
                {
                    "alpha": d.alpha,
                    "noise": d.noise,
                    **({} if d.margin is None else {"equivalence": d.margin}),
                    "first_look": d.first_look,
                    "last_look": d.last_look,
                    "max_minutes": self.reps.max_minutes,
                    **(
                        {}
                        if d.every_round
                        else {
                            "looks": list(d.planned_looks()),
                            "final_look": d.final,
                            "descriptive": sorted(map(list, d.descriptive)),
                        }
                    ),
                }
                if self.auto
                else None
            ),
            "rounds": self.last_round,  # the last counted round that ended
            "visits": [list(v) for v in self.visits],
            "measurements": [
                {
                    "workload": w,
                    "label": lbl,
                    "reason": s.reason,
                    "round": s.round,
                    "comparisons": s.comparisons,
                    "undecided": s.undecided,
                    # a budget stop's clock and kind, so a resumed campaign words it alike
                    **({"minutes": s.minutes, "ahead": s.ahead} if s.reason == "budget" else {}),
                    "text": s.text(),
                }
                for (w, lbl), s in self.stops.items()
            ],
            "decisions": [_decision(k, v) for k, v in self.decisions.items()],
            "stops": self._cell_stops(),
            "redo": {
                "share": self.reps.redo,
                "spent_s": round(self.extra_s, 1),
                "allowance_s": round(self.redo_allowance_s(), 1),
                # the same beyond the allowance, paid from an 'auto' plan's budget
                "from_budget_s": round(self.from_budget_s, 1),
                # waits for quiet before a run (campaign/quiet.py): how many, how long in
                # all, how many ended quiet; their time is in spent_s and from_budget_s
                "waits": int(self.waits[0]),
                "waited_s": round(self.waits[1], 1),
                "waits_quiet": int(self.waits[2]),
                "disturbed": self.disturbed,
            },
            **({"resumes": self.resumes} if self.resumes else {}),
        }

    def _cell_stops(self) -> list[dict]:
        """Per cell (target × measurement), as the report lists why each stopped."""
        out = []
        for target in self.targets:
            for m in self.measurements:
                cell = (target, m.type, m.label())
                stop = self.stops.get(cell[1:])
                if target in self.failed:
                    stop = Stop("failed", self.failed[target])
                if stop is None:
                    continue
                n = len(self.samples.get(cell, {})) or self.no_headline.get(cell, 0)
                out.append(
                    {
                        "target": target,
                        "workload": m.type,
                        "label": m.label(),
                        "n": n,
                        "round": stop.round,
                        "reason": stop.reason,
                        "text": stop.text(n),
                    }
                )
        return out


def _decision(key: tuple, d: Decision) -> dict:
    workload, label, a, b = key
    return {
        "workload": workload,
        "label": label,
        "a": a,
        "b": b,
        "outcome": d.outcome,
        "at_round": d.at_round,
        "n": d.paired.n,
    }
