"""A signal becomes an exception once, so every cleanup block of a campaign runs."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

from pgfsbench.errors import Interrupted


@contextlib.contextmanager
def signals_unwind_once() -> Iterator[None]:
    """The first SIGTERM or Ctrl-C becomes an exception, so every cleanup block runs.

    Later ones are only noted: a second Ctrl-C while a busy umount retries or
    PostgreSQL shuts down must not cut that cleanup short and leave loop
    devices, mounts or sysctls behind.
    """
    caught: list[int] = []

    def handler(signum, frame):
        if caught:
            os.write(2, b"pgfsbench: still cleaning up, exiting when done "
                        b"(kill -9 abandons it; then run 'pgfsbench cleanup')\n")
            return
        caught.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
