"""The filesystems pgfsbench can make: the recipes of the ``pgfsbench.filesystems`` group.

Each entry point of the group (extensions.py) names a filesystem family's ``RECIPES``
tuple: the shipped families are declared in pyproject.toml, a third party's in its own
package; the registry loads them on first use, so adding a filesystem is adding its
module and its entry point. Everything else (plan validation, mkfs, mount, the
mount-option check, geometry, durability, doctor) asks here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from pgfsbench import extensions
from pgfsbench.filesystems.recipe import Recipe

_recipes: dict[str, Recipe] = {}
_loaded = False


class UnknownFilesystem(ValueError):
    pass


def contract(name: str, obj: object) -> str | None:
    """What an entry of the group must name: a tuple of Recipes (a family)."""
    if not isinstance(obj, (tuple, list)) or not obj:
        return f"not a tuple of Recipes but {type(obj).__name__}"
    if wrong := [type(r).__name__ for r in obj if not isinstance(r, Recipe)]:
        return f"holds {', '.join(wrong)}, not Recipes"
    return None


def _load() -> dict[str, Recipe]:
    global _loaded
    if not _loaded:
        for family in extensions.load_all(extensions.FILESYSTEMS, contract).values():
            for r in family:
                _add(r)
        _loaded = True
    return _recipes


def _forget() -> None:
    global _loaded
    _recipes.clear()
    _loaded = False


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
            'use a dir target: dir = "/path/on/that/filesystem" instead of fs'
        )
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


extensions.on_refresh(_forget)  # a package put on sys.path by a test
