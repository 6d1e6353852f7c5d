"""A signal becomes an exception once, so every cleanup block of a campaign runs."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator

from pgfsbench.errors import Interrupted


class SignalGuard:
    """The first SIGTERM or Ctrl-C becomes an exception, so every cleanup block runs.

    Later ones are only noted: a second Ctrl-C while a busy umount retries or
    PostgreSQL shuts down must not cut that cleanup short and leave loop
    devices, mounts or sysctls behind.

    Python drops an exception raised while a finalizer runs (an object's
    ``__del__``, a generator closed by the garbage collector) and prints it as
    "Exception ignored": a signal landing there would be lost and the campaign
    would run on to its end. So such a loss is noted instead of printed, and
    ``raise_if_lost()``, called wherever the campaign starts new work, raises it
    again.
    """

    def __init__(self) -> None:
        self.caught: list[int] = []
        self.lost: BaseException | None = None
        self._raised: BaseException | None = None

    def handler(self, signum: int, frame) -> None:
        if self.caught:
            os.write(
                2,
                b"pgfsbench: still cleaning up, exiting when done "
                b"(kill -9 abandons it; then run 'pgfsbench cleanup')\n",
            )
            return
        self.caught.append(signum)
        raise self._exception(signum)

    def unraisable(self, hook, unraisable) -> None:
        if self._raised is not None and unraisable.exc_value is self._raised:
            self.lost = self._raised
            return
        hook(unraisable)

    def raise_if_lost(self) -> None:
        """Raise the signal's exception again if a finalizer swallowed it; never while
        another exception unwinds (its cleanup must run whole) or off the main thread
        (signals are the main thread's)."""
        if (
            self.lost is None
            or sys.exc_info()[1] is not None
            or threading.current_thread() is not threading.main_thread()
        ):
            return
        self.lost = None
        raise self._exception(self.caught[0])

    def _exception(self, signum: int) -> BaseException:
        self._raised = KeyboardInterrupt() if signum == signal.SIGINT else Interrupted(signum)
        return self._raised


@contextlib.contextmanager
def signals_unwind_once() -> Iterator[SignalGuard]:
    """Install a SignalGuard's handlers for SIGINT and SIGTERM while the block runs."""
    guard = SignalGuard()
    previous = {s: signal.signal(s, guard.handler) for s in (signal.SIGINT, signal.SIGTERM)}
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: guard.unraisable(hook, unraisable)
    try:
        yield guard
    finally:
        sys.unraisablehook = hook
        for s, h in previous.items():
            signal.signal(s, h)
