"""The documentation site builds strictly: `mkdocs build --strict` (what `make docs`
runs) into a temporary directory, so a warning, a page left out of the navigation, a
broken link or a missing anchor fails `make test`, and so does an API object the
extension API page names that the code no longer has. The plans the docs show are
plans."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pgfsbench.plan.load import parse_plan

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_docs_build_strictly(tmp_path):
    pytest.importorskip(
        "material",
        reason="mkdocs-material is missing: make setup installs "
        "the docs extra (pip install -e '.[docs]')",
    )
    # Material's banner about MkDocs 2.0 is news, not a problem of these docs
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert not re.search(r"^(WARNING|ERROR)\b", built.stderr, re.M), built.stderr
    site = tmp_path / "site"
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("index.html"))
    # every page of docs/ is built and reachable
    for md in (ROOT / "docs").glob("*.md"):
        name = "index.html" if md.stem == "index" else f"{md.stem}/index.html"
        assert name in pages, (md.name, pages)
    assert (site / "images" / "report.png").is_file()
    # The extension API page is made from the code's docstrings (mkdocstrings).
    api = (site / "api" / "index.html").read_text()
    for name in (
        "workloads.kind.WorkloadKind",
        "workloads.context.RunContext",
        "filesystems.recipe.Recipe",
        "formats.registry.OutputFormat",
        "contract.check",
    ):
        assert f'id="pgfsbench.{name}"' in api, name
    assert "the placeholders filled in" in api  # WorkloadKind.labels's docstring
    assert "Raw outputs kept so far" in api  # RunContext.kept's


def _plans_shown() -> list[tuple[str, str]]:
    return [
        (f"{page.name}:{page.read_text().count(chr(10), 0, m.start()) + 1}", m.group(1))
        for page in PAGES
        for m in re.finditer(r"^```toml\n(.*?)^```", page.read_text(), re.M | re.S)
        if re.search(r"^name = ", m.group(1), re.M)
    ]


@pytest.mark.parametrize("where, text", _plans_shown(), ids=lambda v: v if ":" in v else "")
def test_a_plan_the_docs_show_is_a_valid_plan(where, text):
    parse_plan(text, where)  # raises UserError naming the key


def test_the_docs_show_plans():
    assert {w.split(":")[0] for w, _ in _plans_shown()} >= {"README.md", "plans.md"}
