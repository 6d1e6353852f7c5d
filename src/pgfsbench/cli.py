"""The command line: wires the stages together, nothing more."""

from __future__ import annotations

import functools
import json
import os
import signal
import sqlite3
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pgfsbench import __version__, exits
from pgfsbench.errors import Interrupted, ResultsUnwritable, UserError

PROG = "pgfsbench"
# -h everywhere; help text printed as written (typer's rich markup would swallow any
# "[...]" in it, such as "[verdicts]"); completion for bash, zsh, fish and PowerShell.
app = typer.Typer(
    help="pgfsbench: which filesystem, mkfs/mount options and OS settings to run "
         "PostgreSQL on, measured side by side.",
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
)
console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

# How much the commands say (--quiet / --verbose, before the command): QUIET, only
# errors and the result (the verdicts, the report's path); VERBOSE, also every visit,
# run and external command as it starts.
QUIET, NORMAL, VERBOSE = 0, 1, 2
verbosity = NORMAL


def _plan_names(incomplete: str) -> list[str]:
    """Tab completion of a PLAN: the built-in names (a path: the shell completes files)."""
    from pgfsbench.plan.load import builtin_names

    return [n for n in builtin_names() if n.startswith(incomplete)]


def _version(value: bool) -> None:
    if value:
        console.print(f"{PROG} {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="only errors and the result (the verdicts, the report's path); "
                              "give it before the command: pgfsbench -q run ...")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="also say each target visit, run and external command "
                                "(mkfs, mount, pgbench, ...) as it starts")] = False,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="print the version and exit")] = False,
) -> None:
    """pgfsbench: which filesystem, mkfs/mount options and OS settings to run PostgreSQL on, measured side by side."""  # noqa: E501
    global verbosity
    if quiet and verbose:
        err.print("[red]error:[/] --quiet and --verbose: choose one")
        raise typer.Exit(exits.USAGE)
    verbosity = QUIET if quiet else VERBOSE if verbose else NORMAL


