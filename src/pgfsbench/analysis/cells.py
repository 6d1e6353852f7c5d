"""Samples per cell: one cell is a target × workload × measurement (label) × metric.

With repetitions, a cell holds one value per round; everything statistical
(medians, confidence intervals, verdicts, chart whiskers) starts here. Each
value keeps its round, so two targets measured in the same rounds of the same
campaign can be compared within rounds (``analysis/stats/paired.py``). Repetition 0
is a settling round (a reused target's first, uncounted visit): counted so the
report can show it ran, never a sample. A run disturbed by someone else's load
(``disturbance.py``) is run again in its round ('redone'), or kept: counted from the
seconds the burst spared where it can be (its headline times ``clean_ratio``, its other
figures left out: ``trimmed``), else left out; each is counted per cell so every
output can say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from pgfsbench.analysis.caveats.disturbance import disturbed_runs
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.store.read import Campaign


@dataclass(frozen=True)
class CellKey:
    target: str
    workload: str
    label: str  # the measurement within a sweep ("clients=8"), or ""
    metric: str


@dataclass
class Samples:
    unit: str
    higher_is_better: bool | None
    note: str = ""
    values: list[float] = field(default_factory=list)  # ok runs, in round order
    rounds: list[int] = field(default_factory=list)  # the round of each value
    block: str = ""  # the campaign the rounds belong to: rounds pair only within one
    settling: int = 0  # ok runs of the settling round (repetition 0), left out
    unsupported: int = 0  # runs where the tool said the method does not exist here
    failed: int = 0  # runs of this measurement that failed (no value at all)
    redone: int = 0  # runs disturbed by others' load and run again in their round
    disturbed: int = 0  # runs disturbed and kept (not run again): left out
    trimmed: int = 0  # runs disturbed in part: counted from the seconds the burst spared
    params: dict = field(default_factory=dict)  # of the first run: sweeps' x values


def collect(campaign: Campaign) -> dict[CellKey, Samples]:
    """Every metric's values grouped by cell, in first-seen order."""
    cells: dict[CellKey, Samples] = {}
    by_name: dict[tuple[str, str, str, str], Samples] = {}
    failed: dict[tuple[str, str, str], int] = {}
    redone: dict[tuple[str, str, str], int] = {}
    # Disturbed by others' load, judged within its round: kept, never a sample.
    left_out = disturbed_runs(campaign.runs)
    for run in sorted(campaign.runs, key=lambda r: (r.repetition, r.id)):
        if run.status == "superseded":  # run again when the campaign was resumed
            continue
        if run.status == "redone":  # disturbed, and run again in its round
            key3 = (run.target, run.workload, run.label)
            redone[key3] = redone.get(key3, 0) + 1
            continue
        if run.status != "ok":
            if run.repetition != 0:  # a failed settling visit costs no sample
                key3 = (run.target, run.workload, run.label)
                failed[key3] = failed.get(key3, 0) + 1
            continue
        trim = left_out.get(run.id)
        headline = (
            headline_metric(run.workload, run.params, [m.name for m in run.metrics])
            if trim is not None and trim.trimmed
            else None
        )
        for m in run.metrics:
            # Looked up by a plain tuple: a CellKey and a Samples per metric of every
            # run (thousands) only to be thrown away cost a read command ~20 ms.
            name = (run.target, run.workload, run.label, m.name)
            cell = by_name.get(name)
            if cell is None:
                cell = cells[CellKey(*name)] = by_name[name] = Samples(
                    m.unit, m.higher_is_better, m.note, block=campaign.id, params=run.params
                )
            cell.note = cell.note or m.note
            if run.repetition == 0:
                cell.settling += 1
            elif trim is not None and m.name == headline and m.value is not None:
                assert trim.clean_ratio is not None  # trimmed: it has one
                cell.trimmed += 1
                cell.values.append(m.value * trim.clean_ratio)
                cell.rounds.append(run.repetition)
            elif trim is not None:
                cell.disturbed += 1
            elif m.value is None or not math.isfinite(m.value):
                cell.unsupported += 1
            else:
                cell.values.append(m.value)
                cell.rounds.append(run.repetition)
    for key, cell in cells.items():
        key3 = (key.target, key.workload, key.label)
        cell.failed = failed.get(key3, 0)
        cell.redone = redone.get(key3, 0)
    return cells


def failed_measurements(campaign: Campaign) -> set[tuple[str, str, str]]:
    """(target, workload, label) of every run that failed or was interrupted."""
    return {
        (r.target, r.workload, r.label)
        for r in campaign.runs
        if r.status not in ("ok", "running", "superseded", "redone")
    }
