"""The HTML report of a real campaign, opened in a real browser (Debian's chromium,
driven by Playwright): it is small, loads cleanly, answers first on a laptop and on a
phone, its charts all draw (with the partial plotly.js it inlines packed), draw every
target and respond to the mouse, keep the toolbar off their legends and their titles
whole, and its table filters and sorts.

Playwright drives the system chromium (``executable_path``): its own browser builds
are downloaded from a CDN this machine cannot reach, and ``make test`` installs
Debian's ``chromium`` instead.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pgfsbench.report.plotly_js import BUNDLED_TRACES, plotly_js
from tests.integration.conftest import cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LAPTOP, PHONE = {"width": 1280, "height": 800}, {"width": 375, "height": 812}
# The demo campaign's report within about 1.2 MB (it was 5.35 MB, 4.8 MB of it
# the full plotly.js); the library's part of it (packed partial bundle) within 0.6 MB.
REPORT_BUDGET, LIBRARY_BUDGET = 1_200_000, 600_000
# What a Python or JSON value looks like when it leaks into a page as text.
RAW_REPR = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|\{\}|\[\]|\['|\{'|\{\"|\bnan\b|\binf\b")


@pytest.fixture(scope="module")
def report(smoke, tmp_path_factory) -> Path:
    """The smoke campaign's report, rebuilt from its store into a directory of our own
    (test_smoke.py rebuilds the campaign's own report.html while we read it)."""
    results, _, _ = smoke
    out = tmp_path_factory.mktemp("browser") / "report.html"
    cli("report", str(results), "--output", str(out))
    return out


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("needs chromium (apt-get install chromium; 'make test' installs it)")
    sync_api = pytest.importorskip(
        "playwright.sync_api",
        reason="needs playwright (pip install -e '.[test]'; 'make test' installs it)",
    )
    with sync_api.sync_playwright() as p:
        # --no-sandbox: the tests run as root, where chromium's sandbox refuses to start.
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


class Page:
    """A report opened at one viewport, with every console error and page error kept."""

    def __init__(self, browser, report: Path, viewport: dict):
        self.page = browser.new_page(viewport=viewport)
        self.errors: list[str] = []
        self.page.on(
            "console",
            lambda m: (
                self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            ),
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.goto(report.as_uri(), wait_until="load")
        # every chart drawn (Plotly sets el.data when newPlot has run)
        self.page.wait_for_function(
            "Array.from(document.querySelectorAll('.chart')).every(el => el.data && "
            "el.querySelector('.main-svg'))",
            timeout=30_000,
        )

    def js(self, script: str, arg=None):
        return self.page.evaluate(script, arg)


@pytest.fixture(scope="module")
def laptop(browser, report):
    page = Page(browser, report, LAPTOP)
    yield page
    page.page.close()


@pytest.fixture(scope="module")
def phone(browser, report):
    page = Page(browser, report, PHONE)
    yield page
    page.page.close()


def _box(page: Page, selector: str) -> dict:
    return page.js(
        "s => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; }",
        selector,
    )


def test_loads_without_console_or_page_errors(laptop, phone):
    assert laptop.errors == [] and phone.errors == []


def test_the_report_is_small(report):
    """A report is its page plus the library. This smoke campaign's page is small (a few
    runs); the demo campaign's (81 runs, monitors, 5 charts) is about 0.55 MB, so the
    library's budget is what keeps that report within 1.2 MB (benchmarks/README.md)."""
    html = report.read_text()
    library = plotly_js()
    assert html.count(library) == 1  # inlined once, packed
    assert len(library.encode()) <= LIBRARY_BUDGET
    assert report.stat().st_size <= REPORT_BUDGET
    assert "plotly.js v" not in html  # the library is not also inlined as it is


# Per chart: the trace types asked for and those plotly.js drew (a type the bundle lacks
# falls back to scatter), how many traces are shown, and how many of the plot's trace
# groups have a size (lines, markers or bars actually drawn).
DRAWN = """el => {
  const groups = Array.from(el.querySelectorAll('.cartesianlayer g.trace'));
  return {
    asked: el.data.map(t => t.type || 'scatter'),
    drawn_as: el._fullData.map(t => t.type),
    shown: el._fullData.filter(t => t.visible === true).length,
    groups: groups.length,
    sized: groups.filter(g => { const b = g.getBBox(); return b.width > 0 || b.height > 0; })
      .length,
    svg: el.querySelectorAll('svg.main-svg').length,
  };
}"""


@pytest.mark.parametrize("where", ["laptop", "phone"])
def test_every_chart_draws(where, request):
    page = request.getfixturevalue(where).page
    charts = page.query_selector_all(".chart")
    assert len(charts) >= 3
    for chart in charts:
        found = chart.evaluate(DRAWN)
        name = chart.get_attribute("id")
        assert found["svg"] >= 1, (name, found)
        assert set(found["asked"]) <= BUNDLED_TRACES, (name, found)
        assert found["drawn_as"] == found["asked"], (name, found)  # none fell back to scatter
        assert found["shown"] > 0 and found["groups"] == found["shown"], (name, found)
        assert found["sized"] == found["shown"], (name, found)
        assert "could not be drawn" not in chart.text_content()


# Every text plotly writes in a chart (titles of panels and axes, the legend) and the mode
# bar, in page coordinates, with the chart's own box.
GEOMETRY = """el => {
  const box = e => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const bar = el.querySelector('.modebar');
  const legend = el.querySelector('.legend');
  return {
    chart: box(el),
    texts: Array.from(el.querySelectorAll(
        '.annotation-text, .g-xtitle text, .g-ytitle text, .g-gtitle text, .legendtext'))
      .filter(t => t.textContent.trim()).map(t => ({text: t.textContent, ...box(t)})),
    modebar: bar && getComputedStyle(bar).display !== 'none' ? box(bar) : null,
    legend: legend ? box(legend) : null,
    entries: Array.from(el.querySelectorAll('.legend .traces')).map(box),
  };
}"""


def _overlap(a: dict, b: dict) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


def test_on_a_laptop_the_mode_bar_covers_no_legend_entry(laptop):
    page = laptop.page
    for chart in page.query_selector_all(".chart"):
        chart.scroll_into_view_if_needed()
        b = chart.bounding_box()
        page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)
        found = chart.evaluate(GEOMETRY)
        name = chart.get_attribute("id")
        assert found["modebar"] is not None, name  # shown on hover: zoom, pan, reset, PNG
        covered = [e for e in found["entries"] if _overlap(e, found["modebar"])]
        assert covered == [], (name, found["modebar"], covered)
    page.mouse.move(0, 0)
    page.evaluate("window.scrollTo(0, 0)")


def test_on_a_phone_no_mode_bar_over_a_legend_and_no_title_cut(phone):
    page = phone.page
    for chart in page.query_selector_all(".chart"):
        chart.scroll_into_view_if_needed()
        b = chart.bounding_box()
        page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2)  # shows a toolbar
        page.mouse.move(b["x"] + b["width"] - 20, b["y"] + 10)  # if there is one, here
        found = chart.evaluate(GEOMETRY)
        name, box = chart.get_attribute("id"), found["chart"]
        assert found["modebar"] is None, (name, found["modebar"], found["legend"])
        cut = [
            t["text"]
            for t in found["texts"]
            if t["left"] < box["left"] - 1 or t["right"] > box["right"] + 1
        ]
        assert cut == [], (name, cut)
    page.mouse.move(0, 0)
    page.evaluate("window.scrollTo(0, 0)")


