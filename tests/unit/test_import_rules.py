"""The import rules hold: the contracts in pyproject.toml's ``[tool.importlinter]`` (the
package layering, the read side loading nothing that provisions, runs or schedules and
naming no workload module, report and export apart), checked by import-linter on the
package's import graph. A back-import added to a copy of the package breaks them, so a
contract that no longer checks anything cannot pass unnoticed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pgfsbench

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(pgfsbench.__file__).parent
LINT = Path(sys.executable).with_name("lint-imports")


def lint(package_parent: Path | None = None) -> subprocess.CompletedProcess:
    """lint-imports with the project's contracts, on the installed package or on the
    copy under ``package_parent``."""
    env = dict(os.environ)
    if package_parent is not None:
        env["PYTHONPATH"] = str(package_parent)
    return subprocess.run(
        [str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_import_contracts_are_kept() -> None:
    result = lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


# (module, the back-import added to it, the chain import-linter must report)
BACK_IMPORTS = [
    # The read side reaching for a runner's constant, as report/chart_timeline.py once did.
    (
        "report/chart_timeline.py",
        "from pgfsbench.workloads.seqwrite import FILE_NAME",
        "pgfsbench.report.chart_timeline -> pgfsbench.workloads.seqwrite",
    ),
    # The one extension mechanism naming a kind's registry instead of loading entry points.
    (
        "extensions.py",
        "from pgfsbench.workloads import registry",
        "pgfsbench.extensions -> pgfsbench.workloads.registry",
    ),
    # The releasers of every kind importing one kind's module instead of its entry point.
    (
        "releasers.py",
        "from pgfsbench.provision import mounting",
        "pgfsbench.releasers -> pgfsbench.provision.mounting",
    ),
]


def test_a_back_import_breaks_them(tmp_path: Path) -> None:
    copy = tmp_path / "pgfsbench"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.js"))
    for module, line, _ in BACK_IMPORTS:
        path = copy / module
        path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    result = lint(tmp_path)
    assert result.returncode != 0, result.stdout
    for _, _, chain in BACK_IMPORTS:
        assert chain in result.stdout, (chain, result.stdout)
