"""The import rules hold: the contracts in pyproject.toml's ``[tool.importlinter]`` (the
package layering, analysis/ by concept, the read side loading nothing that provisions,
runs or schedules and naming no workload module, report and formats apart), checked by
import-linter on the package's import graph. A back-import added to a copy of the package
breaks them, so a contract that no longer checks anything cannot pass unnoticed; and every
module sits in exactly one layer, so a new module cannot slip between them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
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
    # A statistical method reaching up for the campaign's table.
    (
        "analysis/stats/paired.py",
        "from pgfsbench.analysis.table import Table",
        "pgfsbench.analysis.stats.paired -> pgfsbench.analysis.table",
    ),
    # The plan's vocabulary reaching up for its check.
    (
        "plan/model.py",
        "from pgfsbench.plan.check import describe",
        "pgfsbench.plan.model -> pgfsbench.plan.check",
    ),
    # An output format borrowing the HTML report's code.
    (
        "formats/markdown.py",
        "from pgfsbench.report.html import render_html",
        "pgfsbench.formats.markdown -> pgfsbench.report.html",
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


def _layer_modules(contract: dict) -> list[str]:
    """Every module a layers contract names, with its container."""
    out = []
    for layer in contract["layers"]:
        for part in layer.replace("|", ":").split(":"):
            for container in contract["containers"]:
                out.append(f"{container}.{part.strip()}")
    return out


def test_every_module_sits_in_exactly_one_layer() -> None:
    """A module no layer covers would be free of the layering: a new module or package
    takes its place in pyproject.toml's ``layers`` list (docs/developing.md's table)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts = {c["id"]: c for c in config["contracts"]}
    layered = _layer_modules(contracts["layers"])
    modules = sorted(
        "pgfsbench." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" or path.parent != PACKAGE
    )
    modules = [m.removesuffix(".__init__") for m in modules]
    for module in modules:
        covering = [m for m in layered if module == m or module.startswith(m + ".")]
        if module in ("pgfsbench.__main__", "pgfsbench.plan"):
            continue  # python -m pgfsbench; the plan package's docstring
        assert len(covering) == 1, (module, covering)
    inner = _layer_modules(contracts["analysis-concepts"])
    for module in (m for m in modules if m.startswith("pgfsbench.analysis.")):
        covering = [m for m in inner if module == m or module.startswith(m + ".")]
        assert len(covering) == 1, (module, covering)


def _names(text: str) -> set[str]:
    """The top-level package or module names in backticks: `report/`, `doctor.py`."""
    return {re.sub(r"(/|\.py)$", "", name).split("/")[0] for name in re.findall(r"`([^`]+)`", text)}


def _contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c["layers"] for c in config["contracts"] if c["id"] == "layers"]
    return [{part.strip().split(".")[0] for part in re.split(r"[:|]", layer)} for layer in layers]


def test_the_docs_name_the_layers_in_the_contracts_order() -> None:
    """docs/developing.md's table, row by row, and CONTRIBUTING.md's line, arrow by arrow
    (as far as it goes), name the layers of the contracts, in their order."""
    layers = _contract_layers()
    developing = (ROOT / "docs" / "developing.md").read_text()
    table = developing.split("| layer | package | what it owns |")[1].split("\n\n")[0]
    rows = [line.split(" | ") for line in table.strip().splitlines()[1:]]
    assert [int(row[0].strip("| ")) for row in rows] == list(range(1, len(layers) + 1))
    assert [_names(row[1]) for row in rows] == layers
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    line = contributing.split("imports go one way, down these layers:")[1]
    line = line.split("then the small shared modules")[0]
    steps = [_names(step) for step in line.split("→")]
    steps = [s for s in steps if s]
    assert len(steps) >= 15 and steps == layers[: len(steps)], steps
