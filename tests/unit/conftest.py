"""Unit tests never touch this machine's pgfsbench state: a test that makes a Ledger
without setting its own state directory writes into a private one, not into
/var/lib/pgfsbench/state, where a stray ledger would block (or be "cleaned up" by) a
real campaign. Their cache (what the installed zfs supports) is the session's own."""

import pytest

from pgfsbench import ledger
from pgfsbench.provision import zfs_pool as zfs


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def private_cache_dir(session_cache_dir, monkeypatch):
    monkeypatch.setenv(zfs.CACHE_ENV, str(session_cache_dir))


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(ledger.STATE_ENV, str(tmp_path_factory.mktemp("state")))
