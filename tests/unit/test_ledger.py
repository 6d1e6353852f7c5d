import os
import subprocess
import sys

import pytest

from pgfsbench import ledger as ledger_mod
from pgfsbench import releasers
from pgfsbench.ledger import Ledger, stale_ledgers


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    releasers.load_all()  # the "file" and "dir" releasers live with the code making them
    return tmp_path


def test_resources_are_released_in_reverse_and_the_ledger_forgotten(state):
    d = state / "scratch"
    d.mkdir()
    (d / "f").write_text("x")
    f = state / "image.img"
    f.write_text("x")
    ledger = Ledger.create("c1", state)
    ledger.add("file", path=str(f))
    ledger.add("dir", path=str(d))
    assert Ledger.load(ledger.path).resources[1]["path"] == str(d)
    assert ledger.release_all() == []
    assert not d.exists() and not f.exists()
    ledger.close()
    assert not ledger.path.exists()


def test_a_live_run_is_not_stale_but_a_dead_one_is(state):
    Ledger.create("alive", state)  # our own pid: alive, and our cmdline is pytest...
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    ledger = Ledger.create("dead", state)
    ledger.pid = int(dead)
    ledger.save()
    stale = {l.path.stem for l in stale_ledgers()}
    assert "dead" in stale
    # a pid that is alive but is not a pgfsbench process does not own the ledger
    assert ("alive" in stale) == (
        b"pgfsbench" not in open(f"/proc/{os.getpid()}/cmdline", "rb").read()
    )


def test_releasing_something_already_gone_is_fine(state):
    ledger = Ledger.create("c2", state)
    res = ledger.add("dir", path=str(state / "never-made"))
    assert ledger.release(res) == []
    assert ledger.resources == []


def test_a_resource_that_cannot_be_undone_stays_for_cleanup(state, monkeypatch):
    ledger = Ledger.create("c3", state)
    res = ledger.add("dir", path=str(state / "stubborn"))
    monkeypatch.setitem(ledger_mod.RELEASERS, "dir", lambda r: ["still busy"])
    assert ledger.release(res) == ["still busy"]
    assert Ledger.load(ledger.path).resources == [res]  # cleanup will find it
    ledger.close()
    assert ledger.path.exists()


def test_the_summary_counts_in_words_a_person_reads(state):
    """What `pgfsbench cleanup` says it removes ("2 directorys" was once printed)."""
    ledger = Ledger.create("c3", state)
    for i in (1, 2):
        ledger.add("dir", path=str(state / f"d{i}"))
        ledger.add("loop", device=f"/dev/loop{i}")
    ledger.add("postgres", pgdata="/x")
    ledger.add("cgroup", path="/sys/fs/cgroup/memory/x")
    assert ledger.summary() == "2 directories, 2 loop devices, 1 PostgreSQL server, 1 cgroup"
    ledger.close()
