"""The releaser of a recorded PostgreSQL server signals only that server."""

import os
import shutil
import subprocess

from pgfsbench.postgres.cluster import _is_postmaster


def test_only_a_live_postgres_of_that_user_is_signalled(tmp_path):
    fake = tmp_path / "postgres"  # a program that is called postgres, and sleeps
    shutil.copy("/bin/sleep", fake)
    child = subprocess.Popen([str(fake), "30"])
    try:
        assert _is_postmaster(child.pid, os.getuid())
        assert not _is_postmaster(child.pid, os.getuid() + 4242)  # another user's
        assert not _is_postmaster(os.getpid(), os.getuid())       # a reused pid: python
    finally:
        child.kill()
        child.wait()
    assert not _is_postmaster(child.pid, os.getuid())             # gone
