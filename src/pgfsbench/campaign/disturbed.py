"""The counted runs of the round in progress, for finding the disturbed ones at its end.

``analysis/disturbance.py`` has the rule (the machine's evidence, within the round);
``Campaign`` counts a disturbed run from the seconds the burst spared where it can
(``Disturbance.trimmed``), runs the other disturbed visits again while the schedule's
allowance lasts, then an 'auto' plan's budget (``Schedule.may_redo``), and keeps the
rest, marked and left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgfsbench.analysis.caveats.disturbance import Disturbance, judge_round
from pgfsbench.metrics import Metric
from pgfsbench.workloads.kind import WorkloadBase

# A visit is run again at most this often in its round: a target whose every visit is
# disturbed must not spend the allowance alone.
MOST_AGAIN = 2


@dataclass
class CountedRun:
    run_id: int
    workload: WorkloadBase
    metrics: list[Metric]


@dataclass
class RoundRuns:
    """The round's counted runs, by measurement then target: the latest ok run of each
    (a run again replaces the one it repeats)."""

    runs: dict[tuple[str, str], dict[str, CountedRun]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # targets in the order first visited

    def add(self, target: str, workload: WorkloadBase, run_id: int, metrics: list[Metric]) -> None:
        key = (workload.type, workload.label())
        self.runs.setdefault(key, {})[target] = CountedRun(run_id, workload, metrics)
        if target not in self.order:
            self.order.append(target)

    def latest(self, target: str, workload: WorkloadBase) -> CountedRun | None:
        return self.runs.get((workload.type, workload.label()), {}).get(target)

    def disturbed(self, trimmed: bool = False) -> dict[str, list[tuple[CountedRun, Disturbance]]]:
        """Target → its disturbed runs with their evidence, targets in visit order: those
        counted from the seconds the burst spared (``trimmed``) or the others."""
        found: dict[str, list[tuple[CountedRun, Disturbance]]] = {}
        for by_target in self.runs.values():
            judged = judge_round({t: r.metrics for t, r in by_target.items()})
            for target, d in judged.items():
                if d.trimmed == trimmed:
                    found.setdefault(target, []).append((by_target[target], d))
        return {t: found[t] for t in self.order if t in found}
