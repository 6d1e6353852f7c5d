"""What the report costs its reader's browser: first paint, page ready, charts drawn.

Writes the report of a synthetic campaign (bench_report.build: T targets x R
repetitions of pgbench and fsync-latency) or of --results, then opens it in
headless chromium (Debian's, driven by Playwright as the browser test does)
several times on a laptop and a phone viewport, in two layouts of the same
file:

  body   as shipped: plotly.js (packed) and the chart script at the end of <body>
  head   the same two scripts moved into <head> (how the report was first built)

and prints, per layout and viewport, the range over the loads of

  paint  first-contentful-paint: when the reader first sees anything (the
         recommendation and the verdicts are the first content)
  ready  DOMContentLoaded's end: the whole file parsed (the packed library included,
         not yet unpacked)
  charts every chart drawn (each div.chart has plotly's js-plotly-plot class)

With --library FILE the report inlines that plotly.js file as it is instead of the packed
partial bundle (how reports were written before the partial bundle), e.g. the full plotly.min.js
the plotly Python package ships, to compare the two on the same machine and campaign.

    .venv/bin/python benchmarks/bench_report_browser.py                # 3 targets x 5 reps
    .venv/bin/python benchmarks/bench_report_browser.py --loads 5 --results /path/to/results
    .venv/bin/python benchmarks/bench_report_browser.py --library path/to/plotly.min.js
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).parent))
from bench_report import build

from pgfsbench.report.html import write_report

VIEWPORTS = {"laptop": {"width": 1366, "height": 768}, "phone": {"width": 375, "height": 667}}
PROBE = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return {paint: fcp ? fcp.startTime : null, ready: nav.domContentLoadedEventEnd};
}"""
PAINTED = "() => performance.getEntriesByName('first-contentful-paint').length > 0"
CHARTS_DRAWN = """() => [...document.querySelectorAll("div.chart")]
  .every(el => el.classList.contains("js-plotly-plot"))"""


def scripts_in_head(html: str) -> str:
    """The shipped report with its two closing scripts moved into <head>."""
    start = html.rindex("<script>", 0, html.rindex("<script>"))
    end = html.rindex("</body>")
    scripts = html[start:end]
    return html[:start].replace("</head>", scripts + "</head>", 1) + html[end:]


def measure(page, url: str) -> dict[str, float]:
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function(CHARTS_DRAWN, timeout=60_000)
    charts = page.evaluate("() => performance.now()")
    page.wait_for_function(PAINTED, timeout=60_000)  # the entry can come a frame later
    return {**page.evaluate(PROBE), "charts": charts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--loads", type=int, default=3, help="loads per layout and viewport")
    ap.add_argument("--results", type=Path, help="this results directory's report instead")
    ap.add_argument("--library", type=Path, help="inline this plotly.js file as it is")
    args = ap.parse_args()
    if args.library:
        import pgfsbench.report.html as report_html

        raw = args.library.read_text().replace("</script", "<\\/script")
        report_html.plotly_js = lambda: raw  # the chart script then finds window.Plotly
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("needs chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp:
        results = args.results or build(Path(tmp) / "r", args.targets, args.reps)
        shipped = write_report(results, output=Path(tmp) / "body.html")
        html = shipped.read_text()
        (Path(tmp) / "head.html").write_text(scripts_in_head(html))
        charts = html.count('class="chart"')
        print(f"report: {len(html.encode()) / 1e6:.2f} MB, {charts} charts")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            for layout in ("body", "head"):
                for name, viewport in VIEWPORTS.items():
                    seen = []
                    for _ in range(args.loads):
                        page = browser.new_page(viewport=viewport)
                        seen.append(measure(page, (Path(tmp) / f"{layout}.html").as_uri()))
                        page.close()
                    print(
                        f"{layout:5} {name:7}",
                        "  ".join(
                            f"{k} {min(s[k] for s in seen) / 1000:.2f}-"
                            f"{max(s[k] for s in seen) / 1000:.2f} s"
                            for k in ("paint", "ready", "charts")
                        ),
                    )
            browser.close()


if __name__ == "__main__":
    main()
