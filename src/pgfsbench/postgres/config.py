"""postgresql.conf as pgfsbench writes it, and the server's own check of it.

The plan's settings are appended to the cluster's postgresql.conf. The plan
model already refuses names that are not parameter names and values that are
not one line; here a value is quoted the way postgresql.conf reads it, and the
server binary itself judges names and values before anything is made: a typo
would otherwise stop the server from starting an hour into a campaign.
"""

from __future__ import annotations

import difflib
import functools
import re
import tempfile
from pathlib import Path

from pgfsbench import proc
from pgfsbench.postgres.binaries import PgBinaries

# Always set: no TCP listener, a socket only the PostgreSQL user can use.
OWN_SETTINGS = {"listen_addresses": "", "unix_socket_permissions": "0700"}


def conf_value(value: object) -> str:
    """A value as postgresql.conf reads it: numbers and booleans bare, anything else
    single-quoted with quotes doubled and backslashes escaped (the file's strings
    take backslash escapes, so C:\\x would otherwise lose its backslash)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    if "\n" in text or "\r" in text or "\0" in text:  # the plan refuses these already
        raise ValueError(f"a postgresql.conf value is one line: {text!r}")
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def conf_text(settings: dict[str, object]) -> str:
    """The lines pgfsbench appends to postgresql.conf: its own settings, then ``settings``."""
    lines = ["", "# --- set by pgfsbench ---"]
    lines += [f"{key} = {conf_value(value)}" for key, value in {**OWN_SETTINGS, **settings}.items()]
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=8)
def parameter_names(bindir: Path) -> tuple[str, ...]:
    """The parameters this server documents (``postgres --describe-config``), for
    suggestions; developer options are not listed there."""
    result = proc.run([str(bindir / "postgres"), "--describe-config"], check=False, timeout=60)
    return tuple(line.split("\t", 1)[0] for line in result.stdout.splitlines() if line)


_MESSAGE = re.compile(r"\b(?:LOG|FATAL|ERROR|WARNING|DETAIL|HINT):\s+(.*)$")
_UNRECOGNIZED = re.compile(r'unrecognized configuration parameter "([^"]+)"')


def _problems(output: str, bindir: Path) -> list[str]:
    problems = []
    for line in output.splitlines():
        match = _MESSAGE.search(line)
        if not match:
            continue
        # the scratch file's name and line numbers mean nothing to the plan's author
        message = re.sub(r' in file "[^"]*" line \d+', "", match.group(1)).rstrip(".")
        if "contains errors" in message or "skipping missing configuration" in message:
            continue
        if name := _UNRECOGNIZED.search(message):
            near = difflib.get_close_matches(
                name.group(1).lower(), [n.lower() for n in parameter_names(bindir)], 2
            )
            if near:
                message += f" (did you mean {' or '.join(near)}?)"
        problems.append(message)
    return problems


@functools.lru_cache(maxsize=64)
def _check(bindir: Path, text: str) -> tuple[str, ...]:
    with tempfile.TemporaryDirectory(prefix="pgfsbench-conf-") as scratch:
        conf = Path(scratch) / "postgresql.conf"
        conf.write_text(text)
        (Path(scratch) / "postgresql.auto.conf").write_text("")
        # -C first: the server reads its configuration as at start, prints one value and
        # exits, and allows root to do so (a read-only act).
        result = proc.run(
            [str(bindir / "postgres"), "-C", "port", "-D", scratch], check=False, timeout=60
        )
    if result.ok:
        return ()
    return tuple(
        _problems(result.stderr + result.stdout, bindir)
        or [
            f"postgres -C exited {result.exit_code}: "
            + " | ".join((result.stderr or result.stdout).strip().splitlines()[-3:])
        ]
    )


def settings_problems(bins: PgBinaries, settings: dict[str, object]) -> list[str]:
    """What this server says is wrong with ``settings`` (empty when it accepts them)."""
    return list(_check(bins.bindir, conf_text(settings)))
