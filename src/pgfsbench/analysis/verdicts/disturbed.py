"""How many visits someone else's load disturbed, and whether the answer holds without
them: the line the summary, the report and the Markdown export give under the answer.

The answer rests on the undisturbed runs and seconds (a disturbed run is run again in
its round, counted from the seconds the burst spared, or kept and left out:
``disturbance.py``). Whether it *depends* on leaving them out is
asked of the same procedure on the campaign as if nothing had been found disturbed:
each round's first run of every measurement counted, none left out. The same answer
both ways says the disturbed visits moved nothing; a different one is quoted, so a
reader sees what the neighbour would have made of it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pgfsbench.analysis.caveats.disturbance import disturbed_runs
from pgfsbench.store.read import Campaign


@dataclass(frozen=True)
class DisturbedVisits:
    visits: int  # counted visits (a target in a round)
    disturbed: int  # visits with a disturbed run
    redone: int  # runs run again in their round
    kept: int  # runs kept and left out of the statistics
    spent_s: float  # seconds spent on visits run again
    share: float | None  # [repetitions] redo: the most, as a share of the time measuring
    instead: str | None  # the answer counting the disturbed runs; None: the same
    trimmed: int = 0  # runs counted from the seconds the burst spared
    from_budget_s: float = 0.0  # the same past the allowance, paid from the budget

    def text(self) -> str:
        """'3 of 48 visits disturbed by others' load on the machine (...); the answer
        rests on the undisturbed runs, and counting the disturbed ones instead it would
        be the same.'"""
        what = []
        if self.redone:
            what.append(f"{self.redone} run{'s' if self.redone != 1 else ''} again in their round")
        if self.trimmed:
            what.append(
                f"{self.trimmed} run{'s' if self.trimmed != 1 else ''} counted from the "
                "seconds no burst touched"
            )
        if self.kept:
            what.append(
                f"{self.kept} run{'s' if self.kept != 1 else ''} kept and left out of the "
                "statistics"
            )
        spent = (
            f"; {self.spent_s / 60:.1f} min spent running visits again and waiting for "
            f"quiet, on top of the budget (at most {self.share:.0%} of it)"
            if self.spent_s and self.share is not None
            else ""
        )
        if self.from_budget_s:
            spent += f", then {self.from_budget_s / 60:.1f} min of the budget"
        holds = (
            "counting the disturbed runs instead, it would be the same"
            if self.instead is None
            else f"counting the disturbed runs instead, it would read: {self.instead}"
        )
        return (
            f"{self.disturbed} of {self.visits} visits disturbed by others' load on the "
            f"machine ({', '.join(what)}{spent}); the answer rests on the undisturbed "
            f"{'runs and seconds' if self.trimmed else 'runs'}; "
            f"{holds}"
        )


def disturbed_visits(campaign: Campaign, answer: str) -> DisturbedVisits | None:
    """The campaign's disturbed visits against its ``answer`` (``campaign_answer`` of its
    verdict lines); None when no visit was disturbed."""
    left_out = disturbed_runs(campaign.runs)
    counted = [r for r in campaign.runs if r.repetition >= 1 and r.status in ("ok", "redone")]
    hit = [r for r in counted if r.status == "redone" or r.id in left_out]
    if not hit:
        return None
    visits = {(r.target, r.repetition) for r in counted}
    redo = campaign.schedule.get("redo") or {}
    instead = answer_counting_them(campaign)
    return DisturbedVisits(
        len(visits),
        len({(r.target, r.repetition) for r in hit}),
        sum(r.status == "redone" for r in hit),
        sum(r.id in left_out and not left_out[r.id].trimmed for r in hit),
        float(redo.get("spent_s") or 0.0),
        redo.get("share"),
        None if instead == answer else instead,
        sum(r.id in left_out and left_out[r.id].trimmed for r in hit),
        float(redo.get("from_budget_s") or 0.0),
    )


def as_if_undisturbed(campaign: Campaign) -> Campaign:
    """The campaign as if nothing had been found disturbed: each round's first run of a
    measurement counted (a disturbed one, not its run again), none left out."""
    first: dict[tuple[str, str, str, int], int] = {}
    for r in sorted(campaign.runs, key=lambda r: r.id):
        if r.repetition >= 1 and r.status in ("ok", "redone"):
            first.setdefault((r.target, r.workload, r.label, r.repetition), r.id)
    runs = []
    for r in campaign.runs:
        key = (r.target, r.workload, r.label, r.repetition)
        status = r.status
        if status in ("ok", "redone") and key in first:
            status = "ok" if first[key] == r.id else "superseded"
        metrics = [m for m in r.metrics if not m.name.startswith("disturb.")]
        runs.append(replace(r, status=status, metrics=metrics))
    return replace(campaign, runs=runs)


def answer_counting_them(campaign: Campaign) -> str:
    """The answer the same procedure gives counting the disturbed runs."""
    from pgfsbench.analysis.caveats.durability import durabilities
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts.answer import campaign_answer
    from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines

    alt = as_if_undisturbed(campaign)
    return campaign_answer(verdict_lines(comparison_table(alt), durabilities(alt)))