def user_errors(func):
    """A user-caused error is one clear line and exit code 2, never a traceback; results
    that can no longer be written, one line and 1; an interrupt, 130 or 143."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except UserError as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(exits.USAGE)
        except ResultsUnwritable as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(exits.INCOMPLETE)
        except KeyboardInterrupt:
            err.print("[yellow]interrupted[/]")
            raise typer.Exit(exits.for_signal(signal.SIGINT))
        except Interrupted as exc:
            err.print("[yellow]interrupted[/]")
            raise typer.Exit(exits.for_signal(exc.signum))
    return wrapper


@app.command(short_help="Run a plan and write its report.")
@user_errors
def run(
    plan: Annotated[Optional[str], typer.Argument(
        help="a built-in plan name or a plan file (default: quick; with --resume: the "
             "plan the campaign recorded)", metavar="PLAN",
        autocompletion=lambda incomplete: _plan_names(incomplete))] = None,
    results: Annotated[Optional[Path], typer.Option("--results", metavar="DIR",
                                                    help="new directory for results")] = None,
    resume: Annotated[Optional[Path], typer.Option(
        "--resume", metavar="DIR",
        help="continue the interrupted or killed campaign in DIR: its recorded plan, "
             "schedule and seed, from the first round that did not end")] = None,
    pg_bin: Annotated[Optional[Path], typer.Option(
        "--pg-bin", metavar="DIR",
        help="PostgreSQL bin directory (default: the embedded PostgreSQL)")] = None,
    keep: Annotated[bool, typer.Option(help="keep the loop images afterwards")] = False,
    allow_format: Annotated[Optional[list[str]], typer.Option(
        "--allow-format", metavar="DEVICE",
        help="a block device the plan names that may be formatted (repeat per device)")] = None,
    wipe_signatures: Annotated[bool, typer.Option(
        "--wipe-signatures", help="also format an allowed device that carries a filesystem "
                                  "or partition-table signature")] = False,
    wait: Annotated[bool, typer.Option(
        "--wait", help="if another campaign runs on this machine, start when it ends "
                       "(default: refuse)")] = False,
    store: Annotated[Optional[str], typer.Option(
        "--store", envvar="PGFSBENCH_STORE", metavar="URL",
        help="also import the campaign into this PostgreSQL results store when it ends "
             "(postgresql://...; default: $PGFSBENCH_STORE)")] = None,
) -> None:
    """Run a plan: provision each target, start PostgreSQL on it, run the workloads, store everything in RESULTS and write RESULTS/report.html.

    On a terminal a progress bar shows the round, target and workload, the time elapsed
    and what is left, with each run's headline figure as it finishes; otherwise (a log,
    CI) one line per measurement after each round. At the end: the verdicts, the
    headline figures, the advice and the report's path.
    """  # noqa: E501
    from pgfsbench.campaign.options import Options
    from pgfsbench.campaign.run import Campaign
    from pgfsbench.plan.load import load_plan
    from pgfsbench.postgres.binaries import find_binaries
    from pgfsbench.store.read import load_campaign

    if (results is None) == (resume is None):
        raise UserError("give --results DIR for a new campaign, or --resume DIR to continue "
                        "one (not both)")
    if resume is not None:
        results = resume.resolve()
        the_plan = _resumed_plan(results, plan)
        if the_plan is None:
            return
    else:
        the_plan = load_plan(plan or "quick")
    bins = find_binaries(pg_bin)
    results = results.resolve()
    if store:  # an unreachable store is refused before anything runs
        from pgfsbench.store.importing import check_store
        check_store(store)
    if verbosity > QUIET:
        console.print(f"plan [bold]{escape(the_plan.name)}[/]: {escape(the_plan.description)}")
        console.print(f"PostgreSQL {bins.version} ({bins.origin}); results in "
                      f"{escape(str(results))}")
    from pgfsbench.campaign.resume import NothingToResume

    try:
        options = Options(results, bins, keep, tuple(allow_format or ()), wipe_signatures, wait)
        with _progress_view(the_plan) as view:
            status = Campaign(the_plan, options, view, resume=resume is not None).run()
    except NothingToResume as done:  # it ended while this one waited for the lock
        console.print(f"nothing to resume: {escape(str(done))}", soft_wrap=True)
        return
    except (KeyboardInterrupt, Interrupted) as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        if (results / "results.db").is_file():
            err.print(f"[yellow]interrupted: everything was cleaned up; results so far are "
                      f"in {escape(str(results))}[/]")
            _write_report_quietly(results)
        else:
            err.print("[yellow]interrupted before anything ran[/]")
        raise typer.Exit(exits.for_signal(signum))
    except ResultsUnwritable as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}: the campaign stopped and everything "
                  f"was cleaned up; what completed before is kept in {escape(str(results))}: "
                  f"free space, then 'pgfsbench report {escape(str(results))}'", soft_wrap=True)
        raise typer.Exit(exits.INCOMPLETE)
    campaign = load_campaign(results)
    _print_summary(campaign, results)
    if verbosity > QUIET:
        _print_advice(campaign)
    stored = _store_campaign(results, store) if store else True
    try:
        console.print(f"report: {_write_report(results, campaign)}")
    except UserError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(exits.INCOMPLETE)
    if status != "ok":
        err.print(f"[yellow]campaign {status}: {escape(_what_failed(campaign))}[/]",
                  soft_wrap=True)
        raise typer.Exit(exits.INCOMPLETE)
    if not stored:
        raise typer.Exit(exits.INCOMPLETE)


def _resumed_plan(results: Path, plan: str | None):
    """The plan the campaign in ``results`` recorded (a PLAN given must be the same), or
    None when it ran to its end: there is nothing to resume (said; exit 0)."""
    from pgfsbench.campaign.resume import NothingToResume, check_same_plan, stored_plan
    from pgfsbench.plan.load import load_plan

    try:
        stored = stored_plan(results)
    except NothingToResume as done:
        console.print(f"nothing to resume: {escape(str(done))}", soft_wrap=True)
        return None
    if plan is not None:
        check_same_plan(load_plan(plan), stored, results)
    return stored


def _store_campaign(results: Path, url: str) -> bool:
    """Import the ended campaign into the results store; if that fails, say so (the run
    then exits 1): the results directory keeps everything and can be imported later."""
    from pgfsbench.store.importing import StoreFailed, shown, store_campaign

    try:
        done = store_campaign(results, url)
    except (UserError, StoreFailed) as exc:
        err.print(f"[red]error:[/] the campaign is not in the results store: "
                  f"{escape(str(exc))}; its results are kept in {escape(str(results))}: "
                  f"'pgfsbench import {escape(str(results))} --store URL' adds them later",
                  soft_wrap=True)
        return False
    console.print(f"stored in the results store {escape(shown(url))} as campaign "
                  f"{done.uuid}")
    return True


def _progress_view(plan):
    """How a running campaign is shown: a live bar on a terminal, plain lines otherwise
    (a log, CI), only problems with --quiet. A context manager yielding the observer."""
    import contextlib

    from pgfsbench.progress.live import LiveProgress
    from pgfsbench.progress.plain import PlainProgress

    if console.is_terminal and verbosity > QUIET:
        return LiveProgress(plan, console, verbosity)
    return contextlib.nullcontext(PlainProgress(plan, sys.stdout, sys.stderr, verbosity))


def _print_summary(campaign, results: Path) -> None:
    """The answer first (--quiet: the verdict lines alone)."""
    from pgfsbench.report.terminal import render_summary

    hint = (f"every metric: pgfsbench show {results} --full; with charts and provenance: "
            "the report")
    render_summary(campaign, console, hint, brief=verbosity == QUIET)


def _print_advice(campaign) -> None:
    """The advice after the table; the campaign's results stand without it."""
    from pgfsbench.analysis.advice import advise as make_advice
    from pgfsbench.report.advice import advice_text

    try:
        console.print(escape(advice_text(make_advice(campaign))), soft_wrap=True, end="")
    except Exception as exc:  # a bug of ours must not cost the report
        err.print(f"[yellow](no advice: {escape(repr(exc))})[/]")


