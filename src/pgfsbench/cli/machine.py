"""This machine: what it can do (doctor) and what a dead run left on it (cleanup)."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

from pgfsbench import exits
from pgfsbench.cli import shared
from pgfsbench.cli.shared import QUIET, VERBOSE, app, console, err, user_errors
from pgfsbench.errors import ResultsUnwritable, UserError


@app.command(short_help="What this machine can do, and how to fix what is missing.")
@user_errors
def doctor(
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="machine-readable: every check with its state, detail and fix; the same exit code",
        ),
    ] = False,
) -> None:
    """Show what this machine can do and how to fix what is missing, and whether it looks quiet enough for a campaign (3 s of sampling); exit 1 when something the default campaign needs is missing."""
    from pgfsbench.doctor import checks

    found = checks()
    missing = any(c.required and not c.ok for c in found)
    if as_json:
        json.dump(
            {
                "ok": not missing,
                "checks": [
                    {
                        "check": c.what,
                        "ok": c.ok,
                        "required": c.required,
                        "state": _check_state(c),
                        "detail": c.detail,
                        "fix": c.fix or None,
                    }
                    for c in found
                ],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    elif shared.verbosity > QUIET or missing:
        _doctor_lines([c for c in found if shared.verbosity > QUIET or not c.ok])
        needed = [c.what for c in found if c.required and not c.ok]
        console.print(
            Text(
                "missing for the default plan: " + ", ".join(needed) + " (the fixes are above)",
                style="red bold",
            )
            if needed
            else Text("ready to run the default plan", style="green bold")
        )
    if missing:
        raise typer.Exit(exits.INCOMPLETE)


def _check_state(c) -> str:
    return "ok" if c.ok else c.state or ("missing" if c.required else "optional")


def _doctor_lines(found) -> None:
    """A check a line or two: its state, what it found (paths whole, folded, never cut),
    and the fix under it."""
    for c in found:
        state = (
            Text("ok      ", style="green")
            if c.ok
            else Text("missing ", style="red")
            if c.required
            else Text(f"{c.state or 'optional':8}", style="yellow")
        )
        console.print(state + Text(f" {c.what}: {c.detail}"), overflow="fold")
        if c.fix and not c.ok:
            console.print(Text(f"         fix: {c.fix}"), overflow="fold")


@app.command(short_help="Undo what a crashed or killed run left behind.")
@user_errors
def cleanup(
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="if a campaign runs on this machine, clean up when it ends (default: refuse)",
        ),
    ] = False,
) -> None:
    """Remove what a crashed or killed run left behind (PostgreSQL, mounts, loop devices, images, sysctls), using the state file each run keeps."""
    from pgfsbench import releasers
    from pgfsbench.ledger import stale_ledgers
    from pgfsbench.machine_lock import CLEANUP_WHY, machine_lock

    releasers.load_all()  # the dead runs' ledgers may hold any kind of resource
    # Holding the machine lock: no campaign starts (and records 'before' values)
    # while a dead one's settings are being restored.
    with (
        _commands_shown(),
        machine_lock(f"cleanup-{os.getpid()}", "cleanup", wait, console.print, why=CLEANUP_WHY),
    ):
        ledgers = stale_ledgers()
        if not ledgers:
            if shared.verbosity > QUIET:
                console.print("nothing to clean up")
            return
        failed = False
        for ledger in ledgers:
            _say(
                f"cleaning up after run {escape(ledger.path.stem)} (pid "
                f"{ledger.pid}, results {escape(ledger.results_dir)}): "
                f"{escape(ledger.summary())}"
            )
            for problem in ledger.release_all():
                failed = True
                err.print(f"[red]{escape(problem)}[/]")
            ledger.close()
            _end_killed_campaign(Path(ledger.results_dir))
    if failed:
        raise typer.Exit(exits.INCOMPLETE)


def _say(markup: str) -> None:
    """What a command does, unless --quiet."""
    if shared.verbosity > QUIET:
        console.print(markup)


def _commands_shown():
    """With --verbose, each external command as it starts (umount, losetup -d, ...)."""
    import contextlib
    import shlex

    from pgfsbench import proc

    if shared.verbosity < VERBOSE:
        return contextlib.nullcontext()
    return proc.watching(
        lambda argv, result: (
            None
            if result is not None
            else console.print(escape(f"  $ {shlex.join(argv)}"), style="dim", soft_wrap=True)
        )
    )


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
        err.print(
            f"[yellow]could not mark the campaign in {escape(str(results))} as killed: "
            f"{escape(str(exc))}[/]"
        )
        return
    if ended:
        _say(
            f"marked the campaign in {escape(str(results))} as killed (its completed "
            f"runs are kept); 'pgfsbench report {escape(str(results))}' writes its report"
        )
