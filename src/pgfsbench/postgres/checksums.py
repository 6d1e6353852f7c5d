"""Data checksums: on or off as the plan asks, by initdb's own flags.

PostgreSQL 18 turns them on by default and has ``--no-data-checksums`` to turn them
off; 15 to 17 leave them off and have only ``--data-checksums``. Which flags a
server's initdb has is read from its ``--help``, so a wish it cannot honour is
refused before anything is made, not found out after a campaign compared
clusters that differ in it.
"""

from __future__ import annotations

import functools
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.postgres.binaries import PgBinaries

ON, OFF = "--data-checksums", "--no-data-checksums"
DEFAULT_ON_FROM = 18  # the first major version whose initdb turns them on by itself


@functools.lru_cache(maxsize=8)
def _initdb_help(bindir: Path) -> str:
    result = proc.run([str(bindir / "initdb"), "--help"], check=False, timeout=30)
    return result.stdout


def initdb_flags(bins: PgBinaries, want: bool | None) -> list[str]:
    """initdb's flags for ``want`` (None: the server's default, no flag); UserError when
    this initdb cannot do it."""
    if want is None:
        return []
    offered = _initdb_help(bins.bindir)
    flag = ON if want else OFF
    if f"{flag} " in offered or offered.rstrip().endswith(flag):
        return [flag]
    if not want and bins.major < DEFAULT_ON_FROM:
        return []  # off is its default: nothing to ask
    raise UserError(
        f"data_checksums = {str(want).lower()}: the initdb of PostgreSQL "
        f"{bins.version} ({bins.bindir}) has no {flag}; remove "
        "postgres.data_checksums or use a server that has it"
    )
