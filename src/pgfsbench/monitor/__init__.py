"""Monitors: what the machine and PostgreSQL did while a workload ran.

Every monitor has one interface (``base.Monitor``: start(origin), stop(),
series(), totals(), problems). The campaign uses them through ``monitors_for``::

    with monitors_for(plan.monitors, target.device, backing, cluster, origin) as mon:
        result = workload.run(ctx)
    result.series += mon.series()
    result.metrics += mon.totals()
    notes += mon.problems
"""

from __future__ import annotations

from pgfsbench.monitor.base import Monitor, PeriodicMonitor
from pgfsbench.monitor.devices import backing_device
from pgfsbench.monitor.monitorset import MonitorSet, monitors_for
from pgfsbench.monitor.postgres import PgMonitor
from pgfsbench.monitor.system import SystemMonitor

__all__ = [
    "Monitor",
    "PeriodicMonitor",
    "MonitorSet",
    "monitors_for",
    "SystemMonitor",
    "PgMonitor",
    "backing_device",
]
