"""The report's layout, without a browser: the answer first, then the charts, then the
full table (collapsed, grouped), then provenance. tests/integration/test_report_browser.py
checks the same page in a real browser."""

from __future__ import annotations

import re
from pathlib import Path

from pgfsbench.analysis.table import Cell, Row, Table
from pgfsbench.report.html import table_groups, write_report
from tests.unit.test_report import build_results


def test_sections_come_answer_first(tmp_path: Path) -> None:
    page = write_report(build_results(tmp_path / "res")).read_text()
    order = [
        page.index(f'<section id="{s}"')
        for s in (
            "advice",
            "verdicts",
            "charts",
            "comparison",
            "differences",
            "host",
            "targets",
            "runs",
        )
    ]
    assert order == sorted(order)
    cards = re.findall(r'<li class="verdict verdict-([a-z-]+)" data-measurement="([^"]+)"', page)
    assert cards == [
        ("single-run", "fsync"),
        ("single-run", "pgbench-init"),
        ("single-run", "pgbench clients=8"),
    ]
    assert page.count("no verdict: one run each") == 3
    # the full table is collapsed, with its filter, switch and script
    details = page.index('<details class="section" id="comparison-details">')
    assert details < page.index('<table class="comparison">')
    assert 'id="table-filter"' in page and 'id="table-headline-only"' in page
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert any('getElementById("table-filter")' in s for s in scripts)


def _row(workload: str, metric: str, label: str = "") -> Row:
    return Row(workload, label, metric, "s", False, {"a": Cell(1.0, None, False, "ok")})


def test_monitor_limit_and_cost_rows_get_their_own_headers_after_the_workloads() -> None:
    rows = [
        _row("fsync", "fsync.x"),
        _row("fsync", "mon.cpu.busy_s"),
        _row("fsync", "bound.cpu_busy_frac"),
        _row("pgbench", "pgbench.tps", "clients=8"),
        _row("pgbench", "eff.cpu_s_per_1000_tx", "clients=8"),
        _row("pgbench", "mon.cpu.busy_s", "clients=8"),
        _row("pgbench", "stall.count", "clients=8"),
    ]
    groups = table_groups(Table(["a"], "a", rows))
    assert [(g.title, g.kind, [r.metric for r in g.rows]) for g in groups] == [
        ("fsync", "workload", ["fsync.x"]),
        ("pgbench · clients=8", "workload", ["pgbench.tps", "stall.count"]),
        ("cost per unit of work · pgbench · clients=8", "eff", ["eff.cpu_s_per_1000_tx"]),
        ("monitors · fsync", "mon", ["mon.cpu.busy_s"]),
        ("monitors · pgbench · clients=8", "mon", ["mon.cpu.busy_s"]),
        ("what limited the run · fsync", "bound", ["bound.cpu_busy_frac"]),
    ]
