"""The comparison part of the JSON documents, as typed dictionaries: what
``comparison_data`` (export/json.py) writes into an export's ``comparison`` and a
``compare --format json`` document. The writers are annotated with these types (mypy
checks every key they write) and ``pgfsbench schema`` generates the JSON Schema from
them (render/json_schema.py): a field added to a writer is added here, with its
description as the docstring under it.

Imported by the writers only for their annotations, and by the schema command.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

# A document's part: every key described by the docstring under it; no other key.
CLOSED = ConfigDict(use_attribute_docstrings=True, extra="forbid")
OPEN = ConfigDict(use_attribute_docstrings=True)

Direction = Literal["higher", "lower", "none"]
"""Which way is better; none: informational (a count, a size)."""
Interval = Annotated[list[float], Field(min_length=2, max_length=2)]
"""[low, high]"""


@with_config(CLOSED)
class DecisionInterval(TypedDict):
    """Decided only: the CI at the level the decision was made at, on the rounds it was
    made on ((1 - level) for a difference: it excludes 1; (1 - 2 level) for an
    equivalence: inside the margin); ratio_ci95 is the plain 95% CI over all rounds and
    need not agree with a sequential decision."""

    ratio: float | None
    low: float
    high: float
    confidence: float
    rounds: int | None
    """paired: the rounds it rests on"""


@with_config(CLOSED)
class VsBaseline(TypedDict):
    """A contender's cell compared with the baseline's."""

    ratio: float | None
    """contender / baseline"""
    ratio_ci95: Interval | None
    """[low, high] of the 95% CI of the ratio; null: fewer than 2 values"""
    decision_ci: DecisionInterval | None
    p_value: float | None
    p_adjusted: float | None
    """the deciding p as tested (corrected)"""
    paired: bool
    """compared within rounds (else as independent samples)"""
    p_equivalent: float | None
    rounds_needed: int | None
    decided_at_round: int | None
    verdict: Literal["better", "worse", "different", "equivalent", "inconclusive", "na"] | None
    reason: str | None


@with_config(CLOSED)
class Cell(TypedDict):
    """One column's values of a row."""

    status: Literal["ok", "unsupported", "failed", "missing"]
    median: float | None
    """null: unsupported, not finite, or not applicable"""
    n: Annotated[int, Field(ge=0)]
    ci95: Interval | None
    """[low, high] of the 95% CI of the median (bootstrap); null: fewer than 2 values"""
    cv: float | None
    values: list[float]
    rounds: list[int]
    """the round of each value"""
    settling_runs: NotRequired[int]
    """settling-round runs left out of every statistic"""
    vs_baseline: NotRequired[VsBaseline]
    """contenders only"""


@with_config(CLOSED)
class Row(TypedDict):
    """One metric of one measurement, a cell per column."""

    workload: str
    label: str
    """the measurement within a sweep (clients=8), or empty; across campaigns it starts
    with the target pair (ext4, or ext4→ext4-new)"""
    metric: str
    unit: str
    headline: bool
    """the metric the measurement's verdict is about"""
    direction: Direction
    cells: dict[str, Cell]
    """by column"""


@with_config(CLOSED)
class Verdict(TypedDict):
    """A measurement's verdict on its headline metric."""

    workload: str
    label: str
    metric: str
    kind: Literal[
        "winner",
        "tied leaders",
        "equivalent",
        "partly decided",
        "inconclusive",
        "single run",
        "described",
    ]
    """inconclusive only when no pair is decided; some decided and some not is 'partly
    decided'; 'described': measured with its own count in an 'auto' plan for the advice,
    its medians given, never tested"""
    winner: str | None
    ranking: str
    """the tiers in a few characters: '>' between tiers (every pair across them decided),
    '≈' inside one where every pair was shown equivalent, ', ' where not told apart; the
    kind where nothing is decided"""
    tiers: list[list[str]] | None
    """best first; null for single runs"""
    text: str
    details: list[str]
    """each pair's test: ratio, CI, p, design, the round that decided it"""
    durability: dict[str, str]
    """column → crash-safety class"""
    warning: str | None
    """the winner (or leader) is not crash-safe"""
    caveats: list[str]


@with_config(CLOSED)
class ComparisonData(TypedDict):
    """The comparison table (medians, CIs, ratios, verdicts) and its answer."""

    answer: str
    """the whole comparison in one line: the targets ranked into tiers per measurement
    (ext4 ≈ xfs > btrfs), then what is not told apart"""
    baseline: str | None
    columns: list[str]
    """targets of one campaign, or the campaigns compared (baseline, contenders);
    baseline first"""
    alpha: float
    noise: float
    """the noise margin (0.02 = 2%): the smallest difference a better or worse must show"""
    equivalence: float
    """the equivalence margin: equivalent means shown within ±this (the noise margin
    unless the plan gives [verdicts] equivalence)"""
    rows: list[Row]
    verdicts: list[Verdict]


@with_config(OPEN)
class ComparedCampaign(TypedDict):
    """A campaign compared: the baseline, or a contender."""

    role: Literal["baseline", "contender"]
    column: str
    uuid: str
    id: str
    plan: str
    started: float | None
    """epoch seconds"""
    host: NotRequired[str | None]
    results_dir: NotRequired[str]


@with_config(CLOSED)
class Pair(TypedDict):
    """Across campaigns: a baseline target and the contender target compared with it."""

    baseline: str
    contender: str
    column: str
    """the contender's column"""


@with_config(CLOSED)
class ComparisonDocument(ComparisonData):
    """The selected rows, the verdicts, and a title naming the plans compared."""

    schema_version: Literal[3]
    """the layout this document follows: it goes up when a field is removed or changes
    meaning; new fields may appear without it"""
    pgfsbench_version: str
    """of the program that wrote this document"""
    kind: Literal["comparison"]
    title: str
    campaigns: NotRequired[list[ComparedCampaign]]
    """campaigns compared: the baseline, then each contender"""
    pairs: NotRequired[list[Pair]]
    """across campaigns: each baseline target, the contender target it is compared with,
    and that contender's column"""
    warnings: list[str]
    """key provenance differences compared anyway (--allow-different)"""
    notes: list[str]
    """other differences between the baseline and a contender (PostgreSQL settings, host)"""
