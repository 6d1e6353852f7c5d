"""What every command shares: the typer app, the consoles, the global options
(--quiet, --verbose, --version) and user errors as one line and an exit code."""

from __future__ import annotations

import functools
import gc
import signal
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from pgfsbench import __version__, exits
from pgfsbench.errors import Interrupted, ResultsUnwritable, UserError

PROG = "pgfsbench"
# --store: what names a PostgreSQL results store (store/url.py checks it).
STORE_METAVAR = "CONNINFO"
STORE_FORMS = (
    "any libpq connection string: a URL postgresql://user@host/db, words "
    "'host=H dbname=D user=U' or service=NAME; the rest from PGHOST, PGUSER, ~/.pgpass..."
)
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
# Rebound by the callback below once the command line is parsed: commands read it as
# shared.verbosity (a from-import would copy NORMAL, the value before that).
verbosity = NORMAL


def plan_names(incomplete: str) -> list[str]:
    """Tab completion of a PLAN: the built-in names (a path: the shell completes files)."""
    from pgfsbench.plan.builtin import builtin_names

    return [n for n in builtin_names() if n.startswith(incomplete)]


def format_help(kind: str, lead: str = "output format: ", last: str = ", ") -> str:
    """--format's help: the formats that write ``kind`` (formats/registry.py), the last
    after ``last``. Typer evaluates these (lazy) annotations each time it builds the CLI,
    so every installed or registered format is listed."""
    from pgfsbench.formats.registry import help_names

    names = help_names(kind)
    return lead + (", ".join(names[:-1]) + last if len(names) > 1 else "") + names[-1]


# The CSV options, the same for every command that writes CSV (export, compare, history).
Bom = Annotated[
    bool,
    typer.Option(
        "--bom",
        help="csv: start with a UTF-8 byte order mark, so that a spreadsheet (Excel) reads "
        "the file as UTF-8 (µs, not Âµs)",
    ),
]
Ascii = Annotated[
    bool,
    typer.Option(
        "--ascii",
        help="csv: units and marks in ASCII (us for µs, ~ for ≈, != for ≠, x for ×, +/- "
        "for ±); a minus is ASCII in every CSV",
    ),
]


def _version(value: bool) -> None:
    if value:
        console.print(f"{PROG} {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="only errors and the result (the verdicts, the report's path); "
            "give it before the command: pgfsbench -q run ...",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="also say each target visit, run and external command "
            "(mkfs, mount, pgbench, ...) as it starts",
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """pgfsbench: which filesystem, mkfs/mount options and OS settings to run PostgreSQL on, measured side by side."""
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
            raise typer.Exit(exits.USAGE) from None
        except ResultsUnwritable as exc:
            err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(exits.INCOMPLETE) from None
        except KeyboardInterrupt:
            err.print("[yellow]interrupted[/]")
            raise typer.Exit(exits.for_signal(signal.SIGINT)) from None
        except Interrupted as exc:
            err.print("[yellow]interrupted[/]")
            raise typer.Exit(exits.for_signal(exc.signum)) from None

    return wrapper


def reads(func):
    """A command that reads stored results and exits: no garbage collection while it
    runs. Its heap is nearly all live (imported modules, the campaign's rows) and
    reference counting frees the rest, so a collection only walks it: ~20-30 ms of
    `export` over 105 runs, with the same peak RSS without (export; list and history of
    16 campaigns). A campaign (run), hours long, keeps the collector. Restored on return:
    the tests call the commands in their own process."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        was = gc.isenabled()
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            if was:
                gc.enable()

    wrapper.reads = True  # type: ignore[attr-defined]  # (user_errors' wraps keeps it)
    return wrapper
