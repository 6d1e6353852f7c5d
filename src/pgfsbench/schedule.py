"""Which target runs which measurement in which round: repetitions, interleaved.

Pure bookkeeping, no I/O, so the order and the stopping rule are testable
without a filesystem. A *cell* here is target × measurement (workload type +
label); its headline metric decides when 'auto' repetitions may stop.
"""

from __future__ import annotations

import math
import random
import secrets
import time
from dataclasses import dataclass, field

from pgfsbench.analysis.stats import summarize
from pgfsbench.plan.model import Repetitions
from pgfsbench.workloads.kind import WorkloadBase

Cell = tuple[str, str, str]  # target, workload type, label


@dataclass
class Stop:
    reason: str  # "count", "ci", "max rounds", "time cap", "failed"
    n: int
    half_width: float | None = None

    def describe(self, ci_width: float) -> str:
        hw = "" if self.half_width is None else f", 95% CI ±{self.half_width:.1%}"
        return {
            "count": f"fixed count reached (n={self.n}{hw})",
            "ci": f"CI within ±{ci_width:.0%} at n={self.n}{hw}",
            "max rounds": f"max rounds reached before ±{ci_width:.0%} (n={self.n}{hw})",
            "time cap": f"time cap reached before ±{ci_width:.0%} (n={self.n}{hw})",
            "failed": f"stopped: its runs failed (n={self.n} ok)",
        }.get(self.reason, self.reason)


@dataclass
class Schedule:
    reps: Repetitions
    targets: list[str]
    measurements: list[WorkloadBase]
    seed: int = 0
    started: float = field(default_factory=time.monotonic)
    visits: list[tuple[int, str]] = field(default_factory=list)
    samples: dict[Cell, list[float]] = field(default_factory=dict)
    failures: dict[Cell, int] = field(default_factory=dict)
    no_headline: dict[Cell, int] = field(default_factory=dict)  # ok runs with nothing to judge by
    stops: dict[Cell, Stop] = field(default_factory=dict)
    loaded: dict[str, int | None] = field(default_factory=dict)  # target → its tables' init

    def __post_init__(self) -> None:
        if self.reps.order == "random":
            self.seed = self.reps.seed if self.reps.seed is not None else secrets.randbelow(2**31)
        self._rng = random.Random(self.seed)

    @property
    def auto(self) -> bool:
        return self.reps.count == "auto"

    def max_rounds(self) -> int:
        return max(self.reps.fixed(m) or self.reps.max for m in self.measurements)

    # --- what runs -------------------------------------------------------------
    def order(self, round_no: int, active: list[str]) -> list[str]:
        """Targets of one round: rotated one step per round, or shuffled (seeded)."""
        names = [t for t in self.targets if t in active]
        if self.reps.order == "random":
            self._rng.shuffle(names)
        elif names:
            k = (round_no - 1) % len(names)
            names = names[k:] + names[:k]
        self.visits += [(round_no, n) for n in names]
        return names

    def wanted(self, target: str, round_no: int) -> list[WorkloadBase]:
        """The measurements this target still needs in this round."""
        out = []
        for m in self.measurements:
            cell = (target, m.type, m.label())
            if cell in self.stops:
                continue
            fixed = self.reps.fixed(m)
            if fixed is not None and round_no > fixed:
                continue
            out.append(m)
        return out

    def position(self, m: WorkloadBase) -> int:
        """Where m stands in the plan (by identity: two measurements may compare equal)."""
        return next(i for i, x in enumerate(self.measurements) if x is m)

    def visit(self, target: str, round_no: int) -> list[WorkloadBase]:
        """What a visit runs: the wanted measurements, in plan order.

        A pgbench measures the tables of the nearest pgbench-init before it in
        the plan. When the target does not hold those tables (a fresh
        filesystem, or a reused one where another init ran since), that init
        runs again first.
        """
        wanted = self.wanted(target, round_no)
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
    def record(self, target: str, m: WorkloadBase, headline: float | None, ok: bool) -> None:
        cell = (target, m.type, m.label())
        if m.type == "pgbench-init":
            # Which tables the target now holds; a failed load leaves none usable.
            self.loaded[target] = self.position(m) if ok else None
        if ok and headline is not None and math.isfinite(headline):
            self.samples.setdefault(cell, []).append(headline)
        elif ok:
            self.no_headline[cell] = self.no_headline.get(cell, 0) + 1
        else:
            self.failures[cell] = self.failures.get(cell, 0) + 1

    def drop(self, target: str) -> None:
        """The target cannot be measured any more (provisioning failed): close its cells."""
        for m in self.measurements:
            cell = (target, m.type, m.label())
            self.stops.setdefault(cell, Stop("failed", len(self.samples.get(cell, []))))

    def end_round(self, round_no: int) -> None:
        """Close cells whose count is reached, or (auto) whose CI is narrow enough."""
        elapsed_min = (time.monotonic() - self.started) / 60
        for target in self.targets:
            for m in self.measurements:
                cell = (target, m.type, m.label())
                if cell in self.stops:
                    continue
                values = self.samples.get(cell, [])
                hw = summarize(values).half_width if len(values) >= 2 else None
                fixed = self.reps.fixed(m)
                if fixed is not None:
                    if round_no >= fixed:
                        self.stops[cell] = Stop("count", len(values), hw)
                elif self.failures.get(cell, 0) >= self.reps.min and not values:
                    self.stops[cell] = Stop("failed", 0)
                elif not values and self.no_headline.get(cell, 0) >= self.reps.min:
                    # Nothing to judge a CI by: stop at min, like a fixed count.
                    self.stops[cell] = Stop("count", self.no_headline[cell])
                elif (len(values) >= self.reps.min and hw is not None
                      and hw <= self.reps.ci_width):
                    # Counted in values, not rounds: a failed round adds no sample.
                    self.stops[cell] = Stop("ci", len(values), hw)
                elif round_no >= self.reps.max:
                    self.stops[cell] = Stop("max rounds", len(values), hw)
                elif elapsed_min >= self.reps.max_minutes:
                    self.stops[cell] = Stop("time cap", len(values), hw)

    def describe(self) -> dict:
        """What the results keep: the order, the seed, and why each cell stopped."""
        return {
            "count": self.reps.count,
            "order": self.reps.order,
            "seed": self.seed if self.reps.order == "random" else None,
            "fresh": self.reps.fresh,
            "ci_width": self.reps.ci_width if self.auto else None,
            "visits": [list(v) for v in self.visits],
            "stops": [{"target": t, "workload": w, "label": lbl, "n": s.n,
                       "half_width": s.half_width, "reason": s.reason,
                       "text": s.describe(self.reps.ci_width)}
                      for (t, w, lbl), s in self.stops.items()],
        }
