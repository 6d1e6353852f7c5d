"""The results store: what a finished run leaves behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.errors import ResultsUnwritable, UserError
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import RESERVE_BYTES, RESERVE_NAME, Store, check_new_results_dir
from pgfsbench.store.read import load_campaign


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
        ("failed", "failed", "the campaign ended (failed) while it ran"),
    ]:
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
            ("fsync", "ok", None),
            ("pgbench", run_status, error),
        ]
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
        ("interrupted", "pgfsbench was killed while it ran")
    ]


def test_the_outcome_says_whether_everything_completed(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
    assert store.outcome() == "failed"  # nothing ran at all
    a = store.add_target("a", 0, "loop", "ext4", {})
    store.add_result(
        store.start_run(a, "fsync", {}), a, WorkloadResult([Metric("fsync.x", 1.0, "ops/s", True)])
    )
    store.set_target(a, "ok")
    assert store.outcome() == "ok"
    b = store.add_target("b", 1, "loop", "xfs", {})
    store.set_target(b, "failed", "mount refused")
    assert store.outcome() == "partial"  # a target refused: not a clean campaign
    store.set_target(b, "ok")
    store.finish_run(store.start_run(b, "fsync", {}), "failed", "pg_test_fsync exited 1")
    assert store.outcome() == "partial"
    store.conn.execute("UPDATE runs SET status = 'failed'")
    assert store.outcome() == "failed"


def test_a_write_the_results_cannot_take_ends_in_results_unwritable(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
    store.close()
    readonly = Store.open(tmp_path / "r")  # what a full or read-only disk looks like to SQLite
    with pytest.raises(
        ResultsUnwritable,
        match=r"cannot write .*results.db: attempt to "
        r"write a readonly database",
    ):
        readonly.set_schedule({})
    readonly.close()


def test_a_new_results_directory_must_be_new_and_writable(tmp_path: Path) -> None:
    Store.create(tmp_path / "r").close()
    with pytest.raises(UserError, match="already holds results"):
        check_new_results_dir(tmp_path / "r")
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match=f"{tmp_path}/file is not a directory"):
        check_new_results_dir(tmp_path / "file" / "r")
    check_new_results_dir(tmp_path / "deep" / "new" / "r")  # made later, by Store.create
    assert not (tmp_path / "deep").exists()


def test_the_reserve_is_real_space_and_freed_at_the_end(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    reserve = tmp_path / "r" / RESERVE_NAME
    assert reserve.stat().st_blocks * 512 >= RESERVE_BYTES  # allocated, not sparse
    store.start_campaign("c1", "p", {"name": "p"}, {}, "0")
    store.end_campaign("ok")
    assert not reserve.exists()