def _what_failed(campaign) -> str:
    """One line: which runs and targets did not complete."""
    bad_runs = [r for r in campaign.runs if r.status not in ("ok", "superseded")]
    parts = [f"{len(bad_runs)} of {len(campaign.runs)} runs did not complete"] \
        if bad_runs else []
    parts += [f"target '{t.name}' {t.status}" + (f" ({t.reason})" if t.reason else "")
              for t in campaign.targets if t.status != "ok"]
    return "; ".join(parts) + ("; the report lists each" if parts else "")


def _write_report(results: Path, campaign=None, output: Path | None = None,
                  history: list | None = None) -> Path:
    from pgfsbench.report.html import write_report

    try:
        return write_report(results, campaign, output, history)
    except OSError as exc:
        where = output or results
        raise UserError(f"cannot write the report in {where}: {exc.strerror}; the results "
                        f"are kept in {results}: free space, or write it elsewhere with "
                        f"'pgfsbench report {results} --output FILE'") from None


def _write_report_quietly(results: Path) -> None:
    try:
        err.print(f"report: {_write_report(results)}")
    except Exception as exc:  # the report is a convenience here; results are stored
        err.print(f"(no report: {escape(str(exc))})")


@app.command(short_help="(Re)write a results directory's report.html.")
@user_errors
def report(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="FILE",
        help="write the report here instead of RESULTS/report.html (for a read-only "
             "results directory)")] = None,
    store: Annotated[Optional[str], typer.Option(
        "--store", metavar="URL", help="add a history section: this campaign after the "
        "earlier campaigns of its plan in this PostgreSQL results store")] = None,
) -> None:
    """(Re)write RESULTS/report.html from the stored results alone, after the summary (the verdicts and each measurement's headline figures; every metric: pgfsbench show RESULTS --full)."""  # noqa: E501
    from pgfsbench.store.read import load_campaign
    from pgfsbench.store.url import check_store_url

    url = check_store_url(store) if store else None
    campaign = load_campaign(results)
    history = None
    if url is not None:
        from pgfsbench.report.history_section import campaign_history

        history = campaign_history(campaign, url)
    if verbosity > QUIET:
        _print_summary(campaign, results)
    console.print(f"report: {_write_report(results, campaign, output, history)}")


@app.command(short_help="Print a results directory's summary, or every metric.")
@user_errors
def show(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    full: Annotated[bool, typer.Option(
        "--full", help="every metric of every measurement, side by side, one section per "
                       "workload (wide: best at 120 columns or more)")] = False,
) -> None:
    """Print a campaign's results in the terminal, writing nothing: the verdicts first, then each measurement's headline figure on every target (median, 95% CI, n, ratio to the baseline and its verdict), a section per workload; --full: the whole table."""  # noqa: E501
    from pgfsbench.report.terminal import render_table
    from pgfsbench.store.read import load_campaign

    campaign = load_campaign(results)
    if full:
        render_table(campaign, console)
    else:
        _print_summary(campaign, results)


