"""Every module that acquires something a ledger records, for its releaser.

Each of these registers how its kind of resource is undone (``@releaser`` in
``ledger.py``) when it is imported. A campaign imports them anyway, by using
them; a process that releases a ledger it did not fill (``pgfsbench cleanup``
after a killed campaign) calls ``load_all()`` first. A new acquiring module is
added to ``ACQUIRING``; ``tests/unit/test_releasers.py`` checks that every kind
passed to ``ledger.add`` has a releaser.
"""

from __future__ import annotations

import importlib

ACQUIRING = (
    "pgfsbench.machine_lock",        # lock
    "pgfsbench.scratch",             # dir
    "pgfsbench.postgres.cluster",    # postgres
    "pgfsbench.provision.knobs",     # sysctl, sysfs
    "pgfsbench.provision.loop",      # file, loop
    "pgfsbench.provision.md",        # md
    "pgfsbench.provision.lvm",       # lvm-pv, lvm-vg, lvm-lv
    "pgfsbench.provision.mounting",  # mount
    "pgfsbench.provision.throttle",  # cgroup
)


def load_all() -> None:
    """Register every kind's releaser."""
    for module in ACQUIRING:
        importlib.import_module(module)
