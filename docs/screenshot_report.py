"""Take docs/images/report.png: the first screen of a campaign's HTML report, as a reader
sees it at 1200×660 in Debian's chromium (the browser the report's tests use).

    python docs/screenshot_report.py RESULTS_DIR [--output docs/images/report.png]

The report is written afresh from RESULTS_DIR's stored results by this pgfsbench (into a
temporary file: the results directory is left as it is), opened offline, and captured
once its charts are drawn. Keep the picture small: the docs ship it (< 150 KB).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).with_name("images") / "report.png"
VIEWPORT = {"width": 1200, "height": 660}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--output", type=Path, default=OUT)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("needs chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pgfsbench",
                "-q",
                "report",
                str(args.results),
                "--output",
                str(html),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with sync_playwright() as p:
            # --no-sandbox: run as root, chromium's sandbox refuses to start
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
            page.route(
                "**/*",
                lambda route: (
                    route.abort()
                    if not route.request.url.startswith("file:")
                    else route.continue_()
                ),
            )
            page.goto(html.as_uri(), wait_until="load")
            page.wait_for_timeout(1500)  # the charts draw after load
            args.output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.output))
            browser.close()
    print(f"{args.output}: {args.output.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
