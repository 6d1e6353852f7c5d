"""``compare --fail-if-worse``: which contenders are significantly worse than the baseline.

A CI gate must not fail on noise, so it reads the decisions ``compare`` prints, never
a raw point estimate. A contender cell fails when

* its mark is **worse** (``analysis/stats/outcome.py``: the test is significant at the table's
  corrected level, paired within rounds or unpaired across directories, and the change
  is beyond the noise margin), and
* its whole interval (the finding's, at the level of the decision) lies beyond the
  threshold in the metric's bad direction: "worse by more than 5%" is shown, not just
  estimated. With a threshold of 0 the mark alone decides.

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

from pgfsbench.analysis.findings import INCONCLUSIVE, NA, WORSE, Finding
from pgfsbench.analysis.table import Row, Table
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
class Gated:
    """One contender cell the gate looked at, with its finding against the baseline."""

    row: Row
    target: str
    finding: Finding

    @property
    def title(self) -> str:
        return f"{self.row.workload} {self.row.label} {self.row.metric}".replace("  ", " ")

    def describe(self) -> str:
        """'pgbench clients=4 pgbench.tps: btrfs vs ext4: −47% [−63%, −25%], worse (16
        rounds)': the finding as every output says it."""
        return f"{self.title}: {self.finding.sentence()}"


@dataclass
class Gate:
    threshold: float
    baseline: str | None
    failed: list[Gated] = field(default_factory=list)  # worse beyond the threshold
    within: list[Gated] = field(default_factory=list)  # worse, not shown beyond it
    inconclusive: list[Gated] = field(default_factory=list)
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


def beyond(f: Finding, higher_is_better: bool, threshold: float) -> bool:
    """The finding's whole interval (at the level of its decision) is worse than the
    threshold (the mark alone at 0)."""
    if threshold == 0:
        return True
    if f.low is None or f.high is None:
        return False  # nothing shows the size of the change
    if higher_is_better:
        return f.high < 1 - threshold
    return f.low > 1 + threshold


def gate(table: Table, rows: list[Row], threshold: float) -> Gate:
    """Every contender cell of ``rows`` against the baseline, sorted by what it decided."""
    out = Gate(threshold, table.baseline)
    for row in rows:
        for target, cell in row.cells.items():
            f = cell.finding
            if target == table.baseline or f is None:
                continue
            if f.outcome == NA:
                out.undecided += 1
                continue
            out.checked += 1
            gated = Gated(row, target, f)
            if f.outcome == WORSE:
                assert row.higher_is_better is not None  # "worse" needs a direction
                (out.failed if beyond(f, row.higher_is_better, threshold) else out.within).append(
                    gated
                )
            elif f.outcome == INCONCLUSIVE:
                out.inconclusive.append(gated)
    return out
