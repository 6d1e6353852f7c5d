"""What a workload kind declares: its parameters, how it runs, and what the rest of the
tool needs to know about it without running it.

A kind is one module that ends with ``KIND = WorkloadKind(...)``, declared as an entry
point of the ``pgfsbench.workloads`` group (pyproject.toml; extensions.py). The plan
model, the estimate, the headline metric and the efficiency ratios all read that
declaration, so nothing else names the type.
The read side (plan, analysis, report) imports kind modules too: a kind module imports
RunContext only for type checking, and anything heavy (monitors, PostgreSQL, the output
parser of the tool it runs) inside the function that uses it, so that reading a campaign
imports no parser (tests/unit/test_ci_cache.py checks it over the demo campaign).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Self, TypeVar, get_args

from pydantic import Field

from pgfsbench.fields import Strict
from pgfsbench.metrics import Metric, WorkloadResult

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

MB = 2**20
# plan check's calibration (a loop image on a 2-core VM): bytes a workload writes a second
# when it lays out or writes a file
EST_WRITE_RATE = 200 * MB


class WorkloadBase(Strict):
    """What every workload's plan table has. ``server_settings`` says what the PostgreSQL
    server must allow for the workload (set before the cluster starts); ``expand`` turns
    a sweep into one concrete workload per measurement."""

    if TYPE_CHECKING:
        # Each kind's table declares its own `type: Literal["..."]` (the plan's
        # discriminator); the type checker knows every workload has one.
        type: str

    repetitions: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="measure this workload this many times per target (default: the plan's "
        "[repetitions] count)",
    )

    def server_settings(self) -> dict[str, int]:
        return {}

    def server_problem(self, settings: Mapping[str, object]) -> str | None:
        """Why this workload cannot measure what it should on a server with ``settings``
        (the plan's and a target's PostgreSQL settings), or None; the plan refuses it."""
        return None

    def expand(self) -> list[Self]:
        return [self]

    tag: str = Field(
        "",
        pattern=r"^[A-Za-z0-9_.=-]{0,40}$",
        description="tells two workloads of the same type apart in the results "
        "(e.g. tag = 'big-table')",
    )

    def label(self) -> str:
        """What tells this measurement apart from others of the same type: the sweep
        value and the tag."""
        return " ".join(filter(None, [self.sweep_label(), self.tag]))

    def sweep_label(self) -> str:
        return ""

    def only_reads(self) -> bool:
        """Whether this measurement reads without writing (pgbench select-only), for a
        kind that ``writes_wal`` otherwise: its cached reads then leave nothing of the
        storage measured (analysis/caveats/bound.py)."""
        return False


P = TypeVar("P", bound=WorkloadBase)


@dataclass(frozen=True)
class WorkloadKind(Generic[P]):
    """Everything about one workload type: what its plan table holds, how it runs, and
    what the rest of pgfsbench reads without running it (the estimate, the headline, the
    names of its metrics). A kind module ends with ``KIND = WorkloadKind(...)``, named by
    an entry point of the ``pgfsbench.workloads`` group under its plan ``type``.

    The type name is the params model's ``type: Literal[...]``, so it is spelled once.
    """

    params: type[P]
    """The plan table's model: a ``WorkloadBase`` with ``type: Literal["name"]``; every
    other field has a default (a plan may give just the type)."""

    run: Callable[[RunContext, P], WorkloadResult]
    """Runs one measurement on a prepared target (``RunContext``) and returns its metrics,
    per-second series and kept artifacts. It imports the tool's output parser inside, so
    that reading results never loads it."""

    headline: str | Callable[[P, Sequence[str]], str | None]
    """The one metric verdicts and 'auto' repetitions are about, chosen up front: a
    metric name, or a rule (validated params, the metric names the run stored → a name
    or None) when it depends on the parameters or on what was measured."""

    seconds: Callable[[P], float]
    """``plan check``'s estimate: the seconds one measurement takes."""

    disk_bytes: Callable[[P, int], int]
    """The most one measurement writes on the target, given the bytes of the database
    tables already there (basebackup copies them)."""

    labels: Mapping[str, str] = field(default_factory=dict)
    """Human names of the kind's metrics, for the sentences a DBA reads ("TPC-B tps",
    not ``pgbench.tps``): a metric name, or a pattern whose ``{placeholders}`` each stand
    for one dotted part or a piece of it (``"iodepth.qd{depth}.iops"``), → its name,
    the placeholders filled in (``"IOPS at queue depth {depth}"``). A metric without one
    is shown by its name."""

    loads_tables: Callable[[P], int] | None = None
    """For a kind that (re)loads the database tables later workloads use: their bytes.
    They replace the earlier tables (dropped first) and stay on the target."""

    needs: str | None = None
    """A type whose workload must come before this one in the plan (pgbench needs the
    tables pgbench-init loads)."""

    writes_wal: bool = False
    """Writes go through PostgreSQL's WAL: device bytes per WAL byte is its write
    amplification (elsewhere the WAL is background noise and the ratio absurd)."""

    logical_bytes: Callable[[P, Mapping[str, float]], tuple[float | None, str]] | None = None
    """Bytes the workload itself wrote, from its params and the run's metric values, and
    how that was worked out; None (the kind) or (None, why) when unknown."""

    read_bytes: Callable[[P, Mapping[str, float]], float | None] | None = None
    """For a workload whose measurement reads data: the fewest bytes it would read from
    the device if nothing were cached (from params and metric values; None: unknown or it
    does not read), so that a cached run can be told apart (analysis/caveats/bound.py)."""

    prepare: Callable[[RunContext, P], list[Metric]] | None = None
    """What to do before the measurement, outside its monitors and its numbers
    (pgbench's vacuum, a checkpoint, a sync): returns metrics saying what it took."""

    order: int = 1000
    """Where plan errors and the plan schema list the type: lower first (a third-party
    kind after the shipped ones)."""

    @property
    def type(self) -> str:
        """The plan's ``type`` of this kind: its params model's ``Literal``."""
        return get_args(self.params.model_fields["type"].annotation)[0]

    def label(self, metric: str) -> str | None:
        """The human name ``labels`` gives ``metric``, or None."""
        for pattern, name in _label_patterns(tuple(self.labels.items())):
            found = pattern.fullmatch(metric)
            if found:
                return name.format(**found.groupdict())
        return None


@functools.cache
def _label_patterns(labels: tuple[tuple[str, str], ...]) -> list[tuple[re.Pattern, str]]:
    """Each ``labels`` key as a pattern: its ``{placeholders}`` match within one dotted
    part (the shortest that fits), the rest literally."""
    out = []
    for key, name in labels:
        parts = re.split(r"\{(\w+)\}", key)
        regex = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^.]+?)" for i, part in enumerate(parts)
        )
        out.append((re.compile(regex), name))
    return out


def recorded(params: WorkloadBase, *fields: str) -> bool:
    """Whether the run stored these parameters, rather than their being today's defaults.

    A logical-bytes figure rests only on recorded values: a default changed since an old
    run would silently rescale its ratio.
    """
    return set(fields) <= params.model_fields_set
