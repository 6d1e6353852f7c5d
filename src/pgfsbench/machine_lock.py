"""One campaign at a time on a machine.

A campaign changes machine-wide settings (sysctls) and measures the machine.
Two at once corrupt both: the second records the first's sysctl value as the
one to restore, and each measures the other's load. So a campaign takes this
lock before it changes anything and keeps it to the end; ``pgfsbench cleanup``
takes it while it undoes what a killed campaign left.

The lock is an ``flock`` on one file: the kernel releases it when its holder
dies, however it dies, so it can never be left behind. What a dead campaign
did leave (mounts, sysctls...) is in its ledger, and ``run`` refuses to start
until ``cleanup`` has undone it. The file holds a description of the holder,
for the message another campaign shows.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.ledger import releaser

LOCK_ENV = "PGFSBENCH_LOCK_FILE"
DEFAULT_PATHS = (Path("/run/lock/pgfsbench.lock"), Path("/tmp/pgfsbench.lock"))

CAMPAIGN_WHY = (
    "campaigns change machine-wide settings and disturb each other's "
    "measurements, so only one runs at a time"
)
CLEANUP_WHY = "a cleanup would restore settings under it; a running campaign cleans up after itself"

_held: dict[str, int] = {}  # holder id -> the descriptor holding the lock, in this process


def lock_path() -> Path:
    """One path for the whole machine, whoever runs (overridable for unit tests)."""
    if os.environ.get(LOCK_ENV):
        return Path(os.environ[LOCK_ENV])
    for path in DEFAULT_PATHS:
        if os.access(path.parent, os.W_OK) or os.access(path, os.R_OK):
            return path
    return DEFAULT_PATHS[-1]


def _open(path: Path) -> tuple[int, bool]:
    """(descriptor, writable): a lock file made by another user is only readable to
    us, which is enough to lock it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        return fd, True
    except PermissionError:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW), False
    except OSError as exc:
        raise UserError(
            f"cannot open the machine lock {path}: {exc.strerror}; set "
            f"{LOCK_ENV} to a file on a writable local filesystem"
        ) from None


def describe_holder(path: Path | None = None) -> str:
    """Who holds the lock, as the holder wrote it."""
    try:
        info = json.loads((path or lock_path()).read_text() or "{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or not info.get("pid"):
        return "another pgfsbench process"
    what = info.get("what", "campaign")
    started = info.get("started")
    since = (
        time.strftime(" since %H:%M:%S", time.localtime(started))
        if isinstance(started, (int, float))
        else ""
    )
    details = ", ".join(
        filter(
            None,
            [
                f"plan {info['plan']}" if info.get("plan") else "",
                f"pid {info['pid']}",
                f"results {info['results']}" if info.get("results") else "",
            ],
        )
    )
    return f"{what} {info.get('id', '?')} ({details}){since}"


def holder_info(path: Path | None = None) -> dict | None:
    """What the holder wrote, if a process holds the lock now, else None. Read from
    /proc/locks, without taking the lock even for an instant (a probe that took it
    could make a campaign starting at that moment refuse to run)."""
    path = path or lock_path()
    try:
        st = path.stat()
        locks = Path("/proc/locks").read_text()
    except OSError:
        return None
    for line in locks.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; "->" marks a waiter.
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        major, minor, inode = fields[5].split(":")
        if (
            int(inode) == st.st_ino
            and int(major, 16) == os.major(st.st_dev)
            and int(minor, 16) == os.minor(st.st_dev)
        ):
            try:
                info = json.loads(path.read_text() or "{}")
            except (OSError, ValueError):
                info = {}
            return info if isinstance(info, dict) else {}
    return None


@contextlib.contextmanager
def machine_lock(
    holder_id: str,
    what: str,
    wait: bool,
    say: Callable[[str], None],
    why: str = CAMPAIGN_WHY,
    **info: str,
) -> Iterator[Path]:
    """Hold the machine lock for the block; without ``wait`` a held lock is a UserError
    naming its holder (and ``why`` it matters), with ``wait`` the block starts once the
    holder is done."""
    path = lock_path()
    fd, writable = _open(path)
    acquired = False
    try:
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = describe_holder(path)
                if not wait:
                    raise UserError(
                        f"{holder} is running on this machine; {why}: wait "
                        "for it to finish, or add --wait to start when it "
                        "does"
                    ) from None
                if not announced:
                    say(f"waiting for {holder} to finish (--wait)...")
                    announced = True
                time.sleep(1)
        if writable:
            os.ftruncate(fd, 0)
            os.pwrite(
                fd,
                json.dumps(
                    {
                        "id": holder_id,
                        "what": what,
                        "pid": os.getpid(),
                        "started": time.time(),
                        **info,
                    }
                ).encode(),
                0,
            )
        _held[holder_id] = fd
        acquired = True
        yield path
    finally:
        if acquired:
            release(holder_id)  # closes fd, unless the ledger's release already did
        else:
            os.close(fd)


def release(holder_id: str) -> None:
    """Let the lock go, if this process holds it for ``holder_id`` (idempotent)."""
    fd = _held.pop(holder_id, None)
    if fd is None:
        return
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    with contextlib.suppress(OSError):
        os.close(fd)


@releaser("lock")
def release_recorded(res: dict) -> list[str]:
    """Undo a "lock" record in a campaign's ledger: our own lock is let go; a dead
    campaign's was let go by the kernel when it died, so there is nothing to undo."""
    release(res.get("holder", ""))
    return []
