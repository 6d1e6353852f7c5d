"""A campaign as stored rows, whichever store holds it.

Both stores (the SQLite file of a results directory, the PostgreSQL store) read a
campaign into ``CampaignRows``, with the columns of the current schema version:
what an older file lacks is filled as its readers always took it. Loading
(``read.py``), importing (``pg.py``) and the import's change check (``digest``)
all work on this one form.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pgfsbench.store.version import legacy_uuid, sqlite_version

# The columns of each table, in the current schema, in the order rows are kept.
CAMPAIGN = (
    "id",
    "uuid",
    "schema_version",
    "plan_name",
    "plan_json",
    "host_json",
    "pgfsbench_version",
    "started",
    "ended",
    "status",
    "schedule_json",
)
TARGETS = (
    "id",
    "name",
    "position",
    "kind",
    "fs",
    "spec_json",
    "status",
    "reason",
    "provenance_json",
)
RUNS = (
    "id",
    "target_id",
    "workload",
    "label",
    "repetition",
    "params_json",
    "status",
    "error",
    "started",
    "ended",
)
METRICS = ("run_id", "name", "value", "unit", "higher_is_better", "note")
SERIES = ("run_id", "name", "unit", "t", "value")
ARTIFACTS = ("id", "target_id", "run_id", "kind", "path", "command_json", "exit_code")
TABLES = {
    "targets": TARGETS,
    "runs": RUNS,
    "metrics": METRICS,
    "series": SERIES,
    "artifacts": ARTIFACTS,
}
# The PostgreSQL store's decisions table (filled at import by analysis/verdicts/decisions.py).
DECISIONS = (
    "workload",
    "label",
    "metric",
    "unit",
    "direction",
    "headline",
    "target",
    "baseline",
    "verdict",
    "reason",
    "centre",
    "baseline_centre",
    "n",
    "baseline_n",
    "ratio",
    "ratio_low",
    "ratio_high",
    "p_value",
    "paired",
    "decided_at_round",
    "confidence",
    "detectable_change",
)
# What an older file lacks, as its readers took it.
DEFAULTS = {"label": "", "repetition": 1, "schedule_json": None}


# A table's rows: sqlite3.Row from a results.db, dicts from a results store.
Rows = Sequence[Mapping[str, Any]]


@dataclass
class SeriesRows:
    """One run's series: its rows' (t, value) pairs in time order."""

    run_id: int
    name: str
    unit: str
    points: list[tuple[float, float]]


def group_series(rows: Rows) -> list[SeriesRows]:
    """Series rows (SERIES' columns, by run, name and time) grouped a series each."""
    out: list[SeriesRows] = []
    for r in rows:
        if not out or out[-1].run_id != r["run_id"] or out[-1].name != r["name"]:
            out.append(SeriesRows(r["run_id"], r["name"], r["unit"], []))
        out[-1].points.append((r["t"], r["value"]))
    return out


@dataclass
class CampaignRows:
    campaign: dict
    targets: Rows
    runs: Rows
    metrics: Rows  # in the order they were recorded
    series: list[SeriesRows]  # by run and name, each series' points by time
    artifacts: Rows

    def table(self, name: str) -> Rows:
        """A table's rows with its columns (TABLES); the series a row per point."""
        if name == "series":
            return [
                {"run_id": s.run_id, "name": s.name, "unit": s.unit, "t": t, "value": v}
                for s in self.series
                for t, v in s.points
            ]
        return getattr(self, name)

    @property
    def uuid(self) -> str:
        return self.campaign["uuid"]

    def digest(self) -> str:
        """What the campaign holds, as one hash: an import tells a changed directory
        from the one it already holds by it."""
        h = hashlib.sha256()
        h.update(json.dumps([self.campaign[c] for c in CAMPAIGN]).encode())
        for name, columns in TABLES.items():
            for row in self.table(name):
                h.update(json.dumps([row[c] for c in columns]).encode())
                h.update(b"\n")
            h.update(b"\f")
        return h.hexdigest()

    def counts(self) -> dict[str, int]:
        points = sum(len(s.points) for s in self.series)  # not rebuilt a row each
        return {name: points if name == "series" else len(self.table(name)) for name in TABLES}


def _select(
    conn: sqlite3.Connection,
    table: str,
    columns: tuple[str, ...],
    order: str,
) -> Rows:
    """The table's rows as read-only mappings (sqlite3.Row, made in C: a dict each cost
    ~1 µs a row more, measured on 23,000 series rows); a column an older version lacks
    reads as its DEFAULTS value, or NULL."""
    have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
    picked = ", ".join(c if c in have else f"? AS {c}" for c in columns)
    missing = [DEFAULTS.get(c) for c in columns if c not in have]
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor.execute(f"SELECT {picked} FROM {table} ORDER BY {order}", missing).fetchall()


def _series(conn: sqlite3.Connection) -> list[SeriesRows]:
    """Every series, its points sliced by a count per series from one two-column read:
    the 23,000 points of a 100-run campaign in ~20 ms where a row each with its run,
    name and unit, grouped in Python, took ~30. Both reads go by (run, name), in one
    transaction (read_rows)."""
    # unit a bare column (any row's): a series has one unit, store/db.py writes it so
    heads = conn.execute(
        "SELECT run_id, name, unit, count(*) FROM series GROUP BY run_id, name "
        "ORDER BY run_id, name"
    ).fetchall()
    plain = conn.cursor()
    plain.row_factory = None  # (t, value) tuples, the Series' points as they are
    points = plain.execute("SELECT t, value FROM series ORDER BY run_id, name, t, rowid").fetchall()
    out, at = [], 0
    for run_id, name, unit, count in heads:
        out.append(SeriesRows(run_id, name, unit, points[at : at + count]))
        at += count
    return out


def read_sqlite(conn: sqlite3.Connection, series: bool = True) -> CampaignRows:
    """Every row of the campaign in a results.db of any version this program reads;
    ``series=False`` leaves the per-second series out (a listing needs none)."""
    campaigns = _select(conn, "campaign", CAMPAIGN, "id")
    campaign = dict(campaigns[0]) if campaigns else None
    if campaign is None:
        raise LookupError("the results hold no campaign yet")
    if campaign["uuid"] is None:  # recorded before campaigns had one
        campaign["uuid"] = legacy_uuid(campaign["id"], campaign["started"])
    if campaign["schema_version"] is None:
        campaign["schema_version"] = sqlite_version(conn)
    return CampaignRows(
        campaign,
        _select(conn, "targets", TARGETS, "position, id"),
        _select(conn, "runs", RUNS, "id"),
        _select(conn, "metrics", METRICS, "run_id, rowid"),
        _series(conn) if series else [],
        _select(conn, "artifacts", ARTIFACTS, "id"),
    )
