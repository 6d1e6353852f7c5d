"""`pgfsbench history`: a metric of a target over stored campaigns, with the marks
cross-campaign compare gives between consecutive campaigns of the same plan."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench.cli import app
from pgfsbench.compare.pairing import paired_table, pairing
from pgfsbench.compare.series import history
from pgfsbench.report.chart_history import history_charts
from pgfsbench.store.read import load_campaign
from pgfsbench.store.sources import campaigns
from tests.unit.test_pairing import stored

DAY = 86400.0
T0 = 1.7e9


@pytest.fixture(scope="module")
def nightly(tmp_path_factory) -> Path:
    """Four nights of one plan (given out of order) and another plan's campaign:
    ext4 steady, then 20% slower; the last night on another PostgreSQL version."""
    root = tmp_path_factory.mktemp("nightly")
    stored(root / "n3", {"ext4": 0.8, "xfs": 1.25}, started=T0 + 2 * DAY)
    stored(root / "n1", {"ext4": 1.0, "xfs": 1.2}, started=T0)
    stored(root / "n2", {"ext4": 1.0, "xfs": 1.2}, started=T0 + DAY)
    stored(root / "n4", {"ext4": 0.8, "xfs": 1.25}, started=T0 + 3 * DAY, pg="16.1")
    stored(root / "other", {"ext4": 0.5}, started=T0 + 1.5 * DAY, plan="weekly")
    return root


def cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})


def _series(root: Path, **filters):
    return history(list(campaigns([root], None)), **filters)


def test_campaigns_in_start_order_with_marks(nightly) -> None:
    [ext4] = _series(nightly, target="ext4", plan="nightly")
    assert (ext4.target, ext4.host, ext4.metric) == ("ext4", "db1", "pgbench.tps")
    assert [p.campaign.id for p in ext4.points] == ["c-n1", "c-n2", "c-n3", "c-n4"]
    assert [p.cell.n for p in ext4.points] == [6] * 4
    assert ext4.points[2].cell.value == pytest.approx(800, rel=0.01)
    assert all(lo < p.cell.value < hi for p in ext4.points for lo, hi in [p.cell.ci])
    assert [p.kind for p in ext4.points] == [None, "equivalent", "worse", None]
    assert ext4.points[2].mark == "−" and ext4.points[2].previous is ext4.points[1]
    assert ext4.points[3].note.startswith("not compared: ext4: PostgreSQL version: 17.2")


def test_the_mark_is_what_compare_decides(nightly) -> None:
    # The issue: history marked ext4 "×1.473 + p=0.042" (its pair alone) where
    # `compare A B` marked the same pair "? p=0.12" (every target of the same name in
    # one family). Now history reads compare's own finding: one figure, one mark.
    [ext4] = _series(nightly, target="ext4", plan="nightly")
    n2, n3 = load_campaign(nightly / "n2"), load_campaign(nightly / "n3")
    for table in (
        paired_table(pairing(n2, n3)),  # compare n2 n3
        paired_table(pairing(n2, n3, {"ext4": "ext4"})),  # compare n2 n3 --pair ext4=ext4
    ):
        row = next(r for r in table.rows if r.metric == "pgbench.tps" and "ext4" in r.label)
        assert ext4.points[2].finding == row.cells["n3"].finding
    # the figure is the ratio of the two values the history prints beside it
    f = ext4.points[2].finding
    assert f.ratio == pytest.approx(ext4.points[2].value / ext4.points[1].value)


def test_another_plan_between_is_its_own_series_entry_but_never_compared(nightly) -> None:
    [ext4] = _series(nightly, target="ext4")
    assert [p.campaign.plan_name for p in ext4.points] == [
        "nightly",
        "nightly",
        "weekly",
        "nightly",
        "nightly",
    ]
    assert ext4.points[2].note == "another plan than the previous (nightly)"
    assert ext4.points[3].note == "another plan than the previous (weekly)"


def test_metric_glob_and_hosts(nightly, tmp_path) -> None:
    found = _series(nightly, metric="pgbench.*", plan="nightly")
    assert {(s.target, s.metric) for s in found} == {
        (t, m) for t in ("ext4", "xfs") for m in ("pgbench.tps", "pgbench.latency_avg_ms")
    }
    stored(tmp_path / "elsewhere", {"ext4": 1.0}, started=T0 + 0.5 * DAY, host="db2")
    both = history(list(campaigns([nightly, tmp_path], None)), target="ext4", plan="nightly")
    assert sorted((s.host, len(s.points)) for s in both) == [("db1", 4), ("db2", 1)]


def test_formats(nightly) -> None:
    text = cli("history", str(nightly), "--target", "ext4", "--plan", "nightly")
    assert text.exit_code == 0, text.output
    assert re.search(r"c-n3 .* −20\.0% \[−\d+\.\d%, −\d+\.\d%\] − worse", text.stdout)
    doc = json.loads(
        cli(
            "history", str(nightly), "--target", "ext4", "--plan", "nightly", "--format", "json"
        ).stdout
    )
    [s] = doc["series"]
    assert [p["vs_previous"] and p["vs_previous"]["outcome"] for p in s["points"]] == [
        None,
        "equivalent",
        "worse",
        None,
    ]
    assert s["points"][2]["previous"] == "c-n2" and s["points"][0]["ci95"][0] < 1000
    rows = list(
        csv.DictReader(
            io.StringIO(cli("history", str(nightly), "--plan", "nightly", "--format", "csv").stdout)
        )
    )
    assert [(r["target"], r["campaign"], r["mark"]) for r in rows if r["target"] == "xfs"] == [
        ("xfs", "c-n1", ""),
        ("xfs", "c-n2", "≈"),
        ("xfs", "c-n3", "+"),
        ("xfs", "c-n4", ""),
    ]


def test_html_chart(nightly, tmp_path) -> None:
    series = _series(nightly, plan="nightly")
    [chart] = history_charts(series)
    names = [t["name"] for t in chart.figure["data"]]
    assert names == ["ext4 @ db1", "xfs @ db1"]
    ext4 = chart.figure["data"][0]
    assert len(ext4["x"]) == 4 and ext4["error_y"]["array"][0] > 0
    assert ext4["marker"]["symbol"] == ["circle", "circle", "x", "circle"]
    page = tmp_path / "h.html"
    result = cli("history", str(nightly), "--plan", "nightly", "--html", str(page))
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert 'class="chart"' in html and "Plotly.newPlot" in html and "<script src" not in html


@pytest.mark.parametrize(
    "args,message",
    [
        (("--target", "zfs"), "no values of the headline metrics for target 'zfs'"),
        (("--plan", "nope"), "no campaign of plan 'nope'"),
        (("--format", "xml"), "unknown history format 'xml'"),
        (("--html", "/nonexistent/dir/h.html"), "no directory /nonexistent/dir"),
    ],
)
def test_bad_input_is_one_line(nightly, args, message) -> None:
    result = cli("history", str(nightly), *args)
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_nothing_to_read_from() -> None:
    result = cli("history")
    assert result.exit_code == 2 and "give results directories, or --store" in result.stderr


def test_the_report_shows_the_history_it_is_given(nightly) -> None:
    from pgfsbench.report.html import render_report

    n3 = load_campaign(nightly / "n3")
    found = [(c, s) for c, s in campaigns([nightly], None) if c.id in ("c-n1", "c-n2")]
    series = history(found + [(n3, "n3")], plan="nightly")
    page = render_report(n3, series)
    section = page[page.index('<section id="history">') : page.index('<section id="comparison">')]
    assert "ext4 @ db1: pgbench pgbench.tps" in section
    assert section.count("<tr><td>") == 6  # 3 campaigns × ext4, xfs
    assert 'data-mark="−"' in section and "−20.0% [" in section
    assert 'data-chart="history"' in section
    assert '<section id="history">' not in render_report(n3)


def test_the_text_holds_at_80_columns_and_one_campaign_is_one_line(nightly, tmp_path) -> None:
    out = CliRunner().invoke(app, ["history", str(nightly)], env={"COLUMNS": "80"}).output
    assert max(len(ln) for ln in out.splitlines()) <= 80
    assert "c-n1" in out and "c-n4" in out  # campaign ids whole, never folded
    single = CliRunner().invoke(app, ["history", str(nightly / "n1")], env={"COLUMNS": "80"})
    assert single.exit_code == 0
    assert single.output.splitlines() == [
        "a history needs two campaigns or more; found one campaign (give more results ",
        "directories, or --store URL)",
    ]


def test_a_second_history_read_bootstraps_nothing_and_imports_no_scipy(nightly, tmp_path) -> None:
    """The marks compare consecutive campaigns (unpaired: Welch on the logs, with
    scipy.special's t distribution): what they computed is kept beside the later
    campaign's results (ci_cache.py), so the next read finds it all."""
    import shutil
    import subprocess
    import sys

    root = tmp_path / "copy"
    shutil.copytree(nightly, root)
    for kept in root.glob("*/analysis-cache.json"):
        kept.unlink()
    argv = [sys.executable, "-X", "importtime", "-m", "pgfsbench", "history", str(root)]
    first = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert "scipy.special" in first.stderr  # nothing kept yet: computed, with scipy
    second = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert second.stdout == first.stdout
    assert [line for line in second.stderr.splitlines() if "scipy" in line] == []
