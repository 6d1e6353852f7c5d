"""The results database: one SQLite file per results directory.

Every write commits at once, so whatever completed survives a crash or a
Ctrl-C. Everything the report shows is rebuilt from here plus the artifacts.

A results filesystem that fills up (or turns read-only) mid-campaign ends the
campaign with ``ResultsUnwritable``: nothing more could be recorded. A small
reserve file, made when the store is created and freed then, leaves room to
record how the campaign ended.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from pgfsbench.errors import ResultsUnwritable, UserError
from pgfsbench.metrics import Artifact, WorkloadResult
from pgfsbench.store.version import SCHEMA_VERSION, migrate_sqlite, refuse_newer, sqlite_version

DB_NAME = "results.db"
RESERVE_NAME = ".pgfsbench-reserve"
RESERVE_BYTES = 1 << 20  # room for the last few rows: the campaign's end, a run's failure
MIN_FREE_BYTES = 16 << 20  # a new results directory needs at least this much
WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)
BUSY_SECONDS = 60  # a reader (a report while the campaign runs) may hold the file briefly


def check_new_results_dir(results_dir: Path) -> None:
    """Refuse, before anything is made, a results directory that cannot take results:
    one that already holds some, or is on a read-only or full filesystem."""
    if (results_dir / DB_NAME).exists():
        raise UserError(
            f"{results_dir} already holds results ({DB_NAME}); give --results "
            "a new directory so nothing is overwritten"
        )
    existing = results_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    fix = "give --results a directory on a writable filesystem with free space"
    if not existing.is_dir():
        raise UserError(f"--results {results_dir}: {existing} is not a directory; {fix}")
    stats = os.statvfs(existing)
    if stats.f_flag & os.ST_RDONLY:
        raise UserError(f"--results {results_dir}: {existing} is on a read-only filesystem; {fix}")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UserError(f"--results {results_dir}: {existing} is not writable by this user; {fix}")
    if (free := stats.f_bavail * stats.f_frsize) < MIN_FREE_BYTES:
        raise UserError(
            f"--results {results_dir}: {existing} has {free // 1024} kB free, "
            f"at least {MIN_FREE_BYTES >> 20} MB are needed; {fix}"
        )


def _writes(method):
    """A write that fails because the results can no longer be written is
    ResultsUnwritable, whatever SQLite calls it (full, read-only, I/O error)."""

    @functools.wraps(method)
    def wrapper(self: Store, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise ResultsUnwritable(f"cannot write {self.results_dir / DB_NAME}: {exc}") from exc

    return wrapper


class Store:
    def __init__(self, results_dir: Path, conn: sqlite3.Connection):
        self.results_dir = results_dir
        self.conn = conn

    # --- opening ---------------------------------------------------------------
    @classmethod
    def create(cls, results_dir: Path) -> Store:
        check_new_results_dir(results_dir)
        path = results_dir / DB_NAME
        try:
            results_dir.mkdir(parents=True, exist_ok=True)
            _make_reserve(results_dir / RESERVE_NAME)
            conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_SECONDS)
            conn.executescript(resources.files(__package__).joinpath("schema.sql").read_text())
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except (OSError, sqlite3.Error) as exc:
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise UserError(
                f"cannot create results in {results_dir}: {why}; give --results "
                "a directory on a writable filesystem with free space"
            ) from None
        return cls(results_dir, conn)

    @classmethod
    def open(cls, results_dir: Path, writable: bool = False) -> Store:
        """Open existing results: one from a newer pgfsbench is refused (UserError); an
        older one is read as it is, and migrated to this version when ``writable``."""
        path = results_dir / DB_NAME
        if not path.is_file():
            raise UserError(
                f"{results_dir} holds no results ({DB_NAME} not found); "
                "run 'pgfsbench run --results DIR' first"
            )
        mode = "rw" if writable else "ro"
        try:
            conn = sqlite3.connect(
                f"file:{path}?mode={mode}", uri=True, isolation_level=None, timeout=BUSY_SECONDS
            )
            conn.execute("SELECT count(*) FROM campaign").fetchone()  # readable at all?
            refuse_newer(sqlite_version(conn), str(path))
            if writable:
                migrate_sqlite(conn)
        except sqlite3.Error as exc:
            raise UserError(f"cannot read {path}: {exc}") from None
        except UserError:
            conn.close()
            raise
        conn.row_factory = sqlite3.Row
        return cls(results_dir, conn)

    @classmethod
    def reopen(cls, results_dir: Path) -> Store:
        """Open a campaign's results to resume it: writable, with its reserve made again."""
        store = cls.open(results_dir, writable=True)
        try:
            _make_reserve(results_dir / RESERVE_NAME)
        except OSError as exc:
            store.close()
            raise UserError(
                f"cannot write to {results_dir}: {exc.strerror}; free space there, then resume"
            ) from None
        return store

    def close(self) -> None:
        self.conn.close()

    # --- room to record the end --------------------------------------------------
    def release_reserve(self) -> None:
        """Free the reserve: room for the last writes once the filesystem is full."""
        with contextlib.suppress(OSError):
            (self.results_dir / RESERVE_NAME).unlink()

    def raise_if_unwritable(self, exc: BaseException) -> None:
        """``exc`` came from writing a file: if it is because the results filesystem is
        full or read-only (not the target's, which a run may fill on purpose), the
        campaign cannot go on: raise ResultsUnwritable."""
        if not isinstance(exc, OSError) or exc.errno not in WRITE_ERRNOS:
            return
        try:
            stats = os.statvfs(self.results_dir)
        except OSError as gone:
            raise ResultsUnwritable(f"cannot reach {self.results_dir}: {gone.strerror}") from exc
        if stats.f_flag & os.ST_RDONLY or stats.f_bavail * stats.f_frsize < RESERVE_BYTES:
            raise ResultsUnwritable(f"cannot write to {self.results_dir}: {exc.strerror}") from exc

    # --- writing ---------------------------------------------------------------
    @_writes
    def start_campaign(
        self, campaign_id: str, plan_name: str, plan: dict, host: dict, version: str
    ) -> None:
        self.conn.execute(
            "INSERT INTO campaign (id, plan_name, plan_json, host_json, pgfsbench_version, "
            "started, status, uuid, schema_version) VALUES (?,?,?,?,?,?,'running',?,?)",
            (
                campaign_id,
                plan_name,
                json.dumps(plan),
                json.dumps(host),
                version,
                time.time(),
                str(uuid.uuid4()),
                SCHEMA_VERSION,
            ),
        )

    @_writes
    def resume_campaign(self, from_round: int, settling_again: bool = False) -> int:
        """Mark the campaign running again; the runs that will be run again (those of
        ``from_round`` on, the settling round's when it runs again from the start, and
        any cut short) become 'superseded': kept, never counted. Returns how many."""
        why = f"run again when the campaign was resumed at round {from_round}"
        with self.conn:
            self.conn.execute("BEGIN")
            cur = self.conn.execute(
                "UPDATE runs SET status='superseded', error=? || ' (was ' || status || "
                "COALESCE(': ' || error, '') || ')' WHERE status != 'superseded' AND "
                "(repetition >= ? OR (repetition = 0 AND ?) "
                "OR status IN ('running', 'interrupted'))",
                (why, from_round, int(settling_again)),
            )
            self.conn.execute("UPDATE campaign SET status='running', ended=NULL")
        return cur.rowcount

    @_writes
    def set_schedule(self, schedule: dict) -> None:
        self.conn.execute("UPDATE campaign SET schedule_json=?", (json.dumps(schedule),))

    @_writes
    def end_campaign(self, status: str) -> None:
        """Close the campaign, and any run still 'running': a signal can land after a
        run's row is made and before the code that would record its end, and a killed
        run records nothing (``pgfsbench cleanup`` ends it as 'killed')."""
        now = time.time()
        run_status, why = {
            "interrupted": ("interrupted", "interrupted by a signal"),
            "killed": ("interrupted", "pgfsbench was killed while it ran"),
        }.get(status, ("failed", f"the campaign ended ({status}) while it ran"))
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute(
                "UPDATE runs SET status=?, error=?, ended=? WHERE status='running'",
                (run_status, why, now),
            )
            self.conn.execute("UPDATE campaign SET ended=?, status=?", (now, status))
        self.release_reserve()

    def outcome(self) -> str:
        """How a campaign that ran to its end went, from what is recorded: 'ok' when
        every target and run completed, 'partial' when some runs did, else 'failed'."""
        runs = dict(
            self.conn.execute(
                "SELECT status, count(*) FROM runs WHERE status NOT IN ('superseded', 'redone') "
                "GROUP BY status"
            )
        )
        targets = dict(self.conn.execute("SELECT status, count(*) FROM targets GROUP BY status"))
        ok = runs.get("ok", 0)
        if ok and ok == sum(runs.values()) and targets.get("ok", 0) == sum(targets.values()):
            return "ok"
        return "partial" if ok else "failed"

    def end_if_killed(self) -> bool:
        """End a campaign whose process died without ending it; True if it was one."""
        row = self.conn.execute("SELECT status FROM campaign").fetchone()
        if row is None or row[0] != "running":
            return False
        self.end_campaign("killed")
        return True

    @_writes
    def add_target(self, name: str, position: int, kind: str, fs: str, spec: dict) -> int:
        cur = self.conn.execute(
            "INSERT INTO targets (name, position, kind, fs, spec_json, status) "
            "VALUES (?,?,?,?,?,'pending')",
            (name, position, kind, fs, json.dumps(spec)),
        )
        assert cur.lastrowid is not None  # an INSERT sets it
        return cur.lastrowid

    @_writes
    def set_target(
        self,
        target_id: int,
        status: str,
        reason: str | None = None,
        provenance: dict | None = None,
        fs: str | None = None,
    ) -> None:
        self.conn.execute(
            "UPDATE targets SET status=?, reason=COALESCE(?, reason), "
            "provenance_json=COALESCE(?, provenance_json), fs=COALESCE(?, fs) WHERE id=?",
            (status, reason, json.dumps(provenance) if provenance else None, fs, target_id),
        )

    @_writes
    def start_run(
        self, target_id: int, workload: str, params: dict, label: str = "", repetition: int = 1
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs (target_id, workload, label, repetition, params_json, status, "
            "started) VALUES (?,?,?,?,?,'running',?)",
            (target_id, workload, label, repetition, json.dumps(params), time.time()),
        )
        assert cur.lastrowid is not None  # an INSERT sets it
        return cur.lastrowid

    @_writes
    def finish_run(self, run_id: int, status: str, error: str | None = None) -> None:
        self.conn.execute(
            "UPDATE runs SET status=?, error=?, ended=? WHERE id=?",
            (status, error, time.time(), run_id),
        )

    @_writes
    def mark_redone(self, run_id: int, why: str) -> None:
        """A counted run found disturbed and run again in its round: kept, never counted
        (its status 'redone', the evidence in its error)."""
        self.conn.execute(
            "UPDATE runs SET status='redone', error=? WHERE id=? AND status='ok'", (why, run_id)
        )

    @_writes
    def mark_left_out(self, run_id: int, why: str) -> None:
        """A counted run found disturbed and kept (not run again): it stays 'ok' with the
        metric ``disturb.left_out`` (1, the evidence in its note), which the statistics
        and the SQL views leave out."""
        self.conn.execute(
            "INSERT OR REPLACE INTO metrics VALUES (?, 'disturb.left_out', 1.0, '', NULL, ?)",
            (run_id, why),
        )

    @_writes
    def mark_trimmed(self, run_id: int, headline: str, ratio: float) -> None:
        """A counted run a burst touched in part: it stays 'ok' with the metric
        ``disturb.trimmed`` (the ratio its headline counts times, the headline's name in
        its note), which the SQL views read as the statistics do: that figure counted
        from the seconds no burst touched, the run's other figures left out."""
        self.conn.execute(
            "INSERT OR REPLACE INTO metrics VALUES (?, 'disturb.trimmed', ?, '×', NULL, ?)",
            (run_id, ratio, headline),
        )

    @_writes
    def add_result(self, run_id: int, target_id: int, result: WorkloadResult) -> None:
        """A finished run's numbers, and its status 'ok', then its artifacts."""
        # One transaction: a run's numbers land whole or not at all, and never
        # without the 'ok' that makes them count (a signal could fall between).
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute(
                "UPDATE runs SET status='ok', error=NULL, ended=? WHERE id=?", (time.time(), run_id)
            )
            self.conn.executemany(
                "INSERT INTO metrics VALUES (?,?,?,?,?,?)",
                [
                    (
                        run_id,
                        m.name,
                        m.value,
                        m.unit,
                        None if m.higher_is_better is None else int(m.higher_is_better),
                        m.note,
                    )
                    for m in result.metrics
                ],
            )
            self.conn.executemany(
                "INSERT INTO series VALUES (?,?,?,?,?)",
                [(run_id, s.name, s.unit, t, v) for s in result.series for t, v in s.points],
            )
        self.add_artifacts(result.artifacts, target_id=target_id, run_id=run_id)

    @_writes
    def add_artifact(
        self,
        kind: str,
        path: Path,
        *,
        target_id: int | None = None,
        run_id: int | None = None,
        command: tuple[str, ...] = (),
        exit_code: int | None = None,
    ) -> None:
        try:
            rel = str(Path(path).resolve().relative_to(self.results_dir.resolve()))
        except ValueError:
            rel = str(path)
        self.conn.execute(
            "INSERT INTO artifacts (target_id, run_id, kind, path, command_json, exit_code) "
            "VALUES (?,?,?,?,?,?)",
            (
                target_id,
                run_id,
                kind,
                rel,
                json.dumps(list(command)) if command else None,
                exit_code,
            ),
        )

    def add_artifacts(self, artifacts: Iterable[Artifact], *, target_id: int, run_id: int) -> None:
        """A run's artifacts (its tools' outputs, with their commands and exit codes)."""
        for a in artifacts:
            self.add_artifact(
                a.kind,
                a.path,
                target_id=target_id,
                run_id=run_id,
                command=a.command,
                exit_code=a.exit_code,
            )


def _make_reserve(path: Path) -> None:
    """RESERVE_BYTES of real blocks (a sparse file would free nothing)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.posix_fallocate(fd, 0, RESERVE_BYTES)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
            raise
        os.write(fd, bytes(RESERVE_BYTES))
    finally:
        os.close(fd)
