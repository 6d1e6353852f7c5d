"""One campaign in a few facts: where and what it ran, how it ended, what it decided.

``pgfsbench list`` shows one per campaign, from results directories and from a
results store alike; the verdicts are the report's own (``verdict_lines.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgfsbench.analysis.caveats.durability import durabilities
from pgfsbench.analysis.table import comparison_table
from pgfsbench.analysis.verdicts.verdict_lines import VerdictLine, verdict_lines
from pgfsbench.store.identity import host_identity
from pgfsbench.store.read import Campaign


@dataclass
class Summary:
    uuid: str
    id: str
    source: str  # the results directory, or the store it was read from
    results_dir: str  # where its results.db and artifacts are (on the host it ran on)
    host: dict  # identity: hostname, machine id, kernel, CPU, memory, devices
    plan: str
    started: float
    ended: float | None
    status: str
    schema_version: int
    targets: list[str]
    verdicts: list[VerdictLine] = field(default_factory=list)
    problem: str = ""  # why there are no verdicts, when reading them failed

    @property
    def duration_s(self) -> float | None:
        return None if self.ended is None else self.ended - self.started


def summarize(campaign: Campaign, source: str) -> Summary:
    summary = Summary(
        campaign.uuid,
        campaign.id,
        source,
        str(campaign.results_dir),
        host_identity(campaign),
        campaign.plan_name,
        campaign.started,
        campaign.ended,
        campaign.status,
        campaign.schema_version,
        [t.name for t in campaign.targets],
    )
    try:
        table = comparison_table(campaign, headline_only=True)  # what verdict lines read
        summary.verdicts = verdict_lines(table, durabilities(campaign))
    except Exception as exc:  # a listing must list every campaign, even one we misread
        summary.problem = f"no verdicts: {exc!r}"
    return summary
