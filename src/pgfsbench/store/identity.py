"""Which machine and which disks a campaign ran on, from what it recorded.

The host facts are recorded when the campaign starts; the devices when each
target is first provisioned (its device, or for a loop image the disk under the
image). Together they tell one host's campaigns from another's in a store that
keeps many, and a disk swapped under the same hostname.
"""

from __future__ import annotations

from pgfsbench.store.read import Campaign

HOST_KEYS = ("hostname", "machine_id", "os", "arch", "kernel", "cpu", "cpus", "memory_mb")
DEVICE_KEYS = ("device", "model", "vendor", "serial", "wwid", "size_bytes", "rotational")


def target_device(provenance: dict) -> dict | None:
    """The disk a target's numbers depend on: a loop image's backing disk, else its own."""
    facts = provenance.get("backing_device") or provenance.get("device_facts")
    if not isinstance(facts, dict) or not facts.get("device"):
        return None
    return {k: facts[k] for k in DEVICE_KEYS if k in facts}


def host_identity(campaign: Campaign) -> dict:
    """Host facts that identify the machine, and each target's disk."""
    identity = {k: campaign.host.get(k) for k in HOST_KEYS}
    identity["devices"] = {
        t.name: d for t in campaign.targets if (d := target_device(t.provenance)) is not None
    }
    return identity
