"""The results schema's version: which layout a results database has, and the way up.

SQLite keeps it in ``PRAGMA user_version``; the PostgreSQL store in its
``pgfsbench_schema`` table; every campaign also records the version it was
written with. Versions:

1. before versioning (``user_version`` 0): campaign keyed by its readable id only;
   the oldest files also lack ``runs.label``/``runs.repetition``/``schedule_json``.
2. a campaign UUID (the key across stores and hosts) and ``schema_version`` on
   every campaign; host facts carry the machine id and the OS.

The PostgreSQL store adds a reading layer of its own on those tables (views of tidy
rows, comments, the campaigns' decisions), numbered apart in ``pgfsbench_schema.layout``
so results.db files are not touched by it:

1. (or NULL) the tables alone;
2. views (campaigns, measurements, counted_measurements, medians, verdicts), the
   decisions table, a comment on every table, view and column;
3. the JSON columns jsonb and the campaigns' and runs' times timestamptz (they were
   json text and epoch seconds), indexes for the documented queries, the
   target_provenance view;
4. the measurements view counts a run a burst touched in part as the statistics do
   (``disturb.trimmed``: its headline from the seconds the burst spared, nothing else).

A store with an older layout is brought to this one when opened by a user who owns its
tables (views_pg.sql: it adds, and changes column types in place, one transaction); a
reader without that right reads it as it is (either column types), and a writer is
refused until it is brought up. A newer layout is read as it is (its tables are the
same schema version).

Layout 3 changed the tables' column types, which a pgfsbench of layout 2 or before
cannot read or write: a store brought to it records ``pgfsbench_schema.version`` 3
(PG_SCHEMA_VERSION: results schema 2 in jsonb and timestamptz), so such a pgfsbench
refuses it with its "newer than this pgfsbench reads: upgrade" message instead of
failing on a type.

A database newer than this program is refused (its layout is unknown here); an
older one is read as it is, and migrated in place only when opened for writing.
"""

from __future__ import annotations

import sqlite3
import uuid

from pgfsbench.errors import UserError

SCHEMA_VERSION = 2
PG_LAYOUT = 4  # the PostgreSQL store's reading layer (views_pg.sql)
PG_SCHEMA_VERSION = 3  # the PostgreSQL store's tables: SCHEMA_VERSION's, jsonb and timestamptz
UNVERSIONED = 1  # what a file with user_version 0 is: written before versioning
# Legacy campaigns get a UUID derived from what identifies them, so importing the same
# directory twice finds the same campaign.
LEGACY_NAMESPACE = uuid.UUID("5b0f9a8e-3c1d-4f8e-9a63-70677366736e")


def legacy_uuid(campaign_id: str, started: float) -> str:
    """The stable UUID of a campaign recorded before campaigns had one."""
    return str(uuid.uuid5(LEGACY_NAMESPACE, f"{campaign_id}/{started!r}"))


def sqlite_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0] or UNVERSIONED


def refuse_newer(version: int, where: str, newest: int = SCHEMA_VERSION) -> None:
    if version > newest:
        raise UserError(
            f"{where} has results schema version {version}, newer than this "
            f"pgfsbench reads (up to {newest}): upgrade pgfsbench to "
            "read it"
        )


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def migrate_sqlite(conn: sqlite3.Connection) -> int:
    """Bring an older results.db up to SCHEMA_VERSION in one transaction; returns the
    version it had. Nothing is removed: columns are added and filled."""
    found = sqlite_version(conn)
    refuse_newer(found, "this results.db")
    if found == SCHEMA_VERSION:
        return found
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        runs = _columns(conn, "runs")
        if "label" not in runs:
            conn.execute("ALTER TABLE runs ADD COLUMN label TEXT NOT NULL DEFAULT ''")
        if "repetition" not in runs:
            conn.execute("ALTER TABLE runs ADD COLUMN repetition INTEGER NOT NULL DEFAULT 1")
        campaign = _columns(conn, "campaign")
        if "schedule_json" not in campaign:
            conn.execute("ALTER TABLE campaign ADD COLUMN schedule_json TEXT")
        if "uuid" not in campaign:
            conn.execute("ALTER TABLE campaign ADD COLUMN uuid TEXT")
        if "schema_version" not in campaign:
            conn.execute("ALTER TABLE campaign ADD COLUMN schema_version INTEGER")
        for cid, started in conn.execute("SELECT id, started FROM campaign").fetchall():
            conn.execute(
                "UPDATE campaign SET uuid=?, schema_version=? WHERE id=? AND uuid IS NULL",
                (legacy_uuid(cid, started), found, cid),
            )
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return found
