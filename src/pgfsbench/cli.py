"""The command line: wires the stages together, nothing more."""

from __future__ import annotations

import functools
import json
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
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
    allow_format: Annotated[Optional[list[str]], typer.Option(
        "--allow-format", metavar="DEVICE",
        help="a block device the plan names that may be formatted (repeat per device)")] = None,
    wipe_signatures: Annotated[bool, typer.Option(
        "--wipe-signatures", help="also format an allowed device that carries a filesystem "
                                  "or partition-table signature")] = False,
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
        run_campaign(the_plan, Options(results, bins, keep, tuple(allow_format or ()),
                                       wipe_signatures), console.print)
    except (KeyboardInterrupt, Interrupted):
        err.print(f"[yellow]interrupted: everything was cleaned up; results so far are in "
                  f"{results}[/]")
        _write_report_quietly(results)
        raise typer.Exit(130)
    campaign = load_campaign(results)
    render_table(campaign, console)
    console.print(f"report: {write_report(results, campaign)}")


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

    campaign = load_campaign(results)
    render_table(campaign, console)
    console.print(f"report: {write_report(results, campaign)}")


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
def compare(
    results: Annotated[list[Path], typer.Argument(help="one or more results directories")],
    baseline: Annotated[Optional[str], typer.Option(
        "--baseline", help="the column the others are compared with (default: the plan's "
                           "[verdicts] baseline, else the first target)")] = None,
    metric: Annotated[Optional[str], typer.Option(
        "--metric", help="metric name or glob, e.g. 'pgbench.latency_*' or '*' (default: "
                         "each measurement's headline metric)")] = None,
    format: Annotated[str, typer.Option(
        "--format", help="text, markdown or json")] = "text",
    alpha: Annotated[Optional[float], typer.Option(help="significance level")] = None,
    noise: Annotated[Optional[float], typer.Option(
        help="relative differences below this are 'no difference' (0.02 = 2%)")] = None,
) -> None:
    """Compare targets (within one results directory or across several) with medians, confidence intervals, significance and a verdict per measurement."""  # noqa: E501
    from pgfsbench.analysis.combine import combined_source
    from pgfsbench.analysis.table import build_table
    from pgfsbench.analysis.verdicts import verdict_lines
    from pgfsbench.export.comparison import to_json
    from pgfsbench.report import compare as fmt
    from pgfsbench.store.read import load_campaign

    if format not in ("text", "markdown", "json"):
        raise UserError(f"unknown format '{format}' (available: text, markdown, json)")
    if alpha is not None and not 0 < alpha < 0.5:
        raise UserError(f"--alpha must be between 0 and 0.5, not {alpha}")
    if noise is not None and not 0 <= noise < 1:
        raise UserError(f"--noise must be between 0 and 1, not {noise}")
    campaigns = [load_campaign(r) for r in results]
    source, durability = combined_source(campaigns)
    if baseline is not None and baseline not in source.columns:
        raise UserError(f"--baseline '{baseline}' is not a column (columns: "
                        f"{', '.join(source.columns)})")
    settings = campaigns[0].plan.get("verdicts") or {}
    if baseline is None and settings.get("baseline") in source.columns:
        baseline = settings["baseline"]
    table = build_table(source, baseline,
                        alpha if alpha is not None else settings.get("alpha", 0.05),
                        noise if noise is not None else settings.get("noise", 0.02))
    rows = fmt.select_rows(table, metric)
    if not rows:
        raise UserError(f"no metric matches '{metric}'" if metric else "no results to compare")
    verdicts = verdict_lines(table, durability)
    if format == "json":
        json.dump(to_json(table, rows, verdicts), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif format == "markdown":
        sys.stdout.write(fmt.to_markdown(table, rows, verdicts))
    else:
        fmt.render_terminal(table, rows, verdicts, console,
                            " vs ".join(c.plan_name for c in campaigns))


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
        _end_killed_campaign(Path(ledger.results_dir))
    if failed:
        raise typer.Exit(1)


def _end_killed_campaign(results: Path) -> None:
    """Record in the killed run's results that it was killed: what completed stays."""
    from pgfsbench.store.db import DB_NAME, Store

    if not (results / DB_NAME).is_file():
        return
    try:
        store = Store.open(results, writable=True)
        try:
            ended = store.end_if_killed()
        finally:
            store.close()
    except sqlite3.Error as exc:
        err.print(f"[yellow]could not mark the campaign in {results} as killed: {exc}[/]")
        return
    if ended:
        console.print(f"marked the campaign in {results} as killed (its completed runs are "
                      f"kept); 'pgfsbench report {results}' writes its report")


@app.command()
@user_errors
def plans(show: Annotated[Optional[str], typer.Option(
        "--show", help="print this built-in plan's file, to copy and edit")] = None) -> None:
    """List the built-in plans, or print one of them."""
    from pgfsbench.plan.load import builtin_names, builtin_text, load_plan

    if show is not None:
        if show not in builtin_names():
            raise UserError(f"no built-in plan '{show}' (built-in: {', '.join(builtin_names())})")
        sys.stdout.write(builtin_text(show))
        return
    for name in builtin_names():
        console.print(f"[bold]{name}[/]: {escape(load_plan(name).description)}")


plan_app = typer.Typer(help="Work with plan files.", no_args_is_help=True)
app.add_typer(plan_app, name="plan")


@plan_app.command("check")
@user_errors
def plan_check(
    plan: Annotated[str, typer.Argument(help="a built-in plan name or a plan file")],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Validate a plan without running anything: its targets and runs, the disk space and the time it needs."""  # noqa: E501
    from pgfsbench.plan.check import describe
    from pgfsbench.plan.load import load_plan

    info = describe(load_plan(plan))
    if as_json:
        json.dump(info, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    reps = info["repetitions"]
    console.print(f"plan [bold]{escape(info['name'])}[/] is valid: {len(info['targets'])} "
                  f"targets, {info['total_runs']} runs in all "
                  + ("(at most: repetitions are 'auto')" if reps["count"] == "auto" else ""))
    console.print(f"repetitions: {reps['count']} ({reps['order']} order, "
                  f"{'a fresh target each round' if reps['fresh'] else 'targets reused'})"
                  + (f"; auto: until the 95% CI is within ±{reps['ci_width']:.0%}, "
                     f"{reps['min']}–{reps['max']} rounds, at most {reps['max_minutes']:g} min"
                     if reps["count"] == "auto" else ""))
    table = Table("target", "kind", "fs", "where", "mkfs", "mount", "OS settings", "needs")
    for t in info["targets"]:
        knobs = ", ".join(f"{k}={v}" for k, v in {**t["sysctls"], **t["queue"]}.items())
        if t["throttle"]:
            knobs = ", ".join(filter(None, [knobs, "throttle " + ", ".join(
                f"{k}={v}" for k, v in t["throttle"].items())]))
        if t["log_size"]:
            knobs = ", ".join(filter(None, [f"external log {t['log_size']}", knobs]))
        table.add_row(t["name"], t["kind"], t["fs"] or "", t["where"], " ".join(t["mkfs"]),
                      t["mount"], knobs, f"{t['workload_peak_bytes'] / 2**20:,.0f} MB")
    console.print(table)
    runs = Table("run on each target", "params", "times", "≈ seconds each")
    for r in info["runs_per_target"]:
        params = " ".join(f"{k}={v}" for k, v in r["params"].items() if v is not None)
        runs.add_row(r["workload"], escape(params), str(r["repetitions"]),
                     f"{r['estimated_seconds']:.0f}")
    console.print(runs)
    console.print(f"host disk for loop images: {info['host_disk_bytes'] / 2**30:.1f} GiB "
                  "(sparse: only what is written is used); estimated duration: "
                  f"{info['estimated_seconds'] / 60:.0f} min"
                  + (f" to {info['estimated_seconds_max'] / 60:.0f} min"
                     if info["estimated_seconds_max"] != info["estimated_seconds"] else ""))
    for problem in info["problems"]:
        err.print(f"[yellow]warning:[/] {escape(problem)}")


def main() -> None:
    app()
