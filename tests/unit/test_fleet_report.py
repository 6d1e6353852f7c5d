"""The fleet report's Markdown renders as tables, read by a Markdown parser
(markdown-it-py, CommonMark with GFM tables): one host and several, every row with
the header's cells. (A delimiter row one cell short and renderers show no table.)"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

markdown_it = pytest.importorskip(
    "markdown_it", reason="markdown-it-py is not installed (pip install -e '.[test]')"
)

SCRIPT = Path(__file__).resolve().parents[2] / "fleet" / "fleet_report.py"
spec = importlib.util.spec_from_file_location("fleet_report", SCRIPT)
fleet_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fleet_report)


def cell(centre: float, ci: list[float] | None = None, n: int = 3) -> dict:
    return {"centre": centre, "ci95": ci, "n": n, "unit": "tps", "direction": "higher"}


def tables(text: str) -> list[list[list[str]]]:
    """Every table the parser found: its rows (the header first) of cell texts."""
    found: list[list[list[str]]] = []
    row: list[str] = []
    tokens = markdown_it.MarkdownIt("commonmark").enable("table").parse(text)
    for i, token in enumerate(tokens):
        if token.type == "table_open":
            found.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type in ("th_open", "td_open"):
            row.append(tokens[i + 1].content if tokens[i + 1].type == "inline" else "")
        elif token.type == "tr_close":
            found[-1].append(row)
    return found


def headline(hosts: list[str]) -> str:
    key = ("pgbench clients=2", "pgbench.tps", "ext4")
    other = ("pgbench clients=2", "pgbench.tps", "xfs|dax")  # a pipe in a cell, escaped
    cells = {
        h: {key: cell(100.0 + i, [90.0, 110.0 + i]), **({other: cell(50.0)} if i else {})}
        for i, h in enumerate(hosts)
    }
    return "\n".join(fleet_report.headline_table(cells, hosts)) + "\n"


@pytest.mark.parametrize("hosts", [["db-old"], ["db-old", "db-new"], ["db-old", "db-new", "gp3"]])
def test_the_headline_table_renders_with_one_host_and_with_several(hosts):
    [table] = tables(headline(hosts))
    header, *rows = table
    # side by side only: each pair's ratio is compare's (no figure computed here)
    assert header == ["measurement", "metric", "target", *hosts]
    assert len(rows) == (1 if len(hosts) == 1 else 2)
    assert all(len(r) == len(header) for r in rows)
    assert rows[0][:4] == ["pgbench clients=2", "pgbench.tps", "ext4", "100 tps [90, 110] (n=3)"]
    if len(hosts) > 1:
        assert rows[0][4] == "101 tps [90, 111] (n=3)"
        assert rows[1][2] == "xfs|dax" and rows[1][3] == "—"


def test_the_hosts_table_renders_with_a_host_that_collected_nothing():
    text = (
        "\n".join(
            fleet_report.table(
                ["host", "campaign", "status"],
                [["a", "20261126-1", "ok"], ["b", "no campaign collected", ""]],
            )
        )
        + "\n"
    )
    [table] = tables(text)
    assert table == [
        ["host", "campaign", "status"],
        ["a", "20261126-1", "ok"],
        ["b", "no campaign collected", ""],
    ]


def test_a_row_of_another_width_is_refused():
    with pytest.raises(AssertionError):
        fleet_report.table(["a", "b"], [["only one"]])


def report_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def test_the_preview_says_what_the_report_would_hold_and_writes_nothing(tmp_path):
    # (--check: nothing is collected by a dry run; a host collected earlier is listed
    # with its campaign, read by `pgfsbench list`: tests/integration/test_fleet.py.)
    done = report_script(
        "--store",
        "postgresql://bench@db/results",
        "--results",
        str(tmp_path),
        "--preview",
        "a",
        "b",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "fleet report (--check: nothing written) for 2 host(s):",
        f"  a: nothing collected yet; a run collects it to {tmp_path / 'a'}",
        f"  b: nothing collected yet; a run collects it to {tmp_path / 'b'}",
        f"fleet report: would write {tmp_path / 'fleet-report.md'} and fleet-list.txt",
    ]
    assert list(tmp_path.iterdir()) == []


def test_an_unreachable_store_is_one_line_without_its_password():
    # Port 1 on the loopback: refused at once, no server needed.
    done = report_script("--check-store", "--store", "postgresql://bench:s3cret@127.0.0.1:1/r")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("error: cannot reach the results store "), line
    assert "s3cret" not in done.stdout + done.stderr