@pytest.mark.parametrize("where", ["laptop", "phone"])
def test_the_answer_is_in_the_first_viewport(where, request):
    page = request.getfixturevalue(where)
    height = (LAPTOP if where == "laptop" else PHONE)["height"]
    assert page.js("window.scrollY") == 0
    cards = page.js(
        "Array.from(document.querySelectorAll('#verdicts .verdict')).map(el => el.textContent)"
    )
    assert len(cards) == 3  # fsync, pgbench-init, pgbench: one card per measurement
    first = _box(page, "#verdicts .verdict")
    assert 0 <= first["top"] and first["bottom"] <= height, first
    # the one-line answer leads the page
    answer = _box(page, "#answer .answer-line")
    assert 0 <= answer["top"] < _box(page, "#advice")["top"] and answer["bottom"] <= height
    assert page.js("document.querySelector('#answer .answer-line').textContent").startswith(
        "Answer: "
    )
    assert answer["top"] < height / 4  # nothing long comes before it
    assert _box(page, "#advice .pick")["bottom"] <= height
    # the answer before the charts, the charts before the table, the table before provenance
    tops = [
        _box(page, s)["top"]
        for s in ("#advice", "#verdicts", "#charts", "#comparison", "#targets", "#runs")
    ]
    assert tops == sorted(tops), tops


