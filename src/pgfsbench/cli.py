"""The command line: wires the stages together, nothing more."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from pgfsbench.errors import Interrupted, UserError

app = typer.Typer(
    help="pgfsbench: which filesystem, mkfs/mount options and OS settings to run "
         "PostgreSQL on, measured side by side.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def user_errors(func):
    """A user-caused error is one clear line and exit code 2, never a traceback."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            err.print(f"[red]error:[/] {exc}", soft_wrap=True)
            raise typer.Exit(2)
    return wrapper


@app.command()
@user_errors
def run(
    plan: Annotated[str, typer.Argument(help="a built-in plan name or a plan file")] = "quick",
    results: Annotated[Path, typer.Option("--results", help="new directory for results")] = ...,
    pg_bin: Annotated[Optional[Path], typer.Option(
        "--pg-bin", help="PostgreSQL bin directory (default: the embedded PostgreSQL)")] = None,
    keep: Annotated[bool, typer.Option(help="keep the loop images afterwards")] = False,
) -> None:
    """Run a plan: provision each target, start PostgreSQL on it, run the workloads, store everything in RESULTS and write RESULTS/report.html."""  # noqa: E501
    from pgfsbench.campaign import Options, run_campaign
    from pgfsbench.plan.load import load_plan
    from pgfsbench.postgres.binaries import find_binaries
    from pgfsbench.report.html import write_report
    from pgfsbench.report.terminal import render_table
    from pgfsbench.store.read import load_campaign

    the_plan = load_plan(plan)
    bins = find_binaries(pg_bin)
    results = results.resolve()
    console.print(f"plan [bold]{the_plan.name}[/]: {the_plan.description}")
    console.print(f"PostgreSQL {bins.version} ({bins.origin}); results in {results}")
    try:
        run_campaign(the_plan, Options(results, bins, keep), console.print)
    except (KeyboardInterrupt, Interrupted):
        err.print(f"[yellow]interrupted: everything was cleaned up; results so far are in "
                  f"{results}[/]")
        _write_report_quietly(results)
        raise typer.Exit(130)
    render_table(load_campaign(results), console)
    console.print(f"report: {write_report(results)}")


def _write_report_quietly(results: Path) -> None:
    from pgfsbench.report.html import write_report

    try:
        err.print(f"report: {write_report(results)}")
    except Exception as exc:  # the report is a convenience here; results are stored
        err.print(f"(no report: {exc})")


@app.command()
@user_errors
def report(results: Annotated[Path, typer.Argument(help="a results directory")]) -> None:
    """(Re)write RESULTS/report.html from the stored results alone."""
    from pgfsbench.report.html import write_report
    from pgfsbench.report.terminal import render_table
    from pgfsbench.store.read import load_campaign

    render_table(load_campaign(results), console)
    console.print(f"report: {write_report(results)}")


@app.command()
@user_errors
def export(
    results: Annotated[Path, typer.Argument(help="a results directory")],
    format: Annotated[str, typer.Option("--format", help="output format: json")] = "json",
) -> None:
    """Print every run with its target, workload, parameters and metrics."""
    from pgfsbench.export.json_export import export_json
    from pgfsbench.store.read import load_campaign

    if format != "json":
        raise UserError(f"unknown export format '{format}' (available: json)")
    json.dump(export_json(load_campaign(results)), sys.stdout, indent=2)
    sys.stdout.write("\n")


@app.command()
@user_errors
def doctor() -> None:
    """Show what this machine can do and how to fix what is missing."""
    from pgfsbench.doctor import checks

    table = Table("check", "", "detail", "fix")
    for c in checks():
        table.add_row(c.what, "[green]ok[/]" if c.ok else "[red]missing[/]", c.detail, c.fix)
    console.print(table)


@app.command()
@user_errors
def cleanup() -> None:
    """Remove what a crashed or killed run left behind (PostgreSQL, mounts, loop devices, images), using the state file each run keeps."""  # noqa: E501
    from pgfsbench.ledger import stale_ledgers

    ledgers = stale_ledgers()
    if not ledgers:
        console.print("nothing to clean up")
        return
    failed = False
    for ledger in ledgers:
        console.print(f"cleaning up after run {ledger.path.stem} (pid {ledger.pid}, "
                      f"results {ledger.results_dir}): {len(ledger.resources)} resources")
        for problem in ledger.release_all():
            failed = True
            err.print(f"[red]{problem}[/]")
        ledger.close()
    if failed:
        raise typer.Exit(1)


@app.command()
def plans() -> None:
    """List the built-in plans."""
    from pgfsbench.plan.load import builtin_names, load_plan

    for name in builtin_names():
        console.print(f"[bold]{name}[/]: {load_plan(name).description}")


def main() -> None:
    app()
