"""The contract every extension fits, as tests check it: pgfsbench's own, and a plugin's.

Every entry point of the six groups (``extensions.GROUPS``) must load, be what its group
names (a ``WorkloadKind``, a tuple of ``Recipe``, an ``OutputFormat`` ...) and declare
what the rest of pgfsbench relies on: a workload kind's parameters all have defaults,
its estimate is positive, its headline has a human name; a format's writer takes
``(subject, out)`` and its options as keywords; and so on. A plugin runs the same checks
on itself, once installed (``pip install -e .``), in its own test suite::

    import pytest
    from pgfsbench import contract

    @pytest.mark.parametrize("group,name", contract.entries("pgfsbench-sleep"))
    def test_my_extension_fits(group, name):
        contract.check(group, name)

pgfsbench's tests/unit/test_extensions.py does it for every installed entry.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from importlib import metadata
from typing import Any

from pgfsbench import extensions, releasers
from pgfsbench.filesystems import registry as filesystems
from pgfsbench.filesystems.recipe import Recipe
from pgfsbench.formats import registry as formats
from pgfsbench.ledger import RELEASERS
from pgfsbench.preflight import STAGES, Check
from pgfsbench.preflight import contract as check_contract
from pgfsbench.report import figures
from pgfsbench.workloads import registry as workloads
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

# Each group's first check: is the loaded object what the group names (its registry's).
LOADS: dict[str, extensions.Contract] = {
    extensions.WORKLOADS: workloads.contract,
    extensions.FILESYSTEMS: filesystems.contract,
    extensions.FORMATS: formats.contract,
    extensions.CHARTS: figures.contract,
    extensions.RELEASERS: releasers.contract,
    extensions.CHECKS: check_contract,
}


def entries(distribution: str | None = None) -> list[tuple[str, str]]:
    """(group, name) of every entry point ``distribution`` declares in pgfsbench's
    groups (a package's name, as pip knows it); every installed one's when None."""
    if distribution is None:
        return [(group, name) for group in extensions.GROUPS for name in extensions.names(group)]
    declared = metadata.distribution(distribution).entry_points
    return sorted((ep.group, ep.name) for ep in declared if ep.group in extensions.GROUPS)


def problems(group: str, name: str) -> list[str]:
    """What is wrong with entry ``name`` of ``group``: [] when it fits its contract."""
    try:
        obj = extensions.load(group, name, LOADS[group])
    except extensions.ExtensionError as exc:
        return [str(exc)]
    return [f"{group} '{name}': {p}" for p in DEEP[group](name, obj)]


def check(group: str, name: str) -> None:
    """Fail (AssertionError, for a test) with every problem of the entry."""
    found = problems(group, name)
    if found:
        raise AssertionError("\n".join(found))


def _workload(name: str, kind: WorkloadKind) -> list[str]:
    out = []
    if not kind.params.__doc__:
        out.append("its params model has no docstring (plan check and the schema show it)")
    if list(inspect.signature(kind.run).parameters) != ["ctx", "params"]:
        out.append("run takes (ctx, params)")
    try:
        params: WorkloadBase = workloads.params(name, {})
    except Exception as exc:  # a parameter without a default: a plan may give just the type
        return [*out, f"its params need a value a plan may leave out: {exc}"]
    if not kind.seconds(params) > 0:
        out.append("seconds(params) is not positive: plan check's estimate")
    disk = kind.disk_bytes(params, 0)
    if not isinstance(disk, int) or disk < 0:
        out.append("disk_bytes(params, 0) is not a non-negative int")
    if kind.needs is not None and workloads.find(kind.needs) is None:
        out.append(f"needs '{kind.needs}', which no installed package declares")
    if kind.loads_tables is not None and not kind.loads_tables(params) > 0:
        out.append("loads_tables(params) is not positive")
    if not isinstance(kind.writes_wal, bool) or not isinstance(kind.order, int):
        out.append("writes_wal is a bool and order an int")
    for key, label in kind.labels.items():
        keys = set(re.findall(r"\{(\w+)\}", key))
        if not label or not set(re.findall(r"\{(\w+)\}", label)) <= keys:
            out.append(f"labels['{key}'] names a placeholder the metric does not have")
    headline = kind.headline if isinstance(kind.headline, str) else kind.headline(params, [])
    if headline is not None and kind.label(headline) is None:
        out.append(f"its headline '{headline}' has no human name in labels")
    return out


def _filesystem(name: str, family: tuple[Recipe, ...]) -> list[str]:
    out = []
    for r in family:
        if not (r.fs and r.mkfs_tool and r.min_size_mb > 0):
            out.append(f"recipe '{r.fs}' needs fs, mkfs_tool and a positive min_size_mb")
        if filesystems.find(r.fs) is not r:
            out.append(f"recipe '{r.fs}' is not the one the registry finds for its fs")
    return out


def _format(name: str, fmt: formats.OutputFormat) -> list[str]:
    out = []
    kind = name.partition(".")[0]
    if not fmt.extension or "/" not in fmt.media_type:
        out.append("an extension and a media type (type/subtype)")
    subject, stream, *options = inspect.signature(fmt.writers[kind]).parameters.values()
    for option in options:
        if option.name not in fmt.options or option.default is not False:
            out.append(f"the {kind} writer's option '{option.name}' is declared and off by default")
    if formats.pick(fmt.name, kind) is not fmt:
        out.append(f"--format {fmt.name} picks another format for {kind}")
    return out


def _charts(name: str, specs: list[figures.FigureSpec]) -> list[str]:
    out = [
        f"chart '{spec.id}' needs an id ending in -chart, a title and a render function"
        for spec in specs
        if not (spec.id.endswith("-chart") and spec.title and callable(spec.render))
    ]
    every = [s.id for s in figures.all_figures()]
    out += [f"two charts are '{i}'" for i in sorted({i for i in every if every.count(i) > 1})]
    return out


def _releaser(name: str, undo: Callable) -> list[str]:
    required = [
        p
        for p in inspect.signature(undo).parameters.values()
        if p.default is inspect.Parameter.empty
    ]
    out = []
    if len(required) != 1:
        out.append("a releaser takes one argument, the recorded resource")
    if RELEASERS.get(name) is not undo:
        out.append(f"not the function @releaser({name!r}) registered")
    return out


def _check(name: str, check: Check) -> list[str]:
    out = []
    if not check.stages or not set(check.stages) <= set(STAGES):
        out.append(f"its stages are some of {', '.join(STAGES)}")
    if list(inspect.signature(check.check).parameters) != ["plan", "context"]:
        out.append("check takes (plan, context)")
    return out


DEEP: dict[str, Callable[[str, Any], list[str]]] = {
    extensions.WORKLOADS: _workload,
    extensions.FILESYSTEMS: _filesystem,
    extensions.FORMATS: _format,
    extensions.CHARTS: _charts,
    extensions.RELEASERS: _releaser,
    extensions.CHECKS: _check,
}