def test_no_horizontal_page_overflow_on_a_phone(phone):
    def overflow() -> int:
        return phone.js("document.documentElement.scrollWidth - window.innerWidth")

    assert overflow() <= 0
    # with every section open, wide tables scroll inside their own box, not the page
    phone.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert overflow() <= 0
    widest = phone.js(
        "Math.max(...Array.from(document.querySelectorAll('.scroll'))"
        ".map(el => el.scrollWidth - el.clientWidth))"
    )
    assert widest > 0  # the comparison table is wider than a phone: it scrolls in its box
    charts = phone.js(
        "Array.from(document.querySelectorAll('.chart'))"
        ".map(el => el.getBoundingClientRect().width)"
    )
    assert charts and all(0 < w <= PHONE["width"] for w in charts), charts
    phone.js("document.querySelectorAll('details').forEach(d => d.open = false)")


def _targets(attribute: str) -> list[str]:
    return json.loads(attribute) if attribute.startswith("[") else attribute.split(",")


def test_every_chart_has_a_trace_per_target(laptop):
    charts = laptop.js(
        "Array.from(document.querySelectorAll('.chart')).map(el => ({"
        "id: el.id, targets: el.dataset.targets, "
        "traces: el.data.map(t => ({name: t.name, legend: t.showlegend !== false,"
        " drawn: t.visible !== 'legendonly'}))}))"
    )
    assert {c["id"] for c in charts} >= {"verdicts-chart", "tps-chart", "fsync-chart"}
    for chart in charts:
        targets = _targets(chart["targets"])
        assert targets == ["ext4", "xfs", "btrfs"], chart
        # one drawn legend entry per target (other rounds, if any, are hidden entries)
        drawn = [t["name"] for t in chart["traces"] if t["legend"] and t["drawn"]]
        assert sorted(drawn) == sorted(targets), chart
        # and every trace belongs to a target ("xfs", "xfs · other rounds (4)")
        assert {t["name"].split(" · ")[0] for t in chart["traces"]} == set(targets), chart


# A data point of a chart's first drawn trace, in page coordinates: a bar or marker's
# centre, or a line's first vertex (its path starts "Mx,y" at the first point).
FIRST_POINT = """el => {
  const point = el.querySelector('.trace .point');
  if (point) {
    const r = point.getBoundingClientRect();
    return {x: r.left + r.width / 2, y: r.top + r.height / 2};
  }
  const line = el.querySelector('.trace .js-line');
  const m = /M\\s*([-\\d.e]+)[ ,]([-\\d.e]+)/.exec(line.getAttribute('d'));
  const p = new DOMPoint(+m[1], +m[2]).matrixTransform(line.getScreenCTM());
  return {x: p.x, y: p.y};
}"""


def test_hovering_a_chart_shows_its_value(laptop):
    page = laptop.page
    for chart in page.query_selector_all(".chart"):
        chart.scroll_into_view_if_needed()
        point = chart.evaluate(FIRST_POINT)
        label = ""
        for _attempt in range(3):  # Plotly throttles hover events: move again if none came
            page.mouse.move(0, 0)
            page.mouse.move(point["x"] - 3, point["y"] - 3)
            page.mouse.move(point["x"], point["y"], steps=3)
            try:
                page.wait_for_function(
                    "el => el.querySelectorAll('.hoverlayer .hovertext').length > 0",
                    arg=chart,
                    timeout=2_000,
                )
            except Exception:  # playwright's TimeoutError
                continue
            label = chart.evaluate("el => el.querySelector('.hoverlayer .hovertext').textContent")
            break
        assert re.search(r"\d", label), (chart.get_attribute("id"), point, label)
    page.mouse.move(0, 0)


def test_clicking_a_legend_entry_toggles_its_trace(laptop):
    page = laptop.page
    chart = page.query_selector("#tps-chart")
    chart.scroll_into_view_if_needed()
    visible = "el => el._fullData.filter(t => t.visible === true).map(t => t.name)"
    assert chart.evaluate(visible) == ["ext4", "xfs", "btrfs"]
    entry = chart.query_selector_all(".legend .traces .legendtoggle")[1]  # xfs
    entry.click()
    page.wait_for_function("el => el.data[1].visible === 'legendonly'", arg=chart)
    assert chart.evaluate(visible) == ["ext4", "btrfs"]
    page.wait_for_timeout(400)  # past Plotly's double-click window
    entry.click()
    page.wait_for_function("el => el.data[1].visible === true", arg=chart)


