"""The fleet playbook passes ansible-lint at its strictest profile (production):
role-prefixed variables, a changed_when that tells the truth on every command, clean
YAML. Any violation fails the test, named as ansible-lint names it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

FLEET = Path(__file__).resolve().parents[2] / "fleet"


@pytest.mark.skipif(
    importlib.util.find_spec("ansiblelint") is None,
    reason="ansible-lint is not installed (pip install -e '.[test]')",
)
def test_the_fleet_playbook_passes_ansible_lint_production(tmp_path):
    # Its tools (ansible-playbook for the syntax check) from this interpreter's venv;
    # offline: the playbook needs no collection beyond ansible-core's builtins.
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "ANSIBLE_HOME": str(tmp_path / "ansible"),
        "NO_COLOR": "1",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ansiblelint",
            "--offline",
            "--profile",
            "production",
            "--nocolor",
            "--strict",
        ],
        cwd=FLEET,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Profile 'production' was required, and it passed" in result.stderr, result.stderr
