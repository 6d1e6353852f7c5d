"""The monitors a plan asks for, started and stopped together."""

from __future__ import annotations

import time

from pgfsbench.metrics import Metric, Series
from pgfsbench.monitor.base import Monitor
from pgfsbench.monitor.postgres import PgMonitor
from pgfsbench.monitor.system import SystemMonitor


class MonitorSet:
    """A context manager: starts every monitor on entry, stops them all on exit."""

    def __init__(self, monitors: list[Monitor], origin: float) -> None:
        self.monitors = monitors
        self.origin = origin
        self._problems: list[str] = []

    def __enter__(self) -> MonitorSet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        for m in self.monitors:
            try:
                m.start(self.origin)
            except Exception as exc:  # a monitor must not break the run
                self._problems.append(f"{m.name}: could not start: {exc!r}")

    def stop(self) -> None:
        for m in self.monitors:
            try:
                m.stop()
            except Exception as exc:
                self._problems.append(f"{m.name}: could not stop: {exc!r}")

    def series(self) -> list[Series]:
        return [s for m in self.monitors for s in m.series()]

    def totals(self) -> list[Metric]:
        return [t for m in self.monitors for t in m.totals()]

    @property
    def problems(self) -> list[str]:
        return self._problems + [p for m in self.monitors for p in m.problems]


def monitors_for(
    settings,
    device: str | list[str] | None,
    backing_device: str | None,
    cluster,
    origin: float | None = None,
) -> MonitorSet:
    """The monitors ``settings`` (a plan's ``Monitors``) turns on, not yet started.

    ``origin`` is the ``time.monotonic()`` the workload's series count from; the
    PostgreSQL monitor needs a running ``cluster`` (None: left out).
    """
    monitors: list[Monitor] = []
    if settings.system:
        pgdata = getattr(cluster, "pgdata", None)  # the server's processes count as ours
        monitors.append(
            SystemMonitor(
                settings.interval,
                device,
                backing_device,
                server_pidfile=pgdata / "postmaster.pid" if pgdata is not None else None,
            )
        )
    if settings.postgres and cluster is not None:
        monitors.append(PgMonitor(cluster, settings.interval))
    return MonitorSet(monitors, time.monotonic() if origin is None else origin)
