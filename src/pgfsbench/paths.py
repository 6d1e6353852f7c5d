"""Path checks shared by stages that hand files to the unprivileged PostgreSQL user."""

from __future__ import annotations

import stat
from pathlib import Path


def searchable_by_others(path: Path) -> bool:
    """Can a user other than the owner reach ``path`` (every directory on the way o+x)?"""
    path = path.resolve()
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents] if p.is_dir())


def reachable_by_others(path: Path) -> bool:
    """Can a user other than the owner read the file ``path``?"""
    path = path.resolve()
    return searchable_by_others(path.parent) and bool(path.stat().st_mode & stat.S_IROTH)
