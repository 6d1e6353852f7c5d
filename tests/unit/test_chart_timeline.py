"""The timelines: every target on one time axis, monitor panels beneath the workload's curve.

Results written through the Store as a campaign writes them. The pgbench
series are shaped like pgbench's own: second 0 and the second the -T run ends
in are partial (few transactions), the whole seconds in between are not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.metrics import Metric, Series, WorkloadResult
from pgfsbench.report.chart_timeline import (
    PGBENCH_PANELS,
    SEQWRITE_PANELS,
    full_intervals,
    seqwrite_timeline_chart,
    timeline_chart,
)
from pgfsbench.report.charts import target_colors, whole_seconds
from pgfsbench.report.figures import all_figures, render_figures
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

DURATION = 20
SECONDS = range(1, DURATION + 1)
# Six targets: the old chart stopped after six runs in target order, so the last
# targets (btrfs in the demo) were never drawn.
TARGETS = ("ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs")
CHECKPOINT_AT = 8
PARTIAL = 37.0  # tps of the two partial seconds: far below the rest


def _monitor_series(prefix: str = "mon.") -> list[Series]:
    def s(name: str, unit: str, f, times=SECONDS) -> Series:
        return Series(prefix + name, unit, [(float(t), f(t)) for t in times])

    stall = range(CHECKPOINT_AT - 1, CHECKPOINT_AT + 2)
    # The monitor's last sample closes a 0.04 s interval at stop().
    times = [*SECONDS, DURATION + 0.04]
    return [
        s("cpu.user_pct", "%", lambda t: 40.0, times),
        s("cpu.system_pct", "%", lambda t: 15.0, times),
        s("cpu.iowait_pct", "%", lambda t: 30.0 if t in stall else 3.0, times),
        s("mem.dirty_mb", "MB", lambda t: 800.0 if t in stall else 90.0, times),
        s("mem.writeback_mb", "MB", lambda t: 120.0 if t in stall else 5.0, times),
        s("disk.target.write_mb_per_s", "MB/s", lambda t: 250.0 if t in stall else 40.0, times),
        s("disk.target.await_ms", "ms", lambda t: 1.0 if t == times[-1] else 2.0, times),
        s("pg.checkpoints", "checkpoints", lambda t: 1.0 if t == CHECKPOINT_AT else 0.0),
    ]


def _tps(base: float) -> Series:
    """pgbench's series of a -T DURATION run: seconds 0..DURATION, the two ends partial."""
    return Series(
        "pgbench.tps",
        "tx/s",
        [(float(t), PARTIAL if t in (0, DURATION) else base) for t in range(0, DURATION + 1)],
    )


def _build(results: Path, *, targets=TARGETS, rounds: int = 1, monitors: bool = True) -> Path:
    store = Store.create(results)
    store.start_campaign("c1", "timeline", {}, {}, "0.1.0")
    ids = {}
    for pos, name in enumerate(targets):
        ids[name] = store.add_target(name, pos, "loop", name, {})
        store.set_target(ids[name], "ok")
    for rnd in range(1, rounds + 1):
        for pos, name in enumerate(targets):
            base = 1000.0 + 100 * pos + 10 * rnd
            run = store.start_run(
                ids[name],
                "pgbench",
                {"clients": 8, "duration": DURATION},
                label="clients=8",
                repetition=rnd,
            )
            series = [_tps(base)] + (_monitor_series() if monitors else [])
            store.add_result(
                run, ids[name], WorkloadResult([Metric("pgbench.tps", base, "tx/s", True)], series)
            )
            store.finish_run(run, "ok")
    # A failed run with monitor series is not drawn.
    run = store.start_run(ids[targets[0]], "pgbench", {"clients": 16}, label="clients=16")
    store.add_result(run, ids[targets[0]], WorkloadResult([], _monitor_series()))
    store.finish_run(run, "failed", "pgbench exited 2")
    store.end_campaign("ok")
    store.close()
    return results


