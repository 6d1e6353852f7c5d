"""Running a campaign (run, also --resume and --store) and reading one back (report,
show)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from pgfsbench import exits
from pgfsbench.cli import shared
from pgfsbench.cli.shared import (
    QUIET,
    STORE_FORMS,
    STORE_METAVAR,
    app,
    console,
    err,
    plan_names,
    reads,
    user_errors,
)
from pgfsbench.errors import Interrupted, ResultsUnwritable, UserError


@app.command(short_help="Run a plan and write its report.")
@user_errors
def run(
    plan: Annotated[
        str | None,
        typer.Argument(
            help="a built-in plan name or a plan file (default: quick; with --resume: the "
            "plan the campaign recorded)",
            metavar="PLAN",
            autocompletion=lambda incomplete: plan_names(incomplete),
        ),
    ] = None,
    results: Annotated[
        Path | None, typer.Option("--results", metavar="DIR", help="new directory for results")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            metavar="DIR",
            help="continue the interrupted or killed campaign in DIR: its recorded plan, "
            "schedule and seed, from the first round that did not end",
        ),
    ] = None,
    pg_bin: Annotated[
        Path | None,
        typer.Option(
            "--pg-bin",
            metavar="DIR",
            help="PostgreSQL bin directory (default: the embedded PostgreSQL)",
        ),
    ] = None,
    keep: Annotated[bool, typer.Option(help="keep the loop images afterwards")] = False,
    allow_format: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-format",
            metavar="DEVICE",
            help="a block device the plan names that may be formatted (repeat per device)",
        ),
    ] = None,
    wipe_signatures: Annotated[
        bool,
        typer.Option(
            "--wipe-signatures",
            help="also format an allowed device that carries a filesystem "
            "or partition-table signature",
        ),
    ] = False,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="if another campaign runs on this machine, start when it ends (default: refuse)",
        ),
    ] = False,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            envvar="PGFSBENCH_STORE",
            metavar=STORE_METAVAR,
            help="also import the campaign into this PostgreSQL results store when it ends "
            f"({STORE_FORMS}; default: $PGFSBENCH_STORE)",
        ),
    ] = None,
) -> None:
    """Run a plan: provision each target, start PostgreSQL on it, run the workloads, store everything in RESULTS and write RESULTS/report.html.

    On a terminal a progress bar shows the round, target and workload, the time elapsed
    and what is left, with each run's headline figure as it finishes; otherwise (a log,
    CI) one line per measurement after each round. At the end: the verdicts, the
    headline figures, the advice and the report's path.
    """
    from pgfsbench.campaign.options import Options
    from pgfsbench.campaign.run import Campaign
    from pgfsbench.plan.load import load_plan
    from pgfsbench.postgres.binaries import find_binaries
    from pgfsbench.store.read import load_campaign

    if (results is None) == (resume is None):
        raise UserError(
            "give --results DIR for a new campaign, or --resume DIR to continue one (not both)"
        )
    if resume is not None:
        results = resume.resolve()
        the_plan = _resumed_plan(results, plan)
        if the_plan is None:
            return
    else:
        the_plan = load_plan(plan or "quick")
    assert results is not None  # one of --results and --resume, checked above
    bins = find_binaries(pg_bin)
    results = results.resolve()
    if store:  # an unreachable store is refused before anything runs
        from pgfsbench.store.importing import check_store

        check_store(store)
    if shared.verbosity > QUIET:
        console.print(f"plan [bold]{escape(the_plan.name)}[/]: {escape(the_plan.description)}")
        console.print(
            f"PostgreSQL {bins.version} ({bins.origin}); results in {escape(str(results))}"
        )
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
            err.print(
                f"[yellow]interrupted: everything was cleaned up; results so far are "
                f"in {escape(str(results))}[/]"
            )
            _write_report_quietly(results)
        else:
            err.print("[yellow]interrupted before anything ran[/]")
        raise typer.Exit(exits.for_signal(signum)) from None
    except ResultsUnwritable as exc:
        err.print(
            f"[red]error:[/] {escape(str(exc))}: the campaign stopped and everything "
            f"was cleaned up; what completed before is kept in {escape(str(results))}: "
            f"free space, then 'pgfsbench report {escape(str(results))}'",
            soft_wrap=True,
        )
        raise typer.Exit(exits.INCOMPLETE) from None
    campaign = load_campaign(results)
    _print_summary(campaign, results)
    if shared.verbosity > QUIET:
        _print_advice(campaign)
    stored = _store_campaign(results, store) if store else True
    try:
        console.print(f"report: {_write_report(results, campaign)}")
    except UserError as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(exits.INCOMPLETE) from None
    if status != "ok":
        err.print(f"[yellow]campaign {status}: {escape(_what_failed(campaign))}[/]", soft_wrap=True)
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
    from pgfsbench.analysis.verdicts.decisions import decisions
    from pgfsbench.store.importing import StoreFailed, shown, store_campaign

    try:
        done = store_campaign(results, url, decisions)
    except (UserError, StoreFailed) as exc:
        err.print(
            f"[red]error:[/] the campaign is not in the results store: "
            f"{escape(str(exc))}; its results are kept in {escape(str(results))}: "
            f"'pgfsbench import {escape(str(results))} --store URL' adds them later",
            soft_wrap=True,
        )
        return False
    console.print(f"stored in the results store {escape(shown(url))} as campaign {done.uuid}")
    return True


def _progress_view(plan):
    """How a running campaign is shown: a live bar on a terminal, plain lines otherwise
    (a log, CI), only problems with --quiet. A context manager yielding the observer."""
    import contextlib

    from pgfsbench.progress.live import LiveProgress
    from pgfsbench.progress.plain import PlainProgress

    if console.is_terminal and shared.verbosity > QUIET:
        return LiveProgress(plan, console, shared.verbosity)
    return contextlib.nullcontext(PlainProgress(plan, sys.stdout, sys.stderr, shared.verbosity))


def _print_summary(campaign, results: Path) -> None:
    """The answer first (--quiet: the verdict lines alone)."""
    from pgfsbench.analysis.stats.ci_cache import kept_in
    from pgfsbench.report.terminal import render_summary

    hint = f"every metric: pgfsbench show {results} --full; with charts and provenance: the report"
    with kept_in(results):
        render_summary(campaign, console, hint, brief=shared.verbosity == QUIET)


def _print_advice(campaign) -> None:
    """The advice after the table; the campaign's results stand without it."""
    from pgfsbench.analysis.advice.advise import advise as make_advice
    from pgfsbench.analysis.stats.ci_cache import kept_in
    from pgfsbench.formats.advice import advice_text

    try:
        with kept_in(campaign.results_dir):
            text = advice_text(make_advice(campaign))
        console.print(escape(text), soft_wrap=True, end="")
    except Exception as exc:  # a bug of ours must not cost the report
        err.print(f"[yellow](no advice: {escape(repr(exc))})[/]")


