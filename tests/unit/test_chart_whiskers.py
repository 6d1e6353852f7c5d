"""Bar and line charts plot medians over repetitions, with 95 % CI whiskers when n ≥ 2.

A results directory written through the Store the way a campaign writes it:
two targets, every charted workload, each cell measured once or three times.
With three repetitions the values are base × (1.2, 1.0, 0.9): the median (the
base) is neither the first nor the last run's value, nor the mean.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pgfsbench.analysis.stats.medians import summarize
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.report.chart_fio import collect_values, fileio_chart, fsync_latency_chart
from pgfsbench.report.chart_scan import basebackup_chart, basebackup_rates, scan_chart, scan_curves
from pgfsbench.report.chart_seqwrite import cpu_chart, seqwrite_values, throughput_chart
from pgfsbench.report.chart_sweep import clients_chart, sweep_points
from pgfsbench.report.chart_verdicts import headline_rows, verdicts_chart
from pgfsbench.report.charts import (
    Chart,
    Estimate,
    fsync_chart,
    fsync_points,
    log_ticks,
    target_colors,
    whiskers,
)
from pgfsbench.report.figures import all_figures, render_figures
from pgfsbench.store.db import Store
from pgfsbench.store.read import Campaign, load_campaign

THREE = (1.2, 1.0, 0.9)
ONE = (1.0,)
TARGETS = ("ext4", "xfs")

# workload, label, params, metric, unit, higher_is_better, base value per target
# (None: unsupported on that target, in every repetition).
CELLS = [
    ("pgbench", "clients=1", {"clients": 1}, "pgbench.tps", "tx/s", True, (100.0, 120.0)),
    ("pgbench", "clients=8", {"clients": 8}, "pgbench.tps", "tx/s", True, (800.0, 950.0)),
    ("fsync", "", {}, "fsync.fdatasync_8k.ops_per_s", "ops/s", True, (1500.0, 1600.0)),
    ("fsync", "", {}, "fsync.fsync_writethrough_8k.ops_per_s", "ops/s", True, (None, None)),
    ("fsync-latency", "", {}, "fsync_latency.sync_p50_us", "µs", False, (200.0, 150.0)),
    ("fsync-latency", "", {}, "fsync_latency.sync_p99_us", "µs", False, (900.0, 800.0)),
    ("fileio", "", {}, "fileio.randread_8k.mb_per_s", "MB/s", True, (50.0, 60.0)),
    ("parallel-scan", "", {"rows": 1000}, "parallel_scan.workers_0.ms", "ms", False, (90.0, 80.0)),
    ("parallel-scan", "", {"rows": 1000}, "parallel_scan.workers_1.ms", "ms", False, (50.0, 42.0)),
    ("parallel-scan", "", {"rows": 1000}, "parallel_scan.workers_2.ms", "ms", False, (48.0, 30.0)),
    ("basebackup", "", {}, "basebackup.mb_per_s", "MB/s", True, (100.0, 150.0)),
    ("seqwrite", "", {}, "seqwrite.dd.mb_per_s", "MB/s", True, (300.0, 350.0)),
    ("seqwrite", "", {}, "seqwrite.dd.cpu_user_pct", "%", None, (5.0, 6.0)),
    ("seqwrite", "", {}, "seqwrite.dd.cpu_system_pct", "%", None, (20.0, 25.0)),
    ("seqwrite", "", {}, "seqwrite.dd.cpu_iowait_pct", "%", None, (30.0, 20.0)),
]

CHARTS = [
    fsync_chart,
    clients_chart,
    fsync_latency_chart,
    fileio_chart,
    scan_chart,
    basebackup_chart,
    throughput_chart,
    cpu_chart,
    verdicts_chart,
]


def _build(results: Path, factors: dict[str, tuple[float, ...]]) -> Campaign:
    """One run per target × measurement × repetition, rounds in order as a campaign runs them."""
    store = Store.create(results)
    store.start_campaign("c-reps", "reps", {"name": "reps"}, {}, "0.1.0")
    ids = {}
    for pos, name in enumerate(TARGETS):
        ids[name] = store.add_target(name, pos, "loop", name, {})
        store.set_target(ids[name], "ok")
    measurements = list(dict.fromkeys((w, label) for w, label, *_ in CELLS))
    for rep in range(max(len(f) for f in factors.values())):
        for pos, name in enumerate(TARGETS):
            if rep >= len(factors[name]):
                continue
            f = factors[name][rep]
            for workload, label in measurements:
                cells = [c for c in CELLS if (c[0], c[1]) == (workload, label)]
                run = store.start_run(ids[name], workload, cells[0][2], label, repetition=rep + 1)
                store.add_result(
                    run,
                    ids[name],
                    WorkloadResult(
                        [
                            Metric(metric, None if base[pos] is None else base[pos] * f, unit, hib)
                            for _, _, _, metric, unit, hib, base in cells
                        ]
                    ),
                )
                store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return load_campaign(results)


def _base(metric: str, target: str, label: str = "") -> float:
    cell = next(c for c in CELLS if c[3] == metric and c[1] == label)
    return cell[6][TARGETS.index(target)]


def _estimates(campaign: Campaign) -> dict[tuple[str, str], Estimate]:
    """Every charted estimate, through the modules' own data functions."""
    out: dict[tuple[str, str], Estimate] = {}
    for target, pts in sweep_points(campaign).items():
        for clients, est in pts:
            out[(target, f"pgbench.tps clients={clients}")] = est
    for target, methods in fsync_points(campaign).items():
        for method, est in methods.items():
            if est is not None:
                out[(target, f"fsync.{method}_8k.ops_per_s")] = est
    for target, keys in collect_values(
        campaign, "fsync-latency", lambda n: n if "sync_p" in n else None
    ).items():
        out |= {(target, k): e for k, e in keys.items()}
    for target, keys in collect_values(campaign, "fileio", lambda n: n).items():
        out |= {(target, k): e for k, e in keys.items()}
    for curve in scan_curves(campaign):
        out |= {(curve.target, f"parallel_scan.workers_{w}.ms"): e for w, e in curve.ms.items()}
    for target, est in basebackup_rates(campaign).items():
        out[(target, "basebackup.mb_per_s")] = est
    for target, tools in seqwrite_values(campaign).items():
        out |= {
            (target, f"seqwrite.{tool}.{field}"): e
            for tool, fields in tools.items()
            for field, e in fields.items()
        }
    return out


