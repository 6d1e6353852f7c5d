"""The per-run timeline figure: workload curve with monitor panels beneath it."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

from pgfsbench.report.chart_timeline import MAX_RUNS, PANEL_TITLES, timeline_chart
from pgfsbench.report.figures import all_figures
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign
from pgfsbench.metrics import Metric, Series, WorkloadResult

SECONDS = range(1, 21)
CHECKPOINT_AT = {"ext4": 8, "xfs": 14}


def _monitor_series(checkpoint_at: int) -> list[Series]:
    def s(name: str, unit: str, f) -> Series:
        return Series(name, unit, [(float(t), f(t)) for t in SECONDS])

    stall = range(checkpoint_at - 1, checkpoint_at + 2)
    return [
        s("mon.cpu.user_pct", "%", lambda t: 40.0),
        s("mon.cpu.system_pct", "%", lambda t: 15.0),
        s("mon.cpu.iowait_pct", "%", lambda t: 30.0 if t in stall else 3.0),
        s("mon.cpu.idle_pct", "%", lambda t: 15.0 if t in stall else 42.0),
        s("mon.mem.dirty_mb", "MB", lambda t: 800.0 if t in stall else 90.0),
        s("mon.mem.writeback_mb", "MB", lambda t: 120.0 if t in stall else 5.0),
        s("mon.disk.target.write_mb_per_s", "MB/s", lambda t: 250.0 if t in stall else 40.0),
        s("mon.disk.target.await_ms", "ms", lambda t: 40.0 if t in stall else 2.0),
        s("mon.pg.checkpoints", "checkpoints", lambda t: 1.0 if t == checkpoint_at else 0.0),
    ]


def _build(results: Path, *, monitors: bool = True, extra_runs: int = 0) -> Path:
    store = Store.create(results)
    store.start_campaign("c1", "timeline", {}, {}, "0.1.0")
    for pos, name in enumerate(("ext4", "xfs")):
        tid = store.add_target(name, pos, "loop", name, {})
        store.set_target(tid, "ok")
        for i in range(1 + (extra_runs if pos == 0 else 0)):
            clients = 8 + i  # distinct measurements: repetitions would show one run
            run = store.start_run(tid, "pgbench", {"clients": clients},
                                  label=f"clients={clients}")
            stall = range(CHECKPOINT_AT[name] - 1, CHECKPOINT_AT[name] + 2)
            tps = Series("pgbench.tps", "tx/s",
                         [(float(t), 100.0 if t in stall else 1000.0) for t in SECONDS])
            series = [tps] + (_monitor_series(CHECKPOINT_AT[name]) if monitors else [])
            store.add_result(run, tid, WorkloadResult(
                [Metric("pgbench.tps", 900.0, "tx/s", True)], series))
            store.finish_run(run, "ok")
        # A failed run with monitor series is not drawn.
        run = store.start_run(tid, "pgbench", {"clients": 16}, label="clients=16")
        store.finish_run(run, "failed", "pgbench exited 2")
    store.end_campaign("ok")
    store.close()
    return results


def test_timeline_has_panels_per_run_and_checkpoint_lines(tmp_path: Path) -> None:
    campaign = load_campaign(_build(tmp_path / "res"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no layout or legend warnings either
        svg = timeline_chart(campaign)
    assert svg and svg.startswith("<svg")
    assert svg == timeline_chart(campaign)  # deterministic
    for name in ("ext4", "xfs"):
        assert f"{name} · clients=8: {PANEL_TITLES['pgbench']}" in svg
    for key in ("memory", "device", "cpu"):
        assert svg.count(PANEL_TITLES[key]) == 2  # one block of panels per run
    assert "clients=16" not in svg  # the failed run
    # One checkpoint per run, a line through each of its four panels.
    lines = re.findall(r'id="pgfsbench-timeline-(checkpoint-\d+-\d+-\d+)"', svg)
    assert len(lines) == 8 and len(set(lines)) == 8
    for legend in ("dirty", "writeback", "write MB/s", "await ms", "user", "system", "iowait",
                   "checkpoint"):
        assert f"<!-- {legend} -->" in svg
    assert "first " not in svg  # nothing left out


def test_timeline_limits_runs(tmp_path: Path) -> None:
    campaign = load_campaign(_build(tmp_path / "res", extra_runs=MAX_RUNS))
    svg = timeline_chart(campaign)
    assert svg and f"first {MAX_RUNS} of {MAX_RUNS + 2} runs" in svg
    assert svg.count(PANEL_TITLES["cpu"]) == MAX_RUNS


def test_timeline_none_without_monitor_series(tmp_path: Path) -> None:
    assert timeline_chart(load_campaign(_build(tmp_path / "res", monitors=False))) is None
    store = Store.create(tmp_path / "empty")
    store.start_campaign("c2", "smoke", {}, {}, "0.1.0")
    store.close()
    assert timeline_chart(load_campaign(tmp_path / "empty")) is None


def test_timeline_is_discovered_and_draws_seqwrite(tmp_path: Path) -> None:
    assert "timeline-chart" in [spec.id for spec in all_figures()]
    store = Store.create(tmp_path / "res")
    store.start_campaign("c3", "seq", {}, {}, "0.1.0")
    tid = store.add_target("ext4", 0, "loop", "ext4", {})
    store.set_target(tid, "ok")
    run = store.start_run(tid, "seqwrite", {"size": "64M", "tools": ["dd"]})
    store.add_result(run, tid, WorkloadResult([], _monitor_series(3)))
    store.finish_run(run, "ok")
    store.close()
    svg = timeline_chart(load_campaign(tmp_path / "res"))
    assert svg and f"ext4 · seqwrite: {PANEL_TITLES['seqwrite']}" in svg
