"""The plan's ``[repetitions]`` and ``[verdicts]`` tables: how often each target is
measured and how differences are judged.

Pure types (pydantic, nothing else of the project), apart from the plan model so that
the statistics (``analysis/stats/medians.py``) and the schedule read their defaults and
semantics without loading the plan model, which loads every workload kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, model_validator

from pgfsbench.fields import Strict

if TYPE_CHECKING:
    from pgfsbench.workloads.kind import WorkloadBase


class Repetitions(Strict):
    """How often each target × measurement is measured, and in what order.

    Rounds are interleaved: every target gets its visit in round 1 before any gets
    round 2, so drift of the machine (thermal, page cache, a neighbour VM) hits
    every target alike instead of favouring whichever ran first.
    """

    count: Annotated[int, Field(ge=1, le=1000)] | Literal["auto"] = Field(
        1,
        description="rounds; 'auto' is a sequential design: at each planned look "
        "(looks) every headline comparison is tested (alpha spent across "
        "the looks up to max), and rounds go on, every target in each, "
        "until all are decided or max or max_minutes stops them",
    )
    order: Literal["round-robin", "random"] = Field(
        "round-robin",
        description="target order within a round: rotated each round, or "
        "shuffled with a recorded seed",
    )
    seed: int | None = Field(
        None, description="seed of the random order (default: chosen and recorded)"
    )
    fresh: bool = Field(
        True,
        description="each visit makes a fresh filesystem and cluster "
        "(mkfs + initdb + load); false reuses them",
    )
    settle: bool | None = Field(
        None,
        description="reused targets (fresh = false) first run one settling round that "
        "is stored (as repetition 0) but not counted: the first round "
        "after a load runs slow. Default: true when fresh = false and "
        "there is more than one round; false skips it",
    )
    # Deprecated: 'auto' used to stop a cell once its CI was this narrow, which says
    # nothing about whether two targets differ. Still accepted, so older plan files and
    # the plans stored with older results load; plan check says it is ignored.
    ci_width: float | None = Field(
        None,
        gt=0,
        lt=1,
        description="ignored (deprecated): 'auto' stops when the comparisons are decided",
    )
    min: int = Field(
        3,
        ge=2,
        le=1000,
        description="auto: the first look when looks is a "
        "number, and the earliest round a look "
        "may come at (the budget's)",
    )
    max: int = Field(
        10,
        ge=2,
        le=1000,
        description="auto: the last look, the most rounds; the alpha spending runs to it",
    )
    looks: Annotated[int, Field(ge=1, le=1000)] | list[Annotated[int, Field(ge=2, le=1000)]] = (
        Field(
            2,
            description="auto: when the comparisons are tested: a number of looks "
            "spread evenly from min to max (1: at max only), or the rounds "
            "themselves (max is always one); every look spends alpha, so "
            "few looks decide more",
        )
    )
    spending: float = Field(
        2.0,
        ge=1,
        le=8,
        description="auto: how alpha is spent over the looks: by round n, alpha × (n / "
        "max) ** spending; a larger one spends less at the early looks and keeps more for "
        "the last (3: 5% of alpha by round 6 of 16)",
    )
    max_minutes: float = Field(
        60,
        gt=0,
        description="auto: the time budget; no round starts "
        "after it, and the last round that ran "
        "is a last look with the alpha left",
    )

    redo: float = Field(
        0.33,
        ge=0,
        le=1,
        description="a visit disturbed by someone else's load on the machine (its "
        "monitors' evidence, never its result: docs/statistics.md) is run again later in "
        "its round, and while visits are being disturbed a run first waits for quiet, "
        "while the time so spent stays under this share of the campaign's expected "
        "length (auto: of its budget, max_minutes); that time is on top of it (0.33 of 9 "
        "minutes: at most 3 more). Past it, an 'auto' plan goes on doing so from its "
        "budget: fewer rounds, undisturbed. 0: never. A disturbed run not run again is counted "
        "from the seconds no burst touched where it can be, else kept, marked, and left "
        "out of the statistics",
    )

    def fixed(self, w: WorkloadBase) -> int | None:
        """How often ``w`` runs per target; None when 'auto' decides."""
        if w.repetitions is not None:
            return w.repetitions
        return None if self.count == "auto" else int(self.count)

    def look_rounds(self) -> list[int]:
        """auto: the rounds after which the comparisons are tested, ascending, max last."""
        if isinstance(self.looks, list):
            return sorted(set(self.looks) | {self.max})
        if self.looks == 1 or self.min == self.max:
            return [self.max]
        k = min(self.looks, self.max - self.min + 1)
        step = (self.max - self.min) / (k - 1)
        return sorted({round(self.min + i * step) for i in range(k)})

    def settles(self, rounds: int) -> bool:
        """Whether a settling round 0 comes first, for a campaign of at most ``rounds``."""
        if self.fresh or self.settle is False:
            return False
        return self.settle is True or rounds > 1

    @model_validator(mode="after")
    def _bounds(self) -> Repetitions:
        if self.min > self.max:
            raise ValueError(f"min ({self.min}) is larger than max ({self.max})")
        if isinstance(self.looks, list) and any(not self.min <= n <= self.max for n in self.looks):
            raise ValueError(
                f"looks {self.looks} must lie between min ({self.min}) and max ({self.max})"
            )
        if self.settle and self.fresh:
            raise ValueError(
                "settle = true needs fresh = false: a fresh target is made anew "
                "each round, so there is nothing to settle"
            )
        return self


class Verdicts(Strict):
    """How differences are judged (the compare command can override these)."""

    baseline: str | None = Field(
        None, description="target the others are compared with (default: the first)"
    )
    alpha: float = Field(0.05, gt=0, lt=0.5, description="significance level")
    noise: float = Field(
        0.02,
        ge=0,
        lt=1,
        description="the noise margin: smaller relative "
        "differences are never better or worse "
        "(and, without equivalence, the "
        "equivalence margin)",
    )
    equivalence: float | None = Field(
        None,
        gt=0,
        lt=1,
        description=(
            "the equivalence margin: 'equivalent' means the ratio is shown within ±this "
            "(relative, e.g. 0.1 for ±10%); default: noise. A wider margin than noise lets a "
            "budget show equivalence it could not show within the noise margin"
        ),
    )

    weights: dict[
        Annotated[str, Field(min_length=1, max_length=80)],
        Annotated[float, Field(gt=0, le=100)],
    ] = Field(
        default_factory=dict,
        description="how alpha is shared between the tested measurements: a weight per "
        "workload type ('pgbench') or per measurement ('pgbench clients=8'), default 1 each; "
        "each comparison gets alpha × its weight / the weights of all. Set before the "
        "campaign (weights chosen from its own results would void the error control): more "
        "for the measurement the answer is about, less for one too noisy to decide much "
        "in the budget",
    )

    @property
    def margin(self) -> float:
        """The equivalence margin: ``equivalence``, or ``noise`` when not given."""
        return self.noise if self.equivalence is None else self.equivalence