def _what_failed(campaign) -> str:
    """One line: which runs and targets did not complete."""
    bad_runs = [r for r in campaign.runs if r.status not in ("ok", "superseded", "redone")]
    parts = [f"{len(bad_runs)} of {len(campaign.runs)} runs did not complete"] if bad_runs else []
    parts += [
        f"target '{t.name}' {t.status}" + (f" ({t.reason})" if t.reason else "")
        for t in campaign.targets
        if t.status != "ok"
    ]
    return "; ".join(parts) + ("; the report lists each" if parts else "")


def _write_report(
    results: Path, campaign=None, output: Path | None = None, history: list | None = None
) -> Path:
    from pgfsbench.report.html import write_report

    try:
        return write_report(results, campaign, output, history)
    except OSError as exc:
        where = output or results
        raise UserError(
            f"cannot write the report in {where}: {exc.strerror}; the results "
            f"are kept in {results}: free space, or write it elsewhere with "
            f"'pgfsbench report {results} --output FILE'"
        ) from None


def _write_report_quietly(results: Path) -> None:
    try:
        err.print(f"report: {_write_report(results)}")
    except Exception as exc:  # the report is a convenience here; results are stored
        err.print(f"(no report: {escape(str(exc))})")


@app.command(short_help="(Re)write a results directory's report.html.")
@user_errors
@reads
def report(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="write the report here instead of RESULTS/report.html (for a read-only "
            "results directory)",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            metavar=STORE_METAVAR,
            help="add a history section: this campaign after the "
            f"earlier campaigns of its plan in this PostgreSQL results store ({STORE_FORMS})",
        ),
    ] = None,
) -> None:
    """(Re)write RESULTS/report.html from the stored results alone, after the summary (the verdicts and each measurement's headline figures; every metric: pgfsbench show RESULTS --full)."""
    from pgfsbench.store.read import load_campaign
    from pgfsbench.store.url import check_store_url

    url = check_store_url(store) if store else None
    campaign = load_campaign(results)
    history = None
    if url is not None:
        from pgfsbench.report.history_section import campaign_history

        history = campaign_history(campaign, url)
    if shared.verbosity > QUIET:
        _print_summary(campaign, results)
    console.print(f"report: {_write_report(results, campaign, output, history)}")


@app.command(short_help="Print a results directory's summary, or every metric.")
@user_errors
@reads
def show(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="every metric of every measurement, side by side, one section per "
            "workload (wide: best at 120 columns or more)",
        ),
    ] = False,
) -> None:
    """Print a campaign's results in the terminal, writing nothing: the verdicts first, then each measurement's headline figure on every target (median, 95% CI, n, ratio to the baseline and its verdict), a section per workload; --full: the whole table."""
    from pgfsbench.analysis.stats.ci_cache import kept_in
    from pgfsbench.report.terminal import render_table
    from pgfsbench.store.read import load_campaign

    campaign = load_campaign(results, series=False)  # the summary and table read none
    with kept_in(results):
        if full:
            render_table(campaign, console)
        else:
            _print_summary(campaign, results)
