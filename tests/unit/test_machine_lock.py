"""The machine lock: one holder at a time, a clear message naming it, --wait, and a
holder that dies (however) never leaves it taken."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from pgfsbench import machine_lock as lock_mod
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.machine_lock import machine_lock

HOLDER = """
import sys, time
from pgfsbench.machine_lock import machine_lock
with machine_lock("c-other", "campaign", False, print, plan="slow", results="/r/slow"):
    print("held", flush=True)
    time.sleep(float(sys.argv[1]))
"""


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = tmp_path / "machine.lock"
    monkeypatch.setenv(lock_mod.LOCK_ENV, str(path))
    return path


def hold(seconds: float) -> subprocess.Popen:
    """Another process holding the lock for ``seconds``; returns once it holds it."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_held_lock_is_refused_naming_its_holder(lock_file):
    holder = hold(30)
    try:
        with pytest.raises(UserError) as info:
            with machine_lock("c-mine", "campaign", False, print):
                pass
        message = str(info.value)
        assert message.startswith(
            f"campaign c-other (plan slow, pid {holder.pid}, results /r/slow) since "
        )
        assert "only one runs at a time: wait for it to finish, or add --wait" in message
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_leaves_the_lock_free(lock_file):
    holder = hold(30)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with machine_lock("c-mine", "campaign", False, print) as path:
        assert path == lock_file
        assert '"id": "c-mine"' in lock_file.read_text()
    assert lock_file.read_text() == ""  # released: no holder described


def test_wait_starts_once_the_holder_is_done(lock_file):
    holder = hold(1.5)
    said: list[str] = []
    started = time.monotonic()
    with machine_lock("c-mine", "campaign", True, said.append):
        waited = time.monotonic() - started
    holder.wait()
    assert waited > 0.5, "it did not wait"
    assert len(said) == 1 and said[0].startswith("waiting for campaign c-other (plan slow")


def test_the_lock_is_one_per_holder_even_in_one_process(lock_file):
    with machine_lock("c-mine", "campaign", False, print):
        with pytest.raises(UserError, match="campaign c-mine"):  # flock is per open file
            with machine_lock("cleanup-1", "cleanup", False, print):
                pass


def test_the_ledger_record_releases_it_once(lock_file, tmp_path, monkeypatch):
    monkeypatch.setenv("PGFSBENCH_STATE_DIR", str(tmp_path / "state"))
    with machine_lock("c-mine", "campaign", False, print) as path:
        ledger = Ledger.create("c-mine", tmp_path)
        ledger.add("lock", path=str(path), holder="c-mine")
        assert ledger.release_all() == []  # the campaign's final sweep lets it go...
        with machine_lock("c-next", "campaign", False, print):  # ...so another may take it
            pass
    # a dead campaign's record (cleanup releasing it) has nothing left to undo
    assert lock_mod.release_recorded({"kind": "lock", "holder": "c-dead"}) == []


def test_holder_info_names_the_live_holder_without_taking_the_lock(lock_file):
    assert lock_mod.holder_info() is None  # no file yet
    holder = hold(30)
    try:
        info = lock_mod.holder_info()
        assert info and info["results"] == "/r/slow" and info["pid"] == holder.pid
    finally:
        holder.kill()
        holder.wait()
    assert lock_mod.holder_info() is None  # the kernel let it go with its holder
