"""Path checks shared by stages that hand files to the unprivileged PostgreSQL user, and
where pgfsbench keeps its own files."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def own_dir(env: str, as_root: str, xdg: str, xdg_default: str) -> Path:
    """A directory of pgfsbench's: ``env`` when set (tests use private ones), else the
    machine's ``as_root`` for root, else the user's XDG directory."""
    if os.environ.get(env):
        return Path(os.environ[env])
    if os.geteuid() == 0:
        return Path(as_root)
    return Path(os.environ.get(xdg) or str(Path.home() / xdg_default)) / "pgfsbench"


def searchable_by_others(path: Path) -> bool:
    """Can a user other than the owner reach ``path`` (every directory on the way o+x)?"""
    path = path.resolve()
    return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents] if p.is_dir())


def reachable_by_others(path: Path) -> bool:
    """Can a user other than the owner read the file ``path``?"""
    path = path.resolve()
    return searchable_by_others(path.parent) and bool(path.stat().st_mode & stat.S_IROTH)
