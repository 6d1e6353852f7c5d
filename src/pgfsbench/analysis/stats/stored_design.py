"""The design a stored plan declared, for ``analysis/stats/sequential.py``: a fixed count, or
'auto' with its planned looks and its descriptive measurements.

Apart from the sequential procedure, which knows nothing of plans: reading a stored
plan needs the plan's types (``plan/design.py``) and, for the measurements of an
'auto' plan, the plan model itself.
"""

from __future__ import annotations

from dataclasses import replace

from pgfsbench.analysis.stats.sequential import Design, Measurement
from pgfsbench.plan.design import Repetitions, Verdicts


def design_for(plan: dict, schedule: dict | None = None) -> Design:
    """The design a (stored) plan declared: a fixed count, or 'auto' with its looks.

    A stored plan whose ``[repetitions]`` has no ``looks`` key comes from a version
    before planned looks: it keeps the design it was decided with (a look after every
    round from min to max, every measurement in the family). ``schedule`` is what a
    campaign stored of its schedule (``Schedule.describe()``): the round the time
    budget ended it at, if it did, is the last look (``Design.final``).
    """
    from pydantic import ValidationError

    stored = plan.get("repetitions") or {}
    try:
        reps = Repetitions.model_validate(stored)
    except ValidationError:  # results of another version: judge as one look at the end
        reps = Repetitions()
    try:
        verdicts = Verdicts.model_validate(plan.get("verdicts") or {})
    except ValidationError:
        verdicts = Verdicts()
    margin = verdicts.equivalence  # None: the noise margin, as before it existed
    # Plans stored before weights have none: equal shares, as they were decided with.
    weights = tuple(sorted(verdicts.weights.items()))
    if reps.count != "auto":
        return replace(
            Design.fixed(verdicts.alpha, verdicts.noise, int(reps.count)),
            margin=margin,
            weights=weights,
        )
    if "looks" not in stored:  # stored before planned looks: as it was decided then
        return Design(
            verdicts.alpha, verdicts.noise, reps.min, reps.max, margin=margin, weights=weights
        )
    stored_design = (schedule or {}).get("design") or {}
    # The campaign kept the descriptive measurements it decided with (schedule.py, the
    # same rule): read them back rather than validate the whole plan (pydantic and every
    # workload kind, ~0.2 s of a read command's start).
    kept = stored_design.get("descriptive")
    descriptive = (
        frozenset((str(w), str(label)) for w, label in kept)
        if isinstance(kept, list)
        else descriptive_measurements(plan)
    )
    design = replace(
        Design.planned(
            verdicts.alpha,
            verdicts.noise,
            reps.look_rounds(),
            descriptive,
            earliest=reps.min,
            rho=reps.spending,
        ),
        margin=margin,
        weights=weights,
    )
    final = stored_design.get("final_look")
    return design.at_budget(int(final)) if isinstance(final, int) else design


def descriptive_measurements(plan: dict) -> frozenset[Measurement]:
    """The measurements of an 'auto' plan with their own fixed repetitions: shown, not
    tested (outside the verdict family)."""
    from pydantic import ValidationError

    from pgfsbench.plan.model import Plan

    try:
        model = Plan.model_validate(plan)
    except ValidationError:  # not a whole plan (a test's, another version's): all tested
        return frozenset()
    if model.repetitions.count != "auto":
        return frozenset()
    return frozenset((m.type, m.label()) for m in model.measurements() if m.repetitions is not None)
