"""Where crash states are built: a small XFS made with reflink on a loop image pgfsbench
creates, so that each state's images start as a reflink clone of the recorded base
(``FICLONE``: no data copied) and only the writes the state applies are written.

Everything here is held in the ledger before it exists, by kinds whose releasers
``pgfsbench cleanup`` knows (file, loop, mount, dir).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.ledger import Ledger

FICLONE = 0x40049409
MIN_BYTES = 512 * 2**20  # mkfs.xfs refuses under 300 MB


class Held:
    """Resources in the ledger before they exist, released in reverse on exit."""

    def __init__(self, ledger: Ledger, stack: contextlib.ExitStack) -> None:
        self.ledger = ledger
        self.stack = stack

    def hold(self, kind: str, **info: object) -> dict:
        res = self.ledger.add(kind, **info)
        self.stack.callback(self._release, res)
        return res

    def _release(self, res: dict) -> None:
        if res not in self.ledger.resources:  # released early already
            return
        problems = self.ledger.release(res)
        if problems:
            raise UserError("; ".join(problems))


def attach(held: Held, image: Path) -> str:
    """``image`` on a new loop device (buffered: the state is read back at once)."""
    res = held.hold("loop", image=str(image))
    result = proc.run(["losetup", "--find", "--show", str(image)])
    res["device"] = result.stdout.strip()
    held.ledger.save()
    return res["device"]


def mount(held: Held, device: str, fstype: str, options: str, prefix: str) -> dict:
    """``device`` mounted on a new directory; returns its ledger record (``path``), to
    release early (``held.ledger.release``) or leave to the stack."""
    point = tempfile.mkdtemp(prefix=prefix)
    os.chmod(point, 0o755)  # the PostgreSQL user must reach its data directory
    res = held.hold("mount", path=point, device=device)
    argv = ["mount", "-t", fstype, *(["-o", options] if options else []), device, point]
    proc.run(argv)
    return res


@contextlib.contextmanager
def workspace(ledger: Ledger, image: Path, size_bytes: int) -> Iterator[Path]:
    """An XFS with reflink on a sparse loop image at ``image``, mounted; yields a
    directory in it, all taken apart afterwards."""
    with contextlib.ExitStack() as stack:
        held = Held(ledger, stack)
        held.hold("file", path=str(image))
        with open(image, "wb") as f:
            f.truncate(max(size_bytes, MIN_BYTES))
        device = attach(held, image)
        proc.run(["mkfs.xfs", "-q", "-f", "-m", "reflink=1", device])
        yield Path(mount(held, device, "xfs", "", "pgfsbench-crash-ws-")["path"])


def clone(src: Path, dst: Path) -> None:
    """``dst`` shares ``src``'s blocks (a reflink): no data is copied."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        try:
            fcntl.ioctl(fout.fileno(), FICLONE, fin.fileno())
        except OSError as exc:
            raise CommandFailed(
                proc.CommandResult(("ioctl", "FICLONE", str(src), str(dst)), 1, "", str(exc), 0)
            ) from None
