"""What a campaign's results say: export, advise, compare."""

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
    err,
    format_help,
    reads,
    user_errors,
)
from pgfsbench.errors import UserError


@app.command(short_help="Print every run and the comparison (JSON, ...).")
@user_errors
@reads
def export(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    format: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help=format_help("export"))
    ] = "json",
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="markdown: also each round's values, a row per metric and round (the "
            "default fits a GitHub comment: each metric's value, CI and n per target)",
        ),
    ] = False,
    host_ids: Annotated[
        bool,
        typer.Option(
            "--host-ids",
            help="markdown: also the host's identifiers (hostname, machine id, kernel "
            "command line), left out by default; the JSON export always has them",
        ),
    ] = False,
    bom: Bom = False,
    ascii: Ascii = False,
) -> None:
    """Print every run with its target, workload, parameters and metrics: as JSON (also each run's commands, the targets' provenance and PostgreSQL settings, the series and the comparison), CSV or a Markdown document."""
    from pgfsbench.analysis.stats.ci_cache import kept_in
    from pgfsbench.formats.registry import EXPORT, check_options, pick
    from pgfsbench.store.read import load_campaign

    output = pick(format, EXPORT)
    options = {"full": full, "host_ids": host_ids, "bom": bom, "ascii": ascii}
    check_options(output, **options)
    campaign = load_campaign(results, series=output.series)
    with kept_in(results):
        output.write(EXPORT, campaign, sys.stdout, **options)


@app.command(short_help="What to apply: mkfs, fstab, OS and PostgreSQL settings.")
@user_errors
@reads
def advise(
    results: Annotated[Path, typer.Argument(help="a results directory", metavar="RESULTS")],
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            metavar="NAME",
            help="advise for this target (default: the crash-safe target that won "
            "the most verdicts, else the baseline)",
        ),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help=format_help("advice"))
    ] = "text",
) -> None:
    """What to apply: the winning (or a named) target's mkfs command, fstab line and OS settings, and PostgreSQL settings derived from the measurements, each with the figures and CIs it rests on."""
    from pgfsbench.analysis.advice.advise import advise as make_advice
    from pgfsbench.analysis.stats.ci_cache import kept_in
    from pgfsbench.formats.registry import ADVICE, pick
    from pgfsbench.store.read import load_campaign

    output = pick(format, ADVICE)
    campaign = load_campaign(results, series=False)
    with kept_in(results):
        output.write(ADVICE, make_advice(campaign, target), sys.stdout)


