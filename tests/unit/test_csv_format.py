"""CSV for `export` and `compare`: loads with csv.DictReader as is, numbers parse back exactly.

Round trips through the real CLI on stored results: every stored number appears once and
``float(cell)`` equals it; what is not a number (unsupported, infinite, not applicable)
is an empty cell, never a Python repr.
"""

from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench.analysis.table import comparison_table
from pgfsbench.cli import app
from pgfsbench.formats.csv import COMPARISON_COLUMNS, EXPORT_COLUMNS, METRIC_COLUMNS
from pgfsbench.render.values import csv_cell as cell
from pgfsbench.store.read import load_campaign
from tests.unit.test_export import RUN_ERROR, build_results
from tests.unit.test_fail_if_worse import ROUNDS, _store

# What a Python value leaks as when it is str()-ed instead of written as data.
REPR = re.compile(r"-?(nan|NaN|inf|Infinity)|\{.*\}|\[.*\]|'.*'")
WORDS = re.compile(r"\b(None|True|False)\b|np\.")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """ext4/xfs/btrfs; unsupported and infinite values; a failed run; a NaN parameter."""
    return build_results(tmp_path_factory.mktemp("csv") / "r")


@pytest.fixture(scope="module")
def repeated(tmp_path_factory) -> Path:
    return _store(
        tmp_path_factory.mktemp("csv") / "rep",
        "c-rep",
        {"base": 1.0, "slow": 0.85, "same": 1.0, "fast": 1.15},
        ROUNDS,
    )


def _csv(*args: str) -> tuple[list[str], list[dict[str, str]]]:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    reader = csv.DictReader(io.StringIO(result.stdout))
    rows = list(reader)
    for row in rows:
        assert None not in row and None not in row.values(), row  # no ragged rows
        for value in row.values():
            assert not REPR.fullmatch(value) and not WORDS.search(value), (value, row)
    return reader.fieldnames, rows


def _number(text: str) -> float | None:
    return float(text) if text != "" else None


@pytest.mark.parametrize("which", ["results", "repeated"])
def test_export_csv_round_trips_every_stored_number(request, which) -> None:
    path = request.getfixturevalue(which)
    campaign = load_campaign(path)
    columns, rows = _csv("export", str(path), "--format", "csv")
    assert columns[: len(EXPORT_COLUMNS)] == EXPORT_COLUMNS
    assert columns[-len(METRIC_COLUMNS) :] == METRIC_COLUMNS
    assert len(rows) == sum(max(1, len(r.metrics)) for r in campaign.runs)
    by_key = {(r["target"], r["workload"], r["round"], r["metric"]): r for r in rows}
    assert len(by_key) == len(rows)  # one row per run × metric
    for run in campaign.runs:
        for m in run.metrics:
            row = by_key[(run.target, run.workload, str(run.repetition), m.name)]
            stored = m.value if m.value is not None and math.isfinite(m.value) else None
            assert _number(row["value"]) == stored, (m, row)
            assert row["unit"] == m.unit
            assert (
                row["direction"] == {True: "higher", False: "lower", None: ""}[m.higher_is_better]
            )
            assert row["note"] == m.note  # how it was read; crash-safety notes where they exist
            assert row["run_status"] == run.status and row["settling"] == "no"
            assert "param.type" not in row  # the workload column says it
            for k, v in run.params.items():
                if k == "type":
                    continue
                want = "" if isinstance(v, float) and not math.isfinite(v) else str(v)
                assert row[f"param.{k}"] == want


def test_export_csv_keeps_failed_runs_and_empty_cells(results) -> None:
    _, rows = _csv("export", str(results), "--format", "csv")
    [failed] = [r for r in rows if r["run_status"] == "failed"]
    assert (failed["target"], failed["workload"], failed["run_error"]) == (
        "btrfs",
        "pgbench",
        RUN_ERROR,
    )
    assert failed["metric"] == failed["value"] == failed["unit"] == ""
    assert failed["param.rate"] == "" and failed["param.clients"] == "8"  # NaN is no number
    # A parameter a workload does not have is an empty cell on its rows.
    fsync = next(r for r in rows if r["workload"] == "fsync")
    assert fsync["param.secs_per_test"] == "2" and fsync["param.scale"] == ""
    unsupported = next(r for r in rows if r["metric"] == "fsync.fsync_writethrough_8k.ops_per_s")
    assert unsupported["value"] == "" and unsupported["unit"] == "ops/s"
    assert {r["fs"] for r in rows} == {"ext4", "xfs", "btrfs"}


