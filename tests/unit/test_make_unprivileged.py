"""What a newcomer runs first needs neither root nor apt: ``make unit``, ``make lint``,
``make docs`` and ``make try`` (a Python venv only), from a clean clone.

A clean clone is the repository's tracked files copied to a fresh directory owned by
``nobody``, whose venv ``nobody`` makes with the system's Python 3.11 (this checkout's
interpreter may sit where ``nobody`` cannot reach); the packages in it are this
checkout's venv's (installing them again would download them all). ``make unit`` runs a handful of unit tests there as ``nobody``: they import
the tests' own helpers (``tests.unit...``) from the clone, the collection error that once
stopped ``make unit``; the whole unit suite is make test's. ``make try`` runs as
``nobody`` too, its pip install aside. The other targets' commands
are listed by ``make -n``, as ``nobody``: no apt-get, no step that needs root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SITE_PACKAGES = Path(sysconfig.get_paths()["purelib"])
SYSTEM_PYTHON = Path("/usr/bin/python3")
# A few unit tests that read the tests' helpers and the shipped campaign (seconds).
TESTS = ["tests/unit/test_text_table.py", "tests/unit/test_host_identity.py"]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0
    or shutil.which("runuser") is None
    or shutil.which("make") is None
    or shutil.which("git") is None
    or not (ROOT / ".git").exists()
    or not SYSTEM_PYTHON.exists()
    or sys.version_info[:2] != (3, 11),
    reason="needs root (to become nobody), runuser, make, a git checkout and the "
    "system's Python 3.11 (python3-venv)",
)


def _as_nobody(args: list[str], clone: Path) -> subprocess.CompletedProcess:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(clone.parent / "home"),
        # The clone's code, not this checkout's (the venv's editable install points here).
        "PYTHONPATH": str(clone / "src"),
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        ["runuser", "-u", "nobody", "--", "env", "-i", *(f"{k}={v}" for k, v in env.items())]
        + args,
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def clone() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="pgfsbench-clone-") as parent:
        os.chmod(parent, 0o755)
        clone = Path(parent) / "pgfsbench"
        tracked = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split("\0")
        for name in filter(None, tracked):
            source = ROOT / name
            if source.is_file():  # a tracked file deleted in the work tree is not there
                (clone / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, clone / name)
        (Path(parent) / "home").mkdir()
        subprocess.run(["chown", "-R", "nobody:nogroup", parent], check=True)
        # The venv as make setup leaves it, made by nobody: the packages (a .pth naming
        # this checkout's), pytest and pgfsbench, the stamps newer than what they came from.
        venv = clone / ".venv"
        made = _as_nobody([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(venv)], clone)
        assert made.returncode == 0, made.stderr
        site = venv / "lib" / "python3.11" / "site-packages"
        (site / "checkout.pth").write_text(f"{SITE_PACKAGES}\n")
        scripts = {
            "pytest": "from pytest import console_main as main",
            "pgfsbench": "from pgfsbench.cli import main",
        }
        for name, line in scripts.items():
            (venv / "bin" / name).write_text(
                f"#!{venv}/bin/python\nimport sys\n{line}\nsys.exit(main())\n"
            )
            (venv / "bin" / name).chmod(0o755)
        for stamp in (".runtime", ".dev"):
            (venv / stamp).touch()
        for source in ("pyproject.toml", "constraints.txt"):
            os.utime(clone / source, (0, 0))
        subprocess.run(["chown", "-R", "nobody:nogroup", parent], check=True)
        yield clone


def test_make_unit_passes_as_nobody_from_a_clean_clone(clone: Path) -> None:
    done = _as_nobody(["make", "unit", f"TESTS={' '.join(TESTS)}"], clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " passed" in done.stdout and "error" not in done.stdout.lower(), done.stdout


def test_make_try_shows_the_answer_and_writes_the_report_as_nobody(clone: Path) -> None:
    """make try's own steps (the venv is made: its stamps are newer than pyproject.toml):
    the shipped campaign unpacked, its answer printed, its report written."""
    done = _as_nobody(["make", "try"], clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("answer:") or "\nanswer:" in done.stdout, done.stdout
    report = clone / "results" / "try" / "report.html"
    assert report.stat().st_size > 500_000  # the report, its charts' library inlined


@pytest.mark.parametrize("target", ["try", "unit", "lint", "docs"])
def test_the_newcomers_targets_need_no_root_and_no_apt(clone: Path, target: str) -> None:
    done = _as_nobody(["make", "-n", target], clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "apt-get" not in done.stdout and "dpkg" not in done.stdout, done.stdout
    assert ".venv/bin/" in done.stdout, done.stdout


def test_make_test_installs_the_apt_packages_as_root(clone: Path) -> None:
    """The other side: make test goes through apt (as root), so the test above would see
    it if a newcomer's target did."""
    done = subprocess.run(
        ["make", "-n", "test"], cwd=clone, capture_output=True, text=True, timeout=60
    )
    assert "apt-get" in done.stdout, done.stdout
