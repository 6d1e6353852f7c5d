"""What the command line decides about a campaign, beside its plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench.postgres.binaries import PgBinaries


@dataclass
class Options:
    results_dir: Path
    bins: PgBinaries  # the default; a target may name its own (pg_bin)
    keep: bool = False
    allow_format: tuple[str, ...] = ()  # devices the command line allows to be formatted
    wipe_signatures: bool = False
    wait: bool = False  # for another campaign on this machine to finish, instead of refusing
    target_bins: dict[str, PgBinaries] = field(default_factory=dict)

    def bins_for(self, target: str) -> PgBinaries:
        return self.target_bins.get(target, self.bins)
