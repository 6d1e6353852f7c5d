"""One crash state, checked: built in the workspace, recovered as after a power cut,
and asked what survived.

The state's images are reflink clones of the recorded base with the state's writes
applied (``states.py``), each on a loop device. Then the filesystem's own recovery (the
mount: journal or log replay), PostgreSQL's (a server started on the state's data
directory replays its WAL), and the checks: every commit acknowledged before the cut is
there, ``amcheck`` on the tables and their indexes, the server stopped cleanly and
``pg_checksums --check`` (data checksums on), and last the filesystem's own read-only
check (``e2fsck -fn``, ``xfs_repair -n``, ``btrfs check --readonly``) once unmounted.
A check that fails makes the state corrupt, named by the check:

- ``mount``: the filesystem did not mount (its recovery failed);
- ``start``: PostgreSQL did not start (its recovery failed);
- ``read``: reading the tables failed;
- ``amcheck``: amcheck found a broken index or heap page;
- ``checksums``: a page whose checksum is wrong: pg_checksums found it, or reading the
  tables or amcheck met it ("invalid page");
- ``fsck``: the filesystem's own check found damage.

Everything the check makes is in the ledger before it exists.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench import proc
from pgfsbench.crash.client import TABLES, Acks
from pgfsbench.crash.states import CrashState, runs
from pgfsbench.crash.workspace import Held, attach, clone, mount
from pgfsbench.crash.writelog import DATA, Op
from pgfsbench.errors import CommandFailed
from pgfsbench.ledger import Ledger
from pgfsbench.metrics import CRASH_CHECKS
from pgfsbench.postgres.binaries import PgBinaries
from pgfsbench.postgres.cluster import Cluster, running_cluster

CHECKS = CRASH_CHECKS

AMCHECK_INDEXES = (
    "SELECT count(bt_index_check(c.oid, true)) FROM pg_index i "
    "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
    "WHERE a.amname = 'btree' AND c.relnamespace = 'public'::regnamespace"
)
AMCHECK_HEAP = (
    "SELECT c.relname || ' block ' || v.blkno || ': ' || v.msg FROM pg_class c, "
    "LATERAL verify_heapam(c.oid) v WHERE c.relnamespace = 'public'::regnamespace "
    "AND c.relkind = 'r' LIMIT 3"
)


@dataclass(frozen=True)
class Setup:
    """What every state of one recording is checked with."""

    recording: Path  # the write log and the base images
    files: list[dict]  # the recorded images, in file-id order
    ops: Sequence[Op]
    workspace: Path
    fstype: str
    mount_options: str
    workdir: Path  # the target's workdir, relative to its mount point
    fsck: Callable[[str], list[str]] | None
    forget: Callable[[str], list[str]] | None  # the recipe's forget_device
    bins: PgBinaries
    user: proc.RunAs
    ledger: Ledger
    checksums: bool  # the cluster has data checksums
    acks: Acks
    logs: Path  # where a failing state's server log and words are kept


@dataclass
class StateResult:
    state: CrashState
    lost: int = 0  # acknowledged commits missing
    lost_seconds: float = 0.0  # the oldest lost commit's age at the cut
    corrupt: list[str] = field(default_factory=list)  # the checks that failed
    words: list[str] = field(default_factory=list)  # what they said
    fs_recovery_s: float | None = None
    pg_recovery_s: float | None = None
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds each step took

    @property
    def bad(self) -> bool:
        return bool(self.lost or self.corrupt)

    def describe(self) -> dict:
        return {
            **self.state.describe(),
            "lost_commits": self.lost,
            "lost_seconds": round(self.lost_seconds, 3),
            "corrupt": self.corrupt,
            "words": self.words,
            "fs_recovery_s": self.fs_recovery_s,
            "pg_recovery_s": self.pg_recovery_s,
            "seconds": round(self.seconds, 3),
            "phases": self.phases,
        }


def _fail(result: StateResult, check: str, words: str) -> None:
    if check in ("read", "amcheck") and ("invalid page" in words or "checksum" in words):
        check = "checksums"  # the server's page verification: a data checksum failed
    if check not in result.corrupt:
        result.corrupt.append(check)
    result.words.append(f"{check}: {words.strip()[:300]}")


def _said(exc: CommandFailed) -> str:
    """What a failed client said (the server's error), without its command line."""
    text = (exc.result.stderr or exc.result.stdout).strip()
    lines = [l for l in text.splitlines() if not l.startswith(("LINE ", " "))]
    return " | ".join(lines[:2]) or str(exc)


def build_images(setup: Setup, state: CrashState, held: Held) -> list[Path]:
    """The state's images in the workspace: clones of the base, the state's writes on."""
    images = []
    for f in setup.files:
        image = setup.workspace / f"state-{f['name']}"
        held.hold("file", path=str(image))
        clone(setup.recording / f"{f['name']}.base", image)
        images.append(image)
    fds = [os.open(image, os.O_WRONLY) for image in images]
    data = os.open(setup.recording / DATA, os.O_RDONLY)
    try:
        for file, offset, pos, length in runs(setup.ops, state.pieces):
            os.pwrite(fds[file], os.pread(data, length, pos), offset)
    finally:
        for fd in (*fds, data):
            os.close(fd)
    return images


def _commits(cluster: Cluster, setup: Setup, state: CrashState, result: StateResult) -> None:
    present: dict[int, set[int]] = {}
    out = cluster.sql("SELECT client, seq FROM crash_commits")
    for line in out.splitlines():
        c, s = line.split("|")
        present.setdefault(int(c), set()).add(int(s))
    oldest = None
    for client, upto in setup.acks.required(state.time).items():
        have = present.get(client, set())
        missing = [s for s in range(1, upto + 1) if s not in have]
        result.lost += len(missing)
        if missing:
            acked = setup.acks.times[client][missing[0] - 1]
            oldest = acked if oldest is None else min(oldest, acked)
    if oldest is not None:
        result.lost_seconds = max(0.0, state.time - oldest)


def _server_checks(cluster: Cluster, setup: Setup, state: CrashState, r: StateResult) -> None:
    try:
        _commits(cluster, setup, state, r)
    except CommandFailed as exc:
        _fail(r, "read", _said(exc))
    try:
        cluster.sql(AMCHECK_INDEXES)
        if heap := cluster.sql(AMCHECK_HEAP):
            _fail(r, "amcheck", heap.replace("\n", " | "))
    except CommandFailed as exc:
        _fail(r, "amcheck", _said(exc))


@contextlib.contextmanager
def _phase(result: StateResult, name: str) -> Iterator[None]:
    started = time.monotonic()
    try:
        yield
    finally:
        result.phases[name] = round(time.monotonic() - started, 4)


def check_state(setup: Setup, state: CrashState) -> StateResult:
    """Build, recover and check ``state``; everything made is taken apart again."""
    started = time.monotonic()
    result = StateResult(state)
    log = setup.logs / f"state-{state.number}-postgres.log"
    with contextlib.ExitStack() as stack:
        held = Held(setup.ledger, stack)
        with _phase(result, "build"):
            images = build_images(setup, state, held)
            devices = [attach(held, image) for image in images]
        if setup.forget is not None:
            forget = setup.forget
            proc.run(forget(devices[0]), check=False)
            stack.callback(lambda: proc.run(forget(devices[0]), check=False))
        point = mounted = None
        try:
            with _phase(result, "mount"):
                mounted = mount(
                    held, devices[0], setup.fstype, setup.mount_options, "pgfsbench-state-"
                )
            point = Path(mounted["path"])
            result.fs_recovery_s = result.phases["mount"]
        except CommandFailed as exc:
            _fail(result, "mount", str(exc))
        if point is not None:
            _postgres(setup, state, result, point, log)
        if mounted is not None:  # unmounted before the filesystem's own check
            with _phase(result, "umount"):
                if problems := setup.ledger.release(mounted):
                    _fail(result, "mount", "; ".join(problems))
        if setup.fsck is not None and point is not None:
            with _phase(result, "fsck"):
                fsck = proc.run(setup.fsck(devices[0]), check=False)
            if not fsck.ok:
                _fail(result, "fsck", " | ".join((fsck.stdout + fsck.stderr).splitlines()[-3:]))
        teardown = time.monotonic()
    result.phases["teardown"] = round(time.monotonic() - teardown, 4)
    if not result.bad:
        with contextlib.suppress(FileNotFoundError):
            log.unlink()
    result.seconds = time.monotonic() - started
    return result


def _postgres(setup: Setup, state: CrashState, result: StateResult, point: Path, log: Path) -> None:
    """PostgreSQL's recovery on the mounted state, the checks through the server, then
    pg_checksums on the stopped cluster."""
    pgdata = point / setup.workdir / "pgdata"
    # The server that wrote it is still running on the target: a power cut would have
    # ended it; its pid file would stop this one.
    with contextlib.suppress(FileNotFoundError):
        (pgdata / "postmaster.pid").unlink()
    start = time.monotonic()
    try:
        with running_cluster(
            setup.bins, setup.user, point / setup.workdir, setup.ledger, {}, log
        ) as cluster:
            result.pg_recovery_s = result.phases["start"] = round(time.monotonic() - start, 4)
            with _phase(result, "checks"):
                _server_checks(cluster, setup, state, result)
            stop = time.monotonic()
    except CommandFailed as exc:
        if result.pg_recovery_s is not None:
            raise
        _fail(result, "start", _last_log_words(log) or str(exc))
        return
    result.phases["stop"] = round(time.monotonic() - stop, 4)
    if setup.checksums:
        with _phase(result, "pg_checksums"):
            sums = proc.run(
                [setup.bins.tool("pg_checksums"), "--check", "-D", str(pgdata)],
                as_user=setup.user,
                check=False,
            )
        if not sums.ok:
            _fail(result, "checksums", _bad_checksums(sums))


def _last_log_words(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    serious = [l for l in lines if any(w in l for w in ("PANIC:", "FATAL:", "ERROR:"))]
    return " | ".join(serious[-2:])


def _bad_checksums(result: proc.CommandResult) -> str:
    lines = (result.stdout + result.stderr).splitlines()
    bad = [l for l in lines if l.startswith("Bad checksums")]
    first = [l for l in lines if "checksum verification failed" in l][:1]
    return " | ".join(bad + first) or " | ".join(lines[-2:])


__all__ = ["CHECKS", "TABLES", "Setup", "StateResult", "check_state"]
