"""pgbench's per-visit preparation: which steps, in which order, what they touch."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from pgfsbench.workloads import pgbench_prepare as pp
from pgfsbench.workloads.pgbench_tpcb import PgbenchWorkload


def test_steps_run_in_a_fixed_order_whatever_the_plan_lists():
    assert pp.ordered(["sync", "vacuum", "checkpoint"], custom_script=False) == [
        "vacuum",
        "checkpoint",
        "sync",
    ]
    assert pp.ordered(["sync", "sync"], custom_script=False) == ["sync"]
    assert pp.ordered([], custom_script=False) == []


def test_a_custom_script_gets_no_vacuum_of_pgbench_tables():
    assert pp.ordered(["vacuum", "checkpoint"], custom_script=True) == ["checkpoint"]


def test_vacuum_is_what_pgbench_does_without_n():
    assert pp.VACUUM_SQL == (
        "VACUUM pgbench_branches",
        "VACUUM pgbench_tellers",
        "TRUNCATE pgbench_history",
    )


def test_sync_covers_the_target_and_a_loop_image():
    assert pp.sync_paths(Path("/mnt/t"), None) == ["/mnt/t"]
    assert pp.sync_paths(Path("/mnt/t"), "/var/tmp/x/a.img") == ["/mnt/t", "/var/tmp/x/a.img"]


def test_only_loop_devices_have_a_backing_file():
    assert pp.loop_backing_file(None) is None
    assert pp.loop_backing_file("/dev/sdb") is None
    assert pp.loop_backing_file("/dev/loop987654") is None  # no such device: None


def test_the_plan_takes_known_steps_only():
    assert PgbenchWorkload(type="pgbench").prepare == []
    assert PgbenchWorkload(type="pgbench", prepare=["vacuum", "sync"]).prepare == ["vacuum", "sync"]
    with pytest.raises(ValidationError):
        PgbenchWorkload(type="pgbench", prepare=["vacum"])


class _Cluster:
    def __init__(self):
        self.statements = []

    def sql(self, query):
        self.statements.append(query)
        return ""


class _Ctx:
    def __init__(self, workdir):
        self.cluster = _Cluster()
        self.target = type("T", (), {"kind": "dir", "device": None, "workdir": workdir})()


def test_prepare_runs_the_steps_and_times_each(monkeypatch, tmp_path):
    from pgfsbench import proc
    from pgfsbench.workloads import pgbench_tpcb

    synced = []
    monkeypatch.setattr(proc, "run", lambda argv, **kw: synced.append(list(argv)))
    ctx = _Ctx(tmp_path)
    params = PgbenchWorkload(type="pgbench", prepare=["sync", "checkpoint", "vacuum"])
    metrics = pgbench_tpcb.prepare(ctx, params)
    assert ctx.cluster.statements == [*pp.VACUUM_SQL, "CHECKPOINT"]
    assert synced == [["sync", "--file-system", str(tmp_path)]]
    assert [m.name for m in metrics] == [
        "pgbench.prepare_vacuum_s",
        "pgbench.prepare_checkpoint_s",
        "pgbench.prepare_sync_s",
    ]
    assert all(m.value >= 0 for m in metrics)


def test_the_campaign_prepares_pgbench_outside_its_run():
    from pgfsbench.workloads import pgbench_tpcb, registry

    assert registry.kind("pgbench").prepare is pgbench_tpcb.prepare
    assert pgbench_tpcb.prepare(_Ctx(Path("/nonexistent")), PgbenchWorkload(type="pgbench")) == []
