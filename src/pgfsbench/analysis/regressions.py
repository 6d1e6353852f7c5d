"""``compare --fail-if-worse``: which contenders are significantly worse than the baseline.

A CI gate must not fail on noise, so it reads the decisions ``compare`` prints, never
a raw point estimate. A contender cell fails when

* its mark is **worse** (``outcome.py``: the test is significant at the table's
  corrected level, paired within rounds or unpaired across directories, and the change
  is beyond the noise margin), and
* its whole 95% CI of the ratio lies beyond the threshold in the metric's bad
  direction: "worse by more than 5%" is shown, not just estimated. With a threshold
  of 0 the mark alone decides.

Inconclusive, equivalent, better, "different" (no direction) and single runs never
fail; the gate says how many it could not decide, so a green CI job that decided
nothing does not pass silently.

The threshold reads like the change ``compare`` prints: 5% on a higher-is-better
metric is a ratio below 0.95 (tps 5% lower), on a lower-is-better one above 1.05
(latency 5% higher).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from pgfsbench.analysis.table import Cell, Row, Table
from pgfsbench.errors import UserError

_THRESHOLD = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*")


def parse_threshold(text: str) -> float:
    """'5%' or '5' (percent) → 0.05; anything else a UserError (exit 2)."""
    m = _THRESHOLD.fullmatch(text)
    value = float(m.group(1)) / 100 if m else math.nan
    if not math.isfinite(value) or value > 10:
        raise UserError(
            f"--fail-if-worse takes a percentage from 0% to 1000%, e.g. '5%' (not '{text}')"
        )
    return value


@dataclass(frozen=True)
class Finding:
    """One contender cell the gate looked at."""

    row: Row
    target: str
    cell: Cell

    @property
    def title(self) -> str:
        return f"{self.row.workload} {self.row.label} {self.row.metric}".replace("  ", " ")

    def describe(self) -> str:
        c = self.cell.comparison
        assert c is not None  # a regression is a compared cell
        ci = f" [{c.ci_low:.3f}, {c.ci_high:.3f}]" if c.ci_low is not None else ""
        reason = f": {self.cell.verdict.reason}" if self.cell.verdict else ""
        return f"{self.title}: {self.target} ×{c.ratio:.3f}{ci} vs baseline{reason}"


@dataclass
class Gate:
    threshold: float
    baseline: str | None
    failed: list[Finding] = field(default_factory=list)  # worse beyond the threshold
    within: list[Finding] = field(default_factory=list)  # worse, not shown beyond it
    inconclusive: list[Finding] = field(default_factory=list)
    undecided: int = 0  # contender cells without a verdict (one run each, no data)
    checked: int = 0  # contender cells with a verdict

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        limit = f"{self.threshold * 100:g}%"
        if self.failed:
            head = (
                f"--fail-if-worse {limit}: {len(self.failed)} significantly worse than "
                f"the baseline {self.baseline} by more than {limit}:"
            )
            lines = [head] + [f"  {f.describe()}" for f in self.failed]
        else:
            lines = [
                f"--fail-if-worse {limit}: no contender is significantly worse than the "
                f"baseline {self.baseline} by more than {limit} (of {self.checked} "
                "comparison(s) with a verdict)"
            ]
        if self.within:
            lines.append(
                f"  not failing: {len(self.within)} worse but not shown to be beyond "
                f"{limit}: " + "; ".join(f.describe() for f in self.within)
            )
        if self.inconclusive:
            lines.append(
                f"  not failing: {len(self.inconclusive)} inconclusive (more runs "
                "would tell): " + ", ".join(f"{f.title} {f.target}" for f in self.inconclusive)
            )
        if self.undecided:
            lines.append(
                f"  not failing: {self.undecided} comparison(s) without a verdict "
                "(one run each, or no data): repeat the runs to gate on them"
            )
        return "\n".join(lines)


def beyond(cell: Cell, higher_is_better: bool, threshold: float) -> bool:
    """The ratio's whole 95% CI is worse than the threshold (the mark alone at 0)."""
    if threshold == 0:
        return True
    c = cell.comparison
    if c is None or c.ci_low is None or c.ci_high is None:
        return False  # nothing shows the size of the change
    if higher_is_better:
        return c.ci_high < 1 - threshold
    return c.ci_low > 1 + threshold


def gate(table: Table, rows: list[Row], threshold: float) -> Gate:
    """Every contender cell of ``rows`` against the baseline, sorted by what it decided."""
    out = Gate(threshold, table.baseline)
    for row in rows:
        for target, cell in row.cells.items():
            if target == table.baseline or cell.comparison is None:
                continue
            kind = cell.verdict.kind if cell.verdict else "na"
            if kind == "na":
                out.undecided += 1
                continue
            out.checked += 1
            finding = Finding(row, target, cell)
            if kind == "worse":
                assert row.higher_is_better is not None  # "worse" needs a direction
                (
                    out.failed if beyond(cell, row.higher_is_better, threshold) else out.within
                ).append(finding)
            elif kind == "inconclusive":
                out.inconclusive.append(finding)
    return out
