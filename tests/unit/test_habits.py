"""The project's habits that a file can show: one version, a licence, ranged dependencies
with the tested versions pinned apart, a tag per released version (CONTRIBUTING.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import pgfsbench

ROOT = Path(__file__).parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
RELEASED = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d\d-\d\d$", re.M)


def requirements() -> list[Requirement]:
    project = PYPROJECT["project"]
    found = [Requirement(r) for r in project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        found += [Requirement(r) for r in extra]
    return found


def constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name, sep, pinned = line.partition("==")
        assert sep and pinned, f"constraints.txt: {line!r} is not NAME==VERSION"
        assert canonicalize_name(name) not in pins, f"constraints.txt: {name} twice"
        pins[canonicalize_name(name)] = pinned
    return pins


def test_the_version_is_written_once() -> None:
    """pyproject.toml reads pgfsbench.__version__; the installed metadata says the same
    (if not: pip install -e . --no-deps), and so does the CHANGELOG's newest release."""
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "pgfsbench.__version__"
    }
    assert version("pgfsbench") == pgfsbench.__version__
    released = RELEASED.findall((ROOT / "CHANGELOG.md").read_text())
    assert released[0] == pgfsbench.__version__, released


def test_a_licence_is_declared_and_shipped() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("PostgreSQL License")
    assert PYPROJECT["project"]["license"] == "PostgreSQL"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]


def test_dependencies_are_ranges_and_constraints_pin_a_version_in_each() -> None:
    """A plugin installs beside pgfsbench: its dependencies say what works (a lower and
    an upper bound, never one version); constraints.txt pins what make setup and CI
    install, each inside its range."""
    pins = constraints()
    for req in requirements():
        operators = {s.operator for s in req.specifier}
        assert "==" not in operators and "===" not in operators, f"{req}: a range, not a pin"
        assert operators & {">=", ">"} and operators & {"<", "<="}, f"{req}: both bounds"
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} has no pin in constraints.txt"
        assert req.specifier.contains(pins[name]), f"constraints.txt's {name} {pins[name]}: {req}"
    assert "pgfsbench" not in pins  # the package itself is installed from the tree


def test_every_release_since_the_first_tagged_has_its_tag() -> None:
    """The CHANGELOG's released versions from 0.2.0 on each have a tag vX.Y.Z (versions
    before were not tagged, as it says)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tags = subprocess.run(
        ["git", "tag", "--list", "v*"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    released = RELEASED.findall((ROOT / "CHANGELOG.md").read_text())
    wanted = [v for v in released if tuple(map(int, v.split("."))) >= (0, 2, 0)]
    assert wanted
    assert [v for v in wanted if f"v{v}" not in tags] == [], tags