def _format_help(kind: str) -> str:
    """--format's help: the formats that write ``kind``. Typer evaluates these (lazy)
    annotations each time it builds the CLI, so every registered format is listed."""
    from pgfsbench.export.formats import names

    return f"output format: {', '.join(names(kind))}"


@app.command(short_help="Print every run and the comparison (JSON, ...).")
@user_errors
def export(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    format: Annotated[str, typer.Option("--format", metavar="FORMAT",
                                        help=_format_help("export"))] = "json",
) -> None:
    """Print every run with its target, workload, parameters and metrics."""
    from pgfsbench.export.formats import pick
    from pgfsbench.export.output import EXPORT
    from pgfsbench.store.read import load_campaign

    output = pick(format, EXPORT)
    output.write(EXPORT, load_campaign(results), sys.stdout)


@app.command(short_help="What to apply: mkfs, fstab, OS and PostgreSQL settings.")
@user_errors
def advise(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    target: Annotated[Optional[str], typer.Option(
        "--target", metavar="NAME", help="advise for this target (default: the crash-safe target that won "
                         "the most verdicts, else the baseline)")] = None,
    format: Annotated[str, typer.Option(
        "--format", metavar="FORMAT",
        help="output format: text, conf (a postgresql.conf snippet), json")] = "text",
) -> None:
    """What to apply: the winning (or a named) target's mkfs command, fstab line and OS settings, and PostgreSQL settings derived from the measurements, each with the figures and CIs it rests on."""  # noqa: E501
    from pgfsbench.analysis.advice import advise as make_advice
    from pgfsbench.report.advice import FORMATS
    from pgfsbench.store.read import load_campaign

    render = FORMATS.get(format)
    if render is None:
        raise UserError(f"unknown advice format '{format}' (available: {', '.join(FORMATS)})")
    sys.stdout.write(render(make_advice(load_campaign(results), target)))


@app.command(short_help="Compare targets of a campaign, or a baseline campaign with a contender.")
@user_errors
def compare(
    results: Annotated[list[str], typer.Argument(
        help="one results directory (its targets compared), or several campaigns, the "
             "baseline then its contenders (e.g. one per host): results directories or, "
             "with --store, campaign UUIDs/ids",
        metavar="RESULTS")],
    baseline: Annotated[Optional[str], typer.Option(
        "--baseline", metavar="NAME", help="one campaign: the column the others are compared "
                           "with (default: the plan's [verdicts] baseline, else the first target)"
                           )] = None,
    pair: Annotated[Optional[list[str]], typer.Option(
        "--pair", metavar="BASE=CONTENDER",
        help="across campaigns: compare the baseline's target BASE with each contender's "
             "CONTENDER (repeatable; other targets pair by name)")] = None,
    allow_different: Annotated[bool, typer.Option(
        "--allow-different", help="across campaigns: compare them even though their key "
        "provenance differs (PostgreSQL version, plan workloads, target recipe), with a "
        "warning in the output (default: refuse)")] = False,
    store: Annotated[Optional[str], typer.Option(
        "--store", metavar="URL", help="read campaigns named by UUID or id from this "
        "PostgreSQL results store")] = None,
    metric: Annotated[Optional[str], typer.Option(
        "--metric", metavar="GLOB", help="metric name or glob, e.g. 'pgbench.latency_*' or '*' (default: "
                         "each measurement's headline metric)")] = None,
    format: Annotated[str, typer.Option(
        "--format", metavar="FORMAT", help=_format_help("comparison"))] = "text",
    alpha: Annotated[Optional[float], typer.Option(metavar="ALPHA",
                                                   help="significance level")] = None,
    noise: Annotated[Optional[float], typer.Option(
        metavar="FRACTION", help="the noise margin (0.02 = 2%): smaller differences are never better or worse, and "
             "'equivalent' means shown to lie within it")] = None,
    fail_if_worse: Annotated[Optional[str], typer.Option(
        "--fail-if-worse", metavar="PERCENT",
        help="for CI: exit 4 when a contender is marked worse than the baseline (significant, "
             "beyond the noise margin) and its whole 95% CI is worse by more than PERCENT, "
             "e.g. 5%; 0 fails on any worse mark. Inconclusive, equivalent and better never "
             "fail. The rows checked are the ones shown (--metric)")] = None,
) -> None:
    """Compare targets with medians, confidence intervals, significance and a verdict per measurement: better/worse, equivalent or inconclusive. One campaign: its targets, compared within its rounds (paired). Several campaigns: the first is the baseline, each other a contender, each target paired with the same target (or --pair) of the baseline, as independent samples (rounds of two campaigns do not correspond); campaigns whose key provenance differs are refused unless --allow-different."""  # noqa: E501
    from pgfsbench.analysis.regressions import gate, parse_threshold
    from pgfsbench.export.formats import pick
    from pgfsbench.export.output import COMPARISON
    from pgfsbench.plan.model import Verdicts
    from pgfsbench.store.sources import load_named
    from pgfsbench.store.url import check_store_url

    output = pick(format, COMPARISON)
    threshold = None if fail_if_worse is None else parse_threshold(fail_if_worse)
    if alpha is not None and not 0 < alpha < 0.5:
        raise UserError(f"--alpha must be between 0 and 0.5, not {alpha}")
    if noise is not None and not 0 <= noise < 1:
        raise UserError(f"--noise must be between 0 and 1, not {noise}")
    campaigns = load_named(results, check_store_url(store) if store else None)
    settings = campaigns[0].plan.get("verdicts") or {}
    alpha = alpha if alpha is not None else settings.get("alpha", Verdicts().alpha)
    noise = noise if noise is not None else settings.get("noise", Verdicts().noise)
    if len(campaigns) == 1:
        if pair or allow_different:
            raise UserError("--pair and --allow-different compare campaigns: give a "
                            "baseline and a contender")
        comparison = _one_campaign(campaigns[0], baseline, alpha, noise, metric)
    else:
        from pgfsbench.analysis.pairing import pairings, parse_pairs
        from pgfsbench.report.cross_compare import cross_comparison

        if baseline is not None:
            raise UserError("--baseline picks a column of one campaign; with several, the "
                            "first is the baseline (pair targets with --pair BASE=CONTENDER)")
        group = pairings(campaigns[0], campaigns[1:], parse_pairs(pair or []),
                         allow_different)
        comparison = cross_comparison(group, alpha, noise, metric)
        for warning in comparison.warnings:
            err.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
    if not comparison.rows:
        raise UserError(f"no metric matches '{metric}'" if metric else "no results to compare")
    output.write(COMPARISON, comparison, sys.stdout)
    if threshold is not None:  # after the comparison: the job's log shows the evidence
        sys.stdout.flush()
        verdict = gate(comparison.table, comparison.rows, threshold)
        err.print(escape(verdict.summary()), style=None if verdict.ok else "red",
                  soft_wrap=True)
        if not verdict.ok:
            raise typer.Exit(exits.WORSE)


