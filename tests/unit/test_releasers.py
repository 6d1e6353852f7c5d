"""The ledger's table of releasers: every kind a module records can be undone, and a kind
nobody can undo is said, never skipped."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pgfsbench import extensions, releasers
from pgfsbench import ledger as ledger_mod
from pgfsbench.ledger import RELEASERS, Ledger

SRC = Path(__file__).resolve().parents[2] / "src" / "pgfsbench"


def _recorded_kinds() -> dict[str, str]:
    """Every kind passed to ``<something>ledger.add(kind, ...)`` or to a target's
    ``Provisioning.hold(kind, ...)`` in the sources, with where. A kind taken from
    ``knob.kind`` is each literal a ``Knob(...)`` starts with."""
    kinds: dict[str, str] = {}
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        for call in calls:
            func = call.func
            if not (
                isinstance(func, ast.Attribute)
                and (
                    func.attr == "add"
                    and ast.unparse(func.value).endswith("ledger")
                    or func.attr == "hold"
                )
            ):
                continue
            where = f"{path.relative_to(SRC)}:{call.lineno}"
            first = call.args[0]
            if path in (SRC / "provision" / "target.py", SRC / "crash" / "workspace.py") and (
                ast.unparse(first) == "kind"
            ):
                continue  # Provisioning.hold, Held.hold pass their caller's kind on: counted there
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                kinds[first.value] = where
            elif ast.unparse(first) == "knob.kind":
                for made in calls:
                    if ast.unparse(made.func) == "Knob" and isinstance(made.args[0], ast.Constant):
                        kinds[made.args[0].value] = where
            else:
                pytest.fail(
                    f"{where}: cannot tell which kind {ast.unparse(first)} records: "
                    "pass a literal kind (or teach this test)"
                )
    return kinds


def test_every_kind_recorded_anywhere_has_a_releaser():
    releasers.load_all()
    kinds = _recorded_kinds()
    # what the sources record today; a new kind shows up here by itself
    assert {"lock", "dir", "postgres", "sysctl", "sysfs", "file", "loop", "mount", "cgroup"} <= set(
        kinds
    )
    missing = {kind: where for kind, where in kinds.items() if kind not in RELEASERS}
    assert missing == {}, (
        "register a @releaser for these, and name it in pyproject.toml's pgfsbench.releasers"
    )


def test_the_releasers_entry_points_name_every_releaser():
    releasers.load_all()
    assert set(extensions.names(extensions.RELEASERS)) == set(RELEASERS)


def test_the_ledger_imports_none_of_the_modules_it_releases_for():
    tree = ast.parse((SRC / "ledger.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    # leaves of the package only: errors, and paths (where pgfsbench keeps its files)
    assert {m for m in imported if m and m.startswith("pgfsbench")} <= {
        "pgfsbench.errors",
        "pgfsbench.paths",
    }
    leaves = [SRC / "errors.py", SRC / "paths.py"]
    assert not [f for f in leaves if "from pgfsbench" in f.read_text()]


def test_a_second_releaser_for_a_kind_is_refused():
    releasers.load_all()
    with pytest.raises(ValueError, match="two releasers for ledger kind 'dir'"):
        ledger_mod.releaser("dir")(lambda res: [])
    assert RELEASERS["dir"].__module__ == "pgfsbench.scratch"


def test_a_kind_without_a_releaser_is_a_problem_and_stays_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    ledger = Ledger.create("unknown", tmp_path)
    res = ledger.add("teleporter", where="mars")
    problems = ledger.release(res)
    assert len(problems) == 1 and "no releaser for ledger kind 'teleporter'" in problems[0]
    assert Ledger.load(ledger.path).resources == [res]
    ledger.close()
    assert ledger.path.exists()  # pgfsbench cleanup finds it again


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout)


def test_cleanup_in_a_fresh_process_knows_every_kind_and_names_an_unknown_one(tmp_path):
    """What `pgfsbench cleanup` does with a killed run's ledger: it was not the process that
    recorded it, so nothing it needs is imported yet."""
    state = tmp_path / "state"
    state.mkdir()
    left = tmp_path / "pgfsb-left"
    left.mkdir()
    (state / "killed.json").write_text(
        json.dumps(
            {
                "pid": _dead_pid(),
                "results_dir": str(tmp_path / "results"),
                "resources": [
                    {"kind": "dir", "path": str(left)},
                    {"kind": "teleporter", "where": "mars"},
                ],
            }
        )
    )
    env = {
        **os.environ,
        ledger_mod.STATE_ENV: str(state),
        "PGFSBENCH_LOCK_FILE": str(tmp_path / "lock"),
        "COLUMNS": "300",
    }
    done = subprocess.run(
        [sys.executable, "-m", "pgfsbench", "cleanup"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "no releaser for ledger kind 'teleporter'" in done.stderr
    assert not left.exists()  # the known kind is undone all the same
    kept = json.loads((state / "killed.json").read_text())["resources"]
    assert kept == [{"kind": "teleporter", "where": "mars"}]
