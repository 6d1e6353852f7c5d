"""The conventions people expect of a CLI: --version, -h everywhere, help text shown as
written, shell completion, global --quiet/--verbose, doctor --json, a human plan check."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from pgfsbench import __version__, doctor
from pgfsbench.cli import app
from pgfsbench.plan.load import builtin_names
from tests.unit.demo_campaign import unpack_demo

ROOT = Path(__file__).parents[2]


def pgfsbench(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pgfsbench", *args], capture_output=True, text=True, **kwargs
    )


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), prog_name="pgfsbench")


def commands(group: click.Group, path=()):
    """Every command path: ('run',), ('plan', 'check'), ..."""
    for name, command in group.commands.items():
        yield path + (name,), command
        if isinstance(command, click.Group):
            yield from commands(command, path + (name,))


ALL = list(commands(typer.main.get_command(app)))


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return unpack_demo(tmp_path_factory.mktemp("demo") / "r")


def test_version():
    result = pgfsbench("--version")
    assert result.returncode == 0 and result.stdout == f"pgfsbench {__version__}\n"


@pytest.mark.parametrize("path", [()] + [p for p, _ in ALL], ids=lambda p: " ".join(p) or "-")
def test_dash_h_is_help_everywhere_and_loses_no_bracketed_text(path):
    short, long = invoke(*path, "-h"), invoke(*path, "--help")
    assert short.exit_code == long.exit_code == 0, short.output
    assert short.output == long.output
    assert short.output.startswith(f"Usage: pgfsbench {' '.join(path)}".rstrip())
    command = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    flat = " ".join(short.output.split())
    for param in command.params:  # each option's help as written, "[verdicts]" and all
        if getattr(param, "help", None):
            assert " ".join(param.help.split()) in flat, (path, param.name)
    assert "-h, --help" in short.output


def test_compare_help_keeps_its_brackets():
    assert "the plan's [verdicts] baseline" in " ".join(invoke("compare", "-h").output.split())


def test_completion_script_and_completions():
    # the shell is detected from the one we run in (typer's --show-completion)
    command = f"{sys.executable} -m pgfsbench --show-completion bash; true"
    shown = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "complete -o default -F _pgfsbench_completion pgfsbench" in shown.stdout
    assert "_PGFSBENCH_COMPLETE=complete_bash" in shown.stdout
    # what the script asks for, answered: commands, then a command's options
    env = {**os.environ, "_PGFSBENCH_COMPLETE": "complete_bash"}
    words = pgfsbench(env={**env, "COMP_WORDS": "pgfsbench sh", "COMP_CWORD": "1"})
    assert words.stdout.split() == ["show"]
    options = pgfsbench(env={**env, "COMP_WORDS": "pgfsbench doctor --", "COMP_CWORD": "2"})
    assert "--json" in options.stdout.split()
    plans = pgfsbench(env={**env, "COMP_WORDS": "pgfsbench run seed-", "COMP_CWORD": "2"})
    assert plans.stdout.split() == [n for n in builtin_names() if n.startswith("seed-")]


def test_quiet_and_verbose_together_is_a_usage_error():
    result = pgfsbench("-q", "-v", "doctor")
    assert result.returncode == 2
    assert result.stderr.strip() == "error: --quiet and --verbose: choose one"


@pytest.mark.parametrize("required, code", [(True, 1), (False, 0)])
def test_doctor_json_has_the_same_checks_and_exit_code(monkeypatch, required, code):
    monkeypatch.setattr(
        doctor,
        "checks",
        lambda: [
            doctor.Check("root", True, "running as root"),
            doctor.Check(
                "filesystem zz", False, "no kernel support", "modprobe zz", required=required
            ),
        ],
    )
    text, as_json = invoke("doctor"), invoke("doctor", "--json")
    assert text.exit_code == as_json.exit_code == code
    assert json.loads(as_json.output) == {
        "ok": not required,
        "checks": [
            {
                "check": "root",
                "ok": True,
                "required": True,
                "state": "ok",
                "detail": "running as root",
                "fix": None,
            },
            {
                "check": "filesystem zz",
                "ok": False,
                "required": required,
                "state": "missing" if required else "optional",
                "detail": "no kernel support",
                "fix": "modprobe zz",
            },
        ],
    }
    # quiet: nothing when all is well, the missing pieces when not
    quiet = invoke("-q", "doctor")
    assert quiet.exit_code == code
    assert ("filesystem zz" in quiet.output) == required and "root" not in quiet.output


def test_doctor_json_on_this_machine_matches_the_table():
    text = pgfsbench("doctor", env={**os.environ, "COLUMNS": "300"})
    as_json = pgfsbench("doctor", "--json")
    assert text.returncode == as_json.returncode
    found = json.loads(as_json.stdout)
    assert found["ok"] == (as_json.returncode == 0)
    lines = text.stdout.splitlines()
    states = ("ok", "missing", "optional", "busy", "unknown")
    shown = [ln[: ln.index(":") + 1] for ln in lines if ln[:8].strip() in states]
    # the machine's load is sampled by each run anew: its state may differ between the two
    sampled = "machine quiet now"
    assert [f"{c['state']:<8} {c['check']}:" for c in found["checks"] if c["check"] != sampled] == [
        ln for ln in shown if not ln.endswith(f" {sampled}:")
    ]
    assert [c["check"] for c in found["checks"]][-1] == sampled
    assert shown[-1][:9].strip() in ("ok", "busy") and shown[-1].endswith(f" {sampled}:")
    # a closing line that says whether the default plan can run
    assert lines[-1] == ("ready to run the default plan" if found["ok"] else lines[-1]) and (
        found["ok"] or lines[-1].startswith("missing")
    )


def test_doctor_at_80_columns_cuts_nothing():
    text = pgfsbench("doctor", env={**os.environ, "COLUMNS": "80"})
    assert "…" not in text.stdout
    assert max(len(ln) for ln in text.stdout.splitlines()) <= 80


def test_show_report_and_quiet_over_stored_results(demo, tmp_path):
    summary = invoke("show", str(demo))
    assert summary.exit_code == 0
    assert summary.output.splitlines()[1].startswith("answer: ")
    assert f"every metric: pgfsbench show {demo} --full" in " ".join(summary.output.split())
    full = invoke("show", str(demo), "--full")
    assert full.exit_code == 0 and len(full.output.splitlines()) > 5 * len(
        summary.output.splitlines()
    )
    assert "mon.cpu.busy_" in full.output and "mon." not in summary.output
    brief = invoke("-q", "show", str(demo))
    assert brief.exit_code == 0 and brief.output.startswith(
        "answer: fsync p99 latency: xfs, ext4 > btrfs; TPC-B tps: xfs ≈ ext4 > btrfs\n"
    )
    assert "\nfsync-latency: xfs, ext4 > btrfs: against ext4, xfs −2.5%" in brief.output
    html = tmp_path / "r.html"
    quiet = invoke("-q", "report", str(demo), "-o", str(html))
    assert quiet.exit_code == 0 and quiet.output == f"report: {html}\n" and html.is_file()
    loud = invoke("report", str(demo), "-o", str(html))
    assert loud.output.startswith("quick · ") and loud.output.endswith(f"report: {html}\n")


def test_show_refuses_a_directory_without_results(tmp_path):
    result = pgfsbench("show", str(tmp_path))
    assert result.returncode == 2 and "holds no results" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


REPR = re.compile(r"\bNone\b|\bTrue\b|\bFalse\b|\['|\{\}|\w+=(\s|$)")


@pytest.mark.parametrize(
    "plan",
    builtin_names() + sorted(str(p) for p in (ROOT / "examples").glob("*.toml")),
    ids=lambda p: Path(p).stem,
)
def test_plan_check_speaks_plan_files_not_python(plan):
    result = invoke("plan", "check", plan)
    assert result.exit_code == 0, result.output
    assert not REPR.search(result.output), REPR.search(result.output)
    assert "runs on each target" in result.output


def test_plan_check_shows_values_as_a_plan_writes_them():
    result = invoke("plan", "check", "seed-seqwrite")
    assert "tools=dd,fio" in result.output and "tag=" not in result.output
    plans = invoke("plans")
    assert plans.exit_code == 0
    assert "plan check NAME" in plans.output  # where the budget is told in full
    assert (
        "budget: 12 rounds or 9 min" in result.output
        or "9 min" in invoke("plan", "check", "quick").output
    )


def test_the_read_commands_run_without_the_collector_and_give_it_back():
    import gc

    from pgfsbench.cli import app
    from pgfsbench.cli.shared import reads

    seen = []

    @reads
    def fails():
        seen.append(gc.isenabled())
        raise ValueError

    with pytest.raises(ValueError):
        fails()
    assert seen == [False] and gc.isenabled()
    marked = {
        c.name or c.callback.__name__
        for c in app.registered_commands
        if getattr(c.callback, "reads", False)
    }
    assert marked == {"report", "show", "export", "advise", "compare", "list", "history"}