def _one_campaign(campaign, baseline: str | None, alpha: float, noise: float,
                  metric: str | None):
    """One campaign's targets compared within its rounds."""
    from pgfsbench.analysis.caveats import fill_verdict_caveats
    from pgfsbench.analysis.durability import durabilities
    from pgfsbench.analysis.table import campaign_source, build_table
    from pgfsbench.analysis.verdicts import verdict_lines
    from pgfsbench.export.output import Comparison
    from pgfsbench.report.compare import select_rows

    source = campaign_source(campaign)
    if baseline is not None and baseline not in source.columns:
        raise UserError(f"--baseline '{baseline}' is not a column (columns: "
                        f"{', '.join(source.columns)})")
    settings = campaign.plan.get("verdicts") or {}
    if baseline is None and settings.get("baseline") in source.columns:
        baseline = settings["baseline"]
    table = build_table(source, baseline, alpha, noise)
    classes = durabilities(campaign)
    lines = fill_verdict_caveats(verdict_lines(table, classes), campaign)
    return Comparison(table, select_rows(table, metric), lines, campaign.plan_name,
                      durability=lambda row: classes)


STORE_HELP = "a PostgreSQL results store, postgresql://... (default: $PGFSBENCH_STORE)"


@app.command("import")
@user_errors
def import_(
    results: Annotated[list[Path], typer.Argument(
        help="results directories, or directories holding them", metavar="DIR")],
    store: Annotated[str, typer.Option("--store", envvar="PGFSBENCH_STORE", metavar="URL",
                                       help=STORE_HELP)] = ...,
) -> None:
    """Import results directories into a PostgreSQL results store: each campaign in one transaction, keyed by its UUID (importing one again changes nothing; a directory that changed since replaces what the store held of it). Artifacts stay on disk, named by their directory."""  # noqa: E501
    from pgfsbench.store.importing import StoreFailed, import_dirs

    try:
        import_dirs(results, store, lambda line: console.print(escape(line), soft_wrap=True))
    except StoreFailed as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(exits.INCOMPLETE)


