"""The results database: one SQLite file per results directory.

Every write commits at once, so whatever completed survives a crash or a
Ctrl-C. Everything the report shows is rebuilt from here plus the artifacts.
"""

from __future__ import annotations

import json
import sqlite3
import time
from importlib import resources
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.workloads.result import WorkloadResult

DB_NAME = "results.db"


class Store:
    def __init__(self, results_dir: Path, conn: sqlite3.Connection):
        self.results_dir = results_dir
        self.conn = conn

    # --- opening ---------------------------------------------------------------
    @classmethod
    def create(cls, results_dir: Path) -> "Store":
        results_dir.mkdir(parents=True, exist_ok=True)
        path = results_dir / DB_NAME
        if path.exists():
            raise UserError(f"{results_dir} already holds results ({DB_NAME}); "
                            "give --results a new directory so nothing is overwritten")
        conn = sqlite3.connect(path, isolation_level=None)
        conn.executescript(resources.files(__package__).joinpath("schema.sql").read_text())
        return cls(results_dir, conn)

    @classmethod
    def open(cls, results_dir: Path, writable: bool = False) -> "Store":
        path = results_dir / DB_NAME
        if not path.is_file():
            raise UserError(f"{results_dir} holds no results ({DB_NAME} not found); "
                            "run 'pgfsbench run --results DIR' first")
        mode = "rw" if writable else "ro"
        conn = sqlite3.connect(f"file:{path}?mode={mode}", uri=True, isolation_level=None)
        conn.row_factory = sqlite3.Row
        return cls(results_dir, conn)

    def close(self) -> None:
        self.conn.close()

    # --- writing ---------------------------------------------------------------
    def start_campaign(self, campaign_id: str, plan_name: str, plan: dict, host: dict,
                       version: str) -> None:
        self.conn.execute(
            "INSERT INTO campaign VALUES (?,?,?,?,?,?,NULL,'running',NULL)",
            (campaign_id, plan_name, json.dumps(plan), json.dumps(host), version, time.time()))

    def set_schedule(self, schedule: dict) -> None:
        self.conn.execute("UPDATE campaign SET schedule_json=?", (json.dumps(schedule),))

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
            self.conn.execute("UPDATE runs SET status=?, error=?, ended=? WHERE status='running'",
                              (run_status, why, now))
            self.conn.execute("UPDATE campaign SET ended=?, status=?", (now, status))

    def end_if_killed(self) -> bool:
        """End a campaign whose process died without ending it; True if it was one."""
        row = self.conn.execute("SELECT status FROM campaign").fetchone()
        if row is None or row[0] != "running":
            return False
        self.end_campaign("killed")
        return True

    def add_target(self, name: str, position: int, kind: str, fs: str, spec: dict) -> int:
        cur = self.conn.execute(
            "INSERT INTO targets (name, position, kind, fs, spec_json, status) "
            "VALUES (?,?,?,?,?,'pending')", (name, position, kind, fs, json.dumps(spec)))
        return cur.lastrowid

    def set_target(self, target_id: int, status: str, reason: str | None = None,
                   provenance: dict | None = None, fs: str | None = None) -> None:
        self.conn.execute(
            "UPDATE targets SET status=?, reason=COALESCE(?, reason), "
            "provenance_json=COALESCE(?, provenance_json), fs=COALESCE(?, fs) WHERE id=?",
            (status, reason, json.dumps(provenance) if provenance else None, fs, target_id))

    def start_run(self, target_id: int, workload: str, params: dict, label: str = "",
                  repetition: int = 1) -> int:
        cur = self.conn.execute(
            "INSERT INTO runs (target_id, workload, label, repetition, params_json, status, "
            "started) VALUES (?,?,?,?,?,'running',?)",
            (target_id, workload, label, repetition, json.dumps(params), time.time()))
        return cur.lastrowid

    def finish_run(self, run_id: int, status: str, error: str | None = None) -> None:
        self.conn.execute("UPDATE runs SET status=?, error=?, ended=? WHERE id=?",
                          (status, error, time.time(), run_id))

    def add_result(self, run_id: int, target_id: int, result: WorkloadResult) -> None:
        """A finished run's numbers, and its status 'ok', then its artifacts."""
        # One transaction: a run's numbers land whole or not at all, and never
        # without the 'ok' that makes them count (a signal could fall between).
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.execute("UPDATE runs SET status='ok', error=NULL, ended=? WHERE id=?",
                              (time.time(), run_id))
            self.conn.executemany(
                "INSERT INTO metrics VALUES (?,?,?,?,?,?)",
                [(run_id, m.name, m.value, m.unit,
                  None if m.higher_is_better is None else int(m.higher_is_better), m.note)
                 for m in result.metrics])
            self.conn.executemany(
                "INSERT INTO series VALUES (?,?,?,?,?)",
                [(run_id, s.name, s.unit, t, v) for s in result.series for t, v in s.points])
        for a in result.artifacts:
            self.add_artifact(a.kind, a.path, target_id=target_id, run_id=run_id,
                              command=a.command, exit_code=a.exit_code)

    def add_artifact(self, kind: str, path: Path, *, target_id: int | None = None,
                     run_id: int | None = None, command: tuple[str, ...] = (),
                     exit_code: int | None = None) -> None:
        try:
            rel = str(Path(path).resolve().relative_to(self.results_dir.resolve()))
        except ValueError:
            rel = str(path)
        self.conn.execute(
            "INSERT INTO artifacts (target_id, run_id, kind, path, command_json, exit_code) "
            "VALUES (?,?,?,?,?,?)",
            (target_id, run_id, kind, rel, json.dumps(list(command)) if command else None,
             exit_code))
