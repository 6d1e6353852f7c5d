"""Plans: the built-in ones (plans) and checking one without running it (plan check)."""

from __future__ import annotations

import json
import re
import sys
from typing import Annotated

import typer
from rich.markup import escape

from pgfsbench.cli.shared import app, console, err, plan_names, user_errors
from pgfsbench.errors import UserError


@app.command(short_help="List the built-in plans, or print one.")
@user_errors
def plans(
    show: Annotated[
        str | None,
        typer.Option(
            "--show", metavar="NAME", help="print this built-in plan's file, to copy and edit"
        ),
    ] = None,
) -> None:
    """List the built-in plans, each with its budget and estimated duration, or print one of them."""
    from pgfsbench.plan.builtin import builtin_names, builtin_text

    if show is not None:  # the file as it is: no plan model, no workload kind loaded
        if show not in builtin_names():
            raise UserError(f"no built-in plan '{show}' (built-in: {', '.join(builtin_names())})")
        sys.stdout.write(builtin_text(show))
        return
    from rich.table import Table as RichTable
    from rich.text import Text

    from pgfsbench.plan.check import describe
    from pgfsbench.plan.check_text import minutes_text
    from pgfsbench.plan.load import load_plan

    # A compact table; the whole description and budget: plans --show NAME, plan check NAME.
    table = RichTable(box=None, padding=(0, 1), pad_edge=False, show_edge=False)
    for column in ("plan", "study", "targets", "estimated"):
        table.add_column(column, no_wrap=column in ("plan", "estimated"))
    for name in builtin_names():
        the_plan = load_plan(name)
        info = describe(the_plan)
        # "The XFS-vs-ext4 study: ..." (docs/measurements.md, "The studies")
        study = re.match(r"The (\S+) study\b", the_plan.description)
        table.add_row(
            Text(name, style="bold"),
            Text(study[1] if study else "—"),
            Text(", ".join(t.name for t in the_plan.targets)),
            Text(minutes_text(info["estimated_seconds"] / 60, info["estimated_seconds_max"] / 60)),
        )
    console.print(table)
    console.print(
        Text(
            "each plan's description and budget: pgfsbench plan check NAME; "
            "its file: pgfsbench plans --show NAME",
            style="dim",
        )
    )


plan_app = typer.Typer(help="Work with plan files.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(plan_app, name="plan", short_help="Work with plan files (plan check, plan schema).")


@plan_app.command("check", short_help="Validate a plan; its targets, runs, space and time.")
@user_errors
def plan_check(
    plan: Annotated[
        str,
        typer.Argument(
            help="a built-in plan name or a plan file",
            metavar="PLAN",
            autocompletion=lambda incomplete: plan_names(incomplete),
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Validate a plan without running anything: its targets and runs, the disk space and the time it needs."""
    from pgfsbench.plan.check import describe
    from pgfsbench.plan.check_text import render_plan_check
    from pgfsbench.plan.load import load_plan
    from pgfsbench.preflight import PLAN_CHECK, CheckContext, run_checks

    the_plan = load_plan(plan)
    # the checks of this stage (preflight.py); what they could not check here is a warning
    unchecked = run_checks(the_plan, PLAN_CHECK, CheckContext())
    info = describe(the_plan)
    info["problems"] += unchecked
    info["notes"] += _layout_notes(the_plan, info)
    if as_json:
        json.dump(info, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    render_plan_check(info, console)
    for problem in info["problems"]:
        err.print(f"[yellow]warning:[/] {escape(problem)}")


@plan_app.command("schema", short_help="Print the JSON Schema of a plan file.")
@user_errors
def plan_schema() -> None:
    """Print the JSON Schema (draft 2020-12) of a plan file, made from the plan model: every key with its type, default and description. Editors validate and complete plan files with it (a TOML language server such as taplo reads a '#:schema plan.schema.json' line at the top of a plan)."""
    from pgfsbench.plan.schema import plan_schema as schema

    json.dump(schema(), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def _layout_notes(plan, info: dict) -> list[str]:
    """The stripe geometry given to mkfs, and volumes this machine cannot make (valid,
    but skipped at run time)."""
    from pgfsbench.provision.volume import unavailable_reason

    notes = []
    for t, described in zip(plan.targets, info["targets"]):
        geometry = described["stripe_geometry"]
        if geometry:
            notes.append(
                f"target '{t.name}': {t.volume.kind} stripe {t.volume.stripe} over "
                f"{geometry['data_disks']} data disk(s); mkfs stripe options: "
                + (
                    " ".join(geometry.get("computed_options", [])) + " (computed)"
                    if geometry["mkfs"] == "computed"
                    else geometry["mkfs"]
                )
            )
        if reason := unavailable_reason(t.volume):
            notes.append(f"target '{t.name}' is valid but this machine would skip it: {reason}")
    return notes


# What `pgfsbench schema` prints: the command whose JSON it describes.
SCHEMA_KINDS = ("export", "compare", "list", "history", "advise", "plan")


def _schema_kinds(incomplete: str) -> list[str]:
    return [k for k in SCHEMA_KINDS if k.startswith(incomplete)]


@app.command(short_help="Print the JSON Schema of what a command writes as JSON.")
@user_errors
def schema(
    kind: Annotated[
        str,
        typer.Argument(
            help=f"whose: {', '.join(SCHEMA_KINDS[:-1])} (their --format json output) or "
            "plan (a plan file)",
            metavar="KIND",
            autocompletion=_schema_kinds,
        ),
    ],
) -> None:
    """Print the JSON Schema (draft 2020-12) of what 'export', 'compare', 'list', 'history' or 'advise' write with --format json, or of a plan file ('plan', as 'plan schema' prints it): generated from the types their writers are annotated with. A reader validates what it reads with it, and learns what each field means."""
    if kind not in SCHEMA_KINDS:
        raise UserError(f"no schema for '{kind}' (kinds: {', '.join(SCHEMA_KINDS)})")
    if kind == "plan":
        from pgfsbench.plan.schema import plan_schema

        document = plan_schema()
    elif kind == "advise":
        from pgfsbench.formats.advice import advice_schema

        document = advice_schema()
    elif kind in ("export", "compare"):
        from pgfsbench.formats.json import schema as export_schema

        document = export_schema("export" if kind == "export" else "comparison")
    else:
        from pgfsbench.formats.list_history_documents import document_schema

        document = document_schema(kind)
    json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
