"""The JSON documents of ``list --format json`` and ``history --format json``, as typed
dictionaries: their writers (listing.py, history.py) are annotated with them, so mypy
checks every key they write, and ``pgfsbench schema list|history`` generates the JSON
Schema from them (formats/json_schema.py). A field added to a writer is added here, with
its description as the docstring under it.

Imported by the writers only for their annotations, and by the schema command.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, with_config
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

CLOSED = ConfigDict(use_attribute_docstrings=True, extra="forbid")
OPEN = ConfigDict(use_attribute_docstrings=True)

Direction = Literal["higher", "lower", "none"]
"""Which way is better; none: informational (a count, a size)."""
Interval = Annotated[list[float], Field(min_length=2, max_length=2)]
"""[low, high]"""


@with_config(OPEN)
class Disk(TypedDict, total=False):
    """The disk a target's numbers depend on: a loop image's backing disk, else its own."""

    device: str
    model: str
    vendor: str
    serial: str
    wwid: str
    size_bytes: int
    rotational: bool


@with_config(CLOSED)
class HostIdentity(TypedDict):
    """Host facts that identify the machine (null: not recorded), and each target's disk."""

    hostname: str | None
    machine_id: str | None
    """/etc/machine-id: tells hosts with one hostname apart"""
    os: str | None
    arch: str | None
    kernel: str | None
    cpu: str | None
    cpus: int | None
    memory_mb: int | None
    devices: dict[str, Disk]
    """target → its disk"""


@with_config(CLOSED)
class ListedVerdict(TypedDict):
    """A measurement's verdict on its headline metric, as the report says it."""

    measurement: str
    """the workload and its label (pgbench clients=8)"""
    metric: str
    kind: str
    """winner, tied leaders, equivalent, partly decided, inconclusive, single run,
    described"""
    winner: str | None
    ranking: str
    """the tiers in a few characters (xfs ≈ ext4 > btrfs)"""
    tiers: list[list[str]] | None
    """best first; null for single runs"""
    text: str
    warning: str | None
    """the winner (or leader) is not crash-safe"""


@with_config(CLOSED)
class ListedCampaign(TypedDict):
    """One campaign: where and what it ran, how it ended, what it decided."""

    uuid: str
    """its key in every store, across hosts"""
    id: str
    """its name for people (a time and a suffix)"""
    source: str
    """the results directory it was read from, or the store"""
    results_dir: str
    """where its results.db and artifacts are, on the host it ran on"""
    plan: str
    started: float
    """epoch seconds"""
    ended: float | None
    """epoch seconds; null: not ended"""
    duration_s: float | None
    status: str
    """ok, partial, failed, interrupted, killed, running"""
    db_layout_version: int
    """the layout of the results database the campaign was recorded with (its tables and
    columns; store/version.py), not the layout of this document"""
    schema_version: Annotated[int, Field(deprecated=True)]
    """the same number as db_layout_version, under its old name: kept for readers written
    before 0.3, to be removed in a later version"""
    host: HostIdentity
    targets: list[str]
    answer: str | None
    """the whole comparison in one line: the targets ranked into tiers per measurement;
    null: no verdicts"""
    verdicts: list[ListedVerdict]
    problem: str | None
    """why there are no verdicts, when reading them failed"""


@with_config(CLOSED)
class VsPrevious(TypedDict):
    """A campaign against the previous campaign of the same plan: the finding compare
    PREVIOUS THIS makes (independent samples)."""

    ratio: float | None
    """this / previous: the ratio of the two centres"""
    interval: Interval | None
    """the ratio's interval at the level of the decision"""
    confidence: float | None
    p_value: float | None
    """the deciding test's p, as tested"""
    outcome: str
    """better, worse, different, equivalent, inconclusive, na"""
    mark: str
    """as compare prints it: + better, − worse, ≈ equivalent, ? inconclusive"""
    reason: str
    """the finding in one line, as every output says it"""


@with_config(CLOSED)
class HistoryPoint(TypedDict):
    """A metric's centre in one campaign."""

    campaign: str
    """the campaign's id"""
    uuid: str
    plan: str
    started: float
    """epoch seconds"""
    source: str
    """the results directory it was read from, or the store"""
    centre: float | None
    """the geometric mean over the campaign's rounds (the median where a value is at or
    below zero)"""
    centre_kind: str
    """geometric mean, or median"""
    ci95: Interval | None
    """[low, high] of the 95% CI of the centre; null: fewer than 2 values"""
    n: Annotated[int, Field(ge=0)]
    previous: str | None
    """the id of the campaign it is compared with"""
    vs_previous: VsPrevious | None
    note: str | None
    """why it is not compared with the previous point, if it is not"""


@with_config(CLOSED)
class HistorySeries(TypedDict):
    """A metric of a target on a host over campaigns, oldest first."""

    target: str
    host: str
    workload: str
    label: str
    metric: str
    unit: str
    direction: Direction
    points: list[HistoryPoint]


@with_config(CLOSED)
class HistoryDocument(TypedDict):
    """A series per metric, target and host: the metric over campaigns, oldest first."""

    pgfsbench_version: str
    """of the program that wrote this document"""
    kind: Literal["history"]
    series: list[HistorySeries]


ListDocument = list[ListedCampaign]
"""What 'pgfsbench list --format json' writes: one entry per campaign."""

# The documents the schema command prints: (type, what writes it).
DOCUMENTS: dict[str, tuple[Any, str]] = {
    "list": (ListDocument, "'pgfsbench list --format json' writes: one entry per campaign"),
    "history": (HistoryDocument, "'pgfsbench history --format json' writes"),
}


def document_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the ``kind`` ("list", "history") document."""
    from pgfsbench.formats.json_schema import json_schema

    model, what = DOCUMENTS[kind]
    return json_schema(
        model,
        id=f"urn:pgfsbench:{kind}",
        title=f"pgfsbench {kind} --format json",
        description=f"What {what}.",
        note="Times are epoch seconds; null: not recorded, not applicable or not finite. "
        "New fields may appear.",
    )
