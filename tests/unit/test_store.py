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


def test_ending_the_campaign_closes_runs_left_running(tmp_path: Path) -> None:
    """A signal can land between a run's row and the code that records its end (CI
    saw an interrupted campaign keep a run 'running')."""
    for status, run_status, error in [
            ("interrupted", "interrupted", "interrupted by a signal"),
            ("failed", "failed", "the campaign ended (failed) while it ran")]:
        results = tmp_path / status
        store = Store.create(results)
        store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
        target = store.add_target("a", 0, "loop", "ext4", {})
        done = store.start_run(target, "fsync", {})
        store.add_result(done, target, WorkloadResult([Metric("fsync.x", 1.0, "ops/s", True)]))
        store.start_run(target, "pgbench", {})  # its end never recorded
        store.end_campaign(status)
        store.close()
        campaign = load_campaign(results)
        assert campaign.status == status
        assert [(r.workload, r.status, r.error) for r in campaign.runs] == [
            ("fsync", "ok", None), ("pgbench", run_status, error)]
        assert all(r.ended is not None for r in campaign.runs)


def test_a_killed_campaign_is_ended_once(tmp_path: Path) -> None:
    store = Store.create(tmp_path)
    store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
    target = store.add_target("a", 0, "loop", "ext4", {})
    store.start_run(target, "fsync", {})
    store.close()  # killed: nothing more recorded
    store = Store.open(tmp_path, writable=True)
    assert store.end_if_killed() is True
    assert store.end_if_killed() is False  # ended now: cleanup again changes nothing
    store.close()
    campaign = load_campaign(tmp_path)
    assert campaign.status == "killed"
    assert [(r.status, r.error) for r in campaign.runs] == [
        ("interrupted", "pgfsbench was killed while it ran")]
