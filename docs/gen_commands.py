"""Write docs/commands.md, the command reference, from the CLI itself (Typer's Click).

    python docs/gen_commands.py          # rewrite the page
    python docs/gen_commands.py --check  # exit 1 if the committed page differs

Typer's commands are its own Click's (typer._click), so they are read by what they have
(``list_commands``, ``param_type_name``), not by class. Every command, in the order
`pgfsbench --help` lists them, with its usage, its help and
every argument and option as `--help` gives them, and the global options: the page
cannot miss an option the CLI has. Only the links to the pages that say more are
written here (SEE_ALSO). tests/unit/test_docs_build.py fails when the page is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from pgfsbench.cli import app

PAGE = Path(__file__).resolve().with_name("commands.md")

INTRO = """\
# Command reference

<!-- Generated from the CLI by docs/gen_commands.py: do not edit by hand. -->

The CLI is `.venv/bin/pgfsbench` once `make try` or `make setup` has made the venv
(`make demo` and `make test` run `make setup` for you). Every command takes `-h`/`--help`,
which prints what this page shows for it; options that apply to every command go before
it ([global options](#global-options)). Exit statuses are in
[exit codes and CI](ci.md#exit-codes).
"""

# Where the docs say more about a command: (text, link).
SEE_ALSO = {
    "run": [
        ("while it runs", "getting-started.md#while-it-runs"),
        ("resuming", "getting-started.md#resuming-an-interrupted-campaign"),
        ("targets and safety", "targets.md"),
    ],
    "report": [("the report", "output-formats.md")],
    "show": [("reading the verdicts", "verdicts.md")],
    "export": [("output formats", "output-formats.md")],
    "advise": [("the advice", "verdicts.md#the-advice")],
    "compare": [
        ("comparing campaigns", "results.md#comparing-campaigns"),
        ("exit codes and CI", "ci.md"),
    ],
    "import": [("the results store", "results.md#the-results-store")],
    "list": [("results and history", "results.md")],
    "history": [("results and history", "results.md")],
    "plans": [("getting started", "getting-started.md#built-in-plans")],
    "plan check": [("writing plans", "plans.md")],
    "plan schema": [("the plan file reference", "plan-reference.md")],
    "schema": [("the JSON schemas", "output-formats.md#the-json-schemas")],
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _help(text: str | None) -> str:
    """A command's help as paragraphs (each a line), as --help wraps them."""
    paragraphs = [" ".join(p.split()) for p in (text or "").split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def _param_row(param: Any) -> str | None:
    if param.param_type_name == "argument":
        name = f"`{(param.metavar or param.name or '').upper()}`"
        if param.nargs == -1:
            name = name[:-1] + "...`"
        return f"| {name} | {_cell(getattr(param, 'help', '') or '')} |"
    if param.param_type_name != "option" or param.hidden or param.name == "help":
        return None
    metavar = "" if param.is_flag or param.count else f" {param.metavar or param.type.name.upper()}"
    name = " / ".join(f"`{o}{metavar}`" for o in param.opts)
    if param.secondary_opts:
        name += " / " + " / ".join(f"`{o}`" for o in param.secondary_opts)
    what = _cell(param.help or "")
    if param.secondary_opts and param.show_default:
        what += f" (default: `{param.opts[0] if param.default else param.secondary_opts[0]}`)"
    elif param.show_default and param.default not in (None, False, (), []):
        what += f" (default: `{param.default}`)"
    if param.envvar and param.envvar not in what:
        what += f" (or the environment's `{param.envvar}`)"
    return f"| {name} | {what} |"


def _command(ctx: Any, title: str) -> str:
    command = ctx.command
    usage = command.get_usage(ctx).removeprefix("Usage: ")
    rows = [row for p in command.get_params(ctx) if (row := _param_row(p)) is not None]
    out = [f"## {title}", "", f"`{usage}`", "", _help(command.help), ""]
    if rows:
        out += ["| argument or option | what it does |", "|---|---|", *rows, ""]
    if title in SEE_ALSO:
        out += ["More: " + ", ".join(f"[{t}]({link})" for t, link in SEE_ALSO[title]) + ".", ""]
    return "\n".join(out)


def render() -> str:
    root: Any = typer.main.get_command(app)
    Context = root.context_class
    top = Context(root, info_name="pgfsbench")
    parts = [INTRO]
    for name in root.list_commands(top):
        command = root.get_command(top, name)
        ctx = Context(command, info_name=name, parent=top)
        if hasattr(command, "list_commands"):  # plan check, plan schema
            for sub in command.list_commands(ctx):
                subcommand = command.get_command(ctx, sub)
                parts.append(
                    _command(Context(subcommand, info_name=sub, parent=ctx), f"{name} {sub}")
                )
        else:
            parts.append(_command(ctx, name))
    rows = [row for p in root.get_params(top) if (row := _param_row(p)) is not None]
    parts.append(
        "\n".join(
            [
                "## Global options { #global-options }",
                "",
                "Given before the command: `pgfsbench -q run quick --results r`.",
                "",
                "| option | what it does |",
                "|---|---|",
                *rows,
                "",
            ]
        )
    )
    return "\n".join(parts)


def main() -> int:
    wanted = render()
    if "--check" in sys.argv[1:]:
        if PAGE.read_text() != wanted:
            print(
                "docs/commands.md is out of date: run python docs/gen_commands.py", file=sys.stderr
            )
            return 1
        return 0
    PAGE.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