@app.command("list")
@user_errors
def list_(
    results: Annotated[Optional[list[Path]], typer.Argument(
        help="results directories, or directories holding them", metavar="DIR")] = None,
    store: Annotated[Optional[str], typer.Option(
        "--store", envvar="PGFSBENCH_STORE", metavar="URL", help=STORE_HELP)] = None,
    format: Annotated[str, typer.Option("--format", metavar="FORMAT",
                                        help="text or json")] = "text",
) -> None:
    """List campaigns (from results directories and/or a results store) with their host, plan, start, status, duration and headline verdicts."""  # noqa: E501
    from pgfsbench.analysis.summary import summarize
    from pgfsbench.report.listing import FORMATS, list_json, list_text
    from pgfsbench.store.sources import campaigns
    from pgfsbench.store.url import check_store_url

    if format not in FORMATS:
        raise UserError(f"unknown list format '{format}' (available: {', '.join(FORMATS)})")
    if not results and not store:
        raise UserError("give results directories, or --store URL (or set PGFSBENCH_STORE)")
    skipped = []

    def skip(why: str) -> None:
        skipped.append(why)
        err.print(f"[yellow]skipped: {escape(why)}[/]", soft_wrap=True)

    summaries = [summarize(c, source) for c, source in
                 campaigns(results or [], check_store_url(store) if store else None,
                           skip=skip)]
    if format == "json":
        list_json(summaries, sys.stdout)
    else:
        list_text(summaries, console)
    if skipped:
        raise typer.Exit(exits.INCOMPLETE)


@app.command(short_help="A metric of a target over campaigns, with regression marks.")
@user_errors
def history(
    results: Annotated[Optional[list[Path]], typer.Argument(
        help="results directories, or directories holding them", metavar="DIR")] = None,
    store: Annotated[Optional[str], typer.Option(
        "--store", envvar="PGFSBENCH_STORE", metavar="URL", help=STORE_HELP)] = None,
    target: Annotated[Optional[str], typer.Option(
        "--target", metavar="NAME", help="only this target (default: every target)")] = None,
    metric: Annotated[Optional[str], typer.Option(
        "--metric", metavar="GLOB", help="metric name or glob (default: each measurement's "
                                         "headline metric)")] = None,
    plan: Annotated[Optional[str], typer.Option(
        "--plan", metavar="NAME", help="only campaigns of this plan")] = None,
    format: Annotated[str, typer.Option("--format", metavar="FORMAT",
                                        help="text, json or csv")] = "text",
    html: Annotated[Optional[Path], typer.Option(
        "--html", metavar="FILE", help="also write a self-contained HTML page with a chart "
                                       "of each metric over the campaigns")] = None,
) -> None:
    """Show a metric of a target over campaigns (oldest first): median, 95% CI and n per campaign, its host, and against the previous campaign of the same plan the mark compare gives (better, worse, equivalent, inconclusive)."""  # noqa: E501
    from pgfsbench.analysis.history import history as build_history
    from pgfsbench.report.history import FORMATS, write_csv, write_json, write_text
    from pgfsbench.store.sources import campaigns
    from pgfsbench.store.url import check_store_url

    if format not in FORMATS:
        raise UserError(f"unknown history format '{format}' (available: {', '.join(FORMATS)})")
    if not results and not store:
        raise UserError("give results directories, or --store URL (or set PGFSBENCH_STORE)")
    if html is not None and not html.parent.is_dir():
        raise UserError(f"--html {html}: no directory {html.parent}")
    found = list(campaigns(results or [], check_store_url(store) if store else None,
                           skip=lambda why: err.print(f"[yellow]skipped: {escape(why)}[/]",
                                                      soft_wrap=True)))
    series = build_history(found, target, metric, plan)
    if format == "json":
        write_json(series, sys.stdout)
    elif format == "csv":
        write_csv(series, sys.stdout)
    else:
        write_text(series, console)
    if html is not None:
        from pgfsbench.report.chart_history import write_history_page

        write_history_page(series, html)
        err.print(f"wrote {escape(str(html))}", soft_wrap=True)


