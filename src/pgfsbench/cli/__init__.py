"""The command line: wires the stages together, nothing more."""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import traceback

from rich.markup import escape

from pgfsbench import exits
from pgfsbench.extensions import ExtensionError

# Each module registers its commands on app as it is imported: this order, not the
# alphabet's, is the order of the commands in --help.
from pgfsbench.cli import campaign, results, store, machine, plans  # noqa: F401  # isort: skip
from pgfsbench.cli.shared import PROG, app, err


def main() -> None:
    # Python's default (a young collection every 700 allocations, a full one every
    # ~70,000) cost a read command 40-70 ms of its ~0.5 s collecting a heap that is
    # nearly all live (imported modules, read rows). Cycles still die young; the old
    # generations are looked at less often.
    gc.set_threshold(100_000, 20, 20)
    try:
        app(prog_name=PROG)
    except BrokenPipeError:  # stdout's reader went away (| head, a killed pipe): not a bug
        # What is left to print goes nowhere, not into another error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(exits.INCOMPLETE)
    except ExtensionError as exc:  # an installed package's extension, met building the CLI
        err.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        sys.exit(exits.USAGE)
    except Exception as exc:  # a bug of ours: one line, the traceback kept, exit 3
        if os.environ.get("PGFSBENCH_DEBUG"):
            raise
        fd, path = tempfile.mkstemp(prefix="pgfsbench-traceback-", suffix=".txt")
        with os.fdopen(fd, "w") as f:
            f.write(traceback.format_exc())
        err.print(
            f"[red]internal error (a bug in pgfsbench):[/] {escape(repr(exc))}; the "
            f"traceback is in {path}; please report it",
            soft_wrap=True,
        )
        sys.exit(exits.INTERNAL)
