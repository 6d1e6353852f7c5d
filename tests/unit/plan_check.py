"""Helpers for unit tests that run ``pgfsbench plan check`` through the CLI in-process."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pgfsbench.cli import app


def plan_check_json(directory: Path, plan_text: str) -> dict:
    """``plan check --json`` of ``plan_text`` written as a plan file in ``directory``;
    the check must pass. Returns what it printed."""
    path = directory / "plan.toml"
    path.write_text(plan_text)
    result = CliRunner().invoke(app, ["plan", "check", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
