"""The bcachefs recipe docs/developing.md walks through is a real package
(tests/plugins/pgfsbench_bcachefs): installed, it passes the contract pgfsbench ships
for plugins, a plan may make bcachefs targets, its mount options are checked like any
filesystem's, and its durability notes reach the crash-safety verdict."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench import contract, extensions
from pgfsbench.analysis.caveats.durability import classify
from pgfsbench.cli import app
from pgfsbench.filesystems import registry as filesystems
from tests.unit.plan_check import plan_check_json
from tests.unit.plugins import installed

PLUGIN = Path(__file__).parents[1] / "plugins" / "pgfsbench_bcachefs"


def _plan(mount: str) -> str:
    return (
        'name = "bcachefs-trial"\n'
        '[[targets]]\nname = "ext4"\nfs = "ext4"\nsize = "1G"\n'
        f'[[targets]]\nname = "bcachefs"\nfs = "bcachefs"\nsize = "1G"\nmount = "{mount}"\n'
        '[[workloads]]\ntype = "fsync"\n'
    )


@pytest.fixture
def bcachefs(tmp_path: Path) -> Iterator[None]:
    with installed(PLUGIN, tmp_path / "site"):
        yield


def test_the_package_passes_the_contract_pgfsbench_ships(bcachefs) -> None:
    assert contract.entries("pgfsbench-bcachefs") == [(extensions.FILESYSTEMS, "bcachefs")]
    contract.check(extensions.FILESYSTEMS, "bcachefs")
    assert filesystems.recipe("bcachefs").untested


def test_a_plan_may_make_bcachefs_targets(bcachefs, tmp_path: Path) -> None:
    info = plan_check_json(tmp_path, _plan("noatime,compression=lz4"))
    assert [t["fs"] for t in info["targets"]] == ["ext4", "bcachefs"]


def test_its_mount_options_are_checked(bcachefs, tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text(_plan("noatime,nodatacow"))  # btrfs's, not bcachefs's
    result = CliRunner().invoke(app, ["plan", "check", str(path)])
    assert result.exit_code == 2, result.output
    assert "nodatacow" in result.output


def test_its_durability_notes_reach_the_verdict(bcachefs) -> None:
    noted = classify("bcachefs", ["rw", "journal_flush_disabled"], {})
    assert any("journal_flush_disabled" in r for r in noted.reasons), noted.reasons
    assert not any("journal" in r for r in classify("bcachefs", ["rw"], {}).reasons)


def test_uninstalled_a_plan_cannot_name_it(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text(_plan("noatime"))
    result = CliRunner().invoke(app, ["plan", "check", str(path)])
    assert result.exit_code == 2 and "bcachefs" in result.output, result.output
