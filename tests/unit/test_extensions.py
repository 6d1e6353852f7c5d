"""One test contract per kind of extension: every entry point of every group (the shipped
ones and any installed package's) loads, fits its kind's contract and declares what the
rest of the tool relies on; the installed metadata is pyproject.toml's; names come
without importing."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from pgfsbench import contract, extensions, releasers
from pgfsbench.filesystems import registry as filesystems
from pgfsbench.formats import registry as formats
from pgfsbench.preflight import contract as check_contract
from pgfsbench.workloads import registry as workloads

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"
ENTRIES = contract.entries()


@pytest.mark.parametrize("group,name", ENTRIES, ids=[f"{g}:{n}" for g, n in ENTRIES])
def test_every_entry_fits_its_kind(group: str, name: str) -> None:
    """pgfsbench/contract.py: what a plugin's tests run on its own entries."""
    contract.check(group, name)


def test_every_group_has_a_contract() -> None:
    assert set(contract.LOADS) == set(contract.DEEP) == set(extensions.GROUPS)


def test_the_contract_finds_what_a_misfit_lacks() -> None:
    """The deep checks fail on a kind that lacks what they ask (so a test of them can)."""
    fsync = workloads.kind("fsync")
    unnamed = dataclasses.replace(fsync, labels={})
    assert contract.DEEP[extensions.WORKLOADS]("fsync", unnamed) == [
        "its headline 'fsync.fdatasync_8k.ops_per_s' has no human name in labels"
    ]
    wrong = dataclasses.replace(fsync, labels={"fsync.x": "{method} ops"}, seconds=lambda p: 0)
    found = contract.DEEP[extensions.WORKLOADS]("fsync", wrong)
    assert "seconds(params) is not positive: plan check's estimate" in found
    assert "labels['fsync.x'] names a placeholder the metric does not have" in found
    shipped = contract.entries("pgfsbench")
    assert shipped and set(shipped) <= set(ENTRIES)


def test_every_shipped_kind_names_its_metrics_as_the_answer_did() -> None:
    """The human names the answer's sentences use, now each kind's own declaration."""
    from pgfsbench.analysis.headline import metric_label

    assert metric_label("pgbench.tps", "pgbench") == "TPC-B tps"
    assert metric_label("fsync.open_datasync_8k.ops_per_s") == "pg_test_fsync open_datasync ops/s"
    assert (
        metric_label("fsync.fdatasync_2x8k.ops_per_s", "fsync")
        == "pg_test_fsync fdatasync ops/s, two 8 kB writes"
    )
    assert metric_label("iodepth.qd32.iops", "io-depth") == "IOPS at queue depth 32"
    assert metric_label("fileio.randread-4k.mb_per_s") == "fio randread-4k MB/s"
    assert metric_label("pgbench.tps", "fsync") == "pgbench.tps"  # another kind's metric
    assert metric_label("nobody.knows", "no-such-kind") == "nobody.knows"


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
