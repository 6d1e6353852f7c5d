"""The results store: what a finished run leaves behind."""

from __future__ import annotations

from pathlib import Path

from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign
from pgfsbench.workloads.result import Metric, WorkloadResult


def test_a_runs_numbers_and_its_ok_land_together(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
    target = store.add_target("a", 0, "loop", "ext4", {})
    run = store.start_run(target, "fsync", {})
    store.add_result(run, target, WorkloadResult([Metric("fsync.x", 1.0, "ops/s", True)]))
    store.close()  # no finish_run: a signal could have come right here
    [stored] = load_campaign(tmp_path / "r").runs
    assert stored.status == "ok" and stored.ended is not None
    assert [m.name for m in stored.metrics] == ["fsync.x"]
