"""The comparison part of the JSON documents, as typed dictionaries (schema version 4:
one finding per pair, centres): what
``comparison_data`` (formats/json.py) writes into an export's ``comparison`` and a
``compare --format json`` document. The writers are annotated with these types (mypy
checks every key they write) and ``pgfsbench schema`` generates the JSON Schema from
them (formats/json_schema.py): a field added to a writer is added here, with its
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
class Finding(TypedDict):
    """One comparison, computed once: target against reference on one metric, the figure
    the decision tested with its interval at the level of the decision."""

    workload: NotRequired[str]
    """in the list of findings: the measurement and metric it is about"""
    label: NotRequired[str]
    metric: NotRequired[str]
    reference: str
    target: str
    outcome: Literal["better", "worse", "different", "equivalent", "inconclusive", "na"]
    mark: str
    ratio: float | None
    """target / reference: the ratio of the two centres over the same rounds (paired: the
    geometric mean of the per-round ratios)"""
    interval: Interval | None
    """the ratio's interval at the level of the decision; it always holds the ratio"""
    confidence: float | None
    level: str | None
    """how that confidence came about, in words"""
    paired: bool
    """compared within rounds (else as independent samples)"""
    rounds: int | None
    """paired: the rounds it rests on"""
    runs: list[int] | None
    """unpaired: the reference's and the target's runs"""
    decided_at_round: int | None
    """paired and decided: the look that decided it (the figure rests on rounds 1 to
    this)"""
    centres: list[float | None]
    """the reference's and the target's centre over the rounds the figure rests on"""
    p_value: float | None
    """the deciding test's p (difference or equivalence), as tested"""
    detectable_change: float | None
    """open headline pairs: the smallest change (0.12 = 12%) these rounds would likely
    (80%) have decided"""
    note: str | None
    text: str
    """the finding in one line, as every output says it"""


@with_config(CLOSED)
class Cell(TypedDict):
    """One column's values of a row."""

    status: Literal["ok", "unsupported", "failed", "missing"]
    centre: float | None
    """the geometric mean of the values (the median where the row holds a value at or
    below zero): the centre the comparisons' ratios are ratios of; null: unsupported, not
    finite, or not applicable"""
    centre_kind: Literal["geometric mean", "median"]
    n: Annotated[int, Field(ge=0)]
    ci95: Interval | None
    """[low, high] of the 95% CI of the centre (t on the logs; bootstrap for a median);
    null: fewer than 2 values"""
    cv: float | None
    values: list[float]
    rounds: list[int]
    """the round of each value"""
    settling_runs: NotRequired[int]
    """settling-round runs left out of every statistic"""
    vs_baseline: NotRequired[Finding]
    """contenders only: the finding against the baseline, as every output quotes it"""


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
    findings: list[Finding]
    """every pair of targets on every headline measurement (b against a, a first in column
    order): what the tiers rest on"""
    glossary: list[str]
    """the terms of the answer: the intervals' levels, a round, a tier"""
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

    schema_version: Literal[4]
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