def test_comparison_csv_round_trips_the_table(repeated) -> None:
    table = comparison_table(load_campaign(repeated))
    columns, rows = _csv("compare", str(repeated), "--metric", "*", "--format", "csv")
    assert columns == COMPARISON_COLUMNS
    contenders = table.targets[1:]
    assert len(rows) == len(table.rows) * len(contenders)
    got = {(r["metric"], r["contender"]): r for r in rows}
    for row in table.rows:
        base = row.cells[table.baseline]
        for t in contenders:
            out, c = got[(row.metric, t)], row.cells[t]
            assert out["baseline"] == "base" and _number(out["baseline_centre"]) == base.value
            assert (_number(out["baseline_ci_low"]), _number(out["baseline_ci_high"])) == tuple(
                base.ci
            )
            assert int(out["baseline_n"]) == base.n and int(out["contender_n"]) == c.n
            assert _number(out["contender_centre"]) == c.value
            f = c.finding
            assert (
                _number(out["ratio"]),
                _number(out["ratio_ci_low"]),
                _number(out["ratio_ci_high"]),
                _number(out["confidence"]),
            ) == (f.ratio, f.low, f.high, f.level.confidence if f.level else None)
            assert _number(out["p_value"]) == f.p
            assert out["design"] == "paired"
            assert out["headline"] == ("yes" if row.headline else "no")
            assert (out["mark"], out["decision"], out["reason"]) == (
                f.mark.replace("\u2212", "-"),  # an ASCII minus in every CSV
                f.outcome,
                f.sentence().replace("\u2212", "-"),
            )
    tps = {r["contender"]: r["decision"] for r in rows if r["metric"] == "pgbench.tps"}
    assert tps == {"slow": "worse", "same": "equivalent", "fast": "better"}


def test_comparison_csv_of_single_runs_and_failures(results) -> None:
    """One run each: ratios, no decisions (empty cells); a failed cell says failed."""
    _, rows = _csv("compare", str(results), "--metric", "*", "--format", "csv")
    tps = [r for r in rows if r["metric"] == "pgbench.tps"]
    assert [(r["contender"], r["contender_status"]) for r in tps] == [
        ("xfs", "ok"),
        ("btrfs", "failed"),
    ]
    assert _number(tps[0]["ratio"]) == pytest.approx(901.0 / 900.0)
    assert tps[0]["decision"] == "na" and tps[0]["ratio_ci_low"] == ""
    assert tps[0]["baseline_ci_low"] == "" and tps[1]["contender_centre"] == ""


def test_one_column_gives_a_row_per_metric(tmp_path) -> None:
    path = _store(tmp_path / "one", "c-one", {"ext4": 1.0}, 3)
    _, rows = _csv("compare", str(path), "--format", "csv")
    [row] = rows
    assert (row["baseline"], row["contender"], row["baseline_n"]) == ("ext4", "", "3")


@pytest.mark.parametrize(
    "value,text",
    [
        (None, ""),
        (True, "yes"),
        (False, "no"),
        (math.nan, ""),
        (-math.inf, ""),
        (0.1, "0.1"),
        (1e-300, "1e-300"),
        (12, "12"),
        ([1, "a", None], "1 a "),
        ("x,y", "x,y"),
    ],
)
def test_cells(value, text) -> None:
    assert cell(value) == text


def test_numpy_scalars_are_plain_numbers() -> None:
    import numpy as np

    assert cell(np.float64(0.5)) == "0.5" and cell(np.int64(3)) == "3"
    assert cell(np.bool_(True)) == "yes"


def test_a_spreadsheet_opens_every_csv_cleanly(tmp_path) -> None:
    """µs in UTF-8 without a BOM reads as 'Âµs' in Excel, and the compare mark
    was U+2212. A minus is ASCII in every CSV; --bom adds the byte order mark; --ascii
    writes units and marks in ASCII."""
    from pgfsbench.formats.csv_text import ASCII
    from tests.unit.demo_campaign import unpack_demo

    demo = str(unpack_demo(tmp_path / "demo"))

    def out(*args: str) -> str:
        result = CliRunner().invoke(app, list(args))
        assert result.exit_code == 0, result.output
        return result.stdout

    for command in (["export", demo], ["compare", demo, "--metric", "*"]):
        plain = out(*command, "--format", "csv")
        assert "\u2212" not in plain and "µs" in plain
        assert out(*command, "--format", "csv", "--bom") == "\ufeff" + plain
        ascii = out(*command, "--format", "csv", "--ascii")
        assert ascii == plain.translate(ASCII) and ",us," in ascii and "µ" not in ascii
    rows = list(csv.DictReader(io.StringIO(out("compare", demo, "--format", "csv", "--ascii"))))
    # worse, equivalent (≈ as ~), inconclusive, not tested
    assert {r["mark"] for r in rows} == {"-", "~", "?", ""}
    assert {r["unit"] for r in rows} == {"us", "tx/s", "s"}
    refused = CliRunner().invoke(app, ["export", demo, "--format", "json", "--bom"])
    assert refused.exit_code == 2
    assert refused.stderr.strip() == (
        "error: --bom is not an option of the json format (it applies to --format csv)"
    )


def test_history_csv_takes_the_same_options(tmp_path) -> None:
    from tests.unit.test_pairing import stored

    for n, factor in enumerate((1.0, 0.8)):  # the second 20% slower: a worse mark
        stored(tmp_path / f"c{n}", {"ext4": factor}, started=1.7e9 + n)
    result = CliRunner().invoke(app, ["history", str(tmp_path), "--format", "csv", "--bom"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("\ufefftarget,")
    [_, worse] = csv.DictReader(io.StringIO(result.stdout.removeprefix("\ufeff")))
    assert (worse["decision"], worse["mark"]) == ("worse", "-")
