"""One test contract per kind of extension: every entry point of every group (the shipped
ones and any installed package's) loads, fits its kind's contract and declares what the
rest of the tool relies on; the installed metadata is pyproject.toml's; names come
without importing."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from pgfsbench import extensions, releasers
from pgfsbench.filesystems import registry as filesystems
from pgfsbench.filesystems.recipe import Recipe
from pgfsbench.formats import registry as formats
from pgfsbench.ledger import RELEASERS
from pgfsbench.preflight import STAGES, Check
from pgfsbench.preflight import contract as check_contract
from pgfsbench.report import figures
from pgfsbench.workloads import registry as workloads
from pgfsbench.workloads.kind import WorkloadBase

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"

CONTRACTS = {
    extensions.WORKLOADS: workloads.contract,
    extensions.FILESYSTEMS: filesystems.contract,
    extensions.FORMATS: formats.contract,
    extensions.CHARTS: figures.contract,
    extensions.RELEASERS: releasers.contract,
    extensions.CHECKS: check_contract,
}


def _workload(name: str, kind) -> None:
    assert issubclass(kind.params, WorkloadBase) and kind.params.__doc__
    assert list(inspect.signature(kind.run).parameters) == ["ctx", "params"]
    params = workloads.params(name, {})  # every parameter has a default
    assert kind.seconds(params) > 0
    assert isinstance(kind.disk_bytes(params, 0), int) and kind.disk_bytes(params, 0) >= 0
    assert isinstance(kind.headline, str) or callable(kind.headline)
    assert kind.needs is None or workloads.find(kind.needs) is not None
    assert kind.loads_tables is None or kind.loads_tables(params) > 0
    assert isinstance(kind.writes_wal, bool)
    assert kind.logical_bytes is None or callable(kind.logical_bytes)
    assert isinstance(kind.order, int)


def _filesystem(name: str, family: tuple[Recipe, ...]) -> None:
    for r in family:
        assert r.fs and r.mkfs_tool and r.min_size_mb > 0
        assert filesystems.recipe(r.fs) is r  # one recipe per filesystem, reachable


def _format(name: str, fmt: formats.OutputFormat) -> None:
    kind = name.partition(".")[0]
    assert fmt.extension and "/" in fmt.media_type
    # (subject, out), then options the format declares, each a keyword that defaults to off
    subject, out, *options = inspect.signature(fmt.writers[kind]).parameters.values()
    for option in options:
        assert option.name in fmt.options and option.default is False, (name, option)
    assert formats.pick(fmt.name, kind) is fmt


def _charts(name: str, specs: list[figures.FigureSpec]) -> None:
    for spec in specs:
        assert spec.id.endswith("-chart") and spec.title and callable(spec.render)
    every = [s.id for s in figures.all_figures()]
    assert len(every) == len(set(every))  # no two charts with one HTML id


def _releaser(name: str, undo) -> None:
    required = [
        p
        for p in inspect.signature(undo).parameters.values()
        if p.default is inspect.Parameter.empty
    ]
    assert len(required) == 1  # (the recorded resource)
    assert RELEASERS[name] is undo


def _check(name: str, check: Check) -> None:
    assert check.stages and set(check.stages) <= set(STAGES)
    assert list(inspect.signature(check.check).parameters) == ["plan", "context"]


DEEP = {
    extensions.WORKLOADS: _workload,
    extensions.FILESYSTEMS: _filesystem,
    extensions.FORMATS: _format,
    extensions.CHARTS: _charts,
    extensions.RELEASERS: _releaser,
    extensions.CHECKS: _check,
}
ENTRIES = [(group, name) for group in extensions.GROUPS for name in extensions.names(group)]


@pytest.mark.parametrize("group,name", ENTRIES, ids=[f"{g}:{n}" for g, n in ENTRIES])
def test_every_entry_fits_its_kind(group: str, name: str) -> None:
    obj = extensions.load(group, name, CONTRACTS[group])  # ExtensionError when it does not
    assert CONTRACTS[group](name, obj) is None
    DEEP[group](name, obj)


def test_every_group_has_a_contract() -> None:
    assert set(CONTRACTS) == set(DEEP) == set(extensions.GROUPS)


def test_the_installed_metadata_is_pyprojects() -> None:
    """Entry points changed in pyproject.toml need the install refreshed (pip install -e
    '.[test]' --no-deps): otherwise the tool would run with yesterday's extensions."""
    declared = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    installed = metadata.distribution("pgfsbench").entry_points
    for group in extensions.GROUPS:
        assert {ep.name: ep.value for ep in installed.select(group=group)} == declared[group], (
            f"{group}: refresh the install (pip install -e '.[test]' --no-deps)"
        )


def test_a_misfit_is_refused_naming_the_entry() -> None:
    assert "not a WorkloadKind" in workloads.contract("x", object())
    assert "type 'fsync'" in workloads.contract("x", workloads.kind("fsync"))
    assert "not a tuple of Recipes" in filesystems.contract("x", "ext4")
    assert "has no advice writer" in formats.contract(
        "advice.markdown", formats.pick("markdown", "export")
    )
    assert "KIND.FORMAT" in formats.contract("markdown", formats.pick("markdown", "export"))
    assert "not registered with @releaser" in releasers.contract("mount", print)
    assert "named 'sizes'" in check_contract(
        "x", extensions.load(extensions.CHECKS, "sizes", check_contract)
    )


LAZY = """
import json, sys
from pgfsbench import extensions
from pgfsbench.workloads import registry
names = extensions.names(extensions.WORKLOADS)
before = sorted(m for m in sys.modules if m.startswith("pgfsbench.workloads."))
registry.kind("fsync")
after = sorted(m for m in sys.modules if m.startswith("pgfsbench.workloads."))
print(json.dumps([names, before, after]))
"""


def test_names_come_without_importing_and_a_kind_alone() -> None:
    out = subprocess.run(
        [sys.executable, "-c", LAZY], capture_output=True, text=True, check=True
    ).stdout
    names, before, after = json.loads(out)
    assert "fsync" in names and "pgbench" in names
    assert "pgfsbench.workloads.pgbench_tpcb" not in before
    assert "pgfsbench.workloads.fsync" in after
    assert "pgfsbench.workloads.pgbench_tpcb" not in after  # only the kind asked for


HELP = """
import sys
from pgfsbench.formats import registry as formats
for kind in formats.KINDS:
    formats.help_names(kind)
print(sorted(m for m in ("numpy", "scipy", "pgfsbench.analysis.advice.advise") if m in sys.modules))
"""


def test_the_formats_load_light_for_the_help() -> None:
    """The CLI lists every kind's formats in its help on each start: their modules import
    no analysis (the writers do, when they write)."""
    out = subprocess.run(
        [sys.executable, "-c", HELP], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
