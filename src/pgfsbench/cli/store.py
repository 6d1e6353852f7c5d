"""Campaigns from results directories and the PostgreSQL results store: import, list,
history."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from pgfsbench import exits
from pgfsbench.cli.shared import (
    STORE_FORMS,
    STORE_METAVAR,
    Ascii,
    Bom,
    app,
    console,
    err,
    format_help,
    reads,
    user_errors,
)
from pgfsbench.errors import UserError

STORE_HELP = f"a PostgreSQL results store: {STORE_FORMS} (default: $PGFSBENCH_STORE)"
# list and history read the same sources: results directories and/or a store.
ResultsDirs = Annotated[
    list[Path] | None,
    typer.Argument(help="results directories, or directories holding them", metavar="DIR"),
]
StoreUrl = Annotated[
    str | None,
    typer.Option("--store", envvar="PGFSBENCH_STORE", metavar=STORE_METAVAR, help=STORE_HELP),
]


@app.command("import")
@user_errors
def import_(
    results: Annotated[
        list[Path],
        typer.Argument(help="results directories, or directories holding them", metavar="DIR"),
    ],
    store: Annotated[
        str,
        typer.Option("--store", envvar="PGFSBENCH_STORE", metavar=STORE_METAVAR, help=STORE_HELP),
    ] = ...,  # type: ignore[assignment]  # typer: required
) -> None:
    """Import results directories into a PostgreSQL results store: each campaign in one transaction, keyed by its UUID (importing one again changes nothing; a directory that changed since replaces what the store held of it). Artifacts stay on disk, named by their directory."""
    from pgfsbench.analysis.verdicts.decisions import decisions
    from pgfsbench.store.importing import StoreFailed, import_dirs

    try:
        import_dirs(
            results, store, lambda line: console.print(escape(line), soft_wrap=True), decisions
        )
    except StoreFailed as exc:
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(exits.INCOMPLETE) from None


@app.command("list")
@user_errors
@reads
def list_(
    results: ResultsDirs = None,
    store: StoreUrl = None,
    format: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help=format_help("list", "", " or "))
    ] = "text",
) -> None:
    """List campaigns (from results directories and/or a results store) with their host, plan, start, status, duration and headline verdicts."""
    from pgfsbench.analysis.verdicts.summary import summarize
    from pgfsbench.formats.registry import LIST, pick
    from pgfsbench.store.sources import campaigns
    from pgfsbench.store.url import check_store_url

    output = pick(format, LIST)
    if not results and not store:
        raise UserError("give results directories, or --store CONNINFO (or set PGFSBENCH_STORE)")
    skipped = []

    def skip(why: str) -> None:
        skipped.append(why)
        err.print(f"[yellow]skipped: {escape(why)}[/]", soft_wrap=True)

    summaries = [
        summarize(c, source)
        for c, source in campaigns(
            results or [], check_store_url(store) if store else None, skip=skip
        )
    ]
    output.write(LIST, summaries, sys.stdout)
    if skipped:
        raise typer.Exit(exits.INCOMPLETE)


@app.command(short_help="A metric of a target over campaigns, with regression marks.")
@user_errors
@reads
def history(
    results: ResultsDirs = None,
    store: StoreUrl = None,
    target: Annotated[
        str | None,
        typer.Option("--target", metavar="NAME", help="only this target (default: every target)"),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            metavar="GLOB",
            help="metric name or glob (default: each measurement's headline metric)",
        ),
    ] = None,
    plan: Annotated[
        str | None, typer.Option("--plan", metavar="NAME", help="only campaigns of this plan")
    ] = None,
    format: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help=format_help("history", "", " or "))
    ] = "text",
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="also write a self-contained HTML page with a chart "
            "of each metric over the campaigns",
        ),
    ] = None,
    bom: Bom = False,
    ascii: Ascii = False,
) -> None:
    """Show a metric of a target over campaigns (oldest first): median, 95% CI and n per campaign, its host, and against the previous campaign of the same plan the mark compare gives (better, worse, equivalent, inconclusive)."""
    from pgfsbench.compare.series import history as build_history
    from pgfsbench.formats.registry import HISTORY, check_options, pick
    from pgfsbench.store.sources import campaigns
    from pgfsbench.store.url import check_store_url

    output = pick(format, HISTORY)
    check_options(output, bom=bom, ascii=ascii)
    if not results and not store:
        raise UserError("give results directories, or --store CONNINFO (or set PGFSBENCH_STORE)")
    if html is not None and not html.parent.is_dir():
        raise UserError(f"--html {html}: no directory {html.parent}")
    found = list(
        campaigns(
            results or [],
            check_store_url(store) if store else None,
            skip=lambda why: err.print(f"[yellow]skipped: {escape(why)}[/]", soft_wrap=True),
        )
    )
    series = build_history(found, target, metric, plan)
    output.write(HISTORY, series, sys.stdout, bom=bom, ascii=ascii)
    if html is not None:
        from pgfsbench.report.chart_history import write_history_page

        write_history_page(series, html)
        err.print(f"wrote {escape(str(html))}", soft_wrap=True)
