"""A third party's package (tests/plugins/pgfsbench_toy: a workload kind, a filesystem
recipe and an output format, named by its own pyproject.toml's entry points) is found
through the same mechanism as the shipped extensions, once installed, and gone once not.

Installing is what pip would leave on sys.path: the package's modules and a
``.dist-info`` holding its ``entry_points.txt`` (importlib.metadata reads every
distribution on sys.path), written here from that pyproject.toml.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench import extensions
from pgfsbench.cli import app
from pgfsbench.filesystems import registry as filesystems
from pgfsbench.formats import registry as formats
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.workloads import registry as workloads
from tests.unit.plan_check import plan_check_json

PLUGIN = Path(__file__).parents[1] / "plugins" / "pgfsbench_toy"

TOY_PLAN = (
    'name = "toy"\n[[targets]]\nname = "a"\nfs = "toyfs"\nsize = "64M"\n'
    '[[workloads]]\ntype = "toy"\npasses = 2\n'
)


def _dist_info(where: Path) -> None:
    """The package's installed metadata, as pip would write it."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    info = where / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, entries in project["entry-points"].items():
        lines += [f"[{group}]", *(f"{name} = {value}" for name, value in entries.items()), ""]
    (info / "entry_points.txt").write_text("\n".join(lines))


@contextlib.contextmanager
def installed(where: Path) -> Iterator[None]:
    _dist_info(where)
    saved = list(sys.path)
    sys.path[:0] = [str(where), str(PLUGIN)]
    extensions.refresh()
    try:
        yield
    finally:
        sys.path[:] = saved
        for name in [m for m in sys.modules if m.split(".")[0] == "pgfsbench_toy"]:
            del sys.modules[name]
        extensions.refresh()


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[None]:
    with installed(tmp_path / "site"):
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


def test_export_writes_the_toy_format(toy, tmp_path: Path) -> None:
    results = tmp_path / "r"
    store = Store.create(results)
    store.start_campaign("c-9", "toy", {"name": "toy"}, {}, "0.1.0")
    for pos, name in enumerate(("ext4", "toyfs")):
        tid = store.add_target(name, pos, "loop", name, {})
        store.set_target(tid, "ok", provenance={})
        run = store.start_run(tid, "toy", {"passes": 2})
        store.add_result(
            run, tid, WorkloadResult([Metric("toy.mb_per_s", 40.0 + pos, "MB/s", True)])
        )
        store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    result = CliRunner().invoke(app, ["export", str(results), "--format", "toy"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "toy export of c-9: ext4=40, toyfs=41\n"
    help_text = " ".join(CliRunner().invoke(app, ["export", "--help"]).stdout.split())
    assert "output format: markdown, json, csv, toy" in help_text


def test_uninstalled_the_toy_is_gone(tmp_path: Path) -> None:
    with installed(tmp_path / "site"):
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
