"""Reading a campaign back into plain data for analysis and reports, from a results
directory or from a PostgreSQL store (``load_campaign(source)``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgfsbench.errors import UserError
from pgfsbench.metrics import Metric, Series
from pgfsbench.store.db import Store
from pgfsbench.store.rows import CampaignRows, read_sqlite
from pgfsbench.store.url import is_store_url
from pgfsbench.store.version import SCHEMA_VERSION


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
    uuid: str = ""  # its key in every store (derived for campaigns recorded before it)
    schema_version: int = SCHEMA_VERSION  # the layout it was recorded with
    # Kept with the run, not per run: the provisioning commands, the server logs.
    target_artifacts: dict[str, list[StoredArtifact]] = field(default_factory=dict)


def _direction(value: int | None) -> bool | None:
    return None if value is None else bool(value)


def _artifact(r: Mapping[str, Any]) -> StoredArtifact:
    return StoredArtifact(
        r["kind"],
        r["path"],
        json.loads(r["command_json"]) if r["command_json"] else None,
        r["exit_code"],
    )


def campaign_from_rows(rows: CampaignRows, results_dir: Path) -> Campaign:
    """The campaign that ``rows`` hold; its artifacts are under ``results_dir``."""
    targets = [
        StoredTarget(
            r["id"],
            r["name"],
            r["position"],
            r["kind"],
            r["fs"],
            r["status"],
            r["reason"],
            json.loads(r["spec_json"]),
            json.loads(r["provenance_json"] or "{}"),
        )
        for r in rows.targets
    ]
    names = {t.id: t.name for t in targets}
    runs = {
        r["id"]: StoredRun(
            r["id"],
            names[r["target_id"]],
            r["workload"],
            r["label"],
            r["repetition"],
            json.loads(r["params_json"]),
            r["status"],
            r["error"],
            r["started"],
            r["ended"],
        )
        for r in rows.runs
    }
    for r in rows.metrics:
        runs[r["run_id"]].metrics.append(
            Metric(r["name"], r["value"], r["unit"], _direction(r["higher_is_better"]), r["note"])
        )
    for s in rows.series:
        runs[s.run_id].series[s.name] = Series(s.name, s.unit, s.points)
    by_target: dict[str, list[StoredArtifact]] = {}
    for r in rows.artifacts:
        if r["run_id"] is not None:
            runs[r["run_id"]].artifacts.append(_artifact(r))
        elif r["target_id"] is not None:
            by_target.setdefault(names[r["target_id"]], []).append(_artifact(r))
    c = rows.campaign
    return Campaign(
        results_dir,
        c["id"],
        c["plan_name"],
        json.loads(c["plan_json"]),
        json.loads(c["host_json"]),
        c["pgfsbench_version"],
        c["status"],
        c["started"],
        c["ended"],
        targets,
        list(runs.values()),
        json.loads(c["schedule_json"] or "{}"),
        c["uuid"],
        c["schema_version"],
        by_target,
    )


def read_rows(results_dir: Path, series: bool = True) -> CampaignRows:
    """The rows of the campaign in ``results_dir`` (UserError if it holds none)."""
    store = Store.open(results_dir)
    try:
        # One read transaction: a consistent snapshot even while the campaign writes.
        store.conn.execute("BEGIN")
        return read_sqlite(store.conn, series)
    except LookupError:
        raise UserError(f"{results_dir} holds no campaign yet (an empty results.db)") from None
    finally:
        store.close()


def load_campaign(source: Path | str, campaign: str | None = None, series: bool = True) -> Campaign:
    """A campaign from a results directory, or from a PostgreSQL store: ``source`` a
    ``postgresql://`` URL and ``campaign`` its UUID (or id, or a unique prefix of
    either). ``series=False`` skips the per-second series (a listing needs none)."""
    if isinstance(source, str) and is_store_url(source):
        from pgfsbench.store.pg import PgStore

        if campaign is None:
            raise UserError(
                "a campaign in a results store is named by its UUID or id: "
                "'pgfsbench list --store URL' lists them"
            )
        with PgStore.connect(source) as pg:
            return pg.load_campaign(campaign, series)
    results_dir = Path(source)
    return campaign_from_rows(read_rows(results_dir, series), results_dir)
