"""What a reader must know before believing a comparison.

- ``bound.py``: did a run measure storage, or what limited it (from the monitors);
- ``efficiency.py``: cost per unit of work, and tps stalls with what the monitors saw;
- ``durability.py``: is a target crash-safe (what the kernel and PostgreSQL report);
- ``diff.py``: what differs between targets (the plan's knobs, what the machine said);
- ``notes.py``: the caveats every output prints (runs that did not measure storage, loop
  images and virtual disks, a recipe's note, a memory limit the server filled).
"""
