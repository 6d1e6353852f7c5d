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


def test_the_glossary_defines_what_the_answer_explains():
    """docs/glossary.md defines each term the answer line explains, in the answer's words,
    and the terms every page uses."""
    from pgfsbench.analysis.verdicts.answer import TERMS

    text = (ROOT / "docs" / "glossary.md").read_text()
    entries = dict(re.findall(r"^\*\*(\w[\w ]*)\*\*.*\n: (.*(?:\n  .*)*)", text, re.M))
    entries = {term: " ".join(body.split()) for term, body in entries.items()}
    for term, words in TERMS.items():
        assert words in entries[term], (term, words, entries.get(term))
    assert {"Round", "Visit", "Look", "Tier", "Headline", "Margin", "Ledger"} <= set(entries)


def test_the_docs_home_is_the_readme():
    """docs/index.md is README.md with the site's links (docs/gen_index.py writes it)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_index.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    readme = (ROOT / "README.md").read_text()
    home = (ROOT / "docs" / "index.md").read_text()
    assert "make try" in home and readme.splitlines()[0] == home.splitlines()[0]


def test_the_command_reference_is_the_clis():
    """docs/commands.md is made from the CLI (docs/gen_commands.py): every command and
    every option `--help` shows, none the CLI lacks."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_commands.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    page = (ROOT / "docs" / "commands.md").read_text()
    for option in ("--allow-format", "--wipe-signatures", "--no-keep", "--alpha", "--noise"):
        assert f"`{option}" in page, option  # the options the hand-written page missed


FENCE = re.compile(r"^```(\S*)[^\n]*\n(.*?)^```\n", re.M | re.S)
MARK = "<!-- illustrative: "


def _blocks():
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            line = text.count("\n", 0, m.start()) + 1
            yield f"{page.name}:{line}", m.group(1), m.group(2), before


def test_every_output_block_is_tested_or_marked_illustrative():
    """Output the docs show is either a transcript tests/unit/test_docs_transcripts.py runs
    (a console block starting with `$ pgfsbench`), a psql result under its query
    (tests/integration/test_store_queries.py runs them: a text block after a sql block),
    or says above it why it is only illustrative. Every block names its language, so a
    command (sh) is never taken for output."""
    after_sql = False
    problems = []
    for where, lang, body, before in _blocks():
        if not lang:
            problems.append(f"{where}: a block with no language (sh, text, toml ...)")
        elif lang == "console" and not body.startswith("$ pgfsbench"):
            if not before.startswith(MARK):
                problems.append(f"{where}: a console block that is not a pgfsbench transcript")
        elif lang == "text" and not after_sql and not before.startswith(MARK):
            problems.append(f"{where}: output neither tested nor marked {MARK}...")
        after_sql = lang == "sql"
    assert problems == []