@app.command(short_help="What this machine can do, and how to fix what is missing.")
@user_errors
def doctor(as_json: Annotated[bool, typer.Option(
        "--json", help="machine-readable: every check with its state, detail and fix; "
                       "the same exit code")] = False) -> None:
    """Show what this machine can do and how to fix what is missing; exit 1 when something the default campaign needs is missing."""  # noqa: E501
    from pgfsbench.doctor import checks

    found = checks()
    missing = any(c.required and not c.ok for c in found)
    if as_json:
        json.dump({"ok": not missing, "checks": [
            {"check": c.what, "ok": c.ok, "required": c.required,
             "state": _check_state(c), "detail": c.detail, "fix": c.fix or None}
            for c in found]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif verbosity > QUIET or missing:
        _doctor_table([c for c in found if verbosity > QUIET or not c.ok])
    if missing:
        raise typer.Exit(exits.INCOMPLETE)


def _check_state(c) -> str:
    return "ok" if c.ok else "missing" if c.required else "optional"


def _doctor_table(found) -> None:
    table = Table("check", "", "detail", "fix")
    for c in found:
        state = "[green]ok[/]" if c.ok else "[red]missing[/]" if c.required \
            else "[yellow]optional[/]"
        table.add_row(escape(c.what), state, escape(c.detail), escape(c.fix))
    console.print(table)


@app.command(short_help="Undo what a crashed or killed run left behind.")
@user_errors
def cleanup(wait: Annotated[bool, typer.Option(
        "--wait", help="if a campaign runs on this machine, clean up when it ends "
                       "(default: refuse)")] = False) -> None:
    """Remove what a crashed or killed run left behind (PostgreSQL, mounts, loop devices, images, sysctls), using the state file each run keeps."""  # noqa: E501
    from pgfsbench import releasers
    from pgfsbench.ledger import stale_ledgers
    from pgfsbench.machine_lock import CLEANUP_WHY, machine_lock

    releasers.load_all()  # the dead runs' ledgers may hold any kind of resource
    # Holding the machine lock: no campaign starts (and records 'before' values)
    # while a dead one's settings are being restored.
    with _commands_shown(), machine_lock(f"cleanup-{os.getpid()}", "cleanup", wait,
                                         console.print, why=CLEANUP_WHY):
        ledgers = stale_ledgers()
        if not ledgers:
            if verbosity > QUIET:
                console.print("nothing to clean up")
            return
        failed = False
        for ledger in ledgers:
            _say(f"cleaning up after run {escape(ledger.path.stem)} (pid "
                 f"{ledger.pid}, results {escape(ledger.results_dir)}): "
                 f"{escape(ledger.summary())}")
            for problem in ledger.release_all():
                failed = True
                err.print(f"[red]{escape(problem)}[/]")
            ledger.close()
            _end_killed_campaign(Path(ledger.results_dir))
    if failed:
        raise typer.Exit(exits.INCOMPLETE)


def _say(markup: str) -> None:
    """What a command does, unless --quiet."""
    if verbosity > QUIET:
        console.print(markup)


def _commands_shown():
    """With --verbose, each external command as it starts (umount, losetup -d, ...)."""
    import contextlib
    import shlex

    from pgfsbench import proc

    if verbosity < VERBOSE:
        return contextlib.nullcontext()
    return proc.watching(lambda argv, result: None if result is not None else console.print(
        escape(f"  $ {shlex.join(argv)}"), style="dim", soft_wrap=True))


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
    except (sqlite3.Error, UserError, ResultsUnwritable) as exc:  # the rest still gets cleaned
        err.print(f"[yellow]could not mark the campaign in {escape(str(results))} as killed: "
                  f"{escape(str(exc))}[/]")
        return
    if ended:
        _say(f"marked the campaign in {escape(str(results))} as killed (its completed "
             f"runs are kept); 'pgfsbench report {escape(str(results))}' writes its report")


@app.command(short_help="List the built-in plans, or print one.")
@user_errors
def plans(show: Annotated[Optional[str], typer.Option(
        "--show", metavar="NAME",
        help="print this built-in plan's file, to copy and edit")] = None) -> None:
    """List the built-in plans, each with its budget and estimated duration, or print one of them."""  # noqa: E501
    from pgfsbench.plan.check import describe
    from pgfsbench.plan.check_text import budget_text
    from pgfsbench.plan.load import builtin_names, builtin_text, load_plan

    if show is not None:
        if show not in builtin_names():
            raise UserError(f"no built-in plan '{show}' (built-in: {', '.join(builtin_names())})")
        sys.stdout.write(builtin_text(show))
        return
    for name in builtin_names():
        the_plan = load_plan(name)
        console.print(f"[bold]{name}[/]: {escape(the_plan.description)}")
        console.print(f"  [dim]budget: {escape(budget_text(the_plan, describe(the_plan)))}[/]")


plan_app = typer.Typer(help="Work with plan files.", no_args_is_help=True,
                       rich_markup_mode=None)
app.add_typer(plan_app, name="plan", short_help="Work with plan files (plan check).")


@plan_app.command("check", short_help="Validate a plan; its targets, runs, space and time.")
@user_errors
def plan_check(
    plan: Annotated[str, typer.Argument(
        help="a built-in plan name or a plan file", metavar="PLAN",
        autocompletion=lambda incomplete: _plan_names(incomplete))],
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Validate a plan without running anything: its targets and runs, the disk space and the time it needs."""  # noqa: E501
    from pgfsbench.plan.check import describe
    from pgfsbench.plan.check_text import render_plan_check
    from pgfsbench.plan.load import load_plan
    from pgfsbench.preflight import check_mkfs, check_sizes

    the_plan = load_plan(plan)
    check_sizes(the_plan)
    check_mkfs(the_plan)
    info = describe(the_plan)
    info["problems"] += _check_zfs_here(the_plan)
    info["problems"] += _check_settings_here(the_plan)
    info["notes"] += _layout_notes(the_plan, info)
    if as_json:
        json.dump(info, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    render_plan_check(info, console)
    for problem in info["problems"]:
        err.print(f"[yellow]warning:[/] {escape(problem)}")


def _check_zfs_here(plan) -> list[str]:
    """Have the installed zfs and zpool judge the ZFS targets' properties (UserError when
    they refuse some); a note instead when there is no ZFS here to ask."""
    from pgfsbench.preflight import check_zfs_properties
    from pgfsbench.provision.zfs import unavailable_reason

    if not any(t.fs == "zfs" and (t.zfs or t.zpool) for t in plan.targets):
        return []
    if reason := unavailable_reason():
        return [f"ZFS properties not checked against zfs: {reason}"]
    check_zfs_properties(plan)
    return []


def _layout_notes(plan, info: dict) -> list[str]:
    """The stripe geometry given to mkfs, and volumes this machine cannot make (valid,
    but skipped at run time)."""
    from pgfsbench.provision.volume import unavailable_reason

    notes = []
    for t, described in zip(plan.targets, info["targets"]):
        geometry = described["stripe_geometry"]
        if geometry:
            notes.append(f"target '{t.name}': {t.volume.kind} stripe {t.volume.stripe} over "
                         f"{geometry['data_disks']} data disk(s); mkfs stripe options: "
                         + (" ".join(geometry.get("computed_options", []))
                            + " (computed)" if geometry["mkfs"] == "computed"
                            else geometry["mkfs"]))
        if reason := unavailable_reason(t.volume):
            notes.append(f"target '{t.name}' is valid but this machine would skip it: "
                         f"{reason}")
    return notes


def _check_settings_here(plan) -> list[str]:
    """Have the PostgreSQL binaries found here judge the plan's settings (UserError when
    they refuse some); a note instead when there are none to ask."""
    from pgfsbench.postgres.binaries import find_binaries
    from pgfsbench.preflight import check_settings, target_binaries

    try:  # look, don't stage: a plan check changes nothing
        default = find_binaries(stage=False)
        bins = {**{t.name: default for t in plan.targets},
                **target_binaries(plan, stage=False)}
    except UserError as exc:
        return [f"PostgreSQL settings not checked against a server: {exc}"]
    check_settings(plan, bins.__getitem__)
    return []


def main() -> None:
    try:
        app(prog_name=PROG)
    except BrokenPipeError:  # stdout's reader went away (| head, a killed pipe): not a bug
        # What is left to print goes nowhere, not into another error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(exits.INCOMPLETE)
    except Exception as exc:  # a bug of ours: one line, the traceback kept, exit 3
        if os.environ.get("PGFSBENCH_DEBUG"):
            raise
        fd, path = tempfile.mkstemp(prefix="pgfsbench-traceback-", suffix=".txt")
        with os.fdopen(fd, "w") as f:
            f.write(traceback.format_exc())
        err.print(f"[red]internal error (a bug in pgfsbench):[/] {escape(repr(exc))}; the "
                  f"traceback is in {path}; please report it", soft_wrap=True)
        sys.exit(exits.INTERNAL)
