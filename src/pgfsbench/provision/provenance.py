"""Everything recorded about a provisioned target, in one place (pyperf-style).

Each fact comes from a read-only look at the real thing (the kernel's mount
table, the filesystem's own tools, sysfs); none of it can fail a run.
"""

from __future__ import annotations

from pgfsbench.filesystems.mountcheck import mount_option_changes
from pgfsbench.plan.model import Target
from pgfsbench.provision.devinfo import backing_device_facts, device_facts, sysctl_snapshot
from pgfsbench.provision.geometry import filesystem_geometry
from pgfsbench.provision.target import PreparedTarget


def target_provenance(target: PreparedTarget, spec: Target) -> dict:
    prov = target.provenance()
    # Read from what is mounted: the device, or a ZFS dataset (pool/pgdata).
    prov["geometry"] = filesystem_geometry(
        target.fs, target.mount.source or target.device, target.mount.mount_point
    )
    if target.kind != "dir" and target.device:
        facts = device_facts(target.device)
        prov["device_facts"] = facts
        backing = facts.get("loop_backing_file") if isinstance(facts, dict) else None
        if backing:  # a loop image: the disk under it decides much of what we measure
            prov["backing_device"] = backing_device_facts(backing)
    prov["mount_option_changes"] = mount_option_changes(
        spec.mount, target.mount.options, fs=target.fs
    )
    prov["sysctls"] = sysctl_snapshot(spec.sysctls.keys())
    return prov
