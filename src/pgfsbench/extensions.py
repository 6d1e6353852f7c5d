"""The one way pgfsbench is extended: Python entry points.

Every kind of extension is a group of entry points (``importlib.metadata``): workload
kinds, filesystem recipes, output formats, report charts, ledger releasers and preflight
checks. pgfsbench declares its own in pyproject.toml (``[project.entry-points."pgfsbench.
workloads"]`` ...); a third party declares theirs the same way in its own package, and
installing it is all it takes. Each kind's registry loads its group here with the kind's
contract (a function that returns what is wrong with a loaded object, or None).

Lazy: the names come from the installed metadata without importing anything; a module is
imported when one of its entries is loaded, once per process.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib import metadata
from typing import Any

from pgfsbench.errors import UserError

WORKLOADS = "pgfsbench.workloads"
FILESYSTEMS = "pgfsbench.filesystems"
FORMATS = "pgfsbench.formats"
CHARTS = "pgfsbench.charts"
RELEASERS = "pgfsbench.releasers"
CHECKS = "pgfsbench.checks"
GROUPS = (WORKLOADS, FILESYSTEMS, FORMATS, CHARTS, RELEASERS, CHECKS)

# What a loaded entry must be: None when it fits, else what is wrong with it.
Contract = Callable[[str, Any], "str | None"]


class ExtensionError(UserError):
    """An installed extension that does not fit its kind (exit 2, naming the package)."""


_entries: dict[str, dict[str, metadata.EntryPoint]] | None = None
_loaded: dict[tuple[str, str], Any] = {}
_on_refresh: list[Callable[[], None]] = []


def _all() -> dict[str, dict[str, metadata.EntryPoint]]:
    global _entries
    if _entries is None:
        found: dict[str, dict[str, metadata.EntryPoint]] = {g: {} for g in GROUPS}
        installed = metadata.entry_points()  # one scan of the installed metadata
        for ep in (ep for group in GROUPS for ep in installed.select(group=group)):
            if ep.name in found[ep.group] and found[ep.group][ep.name].value != ep.value:
                raise ExtensionError(
                    f"two installed packages declare {ep.group} '{ep.name}' "
                    f"({_dist(found[ep.group][ep.name])} and {_dist(ep)}): uninstall one"
                )
            found[ep.group][ep.name] = ep
        if not found[WORKLOADS]:
            raise ExtensionError(
                "pgfsbench's installed metadata declares no workloads: the install is stale "
                "or broken; reinstall it (pip install -e . in a checkout)"
            )
        _entries = found
    return _entries


def _dist(ep: metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "an unknown package"


def names(group: str) -> list[str]:
    """The names declared in ``group``, sorted, without importing anything."""
    return sorted(_all()[group])


def load(group: str, name: str, contract: Contract) -> Any:
    """The object entry ``name`` of ``group`` names, checked by ``contract``; KeyError
    when no installed package declares it."""
    key = (group, name)
    if key not in _loaded:
        ep = _all()[group][name]
        try:
            obj = ep.load()
        except Exception as exc:  # a broken third-party package: say which
            raise ExtensionError(
                f"{group} '{name}' of package {_dist(ep)} ({ep.value}) "
                f"cannot be loaded: {type(exc).__name__}: {exc}"
            ) from exc
        if problem := contract(name, obj):
            raise ExtensionError(f"{group} '{name}' of package {_dist(ep)} ({ep.value}): {problem}")
        _loaded[key] = obj
    return _loaded[key]


def load_all(group: str, contract: Contract) -> dict[str, Any]:
    """Every entry of ``group``, by name (sorted), checked by ``contract``."""
    return {name: load(group, name, contract) for name in names(group)}


def on_refresh(callback: Callable[[], None]) -> None:
    """Call ``callback`` after ``refresh`` (a registry that caches what it built)."""
    _on_refresh.append(callback)


def refresh() -> None:
    """Read the installed metadata again (a test that puts a package on sys.path)."""
    global _entries
    _entries = None
    _loaded.clear()
    importlib.invalidate_caches()  # sys.path's metadata read again
    for callback in _on_refresh:
        callback()
