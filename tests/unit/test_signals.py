"""The first SIGTERM or Ctrl-C unwinds a campaign; later ones must not cut its cleanup short."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from pgfsbench.campaign.signals import signals_unwind_once
from pgfsbench.errors import Interrupted


@pytest.mark.parametrize(
    "first, error", [(signal.SIGTERM, Interrupted), (signal.SIGINT, KeyboardInterrupt)]
)
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


class _SignalledWhileFinalized:
    """Where a signal can land: in a finalizer, whose exceptions Python drops."""

    def __init__(self, signum: int) -> None:
        self.signum = signum

    def __del__(self) -> None:
        os.kill(os.getpid(), self.signum)
        sum(range(1000))  # the handler runs at the next check: here, inside __del__


@pytest.mark.parametrize(
    "signum, error", [(signal.SIGTERM, Interrupted), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_signal_a_finalizer_swallowed_is_raised_again_when_new_work_starts(
    signum, error, capfd
) -> None:
    with signals_unwind_once() as guard:
        guard.raise_if_lost()  # nothing caught: nothing to raise
        _SignalledWhileFinalized(signum)  # dropped at once: its __del__ runs here
        assert guard.caught == [signum]  # the signal came, its exception was lost
        with pytest.raises(error):
            guard.raise_if_lost()
        guard.raise_if_lost()  # raised once, not at every later command
    assert "Traceback" not in capfd.readouterr().err  # not printed as 'Exception ignored'


def test_a_lost_signal_waits_while_another_error_unwinds() -> None:
    """Raised in the cleanup of another failure it would cut that cleanup short."""
    with signals_unwind_once() as guard:
        _SignalledWhileFinalized(signal.SIGTERM)
        try:
            raise OSError("disk full")
        except OSError:
            guard.raise_if_lost()  # the cleanup goes on
        with pytest.raises(Interrupted):
            guard.raise_if_lost()


def test_other_exceptions_finalizers_drop_still_reach_the_hook_before(monkeypatch) -> None:
    class Broken:
        def __del__(self):
            raise ValueError("a bug in a finalizer")

    seen = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    with signals_unwind_once() as guard:
        Broken()
        guard.raise_if_lost()
    assert [str(u.exc_value) for u in seen] == ["a bug in a finalizer"]
    assert sys.unraisablehook == seen.append  # put back
