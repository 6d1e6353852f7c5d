"""Unit tests never touch this machine's pgfsbench state: a test that makes a Ledger
without setting its own state directory writes into a private one, not into
/var/lib/pgfsbench/state, where a stray ledger would block (or be "cleaned up" by) a
real campaign."""

import pytest

from pgfsbench import ledger


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(ledger.STATE_ENV, str(tmp_path_factory.mktemp("state")))
