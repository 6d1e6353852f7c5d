"""The PostgreSQL results store: many campaigns, from many hosts, in one database.

It holds what results directories hold (their results.db rows; the artifacts stay
on disk, named by the campaign's directory), keyed by each campaign's UUID.
A campaign is imported in one transaction: an interrupted import leaves every
campaign already imported whole, and the one it was on absent. Importing the
same campaign again changes nothing if its directory is unchanged; a directory
that changed since (a campaign that was still running, then ended; one marked
killed by ``cleanup``) replaces what the store held of it, whole.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.string import TextLoader

from pgfsbench import __version__
from pgfsbench.errors import UserError
from pgfsbench.store.read import Campaign, campaign_from_rows
from pgfsbench.store.rows import CAMPAIGN, DECISIONS, TABLES, CampaignRows, group_series
from pgfsbench.store.url import check_store_url, parse_conninfo, shown
from pgfsbench.store.version import PG_LAYOUT, PG_SCHEMA_VERSION, SCHEMA_VERSION, refuse_newer

CONNECT_TIMEOUT_S = 10
SCHEMA_LOCK = 0x70676673  # an advisory lock: one process creates the schema at a time
ORDER = {
    "targets": "position, id",
    "runs": "id",
    "metrics": "run_id, seq",
    "series": "run_id, name, t",
    "artifacts": "id",
}
# The columns that hold times (timestamptz from layout 3; epoch seconds before), read
# back as the epoch seconds the rest of the program works in.
TIMES = ("started", "ended")
# JSON values that jsonb refuses and json.dumps writes: a NUL in a string, NaN/Infinity.
JSONB_REFUSES = ("\\u0000", "NaN", "Infinity")
# A campaign's decisions, one dict of DECISIONS' values per contender cell: the tool's
# own (analysis/verdicts/decisions.py), given by the caller; the store imports no analysis.
Decide = Callable[[Campaign], list[dict]]


class StoreFailed(Exception):
    """The store went away (or refused a write) while importing: what was committed
    before stays; the campaign being imported is not in it."""


@dataclass
class Imported:
    uuid: str
    campaign_id: str
    action: str  # "imported", "unchanged" or "updated"
    before: str = ""  # updated: what the store held (status, runs, when imported)


def _sql(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class PgStore:
    def __init__(self, url: str, conn: psycopg.Connection):
        self.url = url
        self.conn = conn
        self.layout = PG_LAYOUT  # the store's, once _ensure_schema has read it
        self.not_upgraded = ""  # why an older layout was left as it is (read as it is)

    @classmethod
    def connect(cls, url: str, write: bool = False) -> PgStore:
        """Connect, and create the schema in an empty database (UserError if the store
        cannot be reached, is newer than this program, or, with ``write``, has an older
        layout it could not be brought up from). ``url`` is any connection string libpq
        accepts (store/url.py); what it leaves out comes from libpq's environment."""
        try:
            params: dict[str, Any] = dict(parse_conninfo(url))
        except ValueError:
            check_store_url(url)  # raises, with libpq's reason
            raise
        if "connect_timeout" not in params and not os.environ.get("PGCONNECT_TIMEOUT"):
            params["connect_timeout"] = CONNECT_TIMEOUT_S
        # The lowest priority: an application_name of the string, a service or
        # PGAPPNAME wins.
        params.setdefault("fallback_application_name", "pgfsbench")
        try:
            # Autocommit: every write is an explicit transaction(), never nested in an
            # implicit one a read left open.
            conn = psycopg.connect(psycopg.conninfo.make_conninfo("", **params), autocommit=True)
        except psycopg.Error as exc:
            raise UserError(
                f"cannot reach the results store {shown(url)}: "
                f"{_first_line(exc)}; check the connection string and that the server "
                "runs (the results directories stay importable later with "
                "'pgfsbench import DIR --store URL')"
            ) from None
        for json_type in ("json", "jsonb"):  # the JSON as text, parsed where it is used
            conn.adapters.register_loader(json_type, TextLoader)
        store = cls(url, conn)
        try:
            store._ensure_schema()
            if write and store.not_upgraded:
                raise UserError(
                    f"the results store {shown(url)} has layout {store.layout}, older than "
                    f"this pgfsbench writes ({PG_LAYOUT}), and this user could not bring it "
                    f"up: {store.not_upgraded}"
                )
        except psycopg.Error as exc:
            conn.close()
            raise UserError(
                f"cannot set up the results store {shown(url)}: "
                f"{_first_line(exc)} (the user needs CREATE on the database "
                "the first time)"
            ) from None
        except UserError:
            conn.close()
            raise
        return store

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def _ensure_schema(self) -> None:
        with self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            version, layout = 0, 0
            if _one(self.conn.execute("SELECT to_regclass('pgfsbench_schema') IS NOT NULL"))[0]:
                # The layout column came with layout 2: read it whether or not it is there.
                version, layout = _one(
                    self.conn.execute(
                        "SELECT coalesce(max(version), 0), coalesce(max((to_jsonb(s) ->> "
                        "'layout')::integer), 1) FROM pgfsbench_schema s"
                    )
                )
                where = f"the results store {shown(self.url)}"
                refuse_newer(version, where, PG_SCHEMA_VERSION)
                self.layout = layout
                if version == PG_SCHEMA_VERSION and layout >= PG_LAYOUT:
                    return
            if version < SCHEMA_VERSION:  # empty, or older: the script only adds
                self.conn.execute(_sql("schema_pg.sql"))
            if layout < PG_LAYOUT:
                try:
                    with self.conn.transaction():  # a savepoint
                        self.conn.execute(_sql("views_pg.sql"))
                except (
                    psycopg.errors.InsufficientPrivilege,  # not the tables' owner
                    psycopg.errors.DependentObjectsStillExist,  # a view over our views
                    psycopg.errors.FeatureNotSupported,  # a view over a changed column
                ) as exc:
                    # A reader reads the tables as they are (either layout's types);
                    # a writer is refused (connect(write=True)) until the owner opens it.
                    if version < SCHEMA_VERSION:
                        raise
                    detail = exc.diag.message_detail
                    self.not_upgraded = _first_line(exc) + (
                        f" ({detail.splitlines()[0]})" if detail else ""
                    )
                    if not isinstance(exc, psycopg.errors.InsufficientPrivilege):
                        self.not_upgraded += (
                            "; drop those objects, open the store once with this pgfsbench "
                            "('pgfsbench list --store URL'), then make them again"
                        )
                    else:
                        self.not_upgraded += (
                            "; the tables' owner opens it once with this pgfsbench "
                            "('pgfsbench list --store URL') to bring it up"
                        )
                    return
                layout = PG_LAYOUT
            self.conn.execute("DELETE FROM pgfsbench_schema")
            self.conn.execute(
                "INSERT INTO pgfsbench_schema (version, layout) VALUES (%s, %s)",
                (PG_SCHEMA_VERSION, max(layout, PG_LAYOUT)),
            )
            self.layout = max(layout, PG_LAYOUT)

    # --- writing ---------------------------------------------------------------
    def import_rows(self, rows: CampaignRows, results_dir: Path, decide: Decide) -> Imported:
        """Import one campaign in one transaction, with its decisions as ``decide`` makes
        them (StoreFailed if the store fails)."""
        c = rows.campaign
        digest = rows.digest()
        try:
            with self.conn.transaction():
                # Two imports of one campaign at once: the second waits, then sees it.
                self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (rows.uuid,))
                held = self.conn.execute(
                    "SELECT source_digest, status, imported_at, results_dir, "
                    "(SELECT count(*) FROM runs WHERE campaign_uuid = %s), "
                    "decided_at IS NOT NULL "
                    "FROM campaign WHERE uuid = %s",
                    (rows.uuid, rows.uuid),
                ).fetchone()
                if held and held[0] == digest:
                    if not held[5]:  # imported before decisions were kept
                        self._decide(rows, results_dir, decide)
                    return Imported(rows.uuid, c["id"], "unchanged")
                before = ""
                if held:
                    before = (
                        f"{held[1]}, {held[4]} runs, from {held[3]}, imported "
                        f"{held[2]:%Y-%m-%d %H:%M %Z}"
                    )
                    self.conn.execute("DELETE FROM campaign WHERE uuid = %s", (rows.uuid,))
                self._insert(rows, results_dir, digest)
                self._decide(rows, results_dir, decide)
        except psycopg.Error as exc:
            raise StoreFailed(f"{shown(self.url)}: {_first_line(exc)}") from exc
        return Imported(rows.uuid, c["id"], "updated" if held else "imported", before)

    def _insert(self, rows: CampaignRows, results_dir: Path, digest: str) -> None:
        c = rows.campaign
        host = json.loads(c["host_json"])
        self.conn.execute(
            f"INSERT INTO campaign ({', '.join(CAMPAIGN)}, hostname, machine_id, "
            f"results_dir, source_digest) VALUES ({', '.join(['%s'] * (len(CAMPAIGN) + 4))})",
            [_stored(k, c[k]) for k in CAMPAIGN]
            + [host.get("hostname"), host.get("machine_id"), str(results_dir.resolve()), digest],
        )
        for name, columns in TABLES.items():
            extra = ("seq",) if name == "metrics" else ()
            with self.conn.cursor().copy(
                f"COPY {name} (campaign_uuid, {', '.join(columns + extra)}) FROM STDIN"
            ) as copy:
                if name in ("targets", "runs", "artifacts"):  # times, JSON
                    for row in rows.table(name):
                        copy.write_row([rows.uuid, *(_stored(k, row[k]) for k in columns)])
                    continue
                for seq, row in enumerate(rows.table(name)):
                    copy.write_row(
                        [rows.uuid, *(row[k] for k in columns), *((seq,) if extra else ())]
                    )

    def _decide(self, rows: CampaignRows, results_dir: Path, decide: Decide) -> None:
        """The campaign's decisions as the report makes them (analysis/verdicts/decisions.py)."""
        found = decide(campaign_from_rows(rows, results_dir))
        with self.conn.cursor().copy(
            f"COPY decisions (campaign_uuid, {', '.join(DECISIONS)}) FROM STDIN"
        ) as copy:
            for d in found:
                copy.write_row([rows.uuid, *(d[k] for k in DECISIONS)])
        self.conn.execute(
            "UPDATE campaign SET decided_at = now(), decided_by = %s WHERE uuid = %s",
            (__version__, rows.uuid),
        )

    # --- reading ---------------------------------------------------------------
    def campaigns(self) -> list[dict]:
        """Every campaign's row (without the JSON bodies' weight), oldest first."""
        cur = self.conn.cursor(row_factory=dict_row)
        return [
            {
                **r,
                "uuid": str(r["uuid"]),
                "started": _epoch(r["started"]),
                "ended": _epoch(r["ended"]),
            }
            for r in cur.execute(
                "SELECT uuid, id, plan_name, hostname, machine_id, started, ended, status, "
                "results_dir FROM campaign ORDER BY started, uuid"
            )
        ]

    def find(self, name: str) -> str:
        """The UUID of the campaign ``name`` names: its UUID or id, or a unique prefix
        of either (UserError if none or several)."""
        rows = (
            self.conn.execute(
                "SELECT uuid::text, id FROM campaign WHERE uuid::text = %s OR id = %s",
                (name.lower(), name),
            ).fetchall()
            or self.conn.execute(
                "SELECT uuid::text, id FROM campaign WHERE uuid::text LIKE %s OR id LIKE %s",
                (name.lower().replace("%", r"\%") + "%", name.replace("%", r"\%") + "%"),
            ).fetchall()
        )
        if len(rows) == 1:
            return rows[0][0]
        if not rows:
            raise UserError(
                f"no campaign '{name}' in the results store {shown(self.url)} "
                "('pgfsbench list --store URL' lists them)"
            )
        raise UserError(
            f"'{name}' names {len(rows)} campaigns in the results store: "
            + ", ".join(f"{u} ({i})" for u, i in rows[:5])
            + "; give more of it"
        )

    def rows(self, uuid: str, series: bool = True) -> tuple[CampaignRows, Path]:
        """Every row of one campaign, read from one snapshot (an import replacing it
        meanwhile is seen whole or not at all)."""
        self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            found = self._rows(uuid, series)
        except BaseException:
            with contextlib.suppress(psycopg.Error):
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return found

    def _rows(self, uuid: str, series: bool) -> tuple[CampaignRows, Path]:
        cur = self.conn.cursor(row_factory=dict_row)
        campaign = cur.execute(
            f"SELECT {', '.join(CAMPAIGN)}, results_dir FROM campaign WHERE uuid = %s", (uuid,)
        ).fetchone()
        if campaign is None:
            raise UserError(f"no campaign {uuid} in the results store {shown(self.url)}")
        campaign["uuid"] = str(campaign["uuid"])
        for k in TIMES:
            campaign[k] = _epoch(campaign[k])
        results_dir = Path(campaign.pop("results_dir"))
        tables: dict[str, list[dict]] = {}
        for name, columns in TABLES.items():
            if name == "series" and not series:
                tables[name] = []
                continue
            tables[name] = cur.execute(
                f"SELECT {', '.join(columns)} FROM {name} WHERE campaign_uuid = %s "
                f"ORDER BY {ORDER[name]}",
                (uuid,),
            ).fetchall()
        for run in tables["runs"]:
            for k in TIMES:
                run[k] = _epoch(run[k])
        grouped = group_series(tables.pop("series"))
        return CampaignRows(campaign, series=grouped, **tables), results_dir

    def load_campaign(self, name: str, series: bool = True) -> Campaign:
        rows, results_dir = self.rows(self.find(name), series)
        return campaign_from_rows(rows, results_dir)


