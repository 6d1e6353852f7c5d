"""A third party's package (tests/plugins/pgfsbench_toy: a workload kind, a filesystem
recipe and an output format, named by its own pyproject.toml's entry points) is found
through the same mechanism as the shipped extensions, once installed, and gone once not.

Installing is what pip would leave on sys.path (tests/unit/plugins.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench import contract, extensions
from pgfsbench.cli import app
from pgfsbench.filesystems import registry as filesystems
from pgfsbench.formats import registry as formats
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.workloads import registry as workloads
from tests.unit.plan_check import plan_check_json
from tests.unit.plugins import installed

PLUGIN = Path(__file__).parents[1] / "plugins" / "pgfsbench_toy"

TOY_PLAN = (
    'name = "toy"\n[[targets]]\nname = "a"\nfs = "toyfs"\nsize = "64M"\n'
    '[[workloads]]\ntype = "toy"\npasses = 2\n'
)


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[None]:
    with installed(PLUGIN, tmp_path / "site"):
        yield


def test_the_toy_is_found_through_the_entry_points(toy) -> None:
    assert "toy" in extensions.names(extensions.WORKLOADS)
    assert "toyfs" in extensions.names(extensions.FILESYSTEMS)
    assert "export.toy" in extensions.names(extensions.FORMATS)
    assert workloads.kind("toy").params.__module__ == "pgfsbench_toy.workload"
    assert workloads.kinds()[-1].type == "toy"  # after the shipped kinds
    assert filesystems.recipe("toyfs").mkfs_tool == "mkfs.toy"


def test_plan_check_accepts_the_toy_workload_and_filesystem(toy, tmp_path: Path) -> None:
    info = plan_check_json(tmp_path, TOY_PLAN)
    [run] = info["runs_per_target"]
    assert run["workload"] == "toy" and run["estimated_seconds"] == 14.0
    assert info["targets"][0]["fs"] == "toyfs"


def _toy_campaign(results: Path, rounds: int = 1) -> Path:
    """A stored campaign of the toy workload on two targets, ``rounds`` runs each."""
    store = Store.create(results)
    store.start_campaign("c-9", "toy", {"name": "toy"}, {}, "0.1.0")
    for pos, name in enumerate(("ext4", "toyfs")):
        tid = store.add_target(name, pos, "loop", name, {})
        store.set_target(tid, "ok", provenance={})
        for r in range(rounds):
            run = store.start_run(tid, "toy", {"passes": 2}, repetition=r + 1)
            value = 40.0 + pos + (0.1 * r if name == "ext4" else 0.5 * (r % 3))
            store.add_result(
                run, tid, WorkloadResult([Metric("toy.mb_per_s", value, "MB/s", True)])
            )
            store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return results


def test_export_writes_the_toy_format(toy, tmp_path: Path) -> None:
    results = _toy_campaign(tmp_path / "r")
    result = CliRunner().invoke(app, ["export", str(results), "--format", "toy"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "toy export of c-9: ext4=40, toyfs=41\n"
    help_text = " ".join(CliRunner().invoke(app, ["export", "--help"]).stdout.split())
    assert "output format: markdown, json, csv, toy" in help_text


def test_the_toy_passes_the_contract_pgfsbench_ships(toy) -> None:
    """What a plugin's own tests run (pgfsbench/contract.py), here on the toy's entries."""
    entries = contract.entries("pgfsbench-toy")
    assert {group for group, _ in entries} == {
        extensions.WORKLOADS,
        extensions.FILESYSTEMS,
        extensions.FORMATS,
    }
    for group, name in entries:
        contract.check(group, name)


def test_the_answer_names_the_toys_headline_as_the_toy_declares_it(toy, tmp_path: Path) -> None:
    results = _toy_campaign(tmp_path / "r", rounds=3)
    shown = CliRunner().invoke(app, ["show", str(results)])
    assert shown.exit_code == 0, shown.output
    assert "toy write MB/s" in shown.stdout
    assert "toy write MB/s" in (
        CliRunner().invoke(app, ["export", str(results), "--format", "markdown"]).stdout
    )


def test_uninstalled_the_toy_is_gone(tmp_path: Path) -> None:
    with installed(PLUGIN, tmp_path / "site"):
        assert filesystems.find("toyfs") is not None
    assert workloads.find("toy") is None and filesystems.find("toyfs") is None
    assert "toy" not in formats.names(formats.EXPORT)
    assert workloads.kinds()[-1].type == "io-depth"


def test_a_broken_extension_is_one_error_naming_its_package(tmp_path: Path) -> None:
    """An installed package whose entry names nothing loadable: exit 2, one line naming
    the package and the entry (the CLI meets it building its --format help)."""
    site = tmp_path / "site"
    info = site / "pgfsbench_broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pgfsbench-broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[pgfsbench.formats]\nexport.broken = pgfsbench_nowhere:FORMAT\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run(
        [sys.executable, "-m", "pgfsbench", "export", "--help"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 2, result.stderr
    assert "pgfsbench.formats 'export.broken' of package pgfsbench-broken" in result.stderr
    assert "Traceback" not in result.stderr
