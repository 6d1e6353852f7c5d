"""Reading a results directory back into plain data for analysis and reports."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench.store.db import Store
from pgfsbench.metrics import Metric, Series


@dataclass
class StoredTarget:
    id: int
    name: str
    position: int
    kind: str
    fs: str
    status: str  # ok, skipped, failed, pending
    reason: str | None
    spec: dict
    provenance: dict


@dataclass
class StoredArtifact:
    kind: str
    path: str  # relative to the results directory
    command: list[str] | None
    exit_code: int | None


@dataclass
class StoredRun:
    id: int
    target: str
    workload: str
    label: str
    repetition: int
    params: dict
    status: str  # ok, failed, interrupted, running
    error: str | None
    started: float
    ended: float | None
    metrics: list[Metric] = field(default_factory=list)
    series: dict[str, Series] = field(default_factory=dict)
    artifacts: list[StoredArtifact] = field(default_factory=list)


@dataclass(eq=False)  # identity: analysis keeps per-campaign results keyed by it
class Campaign:
    results_dir: Path
    id: str
    plan_name: str
    plan: dict
    host: dict
    version: str
    status: str
    started: float
    ended: float | None
    targets: list[StoredTarget]
    runs: list[StoredRun]
    schedule: dict = field(default_factory=dict)  # repetitions: order, seed, stop reasons


def _get(row, column: str, default):
    """A column results from older versions lack."""
    return row[column] if column in row.keys() else default


def _direction(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def load_campaign(results_dir: Path) -> Campaign:
    store = Store.open(results_dir)
    try:
        c = store.conn
        row = c.execute("SELECT * FROM campaign").fetchone()
        targets = [
            StoredTarget(r["id"], r["name"], r["position"], r["kind"], r["fs"], r["status"],
                         r["reason"], json.loads(r["spec_json"]),
                         json.loads(r["provenance_json"] or "{}"))
            for r in c.execute("SELECT * FROM targets ORDER BY position")
        ]
        names = {t.id: t.name for t in targets}
        runs = {}
        for r in c.execute("SELECT * FROM runs ORDER BY id"):
            runs[r["id"]] = StoredRun(r["id"], names[r["target_id"]], r["workload"], r["label"],
                                      _get(r, "repetition", 1), json.loads(r["params_json"]),
                                      r["status"],
                                      r["error"], r["started"], r["ended"])
        for r in c.execute("SELECT * FROM metrics ORDER BY run_id, rowid"):
            runs[r["run_id"]].metrics.append(
                Metric(r["name"], r["value"], r["unit"], _direction(r["higher_is_better"]),
                       r["note"]))
        for r in c.execute("SELECT * FROM series ORDER BY run_id, name, t"):
            series = runs[r["run_id"]].series.setdefault(r["name"], Series(r["name"], r["unit"]))
            series.points.append((r["t"], r["value"]))
        for r in c.execute("SELECT * FROM artifacts WHERE run_id IS NOT NULL ORDER BY id"):
            runs[r["run_id"]].artifacts.append(StoredArtifact(
                r["kind"], r["path"], json.loads(r["command_json"]) if r["command_json"] else None,
                r["exit_code"]))
        return Campaign(results_dir, row["id"], row["plan_name"], json.loads(row["plan_json"]),
                        json.loads(row["host_json"]), row["pgfsbench_version"], row["status"],
                        row["started"], row["ended"], targets, list(runs.values()),
                        json.loads(_get(row, "schedule_json", None) or "{}"))
    finally:
        store.close()
