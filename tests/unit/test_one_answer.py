"""One answer: each pair's figure read back from every output of the demo campaign, and
compared. The verdict line, show, show --full, compare (text, JSON, CSV, Markdown), the
JSON export, the report, advise and the store's decisions must all quote the same
finding: the same ratio and interval, against the same reference."""

from __future__ import annotations

import csv
import io
import json
import re
from html import unescape

import pytest
from typer.testing import CliRunner

from pgfsbench.analysis.advice.advise import advise
from pgfsbench.analysis.caveats.durability import durabilities
from pgfsbench.analysis.headline import metric_label
from pgfsbench.analysis.table import comparison_table
from pgfsbench.analysis.verdicts.decisions import decisions
from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
from pgfsbench.cli import app
from pgfsbench.ratios import change_text
from pgfsbench.report.html import render_report
from pgfsbench.store.read import load_campaign
from tests.unit.demo_campaign import unpack_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return unpack_demo(tmp_path_factory.mktemp("one-answer") / "r")


def _out(*args: str, width: int = 250) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.stdout


def _figures(demo):
    """(finding, 'ratio [low, high]') of every contender against the baseline on every
    tested headline measurement: what every output must quote."""
    table = comparison_table(load_campaign(demo))
    out = []
    for row in table.rows:
        for f in table.findings(row):
            if row.headline and f.interval is not None:
                out.append((row, f, change_text(f.ratio, f.interval)))
    assert len(out) >= 4  # fsync p99 and TPC-B tps, xfs and btrfs each
    return table, out


def test_every_text_output_quotes_the_same_figure(demo) -> None:
    table, found = _figures(demo)
    assert {f.reference for _, f, _ in found} == {table.baseline}  # one reference
    surfaces = {
        "show": _out("show", str(demo)),
        "show --full": _out("show", str(demo), "--full"),
        "compare": _out("compare", str(demo)),
        "markdown export": _out("export", str(demo), "--format", "markdown"),
        "compare markdown": _out("compare", str(demo), "--format", "markdown"),
    }
    lines = {
        v.title: v.text
        for v in verdict_lines(table, durabilities(load_campaign(demo)))
        if v.tiers is not None
    }
    for row, f, figure in found:
        # the verdict line: 'xfs +20% TPC-B tps [−18%, +75%]' (the metric named after the
        # first figure only)
        ratio, interval = figure.split(" [", 1)
        pattern = rf"{f.target} {re.escape(ratio)}( {re.escape(metric_label(row.metric))})? \[{re.escape(interval)}"
        assert re.search(pattern, lines[f"{row.workload} {row.label}".strip()]), (f, figure)
        for name, text in surfaces.items():
            assert figure in text, (name, f.target, row.metric, figure)


def test_every_machine_output_holds_the_same_numbers(demo) -> None:
    table, found = _figures(demo)
    doc = json.loads(_out("export", str(demo), "--format", "json"))
    cmp_doc = json.loads(_out("compare", str(demo), "--format", "json"))
    rows = list(csv.DictReader(io.StringIO(_out("compare", str(demo), "--format", "csv"))))
    stored = {
        (d["workload"], d["label"], d["metric"], d["baseline"], d["target"]): d
        for d in decisions(load_campaign(demo))
    }
    # the store holds every headline pair the tiers rest on, each as the table has it
    for f in table.pairs.values():
        s = stored[(f.workload, f.label, f.metric, f.reference, f.target)]
        assert (s["ratio"], s["ratio_low"], s["ratio_high"]) == pytest.approx(
            (f.ratio, f.low, f.high)
        )
    for row, f, _ in found:
        expected = (f.ratio, f.low, f.high)
        for d in (doc["comparison"], cmp_doc):
            [r] = [
                x
                for x in d["rows"]
                if (x["workload"], x["label"], x["metric"]) == (row.workload, row.label, row.metric)
            ]
            vs = r["cells"][f.target]["vs_baseline"]
            assert (vs["ratio"], *vs["interval"]) == pytest.approx(expected)
            assert vs["reference"] == table.baseline and vs["outcome"] == f.outcome
        [c] = [
            x
            for x in rows
            if (x["metric"], x["contender"]) == (row.metric, f.target) and x["label"] == row.label
        ]
        assert tuple(
            float(c[k]) for k in ("ratio", "ratio_ci_low", "ratio_ci_high")
        ) == pytest.approx(expected)
        s = stored[(row.workload, row.label, row.metric, table.baseline, f.target)]
        assert (s["ratio"], s["ratio_low"], s["ratio_high"]) == pytest.approx(expected)
        assert s["baseline"] == table.baseline and s["reason"] == f.sentence()


def test_the_report_and_the_advice_quote_the_same_findings(demo) -> None:
    table, found = _figures(demo)
    campaign = load_campaign(demo)
    page = unescape(render_report(campaign))
    a = advise(campaign)
    advice = " ".join([a.chosen_by, *(g for u in a.unsafe for g in u.gains)])
    for row, f, figure in found:
        assert f.sentence() in page, f.sentence()  # each table cell's tooltip
        if f.outcome in ("better", "worse"):  # the pick quotes what it beat, same pair
            ratio, interval = figure.split(" [", 1)
            quoted = f"{f.target} {ratio} {metric_label(row.metric)} [{interval}"
            assert quoted in advice or f.reference != table.baseline, quoted
