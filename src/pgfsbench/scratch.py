"""Private directories pgfsbench makes for a while: in the ledger while they exist.

A directory target's work directory, PostgreSQL's socket directory and a
workload's tool logs are all made, handed to the PostgreSQL user and removed
the same way; ``pgfsbench cleanup`` removes what a killed run left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.ledger import Ledger, releaser


@contextlib.contextmanager
def private_dir(
    ledger: Ledger, prefix: str, parent: str | Path, owner: proc.RunAs
) -> Iterator[Path]:
    """A new directory in ``parent`` that only ``owner`` may enter (handed over when we
    are root), removed after the block."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    res = ledger.add("dir", path=str(path))
    try:
        os.chmod(path, 0o700)
        if os.geteuid() == 0:
            os.chown(path, owner.uid, owner.gid)
        yield path
    finally:
        ledger.release(res)


@releaser("dir")
def remove_dir(res: dict) -> list[str]:
    shutil.rmtree(res["path"], ignore_errors=True)
    if os.path.exists(res["path"]):
        return [f"could not remove {res['path']}"]
    return []
