"""Results directories into a PostgreSQL store: ``pgfsbench import``, and ``run --store``.

The results directory stays the primary record: a campaign writes its results.db
as always and is imported when it ends, so a store that is unreachable mid-campaign
costs nothing; the directory can be imported later. Each campaign is imported in its
own transaction (``PgStore.import_rows``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pgfsbench.store.pg import Decide, Imported, PgStore, StoreFailed
from pgfsbench.store.read import read_rows
from pgfsbench.store.sources import results_dirs
from pgfsbench.store.url import check_store_url, shown

Say = Callable[[str], None]


def check_store(url: str) -> None:
    """Refuse (UserError) a store that cannot be reached, set up or written, before a
    campaign."""
    PgStore.connect(check_store_url(url), write=True).close()


def describe(result: Imported, results_dir: Path) -> str:
    what = {
        "imported": "imported",
        "unchanged": "already imported, unchanged",
        "updated": "updated: the directory changed since it was imported",
    }[result.action]
    line = f"{results_dir}: {what} (campaign {result.campaign_id}, {result.uuid})"
    return line + (f"; the store held: {result.before}" if result.before else "")


def import_dirs(paths: list[Path], url: str, say: Say, decide: Decide) -> list[Imported]:
    """Import every results directory ``paths`` name, one transaction each, with the
    decisions ``decide`` makes (analysis/verdicts/decisions.py, given by the caller). Every
    directory is checked before anything is imported (UserError); if the store fails
    part way, StoreFailed says which were imported (they stay) and which were not."""
    dirs = results_dirs(paths)
    for d in dirs:  # readable by this version, and holding a campaign (else UserError)
        read_rows(d, series=False)
    done: list[Imported] = []
    with PgStore.connect(check_store_url(url), write=True) as pg:
        for n, d in enumerate(dirs):
            rows = read_rows(d)
            try:
                result = pg.import_rows(rows, d, decide)
            except StoreFailed as exc:
                left = ", ".join(str(x) for x in dirs[n:])
                raise StoreFailed(
                    f"importing {d} failed: {exc}; the {len(done)} "
                    f"campaign(s) imported before it are kept; not imported: "
                    f"{left} (run the same import again: the ones already "
                    "imported are skipped)"
                ) from exc
            done.append(result)
            say(describe(result, d))
            if rows.campaign["status"] == "running":
                say(
                    f"  note: {d} is still running (or was killed: 'pgfsbench cleanup' "
                    "marks it): import it again when it has ended to update it"
                )
    return done


def store_campaign(results_dir: Path, url: str, decide: Decide) -> Imported:
    """After ``run``: import its campaign with the decisions ``decide`` makes (UserError
    or StoreFailed if the store is unreachable; the directory stays importable)."""
    with PgStore.connect(url, write=True) as pg:
        return pg.import_rows(read_rows(results_dir), results_dir, decide)


__all__ = ["StoreFailed", "check_store", "import_dirs", "shown", "store_campaign"]