def _expected_base(key: tuple[str, str]) -> float:
    target, name = key
    if name.startswith("pgbench.tps clients="):
        return _base("pgbench.tps", target, "clients=" + name.rsplit("=", 1)[1])
    return _base(name, target)


def test_points_are_medians_with_the_ci_of_the_median(tmp_path: Path) -> None:
    campaign = _build(tmp_path / "res", {"ext4": THREE, "xfs": THREE})
    got = _estimates(campaign)
    assert len(got) == 2 * (len(CELLS) - 1)  # every cell but the unsupported one
    for key, est in got.items():
        base = _expected_base(key)
        values = [base * f for f in THREE]
        want = summarize(values)
        assert est.n == 3, key
        assert est.median == pytest.approx(base), key  # not the last run's, not the mean
        assert (est.lo, est.hi) == (want.ci_low, want.ci_high), key
        assert min(values) <= est.lo < est.median < est.hi <= max(values), key
    # The sweep's x values come from the runs' params; the knee from the median curve.
    assert [c for c, _ in sweep_points(campaign)["xfs"]] == [1, 8]
    assert {c.target: c.knee for c in scan_curves(campaign)} == {"ext4": 1, "xfs": 2}
    assert fsync_points(campaign)["ext4"]["fsync_writethrough"] is None  # unsupported: n/a


def test_a_single_run_per_cell_has_no_ci(tmp_path: Path) -> None:
    got = _estimates(_build(tmp_path / "res", {"ext4": ONE, "xfs": ONE}))
    assert len(got) == 2 * (len(CELLS) - 1)
    for key, est in got.items():
        assert est == Estimate(_expected_base(key), None, None, 1), key


def _errors(figure: dict) -> list[dict]:
    return [t[k] for t in figure["data"] for k in ("error_x", "error_y") if k in t]


@pytest.mark.parametrize("chart", CHARTS, ids=lambda f: f.__name__)
def test_whiskers_are_drawn_only_for_repeated_cells(tmp_path: Path, chart) -> None:
    repeated = _build(tmp_path / "three", {"ext4": THREE, "xfs": THREE})
    single = _build(tmp_path / "one", {"ext4": ONE, "xfs": ONE})
    fig3, fig1 = chart(repeated), chart(single)
    assert fig3 and fig1
    assert fig3 == chart(repeated)  # deterministic: reports diff cleanly
    assert _errors(fig3) and not _errors(fig1)
    for err in _errors(fig3):
        assert err["type"] == "data" and not err["symmetric"]
        assert all(v is None or v >= 0 for v in err["array"] + err["arrayminus"])


