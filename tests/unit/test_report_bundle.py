"""The report's plotly.js: a vendored partial bundle (scatter and bar), inlined packed.

What the browser test (tests/integration/test_report_browser.py) cannot see from one small
campaign: the packed library is exactly the vendored file, the file is the one its README
describes, the bundle has every trace type any chart draws, and what it costs a report.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from pathlib import Path

from pgfsbench.report import plotly_js as pj
from pgfsbench.report.chart_verdicts import verdicts_chart
from pgfsbench.report.charts import SUBTITLE, stacked_rows, wrap_title
from pgfsbench.report.figures import render_figures
from pgfsbench.report.html import write_report
from pgfsbench.store.read import load_campaign
from tests.unit.test_chart_timeline import _build as timeline_results
from tests.unit.test_chart_whiskers import THREE
from tests.unit.test_chart_whiskers import _build as every_chart_campaign
from tests.unit.test_report import build_results

VENDOR = Path(pj.__file__).parent / "vendor"
# The library's share of a report: the demo campaign's page without it is about 0.55 MB,
# and the whole report must stay within about 1.2 MB.
LIBRARY_BUDGET = 600_000
REPORT_BUDGET = 1_200_000


def _packed(page: str) -> str:
    m = re.search(
        r'window\.plotlyReady = \(function \(packed\) \{.*?\}\)\("([A-Za-z0-9+/=]+)"\);', page, re.S
    )
    assert m, "no packed library in the page"
    return m.group(1)


def test_the_packed_library_is_exactly_the_vendored_bundle() -> None:
    bundle = pj.BUNDLE.read_bytes()
    assert gzip.decompress(base64.b64decode(_packed(pj.plotly_js()))) == bundle
    assert pj.plotly_bundle() == bundle
    # no timestamp in the gzip header: the same results give the same report, byte for byte
    assert base64.b64decode(pj.packed_bundle())[4:8] == b"\0\0\0\0"


def test_the_bundle_is_the_one_its_readme_describes() -> None:
    readme = (VENDOR / "README.md").read_text()
    digest = hashlib.sha256(pj.BUNDLE.read_bytes()).hexdigest()
    assert f"sha256 {digest}" in readme  # rebuilt without updating the provenance?
    pinned = json.loads((VENDOR / "package.json").read_text())["dependencies"]
    head = pj.BUNDLE.read_text()[:300]
    assert f"plotly.js v{pinned['plotly.js']} " in head  # built from the pinned version
    assert f"plotly.js {pinned['plotly.js']}" in readme and f"esbuild {pinned['esbuild']}" in readme
    lock = json.loads((VENDOR / "package-lock.json").read_text())["packages"]
    assert lock["node_modules/plotly.js"]["version"] == pinned["plotly.js"]
    assert lock["node_modules/esbuild"]["version"] == pinned["esbuild"]


def test_the_library_fits_its_budget() -> None:
    script = pj.plotly_js()
    assert script.isascii() and "</script" not in script.lower()
    assert len(script.encode()) <= LIBRARY_BUDGET, len(script)
    # the full plotly.js is 4.8 MB: the bundle is the partial one, not it
    assert len(pj.plotly_bundle()) < 1_500_000


def test_every_chart_draws_only_bundled_trace_types(tmp_path: Path) -> None:
    """plotly.js draws a trace of a type it does not have as a scatter, without a word:
    every chart of a campaign with every charted workload, and the timelines, use only
    the bundle's types."""
    campaigns = [
        every_chart_campaign(tmp_path / "all", {"ext4": THREE, "xfs": THREE}),
        load_campaign(timeline_results(tmp_path / "timeline")),
    ]
    seen = {}
    for campaign in campaigns:
        for chart in render_figures(campaign):
            for trace in chart.figure["data"]:
                seen.setdefault(trace.get("type", "scatter"), chart.id)
    assert len(seen) >= 2 and set(seen) <= pj.BUNDLED_TRACES, seen
    head = pj.BUNDLE.read_text()[:300]
    assert "scatter and bar traces only" in head


def test_a_report_is_its_page_plus_the_library(tmp_path: Path) -> None:
    """The size formula: page + library (0 without a chart); this small campaign's page
    is a few tens of kB, the demo campaign's about 0.55 MB (benchmarks/README.md)."""
    page = write_report(build_results(tmp_path / "res")).read_text()
    library = len(pj.plotly_js().encode())
    assert page.count(pj.plotly_js()) == 1
    size = len(page.encode())
    assert size <= REPORT_BUDGET
    assert size - library < 200_000  # the rest: specs, tables, provenance


def test_the_chart_script_waits_for_the_library_and_hides_the_mode_bar_on_a_phone() -> None:
    init = pj.CHARTS_INIT_JS
    assert "window.plotlyReady" in init and "DOMContentLoaded" in init
    assert 'displayModeBar: narrow(el) ? false : "hover"' in init
    assert "This chart could not be drawn" in init


def test_wrapped_titles_fit_a_phone() -> None:
    assert wrap_title("fsync p99 latency", 28) == ["fsync p99 latency"]
    assert wrap_title("parallel scan time, 8 workers rows=1000", 28) == [
        "parallel scan time, 8",
        "workers rows=1000",
    ]
    # an id without spaces breaks after a dot
    assert wrap_title("fsync.open_datasync_8k.ops_per_s clients=2", 20) == [
        "fsync.",
        "open_datasync_8k.",
        "ops_per_s clients=2",
    ]
    assert wrap_title("fsync.open_datasync_8k.ops_per_s", 24) == [
        "fsync.open_datasync_8k.",
        "ops_per_s",
    ]  # no space put into an id
    _, _, notes = stacked_rows([100, 100], ["a <b> title that is long", "short"], wrap=10)
    assert notes[0]["text"] == "a &lt;b&gt;<br>title that<br>is long"  # escaped, then wrapped
    _, _, notes = stacked_rows([100], ["not wrapped without a width " * 3])
    assert "<br>" not in notes[0]["text"]


def test_verdict_panels_name_the_metric_with_its_unit_under_it(tmp_path: Path) -> None:
    campaign = every_chart_campaign(tmp_path / "res", {"ext4": THREE, "xfs": THREE})
    figure = verdicts_chart(campaign)
    titles = [a["text"].split("<br>") for a in figure["layout"]["annotations"]]
    assert ["fsync p99 latency", SUBTITLE.format("µs, lower is better")] in titles, titles
    assert ["TPC-B tps clients=8", SUBTITLE.format("tx/s, higher is better")] in titles
    assert all(len(line) <= 28 for t in titles for line in t[:-1]), titles
    _, _, notes = stacked_rows([100], ["a"], subtitles=["x < y"])
    assert notes[0]["text"] == "a<br>" + SUBTITLE.format("x &lt; y")
