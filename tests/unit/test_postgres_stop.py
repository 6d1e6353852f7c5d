"""The releaser of a recorded PostgreSQL server signals only that server."""

import os
import shutil
import subprocess
from pathlib import Path

from pgfsbench.postgres.cluster import _is_postmaster, crashed_since_ready


def test_only_a_live_postgres_of_that_user_is_signalled(tmp_path):
    fake = tmp_path / "postgres"  # a program that is called postgres, and sleeps
    shutil.copy("/bin/sleep", fake)
    child = subprocess.Popen([str(fake), "30"])
    try:
        assert _is_postmaster(child.pid, os.getuid())
        assert not _is_postmaster(child.pid, os.getuid() + 4242)  # another user's
        assert not _is_postmaster(os.getpid(), os.getuid())  # a reused pid: python
    finally:
        child.kill()
        child.wait()
    assert not _is_postmaster(child.pid, os.getuid())  # gone


def test_a_server_that_crashed_since_it_was_ready_is_told_from_a_clean_one():
    """Server logs captured from PostgreSQL 18: a load that filled the disk (a backend
    PANIC, the server reinitialising into crash recovery), and a clean run."""
    fixtures = Path(__file__).parent.parent / "fixtures"
    crashed = (fixtures / "postgres18_log_crashed_on_full_disk.txt").read_text()
    clean = (fixtures / "postgres18_log_clean.txt").read_text()
    assert crashed_since_ready(crashed)
    assert not crashed_since_ready(clean)
    # up to the crash: not yet; restarted and ready again after it: no longer
    assert not crashed_since_ready(crashed.split("PANIC")[0])
    assert not crashed_since_ready(crashed + clean)
    assert not crashed_since_ready("")
