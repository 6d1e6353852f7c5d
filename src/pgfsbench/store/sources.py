"""Where campaigns are read from: results directories and a PostgreSQL store.

A directory given is a results directory (it holds results.db) or one whose
sub-directories are (a folder of campaigns): both are taken, the latter sorted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.store.db import DB_NAME
from pgfsbench.store.read import Campaign, campaign_from_rows, load_campaign
from pgfsbench.store.url import shown


def results_dirs(paths: list[Path]) -> list[Path]:
    """The results directories ``paths`` name (UserError for one that names none)."""
    found = []
    for path in paths:
        if (path / DB_NAME).is_file():
            found.append(path)
            continue
        if not path.is_dir():
            raise UserError(f"{path}: no such directory")
        inside = sorted(p.parent for p in path.glob(f"*/{DB_NAME}"))
        if not inside:
            raise UserError(f"{path} holds no results ({DB_NAME} not found there or in its "
                            "sub-directories)")
        found += inside
    return found


def campaigns(dirs: list[Path], store_url: str | None, series: bool = False
              ) -> Iterator[tuple[Campaign, str]]:
    """Each campaign with where it was read from: the directories' first, then the
    store's, oldest first. Without series unless asked: a listing needs none."""
    for d in results_dirs(dirs):
        yield load_campaign(d, series=series), str(d)
    if store_url is None:
        return
    from pgfsbench.store.pg import PgStore

    with PgStore.connect(store_url) as pg:
        for row in pg.campaigns():
            rows, results_dir = pg.rows(row["uuid"], series)
            yield campaign_from_rows(rows, results_dir), shown(store_url)