@pytest.mark.parametrize("chart", CHARTS, ids=lambda f: f.__name__)
def test_every_chart_draws_every_target_in_its_colour(tmp_path: Path, chart) -> None:
    campaign = _build(tmp_path / "res", {"ext4": THREE, "xfs": ONE})
    colors = target_colors(campaign)
    figure = chart(campaign)
    by_target: dict[str, list[dict]] = {}
    for trace in figure["data"]:
        by_target.setdefault(trace["meta"]["target"], []).append(trace)
        color = trace["marker"]["color"] if trace["type"] == "bar" else trace["line"]["color"]
        assert color == colors[trace["meta"]["target"]], trace["name"]
        assert trace["name"].startswith(trace["meta"]["target"]), trace["name"]
        assert "hovertext" in trace and "None" not in str(trace["hovertext"]), trace["name"]
    assert set(by_target) == set(TARGETS)
    for target, traces in by_target.items():  # drawn, not only listed in the legend
        assert any(t.get("visible", True) is True for t in traces), target


def test_mixed_repetitions_whisker_only_the_repeated_target(tmp_path: Path) -> None:
    campaign = _build(tmp_path / "res", {"ext4": THREE, "xfs": ONE})
    rates = basebackup_rates(campaign)
    assert rates["ext4"].has_ci and not rates["xfs"].has_ci
    err = whiskers(list(rates.values()))
    assert err is not None
    assert err["arrayminus"][0] == pytest.approx(100.0 - rates["ext4"].lo)
    assert err["array"][0] == pytest.approx(rates["ext4"].hi - 100.0)
    assert err["array"][1] is None and err["arrayminus"][1] is None  # plotly draws none there
    bars = {t["meta"]["target"]: t for t in basebackup_chart(campaign)["data"]}
    assert "error_y" in bars["ext4"] and "error_y" not in bars["xfs"]


def test_whiskers_helper() -> None:
    assert whiskers([Estimate(5.0, None, None, 1)]) is None  # nothing to draw: as without
    assert whiskers([]) is None
    # A percentile interval need not contain the sample median: never a negative length.
    err = whiskers([Estimate(5.0, 5.5, 7.0, 2)])
    assert err["arrayminus"] == [0.0] and err["array"] == [2.0]


def test_every_chart_spec_is_json_for_the_page(tmp_path: Path) -> None:
    campaign = _build(tmp_path / "res", {"ext4": THREE, "xfs": THREE})
    charts = render_figures(campaign)
    assert {c.id for c in charts} >= {
        "fsync-chart",
        "clients-chart",
        "fsync-latency-chart",
        "fileio-chart",
        "scan-chart",
        "basebackup-chart",
        "seqwrite-chart",
        "seqwrite-cpu-chart",
        "verdicts-chart",
    }
    for chart in charts:
        assert isinstance(chart, Chart)
        spec = json.loads(chart.spec_json())  # no NaN, no Python objects
        assert spec == chart.figure
        html = str(chart.html)
        assert html.startswith(f'<div class="chart" data-chart="{chart.kind}" id="{chart.id}" ')
        assert f'<script type="application/json" class="chart-spec" id="{chart.id}-spec">' in html
        targets = re.search(r'data-targets="([^"]*)"', html).group(1)
        assert json.loads(targets.replace("&#34;", '"')) == list(TARGETS)
        # Nothing printed as a Python repr, anywhere a reader looks.
        text = json.dumps(spec)
        for raw in ("None", "True", "False", "['", "{}"):
            assert raw not in text, (chart.id, raw)


def test_a_non_finite_value_is_a_gap_not_an_invalid_page() -> None:
    chart = Chart(
        "x-chart",
        "x",
        "t",
        "c",
        ("a",),
        {"data": [{"y": [1.0, float("nan"), float("inf")]}], "layout": {}},
    )
    assert json.loads(chart.spec_json())["data"][0]["y"] == [1.0, None, None]


