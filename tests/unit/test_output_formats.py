"""Output formats: one table behind every ``--format`` (export, compare, advise, list,
history).

Every registered format is reachable from the command of each kind it writes and refused
(exit 2, one line) by the others; a format registered here, in this one module, shows up
in both commands' help and writes through the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench.cli import app
from pgfsbench.formats import registry as formats
from pgfsbench.formats.registry import (
    ADVICE,
    COMPARISON,
    EXPORT,
    HISTORY,
    KINDS,
    LIST,
    OutputFormat,
)
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import Store

COMMAND = {
    EXPORT: "export",
    COMPARISON: "compare",
    ADVICE: "advise",
    LIST: "list",
    HISTORY: "history",
}
NAMES = sorted({name for kind in KINDS for name in formats.names(kind)})


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """Two targets, one pgbench run each."""
    results = tmp_path_factory.mktemp("formats") / "r"
    store = Store.create(results)
    store.start_campaign("c-7", "toy-plan", {"name": "toy-plan"}, {"kernel": "6.8.0"}, "0.1.0")
    for pos, name in enumerate(("ext4", "xfs")):
        tid = store.add_target(name, pos, "loop", name, {"size": "1G"})
        store.set_target(
            tid, "ok", provenance={"kind": "loop", "fs": name, "effective_mount_options": ["rw"]}
        )
        run = store.start_run(tid, "pgbench", {"clients": 2})
        store.add_result(
            run, tid, WorkloadResult([Metric("pgbench.tps", 100.0 + pos, "tx/s", True)])
        )
        store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return results


def cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def _assert_refused(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr


@pytest.mark.parametrize("name,kind", [(n, k) for n in NAMES for k in KINDS])
def test_every_format_is_reachable_from_each_command_it_writes(results, name, kind) -> None:
    result = cli(COMMAND[kind], str(results), "--format", name)
    if name in formats.names(kind):
        assert result.exit_code == 0, result.output
        if kind in (EXPORT, COMPARISON):
            assert "pgbench.tps" in result.stdout
        elif kind == LIST:
            assert "c-7" in result.stdout
    else:
        _assert_refused(
            result,
            f"the {name} format does not write",
            f"({kind} formats: {', '.join(formats.names(kind))})",
        )


def test_the_builtin_formats_are_the_ones_of_today() -> None:
    assert formats.names(EXPORT) == ["markdown", "json", "csv"]
    assert formats.names(COMPARISON) == ["text", "markdown", "json", "csv"]
    assert formats.names(ADVICE) == ["text", "conf", "json"]
    assert formats.names(LIST) == ["text", "json"]
    assert formats.names(HISTORY) == ["text", "json", "csv"]
    json_out = formats.pick("json", EXPORT)
    assert (json_out.extension, json_out.media_type) == ("json", "application/json")


def test_each_command_lists_its_formats_in_its_help() -> None:
    def help_text(command: str) -> str:  # as one line: the help wraps at 80 columns
        return " ".join(cli(command, "--help").stdout.split())

    for kind in (EXPORT, COMPARISON):
        assert f"output format: {', '.join(formats.names(kind))}" in help_text(COMMAND[kind])
    # as they were written by hand before the table held them
    assert "output format: text, conf (a postgresql.conf snippet), json" in help_text("advise")
    assert "text or json" in help_text("list")
    assert "text, json or csv" in help_text("history")


def test_an_unknown_format_names_the_available_ones(results) -> None:
    _assert_refused(
        cli("compare", str(results), "--format", "xml"),
        "unknown comparison format 'xml' (available: text, markdown, json, csv)",
    )
    _assert_refused(
        cli("advise", str(results), "--format", "xml"),
        "unknown advice format 'xml' (available: text, conf, json)",
    )
    _assert_refused(
        cli("list", str(results), "--format", "xml"),
        "unknown list format 'xml' (available: text, json)",
    )
    _assert_refused(
        cli("history", str(results), "--format", "xml"),
        "unknown history format 'xml' (available: text, json, csv)",
    )


# --- a toy format, declared and registered here ----------------------------------------


def _toy_export(campaign, out) -> None:
    out.write(
        f"toy export of {campaign.id}: "
        + ", ".join(f"{r.target}={m.value:g}" for r in campaign.runs for m in r.metrics)
        + "\n"
    )


def _toy_comparison(comparison, out) -> None:
    for row in comparison.rows:
        f = row.cells[comparison.table.targets[1]].finding  # against the baseline
        out.write(f"toy {row.metric}: ×{f.ratio:.2f} vs {f.reference}\n")


TOY = OutputFormat("toy", "toy", "text/x-toy", {EXPORT: _toy_export, COMPARISON: _toy_comparison})
TOY_COMPARISON_ONLY = OutputFormat("toy-cmp", "toy", "text/x-toy", {COMPARISON: _toy_comparison})


@pytest.fixture
def toys():
    with formats.registered(TOY, TOY_COMPARISON_ONLY):
        yield


def test_a_registered_format_is_offered_by_both_commands(toys) -> None:
    def help_text(command: str) -> str:  # as one line: the help wraps at 80 columns,
        # also after a hyphen ("toy-" / "cmp")
        return " ".join(cli(command, "--help").stdout.split()).replace("- ", "-")

    assert "output format: markdown, json, csv, toy" in help_text("export")
    assert "output format: text, markdown, json, csv, toy, toy-cmp" in help_text("compare")


def test_a_registered_format_writes_through_the_real_cli(toys, results) -> None:
    exported = cli("export", str(results), "--format", "toy")
    assert exported.exit_code == 0, exported.output
    assert exported.stdout == "toy export of c-7: ext4=100, xfs=101\n"
    compared = cli("compare", str(results), "--format", "toy")
    assert compared.exit_code == 0, compared.output
    assert compared.stdout == "toy pgbench.tps: ×1.01 vs ext4\n"
    # the built-in formats are untouched by it
    assert json.loads(cli("export", str(results)).stdout)["campaign"]["id"] == "c-7"


def test_a_format_without_a_kind_is_refused_by_that_command(toys, results) -> None:
    _assert_refused(
        cli("export", str(results), "--format", "toy-cmp"),
        "the toy-cmp format does not write an export (export formats: markdown, json, csv, toy)",
    )
    assert cli("compare", str(results), "--format", "toy-cmp").exit_code == 0


def test_a_name_registered_twice_or_an_unknown_kind_is_a_programming_error(toys) -> None:
    with pytest.raises(ValueError, match="registered twice"):
        formats.register(TOY)
    with pytest.raises(ValueError, match="no output kind"):
        OutputFormat("bad", "b", "text/plain", {"campaign": _toy_export})
