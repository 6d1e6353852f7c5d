"""The filesystems pgfsbench can make: every ``RECIPES`` tuple in this package.

A module of this package that declares ``RECIPES`` is a filesystem family; the
registry imports them all on first use, so adding a filesystem is adding its
module. Everything else (plan validation, mkfs, mount, the mount-option check,
geometry, durability, doctor) asks here.
"""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
from collections.abc import Iterator

from pgfsbench.filesystems.recipe import Recipe

_recipes: dict[str, Recipe] = {}
_loaded = False


class UnknownFilesystem(ValueError):
    pass


def _load() -> dict[str, Recipe]:
    global _loaded
    if not _loaded:
        package = importlib.import_module(__package__)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            module = importlib.import_module(f"{__package__}.{info.name}")
            for r in getattr(module, "RECIPES", ()):
                _add(r)
        _loaded = True
    return _recipes


def _add(r: Recipe) -> None:
    if r.fs in _recipes:
        raise ValueError(f"two recipes for filesystem '{r.fs}'")
    _recipes[r.fs] = r


def names() -> list[str]:
    return sorted(_load())


def recipes() -> list[Recipe]:
    return [_load()[fs] for fs in names()]


def find(fs: str | None) -> Recipe | None:
    """The recipe of ``fs``, or None (a directory target may sit on any filesystem)."""
    return _load().get(fs or "")


def recipe(fs: str) -> Recipe:
    """The recipe of ``fs``; an unknown one is an error naming the known ones."""
    found = find(fs)
    if found is None:
        raise UnknownFilesystem(
            f"pgfsbench cannot make filesystem '{fs}' (it makes {', '.join(names())}); to "
            "measure a filesystem made another way (UFS, NFS, a FUSE filesystem), mount it yourself and "
            "use a dir target: dir = \"/path/on/that/filesystem\" instead of fs")
    return found


@contextlib.contextmanager
def registered(r: Recipe) -> Iterator[Recipe]:
    """``r`` is known for the duration (a test's toy filesystem)."""
    _load()
    _add(r)
    try:
        yield r
    finally:
        del _recipes[r.fs]
