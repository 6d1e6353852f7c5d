"""Every command the docs show with its output runs here, and prints what they show.

A transcript is a fenced ```console block in README.md or docs/*.md whose first line is
``$ pgfsbench ...``; the lines after it are its output: stdout, then stderr, then
``[exit status N]`` when it exits non-zero. A command ending in ``>/dev/null`` shows
stderr alone. Each runs as a reader would run it, in a directory where
``results/quick`` is the stored campaign the unit tests keep (the default plan as
`make demo` ran it: tests/fixtures/quick_demo_results.db.gz), at 80 columns in UTC; no
PostgreSQL is needed. Only trailing blanks are normalised: a changed output fails here
until the page shows it as printed (``python -m tests.unit.test_docs_transcripts``
rewrites the blocks from what the commands print now, and the docs' home from the
README).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.unit.demo_campaign import unpack_demo

ROOT = Path(__file__).parents[2]
# docs/index.md is README.md's text (docs/gen_index.py): its transcripts are the README's.
PAGES = [
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "index.md"),
]
BLOCK = re.compile(r"^```console\n(\$ pgfsbench .*?)^```\n", re.M | re.S)


@dataclass(frozen=True)
class Transcript:
    page: Path
    line: int  # of the command, 1-based
    command: str  # as shown, without "$ "
    shown: str  # the output as shown

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def transcripts() -> list[Transcript]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for m in BLOCK.finditer(text):
            command, _, shown = m.group(1).partition("\n")
            found.append(
                Transcript(
                    page, text.count("\n", 0, m.start()) + 2, command.removeprefix("$ "), shown
                )
            )
    return found


def normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def run(command: str, cwd: Path) -> str:
    """What the command prints, as a transcript shows it."""
    args = shlex.split(command)
    quiet_stdout = args[-1] == ">/dev/null"
    if quiet_stdout:
        args = args[:-1]
    assert args[0] == "pgfsbench", command
    env = {
        **os.environ,
        "COLUMNS": "80",
        "LINES": "50",
        "TZ": "UTC",
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
    done = subprocess.run(
        [sys.executable, "-m", "pgfsbench", *args[1:]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    printed = ("" if quiet_stdout else done.stdout) + done.stderr
    if done.returncode:
        printed = printed.rstrip("\n") + f"\n[exit status {done.returncode}]\n"
    return printed.replace(str(cwd), ".")


def campaign_directory(parent: Path) -> Path:
    unpack_demo(parent / "results" / "quick")
    return parent


ALL = transcripts()


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> dict[str, str]:
    """Every transcript's command run once, two at a time (they are a second or so each)."""
    cwd = campaign_directory(tmp_path_factory.mktemp("transcripts"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = pool.map(lambda t: run(t.command, cwd), ALL)
        return {t.id: out for t, out in zip(ALL, outputs)}


def test_the_docs_show_transcripts():
    # the readme's sample, and the pages that teach reading an answer, are checked
    pages = {t.page.name for t in ALL}
    assert {"README.md", "verdicts.md", "getting-started.md"} <= pages, pages
    assert len(ALL) >= 5


@pytest.mark.parametrize("transcript", ALL, ids=lambda t: t.id)
def test_a_transcript_shows_what_the_command_prints(printed, transcript):
    assert normalise(transcript.shown) == normalise(printed[transcript.id]), (
        f"{transcript.id}: `{transcript.command}` prints otherwise now; "
        "python -m tests.unit.test_docs_transcripts rewrites the docs' blocks"
    )


def rewrite() -> None:
    """Rewrite every transcript block with what its command prints now."""
    with tempfile.TemporaryDirectory() as tmp:
        cwd = campaign_directory(Path(tmp))
        for page in PAGES:
            text = page.read_text()

            def fresh(m: re.Match) -> str:
                command = m.group(1).partition("\n")[0]
                out = normalise(run(command.removeprefix("$ "), cwd))
                return f"```console\n{command}\n{out}\n```\n"

            new = BLOCK.sub(fresh, text)
            if new != text:
                page.write_text(new)
                print(f"rewrote {page.relative_to(ROOT)}")
    subprocess.run([sys.executable, str(ROOT / "docs" / "gen_index.py")], check=True)


if __name__ == "__main__":
    rewrite()
