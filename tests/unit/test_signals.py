"""The first SIGTERM or Ctrl-C unwinds a campaign; later ones must not cut its cleanup short."""

from __future__ import annotations

import os
import signal

import pytest

from pgfsbench.campaign.signals import signals_unwind_once
from pgfsbench.errors import Interrupted


@pytest.mark.parametrize("first, error", [(signal.SIGTERM, Interrupted),
                                          (signal.SIGINT, KeyboardInterrupt)])
def test_only_the_first_signal_interrupts(first, error, capfd) -> None:
    cleaned = []
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(error):
        with signals_unwind_once():
            try:
                os.kill(os.getpid(), first)
            finally:
                # the cleanup: an impatient user signals twice more meanwhile
                os.kill(os.getpid(), signal.SIGINT)
                os.kill(os.getpid(), signal.SIGTERM)
                cleaned.append("all")
    assert cleaned == ["all"]
    assert "still cleaning up" in capfd.readouterr().err
    assert {s: signal.getsignal(s) for s in before} == before  # handlers restored
