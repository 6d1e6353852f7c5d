"""Two campaigns on one machine: the second waits or is refused, and sysctls come back.

Both set vm.dirty_writeback_centisecs. Without the machine lock the second
recorded the first's value as "before" and restored it, so the machine ended
at the first campaign's value instead of its own.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import CLI, cli, ledgers, leftovers, stop, wait_for_run
from tests.integration.plans import LOAD, SMALL_BUFFERS, ext4, pgbench, plan_toml

SYSCTL = Path("/proc/sys/vm/dirty_writeback_centisecs")


def _plan(tmp_path: Path, name: str, value: int, duration: int = 2) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(
        plan_toml(
            name,
            [ext4("a", "300M", sysctls={"vm.dirty_writeback_centisecs": value})],
            [LOAD, pgbench(clients=1, duration=duration)],
            settings=SMALL_BUFFERS,
        )
    )
    return path


@pytest.fixture
def original_sysctl():
    before = SYSCTL.read_text().strip()
    assert before not in ("31", "77"), "pick values that differ from the machine's"
    yield before
    if SYSCTL.read_text().strip() != before:  # the test failed: put it back
        SYSCTL.write_text(before)


def test_a_second_campaign_is_refused_or_waits_and_sysctls_come_back(
    tmp_path, state_dir, original_sysctl
):
    first_results = tmp_path / "first"
    first = subprocess.Popen(
        [*CLI, "run", str(_plan(tmp_path, "first", 31, 12)), "--results", str(first_results)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Long enough (a 12 s pgbench; what follows takes 3-4 s) that the second is
        # sure to find it still running.
        wait_for_run(first, first_results, "workload = 'pgbench' AND status = 'running'", 180)
        assert SYSCTL.read_text().strip() == "31"
        # the lock is recorded in the running campaign's ledger
        (ledger,) = state_dir.glob("*.json")
        assert "lock" in [r["kind"] for r in json.loads(ledger.read_text())["resources"]]

        # Without --wait: refused at once, naming the running campaign; nothing made.
        refused = cli(
            "run",
            str(_plan(tmp_path, "second", 77)),
            "--results",
            str(tmp_path / "refused"),
            check=False,
        )
        assert refused.returncode == 2, refused
        message = refused.stderr.strip()
        assert len(message.splitlines()) == 1 and "Traceback" not in message
        assert "campaign " in message and "(plan first, " in message
        assert f"pid {first.pid}" in message and f"results {first_results}" in message
        assert "only one runs at a time" in message and "--wait" in message
        assert not (tmp_path / "refused").exists()
        # cleanup must not restore anything under a live campaign either
        busy = cli("cleanup", check=False)
        assert busy.returncode == 2, busy
        assert "a cleanup would restore settings under it" in busy.stderr

        # With --wait: starts once the first campaign is done.
        waiting = subprocess.Popen(
            [
                *CLI,
                "run",
                str(_plan(tmp_path, "second", 77)),
                "--results",
                str(tmp_path / "second"),
                "--wait",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, (out, err)
        out, err = waiting.communicate(timeout=300)
        assert waiting.returncode == 0, (out, err)
        assert "waiting for campaign" in out and "(plan first" in out
    finally:
        for p in (locals().get("waiting"), first):
            if p is not None:
                stop(p)

    # The second recorded the machine's own value as 'before', not the first's 31...
    db = sqlite3.connect(tmp_path / "second" / "results.db")
    provenance = json.loads(db.execute("SELECT provenance_json FROM targets").fetchone()[0])
    recorded = provenance["os_settings"]["sysctls"]["vm.dirty_writeback_centisecs"]
    assert (recorded["before"], recorded["during"]) == (original_sysctl, "77")
    # ...so the machine is back at its own value.
    assert SYSCTL.read_text().strip() == original_sysctl
    assert leftovers() == [] and ledgers(state_dir) == []
    assert cli("cleanup").stdout.strip() == "nothing to clean up"
