"""Directory targets: an existing mounted filesystem, never wiped.

pgfsbench only creates, and at the end removes, its own sub-directory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.paths import searchable_by_others
from pgfsbench.provision.mountinfo import mount_of
from pgfsbench.provision.target import PreparedTarget
from pgfsbench.scratch import private_dir


@contextlib.contextmanager
def directory_target(
    name: str, parent: Path, ledger: Ledger, owner: proc.RunAs
) -> Iterator[PreparedTarget]:
    if not parent.is_dir():
        raise UserError(f"target '{name}': directory {parent} does not exist")
    if os.geteuid() == 0 and owner.uid != 0 and not searchable_by_others(parent):
        raise UserError(
            f"target '{name}': the PostgreSQL user '{owner.name}' cannot reach "
            f"{parent} (a directory on the way is not o+x); choose a directory "
            "other users can traverse, e.g. under /srv or /var/tmp"
        )
    with private_dir(ledger, f"pgfsbench-{name}-", parent, owner) as workdir:
        mount = mount_of(workdir)
        yield PreparedTarget(
            name=name,
            kind="dir",
            fs=mount.fs_type,
            workdir=workdir,
            device=mount.source,
            mount=mount,
        )