def test_the_table_filters_and_sorts(laptop):
    page = laptop.page
    rows = "Array.from(document.querySelectorAll('table.comparison tr[data-metric]'))"
    # checkVisibility: a closed <details> keeps its content laid out, but hidden
    shown = f"{rows}.filter(tr => tr.checkVisibility()).map(tr => tr.dataset.metric)"
    assert laptop.js(shown) == []  # collapsed until asked for
    page.click("#comparison summary")
    everything = laptop.js(shown)
    assert len(everything) > 100 and "pgbench.tps" in everything
    groups = laptop.js(
        "Array.from(document.querySelectorAll('table.comparison tr.group'))"
        ".map(tr => tr.textContent.trim().toLowerCase())"
    )
    assert "monitors · pgbench · clients=2" in groups, groups
    assert "what limited the run · pgbench · clients=2" in groups, groups
    assert "cost per unit of work · pgbench · clients=2" in groups, groups

    page.fill("#table-filter", "fdatasync")
    only = laptop.js(shown)
    assert only and all("fdatasync" in m for m in only), only
    assert page.is_hidden("tr[data-metric='pgbench.tps']")
    hidden_groups = laptop.js(
        "Array.from(document.querySelectorAll('table.comparison tbody'))"
        ".filter(tb => tb.hidden).length"
    )
    assert hidden_groups > 0  # a group with no match loses its header too
    page.fill("#table-filter", "")
    assert laptop.js(shown) == everything
    page.check("#table-headline-only")
    assert sorted(laptop.js(shown)) == sorted(
        ["fsync.fdatasync_8k.ops_per_s", "pgbench_init.elapsed_s", "pgbench.tps"]
    )
    page.uncheck("#table-headline-only")

    # sort by ext4's column: within each group, ascending, rows without a value last
    page.click("table.comparison thead th[data-sort='num'] >> nth=0")
    column = laptop.js(
        "Array.from(document.querySelectorAll('table.comparison tbody')).map("
        "tb => Array.from(tb.querySelectorAll('tr[data-metric]')).map("
        "tr => tr.querySelector('td[data-target=ext4]').dataset.value))"
    )
    for group in column:
        values = [float(v) for v in group if v is not None]
        assert values == sorted(values)
        assert group == [*(v for v in group if v is not None), *(v for v in group if v is None)]
    page.click("#comparison summary")
    assert not laptop.js("document.getElementById('comparison-details').open")
    page.click("nav a[href='#comparison']")  # the nav link opens the table too
    page.wait_for_function("document.getElementById('comparison-details').open")
    page.click("#comparison summary")
    page.evaluate("window.scrollTo(0, 0)")


class _VisibleText(HTMLParser):
    """What a reader can see or hover: text outside <script>/<style>, and titles."""

    def __init__(self) -> None:
        super().__init__()
        self.skip = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("script", "style")
        self.parts += [v for k, v in attrs if k in ("title", "placeholder", "aria-label") and v]

    def handle_endtag(self, tag):
        self.skip -= tag in ("script", "style")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def test_human_units_and_no_raw_reprs(report, laptop):
    parser = _VisibleText()
    parser.feed(report.read_text())
    leaks = [
        m.group(0) + " in: " + part.strip()[:120]
        for part in parser.parts
        for m in RAW_REPR.finditer(part)
    ]
    assert leaks == []
    cells = laptop.js(
        "Array.from(document.querySelectorAll('table.comparison td.num'))"
        ".map(td => td.childNodes[0].textContent.trim())"
    )
    assert cells and not [c for c in cells if re.fullmatch(r"-?0\.0+", c)]  # zeros: "0"
    units = dict(
        laptop.js(
            "Array.from(document.querySelectorAll('table.comparison "
            "tr[data-metric]')).map(tr => [tr.dataset.metric, "
            "tr.querySelector('td.unit').textContent])"
        )
    )
    assert units["mon.disk.backing.write_bytes"] in ("MiB", "GiB")  # not bytes
    assert units["pgbench_init.elapsed_s"] == "ms"  # under a second
    assert units["bound.cpu_busy_frac"] == "%"
    assert units["pgbench.transactions"] == "tx"
    # one run per cell decides nothing: no ★ anywhere
    assert laptop.js("document.querySelectorAll('td.best').length") == 0
    assert "★" not in laptop.js(
        "Array.from(document.querySelectorAll('#verdicts .verdict'))"
        ".map(el => el.textContent).join()"
    )


@pytest.mark.parametrize("where", ["laptop", "phone"])
def test_no_serious_accessibility_violation_with_every_section_open(where, request):
    """axe-core (as axe-playwright-python ships it: no download) on the whole page."""
    axe = pytest.importorskip(
        "axe_playwright_python.sync_playwright",
        reason="needs axe-playwright-python (pip install -e '.[test]')",
    )
    page = request.getfixturevalue(where)
    page.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    try:
        found = axe.Axe().run(page.page).response["violations"]
    finally:
        page.js("document.querySelectorAll('details').forEach(d => d.open = false)")
    bad = [
        (v["id"], v["impact"], len(v["nodes"]))
        for v in found
        if v["impact"] in ("serious", "critical")
    ]
    assert bad == [], bad
