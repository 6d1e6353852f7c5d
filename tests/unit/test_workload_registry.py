"""Workload kinds: a toy kind added in this one module reaches plan check, the estimate and
the verdicts; unknown types fail loudly; every shipped kind declares every piece; stored
params re-validate to the same values."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field, ValidationError

from pgfsbench.analysis.caveats.efficiency import efficiency_metrics
from pgfsbench.analysis.headline import headline_metric
from pgfsbench.analysis.table import comparison_table
from pgfsbench.analysis.verdicts.verdict_lines import WINNER, verdict_lines
from pgfsbench.fields import Size
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.plan.estimate import plan_seconds, target_needs, workload_seconds
from pgfsbench.plan.load import builtin_names, load_plan, parse_plan
from pgfsbench.plan.model import Plan
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign
from pgfsbench.units import size_to_bytes
from pgfsbench.workloads import registry
from pgfsbench.workloads.kind import MB, WorkloadBase, WorkloadKind
from pgfsbench.workloads.registry import StoredParamsWarning, UnknownWorkloadType
from tests.unit.plan_check import plan_check_json

# --- the toy kind: everything about it is here ---------------------------------------------


class ToyWorkload(WorkloadBase):
    """Writes ``size`` ``passes`` times."""

    type: Literal["toy"]
    size: Size = "4M"
    passes: int = Field(3, ge=1, le=10)


def run_toy(ctx, params: ToyWorkload) -> WorkloadResult:
    return WorkloadResult([Metric(f"toy.pass_{params.passes}.mb_per_s", 42.0, "MB/s", True)])


TOY = WorkloadKind(
    params=ToyWorkload,
    run=run_toy,
    headline=lambda p, names: f"toy.pass_{p.passes}.mb_per_s",  # chosen by its params
    seconds=lambda p: 7.0 * p.passes,
    disk_bytes=lambda p, tables: size_to_bytes(p.size),
    logical_bytes=lambda p, values: (float(size_to_bytes(p.size) * p.passes), "size × passes"),
)

TOY_PLAN = (
    'name = "toy"\n[[targets]]\nname = "a"\nfs = "ext4"\n[[workloads]]\ntype = "toy"\npasses = 3\n'
)


@pytest.fixture
def toy():
    with registry.registered(TOY) as kind:
        yield kind


# --- the toy appears everywhere --------------------------------------------------------------


def test_a_registered_toy_is_a_plan_type_in_plan_check(toy, tmp_path: Path) -> None:
    info = plan_check_json(tmp_path, TOY_PLAN)
    [run] = info["runs_per_target"]
    assert run["workload"] == "toy" and run["estimated_seconds"] == 21.0
    assert run["params"] == {"size": "4M", "passes": 3, "tag": ""}
    assert info["targets"][0]["workload_peak_bytes"] == 48 * MB + 4 * MB


def test_the_toy_is_gone_after_unregistering(tmp_path: Path) -> None:
    with registry.registered(TOY):
        assert parse_plan(TOY_PLAN, "t").workloads[0].type == "toy"
    with pytest.raises(Exception, match="Input tag 'toy' found using 'type' does not match"):
        parse_plan(TOY_PLAN, "t")
    with pytest.raises(UnknownWorkloadType):  # an estimate never silently says 0 s
        workload_seconds(ToyWorkload(type="toy"))


def test_the_estimate_uses_the_toys_own_figures(toy) -> None:
    plan = parse_plan(TOY_PLAN.replace("passes = 3", "passes = 2"), "t")
    [m] = plan.measurements()
    assert workload_seconds(m) == 14.0
    assert plan_seconds(plan) > 14.0  # plus the target's setup
    assert target_needs(plan, plan.targets[0])["workload_peak_bytes"] == 52 * MB


def _toy_campaign(tmp_path: Path, passes: int):
    """Two targets, four rounds of the toy each, as a campaign stores them."""
    params = ToyWorkload(type="toy", passes=passes).model_dump(mode="json")
    store = Store.create(tmp_path / "r")
    store.start_campaign("c-1", "toy", {"name": "toy"}, {}, "0.1.0")
    for pos, (target, rate) in enumerate((("slow", 100.0), ("fast", 200.0))):
        tid = store.add_target(target, pos, "loop", "ext4", {})
        store.set_target(tid, "ok", provenance={})
        for rep in range(1, 5):
            run = store.start_run(tid, "toy", params, repetition=rep)
            store.add_result(
                run,
                tid,
                WorkloadResult(
                    [
                        Metric(f"toy.pass_{passes}.mb_per_s", rate + rep, "MB/s", True),
                        Metric("toy.other_mb_per_s", 50.0 - pos, "MB/s", True),
                    ]
                ),
            )
            store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return load_campaign(tmp_path / "r")


def test_the_verdict_is_about_the_toys_headline(toy, tmp_path: Path) -> None:
    table = comparison_table(_toy_campaign(tmp_path, passes=2))
    assert [r.metric for r in table.rows if r.headline] == ["toy.pass_2.mb_per_s"]
    [line] = verdict_lines(table, {})
    assert (line.workload, line.metric, line.kind, line.winner) == (
        "toy",
        "toy.pass_2.mb_per_s",
        WINNER,
        "fast",
    )


def test_efficiency_uses_the_toys_logical_bytes(toy) -> None:
    stored = ToyWorkload(type="toy", size="1M", passes=2).model_dump(mode="json")
    [m] = efficiency_metrics(
        "toy", stored, [Metric("mon.disk.target.write_bytes", 3 * 2**20, "B", None)], {}
    )
    assert m.name == "eff.device_bytes_per_logical_byte" and m.value == pytest.approx(1.5)
    assert "size × passes" in m.note


# --- unknown types fail loudly ----------------------------------------------------------------


def test_an_unregistered_type_fails_loudly() -> None:
    with pytest.raises(
        UnknownWorkloadType,
        match="no workload type 'nope'.*known: fsync, fsync-latency, pgbench-init, pgbench",
    ):
        registry.kind("nope")
    with pytest.raises(UnknownWorkloadType):
        registry.unregister("nope")
    with pytest.raises(UnknownWorkloadType):
        registry.params("nope", {})
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.kind("fsync"))
    assert registry.find("nope") is None  # the read side's lookup for old results


def test_the_plan_union_lists_every_registered_type(toy) -> None:
    with pytest.raises(ValidationError) as exc:
        Plan.model_validate(
            {"name": "x", "targets": [{"name": "a", "fs": "ext4"}], "workloads": [{"type": "nope"}]}
        )
    assert "'fileio', 'io-depth', 'toy'" in str(exc.value)


# --- every shipped kind is its module's KIND (what each declares: test_extensions.py) ---


SHIPPED = [k.type for k in registry.kinds()]


@pytest.mark.parametrize("type_", SHIPPED)
def test_a_shipped_kind_is_the_KIND_of_its_own_module(type_: str) -> None:
    kind = registry.kind(type_)
    module = inspect.getmodule(kind.params)
    assert module.__name__.startswith("pgfsbench.workloads.") and module.KIND is kind
    # What every workload entry declares, shipped or installed: test_extensions.py.


# The headlines the kinds declare, with their default params (what headline.py chose).
HEADLINES = {
    "fsync": "fsync.fdatasync_8k.ops_per_s",
    "fsync-latency": "fsync_latency.sync_p99_us",
    "pgbench-init": "pgbench_init.elapsed_s",
    "pgbench": "pgbench.tps",
    "basebackup": "basebackup.mb_per_s",
    "seqwrite": "seqwrite.dd.mb_per_s",
    "parallel-scan": "parallel_scan.workers_4.ms",
    "fileio": "fileio.read_8k.mb_per_s",
}


@pytest.mark.parametrize("type_", HEADLINES)
def test_shipped_headlines_from_stored_params(type_: str) -> None:
    names = ["fileio.read_8k.iops", "fileio.read_8k.mb_per_s", "fileio.write_8k.mb_per_s"]
    assert headline_metric(type_, {}, names) == HEADLINES[type_]
    stored = registry.params(type_, {}).model_dump(mode="json")
    assert headline_metric(type_, stored, names) == HEADLINES[type_]


def test_headlines_follow_the_stored_params() -> None:
    assert headline_metric("seqwrite", {"tools": ["fio", "dd"]}) == "seqwrite.fio.mb_per_s"
    assert headline_metric("parallel-scan", {"workers": [0, 8, 2]}) == "parallel_scan.workers_8.ms"
    assert headline_metric("fileio", {}, ["fileio.read_8k.iops"]) is None


# --- stored params ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", builtin_names())
def test_stored_params_revalidate_to_the_measurement(name: str) -> None:
    for m in load_plan(name).measurements():
        stored = m.model_dump(mode="json")  # what the campaign stores for a run
        again = registry.params(m.type, stored)
        assert again == m.model_copy(update={"tag": ""})  # the tag is not re-validated
        without_type = {k: v for k, v in stored.items() if k != "type"}
        assert registry.params(m.type, without_type) == again


def test_stored_params_of_sweeps_and_pooled_tags_revalidate() -> None:
    plan = parse_plan(
        'name = "p"\n[[targets]]\nname = "a"\nfs = "ext4"\n'
        '[[workloads]]\ntype = "pgbench-init"\n'
        '[[workloads]]\ntype = "pgbench"\nclients = [1, 4]\nmode = "select-only"\n'
        'protocol = "simple"\n'
        '[[workloads]]\ntype = "pgbench"\nclients = [1, 4]\n',
        "t",
    )
    ms = [m for m in plan.measurements() if m.type == "pgbench"]
    # measurements() told them apart in the tag, beyond what a plan's tag may hold
    assert any(" " in m.tag for m in ms)
    for m in ms:
        again = registry.params("pgbench", m.model_dump(mode="json"))
        assert again.clients == m.clients and again.mode == m.mode


def test_defaults_come_from_the_kinds_model() -> None:
    assert registry.params("seqwrite", {}).tools == ["dd"]
    assert registry.params("fsync-latency", {"seconds": 3}).block_size == "8k"
    assert registry.params("parallel-scan", {}).workers == [0, 1, 2, 4]


def test_params_a_kind_no_longer_accepts_fall_back_without_crashing() -> None:
    with pytest.warns(StoredParamsWarning, match="stored parallel-scan parameters.*workers"):
        assert headline_metric("parallel-scan", {"workers": "many"}) is None
    with pytest.warns(StoredParamsWarning, match="stored seqwrite parameters.*gone"):
        dev = [Metric("mon.disk.target.write_bytes", 1.0, "B", None)]
        assert efficiency_metrics("seqwrite", {"size": "1M", "gone": 1}, dev, {}) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a headline that needs no params survives params this version does not know
        assert headline_metric("pgbench", {"gone": 1}) == "pgbench.tps"
        assert headline_metric("a-removed-kind", {}) is None