def _by_target(figure: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for trace in figure["data"]:
        out.setdefault(trace["meta"]["target"], []).append(trace)
    return out


def test_timeline_draws_every_target_in_every_panel(tmp_path: Path) -> None:
    campaign = load_campaign(_build(tmp_path / "res"))
    figure = timeline_chart(campaign)
    assert figure and figure == timeline_chart(campaign)  # deterministic
    colors = target_colors(campaign)
    traces = _by_target(figure)
    assert list(traces) == list(TARGETS)  # all six, in plan order
    panels = {f"y{p + 1 if p else ''}" for p in range(len(PGBENCH_PANELS))}
    for target, group in traces.items():
        assert {t["yaxis"] for t in group} == panels, target
        assert {t["line"]["color"] for t in group if "line" in t} == {colors[target]}
        assert all(t.get("visible", True) is True for t in group)  # one run: all shown
        assert sum(t["showlegend"] for t in group) == 1  # one legend entry toggles them all
        assert len({t["legendgroup"] for t in group}) == 1
    # One checkpoint per run, marked under the tps panel.
    marks = [t for t in figure["data"] if t["mode"] == "markers"]
    assert len(marks) == len(TARGETS)
    assert all(m["x"] == [float(CHECKPOINT_AT)] and m["yaxis"] == "y" for m in marks)
    # Panel titles and axes in human units.
    notes = [a["text"] for a in figure["layout"]["annotations"]]
    assert notes == [p.title for p in PGBENCH_PANELS]
    assert [
        figure["layout"][f"yaxis{p + 1 if p else ''}"]["title"]["text"]
        for p in range(len(PGBENCH_PANELS))
    ] == ["tx/s", "MB/s", "ms", "MB", "%"]


def test_partial_seconds_are_left_out(tmp_path: Path) -> None:
    campaign = load_campaign(_build(tmp_path / "res", targets=("ext4", "btrfs")))
    run = campaign.runs[0]
    kept = whole_seconds(run)
    assert [t for t, _ in kept] == [float(t) for t in range(1, DURATION)]
    assert PARTIAL not in [v for _, v in kept]
    for figure in (timeline_chart(campaign),):
        tps = [t for t in figure["data"] if t["yaxis"] == "y" and t["mode"] != "markers"]
        assert len(tps) == 2
        for trace in tps:
            assert min(trace["y"]) > PARTIAL and trace["x"][0] == 1.0
            assert trace["x"][-1] == DURATION - 1
    from pgfsbench.report.charts import tps_chart

    for trace in tps_chart(campaign)["data"]:
        assert PARTIAL not in trace["y"] and len(trace["x"]) == DURATION - 1
    # The monitor's last, 0.04 s interval is no sample either (its await "dip" is noise).
    write = [t for t in timeline_chart(campaign)["data"] if t["yaxis"] == "y3"]
    assert all(max(t["x"]) == DURATION and 1.0 not in t["y"] for t in write)


def test_whole_seconds_without_a_recorded_duration() -> None:
    from pgfsbench.store.read import StoredRun

    run = StoredRun(
        1, "a", "pgbench", "", 1, {}, "ok", None, 0.0, 1.0, [], {"pgbench.tps": _tps(500.0)}
    )
    assert [t for t, _ in whole_seconds(run)] == [float(t) for t in range(1, DURATION)]


def test_full_intervals() -> None:
    assert full_intervals([(1.0, 5.0), (2.0, 6.0), (2.1, 0.5)]) == [(1.0, 5.0), (2.0, 6.0)]
    assert full_intervals([(1.0, 5.0), (2.0, 6.0), (2.9, 7.0)]) == [
        (1.0, 5.0),
        (2.0, 6.0),
        (2.9, 7.0),
    ]
    assert full_intervals([(0.3, 1.0)]) == [(0.3, 1.0)]  # one sample: all there is


def test_repetitions_draw_the_median_run_and_hide_the_rest(tmp_path: Path) -> None:
    campaign = load_campaign(_build(tmp_path / "res", targets=("ext4", "xfs"), rounds=3))
    figure = timeline_chart(campaign)
    for target, group in _by_target(figure).items():
        shown = {t["name"] for t in group if t.get("visible", True) is True}
        hidden = {t["name"] for t in group if t.get("visible") == "legendonly"}
        # tps rises with the round: round 2 is the median; rounds 1 and 3 share one
        # legend entry (and one trace per panel, a gap between the runs).
        assert shown == {f"{target} (median run)"}, shown
        assert hidden == {f"{target} · other rounds (2)"}
        assert sum(t["showlegend"] for t in group) == 2
        tps = next(
            t for t in group if t["name"] in hidden and t["yaxis"] == "y" and t["mode"] != "markers"
        )
        assert tps["y"].count(None) == 1 and len(tps["y"]) == 2 * (DURATION - 1) + 1
        base = 1000 + 100 * ("ext4", "xfs").index(target) + 10  # round 1's, as _build sets
        assert tps["hovertext"][0] == f"round 1 · 1.0 s: {base:,} tx/s"
        assert tps["hovertext"][-1].startswith("round 3 · ")
    from pgfsbench.report.charts import tps_chart

    names = {t["name"]: t.get("visible", True) for t in tps_chart(campaign)["data"]}
    assert names == {
        "ext4 (median run)": True,
        "ext4 · other rounds (2)": "legendonly",
        "xfs (median run)": True,
        "xfs · other rounds (2)": "legendonly",
    }


def test_timeline_none_without_monitor_series(tmp_path: Path) -> None:
    assert timeline_chart(load_campaign(_build(tmp_path / "res", monitors=False))) is None
    store = Store.create(tmp_path / "empty")
    store.start_campaign("c2", "smoke", {}, {}, "0.1.0")
    store.close()
    assert timeline_chart(load_campaign(tmp_path / "empty")) is None


def test_seqwrite_timeline_draws_each_tool_of_each_target(tmp_path: Path) -> None:
    ids = {s.id for s in all_figures()}
    assert {"timeline-chart", "seqwrite-timeline-chart"} <= ids
    store = Store.create(tmp_path / "res")
    store.start_campaign("c3", "seq", {}, {}, "0.1.0")
    for pos, name in enumerate(("ext4", "btrfs")):
        tid = store.add_target(name, pos, "loop", name, {})
        store.set_target(tid, "ok")
        run = store.start_run(tid, "seqwrite", {"size": "64M", "tools": ["dd", "fio"]})
        series = _monitor_series("seqwrite.dd.") + _monitor_series("seqwrite.fio.")
        store.add_result(
            run,
            tid,
            WorkloadResult([Metric("seqwrite.dd.mb_per_s", 300.0 + pos, "MB/s", True)], series),
        )
        store.finish_run(run, "ok")
    store.close()
    campaign = load_campaign(tmp_path / "res")
    figure = seqwrite_timeline_chart(campaign)
    traces = _by_target(figure)
    assert list(traces) == ["ext4", "btrfs"]
    for target, group in traces.items():
        assert {t["legendgroup"] for t in group} == {f"{target} dd", f"{target} fio"}
        assert {t["yaxis"] for t in group} == {"y", "y2", "y3"}
        assert len(group) == 2 * sum(len(p.series) for p in SEQWRITE_PANELS)
        assert len(group[0]["x"]) == DURATION  # every sample, but the short last interval
    assert timeline_chart(campaign) is None  # no pgbench run
    chart = next(c for c in render_figures(campaign) if c.id == "seqwrite-timeline-chart")
    assert chart.targets == ("ext4", "btrfs")


@pytest.mark.parametrize("panels", [PGBENCH_PANELS, SEQWRITE_PANELS])
def test_panel_units_are_human(panels) -> None:
    for panel in panels:
        assert panel.unit in {"tx/s", "MB/s", "ms", "MB", "%"}
        assert "bytes" not in panel.title and "_" not in panel.title
