"""Running external commands: argument lists only, everything kept.

Every command a run executes is recorded (argv, exit code, stdout, stderr,
duration) so the report can show exactly what produced a number.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.errors import CommandFailed


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True)
class RunAs:
    """An unprivileged OS user to run a command as (PostgreSQL refuses root)."""

    name: str
    uid: int
    gid: int
    home: str

    @classmethod
    def lookup(cls, name: str) -> RunAs:
        entry = pwd.getpwnam(name)
        return cls(name, entry.pw_uid, entry.pw_gid, entry.pw_dir)

    @classmethod
    def current(cls) -> RunAs:
        return cls.lookup(pwd.getpwuid(os.getuid()).pw_name)


# Told of every command as it starts (result None) and as it ends: how --verbose shows
# the commands a campaign runs without each caller printing them.
CommandWatcher = Callable[[tuple[str, ...], "CommandResult | None"], None]
_watchers: list[CommandWatcher] = []


@contextlib.contextmanager
def watching(watcher: CommandWatcher) -> Iterator[None]:
    """Call ``watcher(argv, None)`` before each command ``run`` starts, and
    ``watcher(argv, result)`` when it ends, while the block runs."""
    _watchers.append(watcher)
    try:
        yield
    finally:
        _watchers.remove(watcher)


def _tell(argv: tuple[str, ...], result: CommandResult | None) -> None:
    for watcher in list(_watchers):
        watcher(argv, result)


def _env_for(user: RunAs | None, extra: dict[str, str] | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
        # Tools' output is parsed: force the C locale so numbers and words are stable.
        "LC_ALL": "C",
        "LANG": "C",
    }
    if user is not None:
        env.update(HOME=user.home or "/", USER=user.name, LOGNAME=user.name)
    else:
        env["HOME"] = os.environ.get("HOME", "/root")
    if extra:
        env.update(extra)
    return env


def run(
    argv: list[str] | tuple[str, ...],
    *,
    as_user: RunAs | None = None,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    check: bool = True,
    pass_fds: tuple[int, ...] = (),
    cgroup: str | None = None,
) -> CommandResult:
    """Run ``argv`` (never through a shell) and capture everything.

    With ``as_user`` the child drops to that user (only when we are root and
    that user is not us). ``check`` raises CommandFailed on a non-zero exit.
    ``pass_fds`` stay open in the child under the same numbers. ``cgroup`` (a
    ``cgroup.procs`` path, as root): the command starts inside that cgroup, through a
    ``/bin/sh -c 'echo $$ > "$0" && exec ...'`` given the path and argv as arguments
    (never interpolated), and setpriv to drop to ``as_user``.
    """
    argv = tuple(str(a) for a in argv)
    kwargs: dict = {}
    # The user to drop to, when there is one to drop to.
    drop = as_user if as_user is not None and os.geteuid() == 0 and as_user.uid != 0 else None
    if cgroup is not None:
        # Into the cgroup first (as root: a shell writes its own pid to the cgroup's
        # cgroup.procs), then the user dropped by setpriv, then the command: everything
        # it starts is born in the cgroup.
        user = (
            f"setpriv --reuid={drop.uid} --regid={drop.gid} --clear-groups -- "
            if drop is not None
            else ""
        )
        argv = ("/bin/sh", "-c", f'echo $$ > "$0" && exec {user}"$@"', cgroup, *argv)
    elif drop is not None:
        kwargs.update(user=drop.uid, group=drop.gid, extra_groups=[])
    _tell(argv, None)
    started = time.monotonic()
    proc = subprocess.run(
        argv,
        cwd=str(cwd) if cwd else None,
        env=_env_for(as_user, env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        pass_fds=pass_fds,
        **kwargs,
    )
    result = CommandResult(
        argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started
    )
    _tell(argv, result)
    if check and not result.ok:
        raise CommandFailed(result)
    return result


def which(name: str, extra_dirs: tuple[str, ...] = ("/usr/sbin", "/sbin")) -> str | None:
    """Find a tool on PATH or in the sbin directories a non-login root shell may miss."""
    found = shutil.which(name)
    if found:
        return found
    for d in extra_dirs:
        candidate = Path(d) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def save(result: CommandResult, directory: Path, stem: str) -> Path:
    """Keep a command's argv, exit code, stdout and stderr as one artifact file."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.txt"
    path.write_text(
        f"$ {' '.join(result.argv)}\n"
        f"# exit code: {result.exit_code}, {result.seconds:.3f} s\n"
        f"# --- stdout ---\n{result.stdout}"
        f"# --- stderr ---\n{result.stderr}"
    )
    return path
