"""Where campaigns are read from: results directories and a PostgreSQL store.

A directory given is a results directory (it holds results.db) or one whose
sub-directories are (a folder of campaigns): both are taken, the latter sorted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.store.db import DB_NAME
from pgfsbench.store.read import Campaign, campaign_from_rows, load_campaign
from pgfsbench.store.url import shown


def results_dirs(paths: list[Path]) -> list[Path]:
    """The results directories ``paths`` name (UserError for one that names none)."""
    return [d for d, _ in _found(paths)]


def _found(paths: list[Path]) -> list[tuple[Path, bool]]:
    """Each results directory, and whether it was named (not found inside one named)."""
    found = []
    for path in paths:
        if (path / DB_NAME).is_file():
            found.append((path, True))
            continue
        if not path.is_dir():
            raise UserError(f"{path}: no such directory")
        inside = sorted(p.parent for p in path.glob(f"*/{DB_NAME}"))
        if not inside:
            raise UserError(
                f"{path} holds no results ({DB_NAME} not found there or in its sub-directories)"
            )
        found += [(d, False) for d in inside]
    return found


def campaigns(
    dirs: list[Path],
    store_url: str | None,
    series: bool = False,
    skip: Callable[[str], None] | None = None,
) -> Iterator[tuple[Campaign, str]]:
    """Each campaign with where it was read from: the directories' first, then the
    store's, oldest first. Without series unless asked: a listing needs none.
    A directory found inside a named one that cannot be read (a campaign that never
    started, a newer pgfsbench's) is passed to ``skip`` with why, when given."""
    for d, named in _found(dirs):
        try:
            campaign = load_campaign(d, series=series)
        except UserError as exc:
            if named or skip is None:
                raise
            skip(str(exc))
            continue
        yield campaign, str(d)
    if store_url is None:
        return
    from pgfsbench.store.pg import PgStore

    with PgStore.connect(store_url) as pg:
        for row in pg.campaigns():
            rows, results_dir = pg.rows(row["uuid"], series)
            yield campaign_from_rows(rows, results_dir), shown(store_url)


def load_named(names: list[str], store_url: str | None, series: bool = False) -> list[Campaign]:
    """Campaigns named on a command line: a results directory, or with a store, a
    campaign UUID or id (or a unique prefix) in it; a directory wins over an id."""
    out = []
    for name in names:
        if store_url is None or Path(name).is_dir():
            out.append(load_campaign(Path(name), series=series))
        else:
            out.append(load_campaign(store_url, name, series=series))
    return out