def _one(cursor: psycopg.Cursor[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The row of a query that always returns one (an aggregate, a test)."""
    row = cursor.fetchone()
    if row is None:
        raise psycopg.DataError("a query that returns one row returned none")
    return row


def _epoch(value: datetime.datetime | float | None) -> float | None:
    """A time as seconds since the epoch: a timestamptz (layout 3) or the seconds an
    older layout kept. Exact to the microsecond, timestamptz's resolution."""
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    return value


def _stored(column: str, value: Any) -> Any:
    """A value as the store keeps it: a time as a timestamptz, JSON text that jsonb takes."""
    if value is None:
        return None
    if column in TIMES:
        return datetime.datetime.fromtimestamp(value, datetime.UTC)
    if column.endswith("_json") and any(s in value for s in JSONB_REFUSES):
        return json.dumps(_jsonb_safe(json.loads(value)))
    return value


def _jsonb_safe(value: Any) -> Any:
    """``value`` with what jsonb refuses replaced: NUL in a string by U+FFFD (as
    undecodable output already is), NaN and infinities by null."""
    if isinstance(value, str):
        return value.replace("\0", "\ufffd")
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, list):
        return [_jsonb_safe(v) for v in value]
    if isinstance(value, dict):
        return {_jsonb_safe(k): _jsonb_safe(v) for k, v in value.items()}
    return value
