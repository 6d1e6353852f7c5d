"""Two real nightly campaigns of one plan in a real PostgreSQL store: compare pairs them
and history lists them, both flagging the target made slower; a recipe difference is
refused.

The second night's ext4 server sleeps 10 ms before every WAL flush (``commit_delay =
10000`` with ``commit_siblings = 0``, as in ``test_fail_if_worse.py``): about ×0.1 of
the tps at 4 clients, decided even on a loaded machine. Five rounds a night: across
campaigns the rounds are independent samples, and Mann-Whitney over 5 and 5 can reach
p = 0.008, under the Holm level of two headline pairs (4 and 4 could not: 0.029).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pgfsbench import exits
from pgfsbench.store.read import load_campaign
from tests.integration.conftest import cli
from tests.integration.pg_server import pg_server
from tests.integration.plans import (
    COMMIT_DELAY,
    LOAD_ONCE,
    SMALL_BUFFERS,
    ext4,
    pgbench,
    rounds,
    run_campaign,
)


def nightly(**ext4_fields) -> dict:
    """The nightly plan's keywords; ``ext4_fields`` for its ext4 target."""
    return dict(
        name="nightly",
        targets=[ext4("ext4", "300M", **ext4_fields), {"name": "xfs", "fs": "xfs", "size": "300M"}],
        workloads=[LOAD_ONCE, pgbench(clients=4, duration=2)],
        repetitions=rounds(5),
        settings=SMALL_BUFFERS,
    )


@pytest.fixture(scope="module")
def nights(tmp_path_factory, state_dir: Path):
    """(first night's results, second night's, store URL) with both imported."""
    first, _ = run_campaign(tmp_path_factory.mktemp("night1"), **nightly())
    second, _ = run_campaign(tmp_path_factory.mktemp("night2"), **nightly(postgres=COMMIT_DELAY))
    with pg_server() as url:
        cli("import", str(first), str(second), "--store", url)
        yield first, second, url


def test_compare_pairs_the_campaigns_from_the_store(nights) -> None:
    first, second, url = nights
    one, two = load_campaign(first).uuid, load_campaign(second).uuid
    doc = json.loads(cli("compare", one, two, "--store", url, "--format", "json").stdout)
    assert [(p["baseline"], p["contender"]) for p in doc["pairs"]] == [
        ("ext4", "ext4"),
        ("xfs", "xfs"),
    ]
    assert [c["uuid"] for c in doc["campaigns"]] == [one, two] and doc["warnings"] == []
    assert any("ext4: PostgreSQL settings" in n and "commit_delay" in n for n in doc["notes"])
    base, cont = doc["columns"]
    [ext4] = [
        r for r in doc["rows"] if r["label"] == "ext4 clients=4" and r["metric"] == "pgbench.tps"
    ]
    vs = ext4["cells"][cont]["vs_baseline"]
    assert vs["outcome"] == "worse" and not vs["paired"] and vs["ratio"] < 0.5, vs
    assert ext4["cells"][base]["n"] == ext4["cells"][cont]["n"] == 5
    gate = cli("compare", one, two, "--store", url, "--fail-if-worse", "20%", check=False)
    assert gate.returncode == exits.WORSE, (gate.stdout, gate.stderr)
    # the row names the pair, then the measurement
    assert "pgbench ext4 clients=4 pgbench.tps: " in gate.stderr


def test_history_lists_both_nights_with_the_regression(nights) -> None:
    first, second, url = nights
    doc = json.loads(
        cli(
            "history",
            "--store",
            url,
            "--target",
            "ext4",
            "--plan",
            "nightly",
            "--metric",
            "pgbench.tps",
            "--format",
            "json",
        ).stdout
    )
    [series] = doc["series"]
    uuids = [load_campaign(first).uuid, load_campaign(second).uuid]
    assert [p["uuid"] for p in series["points"]] == uuids
    assert series["host"] and all(p["n"] == 5 and p["ci95"] for p in series["points"])
    assert series["points"][0]["vs_previous"] is None
    previous = series["points"][1]["vs_previous"]
    assert previous["outcome"] == "worse"
    # the very finding compare gives for the pair, with --pair or without
    for pair in ([], ["--pair", "ext4=ext4"]):
        doc = json.loads(cli("compare", *uuids, "--store", url, "--format", "json", *pair).stdout)
        [row] = [
            r
            for r in doc["rows"]
            if r["label"] == "ext4 clients=4" and r["metric"] == "pgbench.tps"
        ]
        vs = row["cells"][doc["columns"][1]]["vs_baseline"]
        assert (vs["outcome"], vs["mark"], vs["ratio"], vs["interval"]) == (
            previous["outcome"],
            previous["mark"],
            previous["ratio"],
            previous["interval"],
        )
    text = cli(
        "history",
        str(first),
        str(second),
        "--target",
        "ext4",
        "--metric",
        "pgbench.tps",
        env={**os.environ, "COLUMNS": "250"},
    ).stdout
    assert "−" in text and load_campaign(second).id in text


def test_a_recipe_difference_is_refused(nights) -> None:
    first, second, _ = nights
    refused = cli("compare", str(first), str(second), "--pair", "ext4=xfs", check=False)
    assert refused.returncode == exits.USAGE, (refused.stdout, refused.stderr)
    assert "ext4→xfs: fs: ext4 (baseline) vs xfs (contender)" in refused.stderr
    assert "Traceback" not in refused.stderr and not refused.stdout
    allowed = cli(
        "compare",
        str(first),
        str(second),
        "--pair",
        "ext4=xfs",
        "--allow-different",
        "--format",
        "markdown",
    )
    assert "⚠ **compared despite a different ext4→xfs: fs: ext4" in allowed.stdout


def test_the_report_shows_the_history_from_the_store(nights) -> None:
    first, second, url = nights
    page = second / "history-report.html"
    cli("report", str(second), "--store", url, "--output", str(page))
    html = page.read_text()
    section = html[html.index('<section id="history">') : html.index('<section id="comparison">')]
    assert load_campaign(first).id in section and load_campaign(second).id in section
    assert 'data-mark="−"' in section and 'data-chart="history"' in section
    # the first night has no predecessor: no section
    cli("report", str(first), "--store", url, "--output", str(page))
    assert '<section id="history">' not in page.read_text()


def test_the_history_page_draws_in_a_browser(nights, tmp_path) -> None:
    """--html on the real campaigns, opened in chromium: one trace per target, whiskers."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("needs chromium (apt-get install chromium; 'make test' installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright")
    first, second, _ = nights
    page_file = tmp_path / "history.html"
    cli("history", str(first), str(second), "--metric", "pgbench.tps", "--html", str(page_file))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_file.as_uri())
            page.wait_for_selector("div.chart .main-svg", timeout=30000)
            names = page.evaluate("[...document.querySelector('div.chart').data].map(t => t.name)")
            whiskers = page.evaluate("document.querySelectorAll('div.chart .errorbar').length")
            symbols = page.evaluate("document.querySelector('div.chart').data[0].marker.symbol")
        finally:
            browser.close()
    assert not errors
    assert sorted(n.split(" @ ")[0] for n in names) == ["ext4", "xfs"]
    assert whiskers == 4  # 2 campaigns × 2 targets, each with a CI
    assert symbols == ["circle", "x"]  # ext4 (first, in name order): the second night worse
