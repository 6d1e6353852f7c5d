"""Data checksums as a dimension of a plan: initdb's flag as the server's initdb offers
it, refused by plan check (exit 2, one line) where that initdb cannot do it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pgfsbench.errors import UserError
from pgfsbench.plan.load import parse_plan
from pgfsbench.postgres.binaries import NEEDED, PgBinaries
from pgfsbench.postgres.checksums import initdb_flags

# initdb --help's checksum lines, as each major version prints them
HELP = {
    "18.1": "  -k, --data-checksums      use data page checksums\n"
    "      --no-data-checksums   do not use data page checksums\n",
    "15.4": "  -k, --data-checksums      use data page checksums\n",
    "9.2.4": "  -X, --xlogdir=XLOGDIR     location for the transaction log directory\n",
}


def fake_bindir(root: Path, version: str) -> Path:
    """A bin directory whose postgres says ``version``, accepts any configuration, and
    whose initdb prints that version's --help."""
    bindir = root / f"pg{version}"
    bindir.mkdir()
    for tool in NEEDED:
        (bindir / tool).write_text("#!/bin/sh\nexit 0\n")
    (bindir / "postgres").write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo "postgres (PostgreSQL) {version}"; '
        "else echo 5432; fi\n"
    )
    (bindir / "initdb").write_text(f"#!/bin/sh\ncat <<'END'\n{HELP[version]}END\n")
    for tool in bindir.iterdir():
        tool.chmod(0o755)
    return bindir


@pytest.mark.parametrize(
    "version, want, flags",
    [
        ("18.1", None, []),
        ("18.1", True, ["--data-checksums"]),
        ("18.1", False, ["--no-data-checksums"]),
        ("15.4", True, ["--data-checksums"]),
        ("15.4", False, []),  # off is 15's default: nothing to ask
    ],
)
def test_initdb_gets_the_flag_its_version_has(tmp_path, version, want, flags):
    bins = PgBinaries(fake_bindir(tmp_path, version), version, "system")
    assert initdb_flags(bins, want) == flags


def test_an_initdb_without_checksums_refuses_in_one_line(tmp_path):
    bins = PgBinaries(fake_bindir(tmp_path, "9.2.4"), "9.2.4", "system")
    assert initdb_flags(bins, False) == []
    with pytest.raises(
        UserError,
        match=r"data_checksums = true: the initdb of PostgreSQL "
        r"9.2.4 .* has no --data-checksums",
    ):
        initdb_flags(bins, True)


PLAN = """
name = "sums"
[postgres]
data_checksums = false
[[targets]]
name = "plain"
fs = "ext4"
[[targets]]
name = "summed"
fs = "ext4"
postgres = {{ data_checksums = true }}
{extra}
[[workloads]]
type = "fsync"
"""


def test_the_target_wish_wins_over_the_plan_and_a_matrix_makes_it_a_dimension():
    plan = parse_plan(PLAN.format(extra=""), "p.toml")
    assert [plan.data_checksums(t) for t in plan.targets] == [False, True]
    matrix = (
        '[mixins.x]\nfs = "xfs"\n[[matrix]]\nname = "x-{postgres}"\nextends = "x"\n'
        "[matrix.axes]\n"
        "postgres = { on = { data_checksums = true }, off = { data_checksums = false } }\n"
    )
    plan = parse_plan(PLAN.format(extra=matrix), "p.toml")
    assert {t.name: plan.data_checksums(t) for t in plan.targets} == {
        "plain": False,
        "summed": True,
        "x-on": True,
        "x-off": False,
    }
    with pytest.raises(UserError, match="data_checksums: Input should be a valid boolean"):
        parse_plan(PLAN.format(extra="").replace("= false", '= "maybe"'), "p.toml")


def pgfsbench(*args):
    return subprocess.run(
        [sys.executable, "-m", "pgfsbench", *args], capture_output=True, text=True
    )


def test_plan_check_refuses_checksums_the_targets_server_cannot_make(tmp_path):
    old = fake_bindir(tmp_path, "9.2.4")
    plan = tmp_path / "p.toml"
    plan.write_text(
        PLAN.format(extra="").replace('name = "summed"\n', f'name = "summed"\npg_bin = "{old}"\n')
    )
    result = pgfsbench("plan", "check", str(plan))
    assert result.returncode == 2, result.stderr
    assert "target 'summed': data_checksums = true: the initdb of PostgreSQL 9.2 (" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    # false on that server is its default: the same plan without the wish checks
    plan.write_text(plan.read_text().replace("{ data_checksums = true }", "{}"))
    assert pgfsbench("plan", "check", str(plan)).returncode == 0
