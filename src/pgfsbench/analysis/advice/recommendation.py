"""What a recommendation is made of: settings, each with the measured figures it rests on.

Plain data, so the text, the postgresql.conf snippet, the JSON and the HTML report show
the same thing (formats/advice.py renders it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgfsbench.analysis.advice.capabilities import TargetCapabilities
from pgfsbench.analysis.caveats.durability import phrase
from pgfsbench.analysis.headline import metric_label
from pgfsbench.analysis.table import Row, Table

POSTGRES, SYSCTL, QUEUE = "postgresql.conf", "sysctl", "queue"


@dataclass
class Figure:
    """One cell of the comparison table: a target's centre of a metric (its geometric
    mean, or its median where the row has a value at or below zero), its 95% CI, n."""

    target: str
    workload: str
    label: str
    metric: str
    unit: str
    centre: float
    ci: tuple[float, float] | None
    n: int

    def what(self) -> str:
        return metric_what(self.metric, self.label, self.workload)

    def value_text(self) -> str:
        """'176 µs [138, 268] (n=16)': the centre, its 95% CI and n."""
        ci = f" [{num(self.ci[0])}, {num(self.ci[1])}]" if self.ci else ""
        return f"{num(self.centre)} {self.unit}{ci} (n={self.n})".replace("  ", " ")

    def text(self) -> str:
        return f"{self.what()}: {self.value_text()}"


@dataclass
class Setting:
    scope: str  # POSTGRES, SYSCTL or QUEUE
    name: str
    value: str | None  # None: not recommended, ``why`` says what evidence is missing
    why: str  # the rule that turned the figures into the value, or why it is omitted
    figures: list[Figure] = field(default_factory=list)
    note: str = ""  # a caveat about the value (a knee at the deepest depth measured)
    default: bool = False  # the software's own default, kept: nothing measured beat it


@dataclass
class Unsafe:
    """A target that is not crash-safe: what it would buy over the recommended one."""

    target: str
    level: str
    warning: str
    # One line per tested headline measurement: its finding against the recommended
    # target (decided or not), as every output quotes that pair.
    gains: list[str] = field(default_factory=list)

    @property
    def phrase(self) -> str:
        """'is not crash-safe', 'may lose its most recent commits on a crash'."""
        return phrase(self.level)


@dataclass
class Advice:
    target: str | None  # None: no crash-safe target had results
    chosen_by: str
    campaign: str = ""  # "<id> (<plan>)": what the figures come from
    warning: str = ""  # the named target is not crash-safe
    mkfs: str | None = None
    fstab: str | None = None
    build_notes: list[str] = field(default_factory=list)  # about the mkfs and fstab lines
    settings: list[Setting] = field(default_factory=list)  # OS and PostgreSQL, with values
    omitted: list[Setting] = field(default_factory=list)  # value None: evidence missing
    unsafe: list[Unsafe] = field(default_factory=list)
    # Per target, what its filesystem offers PostgreSQL (clone, snapshot, compression),
    # measured or from the recipe's facts (analysis/advice/capabilities.py).
    capabilities: list[TargetCapabilities] = field(default_factory=list)


def stated_together(settings: list[Setting]) -> list[list[Setting]]:
    """The settings that rest on the same evidence (the same scope, why, figures and
    note: PostgreSQL 18's defaults kept because nothing varied them, the two I/O
    concurrency settings the io-depth knee gives, the checkpoint settings a stall calls
    for) in one group, at the place of the first, so an output states that evidence once."""
    groups: list[list[Setting]] = []
    for s in settings:
        same = next(
            (
                g
                for g in groups
                if (g[0].scope, g[0].why, g[0].figures, g[0].note)
                == (s.scope, s.why, s.figures, s.note)
            ),
            None,
        )
        if same is None:
            groups.append([s])
        else:
            same.append(s)
    return groups


def metric_what(metric: str, label: str = "", workload: str | None = None) -> str:
    """'TPC-B tps [clients=4] (pgbench.tps)': the metric's name for a reader, the
    measurement's label, and the id beside them (the id alone where it has no name)."""
    human = metric_label(metric, workload)
    tag = f" [{label}]" if label else ""
    return f"{human}{tag} ({metric})" if human != metric else metric + tag


def num(x: float) -> str:
    """A figure as a reader wants it: thousands separated, three significant digits."""
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def figure(row: Row, target: str) -> Figure | None:
    cell = row.cells.get(target)
    if cell is None or cell.value is None:
        return None
    return Figure(
        target,
        row.workload,
        row.label,
        row.metric,
        row.unit,
        cell.value,
        (cell.ci[0], cell.ci[1]) if cell.ci else None,
        cell.n,
    )


def rows_of(table: Table, workload: str, metric_prefix: str = "") -> list[Row]:
    return [r for r in table.rows if r.workload == workload and r.metric.startswith(metric_prefix)]
