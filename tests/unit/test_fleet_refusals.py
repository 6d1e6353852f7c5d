"""The fleet playbook refuses, on the controller and before any host is touched, a run
that does not name its hosts (there is no default of `all`), one without its store or
with the store's 0.2.0 name, hosts that match nothing, a --limit that leaves the
controller's play out, and a plan that does not check (a relative plan file read from
the directory the command runs in): one line naming the fix, ansible-playbook's exit
code 2.

The inventory's hosts cannot run a module (their Python is /bin/false): a refusal that
let the run reach them would fail there, not pass. Nothing here needs the store: the
refusals come before the store is contacted (tests/integration/test_fleet.py runs the
playbook itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PLAYBOOK = Path(__file__).resolve().parents[2] / "fleet" / "site.yml"
ANSIBLE_PLAYBOOK = Path(sys.executable).with_name("ansible-playbook")
SECRET = "s3cret-pw"

pytestmark = pytest.mark.skipif(
    not ANSIBLE_PLAYBOOK.exists(),
    reason=f"needs ansible-core ({ANSIBLE_PLAYBOOK} not found): pip install -e '.[test]'",
)

CASES = {
    "no hosts named": (
        [],
        "name the hosts to benchmark: -e fleet_hosts=GROUP (an inventory group or pattern, "
        "e.g. bench); there is no default",
    ),
    "store's old name": (
        ["-e", "fleet_hosts=bench", "-e", f"store=postgresql://bench:{SECRET}@db/results"],
        "the variable store is now fleet_store (every variable of the fleet playbook starts "
        "with fleet_): give the results store: -e fleet_store=postgresql://USER@HOST/DB",
    ),
    "hosts that match nothing": (
        ["-e", "fleet_hosts=bnech", "-e", "fleet_store=postgresql://bench@db/results"],
        "fleet_hosts=bnech matches no host of the inventory",
    ),
    "--limit without the controller": (
        ["-e", "fleet_hosts=bench", "-e", "fleet_store=x", "--limit", "db-old"],
        "the controller's play did not run (it checks the variables and packs the "
        "checkout): with --limit, name localhost too",
    ),
    # The plan is checked before the store (fleet_store=x would be refused next).
    "a plan file that is not there": (
        ["-e", "fleet_hosts=bench", "-e", "fleet_store=x", "-e", "fleet_plan=nightly.toml"],
        "db-old's plan (fleet_plan=nightly.toml): error: no plan '{tmp}/nightly.toml': "
        "not a built-in plan",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_the_playbook_refuses_a_run_before_any_host(case, tmp_path):
    options, reason = CASES[case]
    (tmp_path / "inventory.ini").write_text(
        "[bench]\ndb-old\ndb-new\n[db]\nstore-server\n"
        "[all:vars]\nansible_connection=local\nansible_python_interpreter=/bin/false\n"
    )
    done = subprocess.run(
        [
            str(ANSIBLE_PLAYBOOK),
            "-i",
            "inventory.ini",
            str(PLAYBOOK),
            "-e",
            f"fleet_collect_dir={tmp_path / 'controller'}",
            *options,
        ],
        cwd=tmp_path,
        env={**os.environ, "ANSIBLE_HOME": str(tmp_path / "ansible"), "ANSIBLE_NOCOLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    # One line per refusal (a host's plan: one per host whose plan it is).
    errors = [line for line in out.splitlines() if line.startswith("[ERROR]:")]
    assert errors and reason.format(tmp=tmp_path) in errors[0], out
    assert "PLAY [Benchmark each host" not in out, out
    for host in ("db-old", "db-new", "store-server"):
        assert f"ok: [{host}]" not in out and f"changed: [{host}]" not in out, out
    assert SECRET not in out
    # The variables are checked first; the controller's play packs the checkout after.
    made = (tmp_path / "controller").exists()
    assert made == (case == "a plan file that is not there"), case
