"""A workload kind: the ``toy`` plan type, which "writes" ``size`` ``passes`` times."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pgfsbench.fields import Size
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind


class ToyWorkload(WorkloadBase):
    """Writes ``size`` ``passes`` times (a toy: it only says so)."""

    type: Literal["toy"]
    size: Size = "4M"
    passes: int = Field(3, ge=1, le=10, description="how many times to write size")


def run(ctx, params: ToyWorkload) -> WorkloadResult:
    return WorkloadResult([Metric("toy.mb_per_s", 42.0, "MB/s", True)])


KIND = WorkloadKind(
    params=ToyWorkload,
    run=run,
    headline="toy.mb_per_s",
    labels={"toy.mb_per_s": "toy write MB/s"},  # its name in the answer's sentences
    seconds=lambda p: 7.0 * p.passes,
    disk_bytes=lambda p, tables: size_to_bytes(p.size),
)