@app.command(short_help="Compare targets of a campaign, or a baseline campaign with a contender.")
@user_errors
@reads
def compare(
    results: Annotated[
        list[str],
        typer.Argument(
            help="one results directory (its targets compared), or several campaigns, the "
            "baseline then its contenders (e.g. one per host): results directories or, "
            "with --store, campaign UUIDs/ids",
            metavar="RESULTS",
        ),
    ],
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="NAME",
            help="one campaign: the column the others are compared "
            "with (default: the plan's [verdicts] baseline, else the first target)",
        ),
    ] = None,
    pair: Annotated[
        list[str] | None,
        typer.Option(
            "--pair",
            metavar="BASE=CONTENDER",
            help="across campaigns: compare the baseline's target BASE with each contender's "
            "CONTENDER (repeatable; other targets pair by name)",
        ),
    ] = None,
    allow_different: Annotated[
        bool,
        typer.Option(
            "--allow-different",
            help="across campaigns: compare them even though their key "
            "provenance differs (PostgreSQL version, plan workloads, target recipe), with a "
            "warning in the output (default: refuse)",
        ),
    ] = False,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            metavar=STORE_METAVAR,
            help="read campaigns named by UUID or id from this PostgreSQL results store "
            f"({STORE_FORMS})",
        ),
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            metavar="GLOB",
            help="metric name or glob, e.g. 'pgbench.latency_*' or '*' (default: "
            "each measurement's headline metric)",
        ),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help=format_help("comparison"))
    ] = "text",
    alpha: Annotated[float | None, typer.Option(metavar="ALPHA", help="significance level")] = None,
    noise: Annotated[
        float | None,
        typer.Option(
            metavar="FRACTION",
            help="the noise margin (0.02 = 2%): smaller differences are never better or worse, and "
            "'equivalent' means shown to lie within it",
        ),
    ] = None,
    fail_if_worse: Annotated[
        str | None,
        typer.Option(
            "--fail-if-worse",
            metavar="PERCENT",
            help="for CI: exit 4 when a contender is marked worse than the baseline (significant, "
            "beyond the noise margin) and its whole 95% CI is worse by more than PERCENT, "
            "e.g. 5%; 0 fails on any worse mark. Inconclusive, equivalent and better never "
            "fail. The rows checked are the ones shown (--metric)",
        ),
    ] = None,
    bom: Bom = False,
    ascii: Ascii = False,
) -> None:
    """Compare targets with medians, confidence intervals, significance and a verdict per measurement: better/worse, equivalent or inconclusive. One campaign: its targets, compared within its rounds (paired). Several campaigns: the first is the baseline, each other a contender, each target paired with the same target (or --pair) of the baseline, as independent samples (rounds of two campaigns do not correspond); campaigns whose key provenance differs are refused unless --allow-different."""
    from pgfsbench.analysis.stats.ci_cache import kept_in
    from pgfsbench.compare.gate import gate, parse_threshold
    from pgfsbench.formats.registry import COMPARISON, check_options, pick
    from pgfsbench.store.sources import load_named
    from pgfsbench.store.url import check_store_url

    output = pick(format, COMPARISON)
    check_options(output, bom=bom, ascii=ascii)
    threshold = None if fail_if_worse is None else parse_threshold(fail_if_worse)
    if alpha is not None and not 0 < alpha < 0.5:
        raise UserError(f"--alpha must be between 0 and 0.5, not {alpha}")
    if noise is not None and not 0 <= noise < 1:
        raise UserError(f"--noise must be between 0 and 1, not {noise}")
    campaigns = load_named(results, check_store_url(store) if store else None)
    # One campaign: its analysis' values kept beside it (a second read imports no scipy).
    with kept_in(campaigns[0].results_dir if len(campaigns) == 1 else None):
        if len(campaigns) == 1:
            if pair or allow_different:
                raise UserError(
                    "--pair and --allow-different compare campaigns: give a baseline and a contender"
                )
            comparison = _one_campaign(campaigns[0], baseline, alpha, noise, metric)
        else:
            from pgfsbench.compare.campaigns import cross_comparison
            from pgfsbench.compare.pairing import pairings, parse_pairs

            if baseline is not None:
                raise UserError(
                    "--baseline picks a column of one campaign; with several, the "
                    "first is the baseline (pair targets with --pair BASE=CONTENDER)"
                )
            group = pairings(campaigns[0], campaigns[1:], parse_pairs(pair or []), allow_different)
            comparison = cross_comparison(group, alpha, noise, metric)
            for warning in comparison.warnings:
                err.print(f"[yellow]warning:[/] {escape(warning)}", soft_wrap=True)
        if not comparison.rows:
            raise UserError(f"no metric matches '{metric}'" if metric else "no results to compare")
        output.write(COMPARISON, comparison, sys.stdout, bom=bom, ascii=ascii)
    if threshold is not None:  # after the comparison: the job's log shows the evidence
        sys.stdout.flush()
        verdict = gate(comparison.table, comparison.rows, threshold)
        err.print(escape(verdict.summary()), style=None if verdict.ok else "red", soft_wrap=True)
        if not verdict.ok:
            raise typer.Exit(exits.WORSE)


def _one_campaign(
    campaign, baseline: str | None, alpha: float | None, noise: float | None, metric: str | None
):
    """One campaign's targets compared within its rounds: the very table ``show`` reads
    (its plan's [verdicts], unless --alpha or --noise override them)."""
    from pgfsbench.analysis.caveats.durability import durabilities
    from pgfsbench.analysis.caveats.notes import fill_verdict_caveats
    from pgfsbench.analysis.table import campaign_source, comparison_table
    from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
    from pgfsbench.compare.comparison import Comparison
    from pgfsbench.compare.row_texts import select_rows

    source = campaign_source(campaign)
    if baseline is not None and baseline not in source.columns:
        raise UserError(
            f"--baseline '{baseline}' is not a column (columns: {', '.join(source.columns)})"
        )
    table = comparison_table(campaign, baseline, alpha, noise)
    classes = durabilities(campaign)
    lines = fill_verdict_caveats(verdict_lines(table, classes), campaign)
    return Comparison(
        table, select_rows(table, metric), lines, campaign.plan_name, durability=lambda row: classes
    )
