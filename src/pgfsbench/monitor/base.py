"""The one interface every monitor has, and the periodic thread most of them share.

A monitor samples something beside a workload and hands back series on the
workload's own timeline (seconds since ``origin``, a ``time.monotonic()``),
run-level totals as metrics, and ``problems``: why some numbers are missing,
recorded as data instead of raised, since a monitor must never break a run.
"""

from __future__ import annotations

import math
import threading
import time
from abc import ABC, abstractmethod

from pgfsbench.metrics import Metric, Series


class Monitor(ABC):
    """start(origin) → … workload … → stop(); then series(), totals(), problems."""

    name: str = "monitor"

    def __init__(self) -> None:
        self.problems: list[str] = []

    @abstractmethod
    def start(self, origin: float) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def series(self) -> list[Series]: ...

    @abstractmethod
    def totals(self) -> list[Metric]: ...

    def problem(self, text: str) -> None:
        if text not in self.problems:  # once each: a missing device is not news every second
            self.problems.append(text)


class PeriodicMonitor(Monitor):
    """Samples once in start(), every ``interval`` on a background thread, once in stop().

    Subclasses implement ``_sample(final)``; it runs under a lock, so the thread's
    ticks and the last sample in stop() never interleave. An exception in it is a
    problem, not a crash. ``cpu_seconds`` is the CPU time the sampling thread used
    (its own cost, for the overhead benchmark).
    """

    def __init__(self, interval: float) -> None:
        super().__init__()
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError(f"sampling interval must be a positive number, not {interval!r}")
        self.interval = interval
        self.origin: float | None = None
        self.cpu_seconds = 0.0
        self.ticks = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started_at = 0.0

    def start(self, origin: float) -> None:
        if self._thread is not None:
            raise RuntimeError(f"a {type(self).__name__} runs once; make a new one")
        self.origin = origin
        self._started_at = time.monotonic()
        self._sample_safely(first=True)
        self._thread = threading.Thread(
            target=self._loop, name=f"pgfsbench-{self.name}", daemon=True
        )  # never keeps the program alive
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None or self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        self._sample_safely(final=True)  # a workload shorter than one tick still gets a point
        self._finish()

    def _loop(self) -> None:
        cpu0 = time.thread_time()
        start, tick = self._started_at, 1
        try:
            # Deadlines on a fixed grid, so the period does not drift by the sampling cost.
            while not self._stop.wait(max(0.0, start + tick * self.interval - time.monotonic())):
                self._sample_safely()
                self.ticks += 1
                # After a stall (suspended VM, overloaded box) skip missed ticks, no burst.
                tick = max(tick + 1, math.floor((time.monotonic() - start) / self.interval) + 1)
        finally:
            self.cpu_seconds += time.thread_time() - cpu0

    def sample_now(self) -> None:
        """Close the current interval now (the thread does this every ``interval``)."""
        if self._thread is None:
            raise RuntimeError("start the monitor first")
        self._sample_safely()

    def _sample_safely(self, first: bool = False, final: bool = False) -> None:
        try:
            with self._lock:
                self._sample(first=first, final=final)
        except Exception as exc:  # a bug of ours must end neither sampling nor the workload
            self.problem(f"{self.name}: sampling failed: {exc!r}")

    def _t(self, now: float) -> float:
        assert self.origin is not None
        return round(now - self.origin, 3)

    @abstractmethod
    def _sample(self, first: bool, final: bool) -> None: ...

    def _finish(self) -> None:
        """After the last sample (close connections and the like)."""