def test_the_spec_cannot_close_its_script_element() -> None:
    chart = Chart(
        "x-chart",
        "x",
        "t",
        "c",
        ("a",),
        {"data": [{"name": "</script><script>alert(1)</script>"}], "layout": {}},
    )
    assert "</script" not in chart.spec_json() and "<" not in chart.spec_json()
    assert json.loads(chart.spec_json())["data"][0]["name"].startswith("</script>")


def test_captions_say_what_the_points_and_whiskers_are() -> None:
    specs = {s.id: s for s in all_figures()}
    charted = {
        "fsync-chart",
        "clients-chart",
        "fsync-latency-chart",
        "fileio-chart",
        "scan-chart",
        "basebackup-chart",
        "seqwrite-chart",
        "seqwrite-cpu-chart",
    }
    assert charted <= set(specs)
    for fig_id in charted:
        caption = specs[fig_id].caption
        assert re.search(r"medians? .*over repetitions", caption), fig_id
        assert "95 % confidence interval" in caption and "at least twice" in caption, fig_id
    for fig_id in ("tps-chart", "timeline-chart"):  # per-second series: no whiskers
        assert "whisker" not in specs[fig_id].caption


def test_representative_run_is_the_median_repetition() -> None:
    from pgfsbench.metrics import Metric
    from pgfsbench.report.charts import representative_runs
    from pgfsbench.store.read import StoredRun

    def run(i: int, target: str, tps: float) -> StoredRun:
        return StoredRun(
            i,
            target,
            "pgbench",
            "clients=4",
            i,
            {"clients": 4},
            "ok",
            None,
            0.0,
            1.0,
            [Metric("pgbench.tps", tps, "tx/s", True)],
        )

    runs = [
        run(1, "a", 900),
        run(2, "a", 1200),
        run(3, "a", 1000),
        run(4, "b", 50),
        run(5, "b", 70),
    ]
    chosen = representative_runs(runs)
    assert [(r.target, r.id) for r in chosen] == [("a", 3), ("b", 4)]  # lower middle of 2


def test_verdicts_chart_shows_each_measurements_headline(tmp_path: Path) -> None:
    campaign = _build(tmp_path / "res", {"ext4": THREE, "xfs": THREE})
    rows = headline_rows(campaign)
    assert {(r.workload, r.metric) for r in rows} >= {
        ("pgbench", "pgbench.tps"),
        ("fsync", "fsync.fdatasync_8k.ops_per_s"),
        ("fsync-latency", "fsync_latency.sync_p99_us"),
        ("basebackup", "basebackup.mb_per_s"),
        ("seqwrite", "seqwrite.dd.mb_per_s"),
    }
    tps = next(r for r in rows if r.label == "clients=8")
    # the geometric mean of its runs, the centre its comparisons are ratios of
    assert tps.cells["xfs"].value == pytest.approx(950.0 * (1.2 * 1.0 * 0.9) ** (1 / 3))
    assert tps.cells["xfs"].n == 3


def test_axes_and_hover_are_in_human_units(tmp_path: Path) -> None:
    campaign = _build(tmp_path / "res", {"ext4": ONE, "xfs": ONE})
    latency = fsync_latency_chart(campaign)
    assert latency["layout"]["yaxis"]["title"]["text"] == "ms per fdatasync (log scale)"
    ext4 = next(t for t in latency["data"] if t["name"] == "ext4")
    assert ext4["x"] == ["p50", "p99"] and ext4["y"] == pytest.approx([0.2, 0.9])  # from µs
    assert ext4["hovertext"] == ["p50: 0.2 ms", "p99: 0.9 ms"]
    assert "tickvals" not in latency["layout"]["yaxis"]  # 0.2–0.9 ms: plotly's ticks do
    assert log_ticks([150.0, 5439.0]) == {
        "tickvals": [100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0],
        "ticktext": ["100", "200", "500", "1,000", "2,000", "5,000", "10,000"],
    }
    assert log_ticks([0.2, 9.0])["ticktext"] == ["0.1", "0.2", "0.5", "1", "2", "5", "10"]
    fileio = fileio_chart(campaign)
    assert fileio["data"][0]["x"] == ["random read 8 kB"]
    for chart in CHARTS:
        layout = chart(campaign)["layout"]
        for key, ax in layout.items():
            if key.startswith(("xaxis", "yaxis")):
                title = ax["title"]["text"]
                # A unit a person reads; no metric name (a setting's name is fine).
                assert not re.search(r"\w\.\w+_", title), title
                assert "bytes" not in title and "10^6" not in title, title
