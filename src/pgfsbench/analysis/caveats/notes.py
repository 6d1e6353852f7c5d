"""What a reader must know before believing a comparison: runs that did not measure
storage (bound.py), where the target is a loop image or sits on a virtual disk, what
its filesystem's recipe says (ZFS through FUSE is not kernel ZFS), a memory limit the
server filled, and targets compared under different memory limits.

Pure functions of stored results, shared by the terminal, the report and the export.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pgfsbench.analysis.caveats.bound import CACHED, CPU, NOT_STORAGE, OTHER, Bound, classify
from pgfsbench.filesystems.registry import find

if TYPE_CHECKING:
    from pgfsbench.store.read import Campaign, StoredRun, StoredTarget

# What a verdict resting on such runs compares instead.
MEANING = {
    CPU: "CPU-bound: this compares CPU contention, not the filesystems",
    OTHER: "other load on the machine: this compares the targets under someone else's "
    "load, not the filesystems alone",
    CACHED: "cached: the reads never reached the device; this compares memory, not the filesystems",
}
# Vendors and models of virtual disks in /sys (virtio's PCI vendor id is 0x1af4).
VIRTUAL_VENDORS = {
    "0x1af4": "virtio",
    "QEMU": "QEMU",
    "VMware": "VMware",
    "VBOX": "VirtualBox",
    "Msft": "Hyper-V",
    "Google": "Google Persistent Disk",
    "Amazon": "EBS",
    "Xen": "Xen",
}


def run_bound(run: StoredRun) -> Bound | None:
    """What limited a completed run; None when it has no ``bound.*`` metrics."""
    return classify(run.metrics) if run.status == "ok" else None


def measurement_caveats(
    campaign: Campaign,
    workload: str,
    label: str,
    targets: list[str] | None = None,
    devices: bool = True,
) -> list[str]:
    """One caveat per class of not-storage-bound runs behind a measurement, then (with
    ``devices``) the targets' loop-image and virtual-disk caveats."""
    runs = [
        r
        for r in campaign.runs
        if r.workload == workload
        and r.label == label
        and r.status == "ok"
        and (targets is None or r.target in targets)
    ]
    bounds = [(r.target, run_bound(r)) for r in runs]  # once a run, not once a class
    out = []
    for cls in NOT_STORAGE:
        hit: dict[str, list[Bound]] = {}
        total: dict[str, int] = {}
        for target, b in bounds:
            total[target] = total.get(target, 0) + 1
            if b is not None and cls in b.classes:
                hit.setdefault(target, []).append(b)
        if hit:
            where = ", ".join(f"{t} {len(bs)}/{total[t]} runs" for t, bs in hit.items())
            example = next(iter(hit.values()))[0].reasons[cls]
            out.append(f"{MEANING[cls]} ({where}; {example})")
    if not devices:
        return out
    names = targets if targets is not None else {r.target for r in runs}
    compared = [t for t in campaign.targets if t.name in names]
    return out + memory_caveats(campaign, compared) + device_caveats(compared)


def memory_limit(campaign: Campaign, target: StoredTarget) -> str | None:
    """The memory size the target's server and page cache were held to: as recorded when
    it ran, else as its plan entry or the plan asked (None: no limit)."""
    recorded = (target.provenance or {}).get("memory") or {}
    if recorded.get("limit"):
        return str(recorded["limit"])
    asked = (target.spec or {}).get("memory") or (campaign.plan or {}).get("memory")
    return str(asked) if asked else None


def memory_caveats(campaign: Campaign, targets: list[StoredTarget]) -> list[str]:
    """One caveat when the targets compared ran under different memory limits."""
    limits = {t.name: memory_limit(campaign, t) for t in targets}
    if len(targets) < 2 or len(set(limits.values())) < 2:
        return []
    which = ", ".join(f"{name} {limit or 'no limit'}" for name, limit in limits.items())
    return [
        f"different memory limits ({which}): the page cache each server had differs, "
        "so this compares memory sizes as well as the targets"
    ]


def device_caveats(targets: list[StoredTarget]) -> list[str]:
    """Loop-image and virtual-disk caveats, each once with the targets it applies to."""
    grouped: dict[str, list[str]] = {}
    for t in targets:
        for text in target_caveats(t):
            grouped.setdefault(text, []).append(t.name)
    return [f"{', '.join(names)}: {text}" for text, names in grouped.items()]


def _dict(value: object) -> dict:
    """``value`` if it is a dict (a provenance record), else an empty one."""
    return value if isinstance(value, dict) else {}


def target_caveats(target: StoredTarget) -> list[str]:
    """From the target's provenance: what the loop device or the disk may hide."""
    p = _dict(target.provenance)
    dev, backing = _dict(p.get("device_facts")), _dict(p.get("backing_device"))
    out = []
    if dev.get("loop_dio") is False:
        out.append(
            "loop image without direct I/O: the host page cache sits under it, so "
            "reads may come from memory and writes are cached twice before a flush"
        )
    lbs, pbs = _int(dev.get("logical_block_size")), _int(backing.get("physical_block_size"))
    if dev.get("loop_backing_file") and lbs and pbs and lbs < pbs:
        out.append(
            f"the loop device takes {lbs}-byte writes onto a disk with {pbs}-byte "
            "physical sectors: smaller writes cost that disk a read-modify-write "
            "a real device would not hide"
        )
    if text := _memory_filled(p.get("memory")):
        out.append(text)
    if recipe := find(target.fs):  # what the filesystem itself says (zfs-fuse: FUSE)
        out += recipe.caveats(p)
    disk = backing or dev
    if virtual := _virtual(disk):
        out.append(
            f"on a virtual disk ({virtual}): its flush and latency are the "
            "hypervisor's, which may cache writes or share the disk with others"
        )
    return out


def _memory_filled(record: object) -> str | None:
    """The server filled its memory limit (its peak reached it, or the kernel counted
    charges refused at it): the kernel evicted its cached pages to stay within it. The
    point of a limit; said so the results are read as this memory size's."""
    if not isinstance(record, dict) or not record.get("limit"):
        return None
    hits = sum(_int(record.get(k)) or 0 for k in ("failcnt", "memsw_failcnt", "max_events"))
    peak, limit = _int(record.get("peak_bytes")), _int(record.get("limit_bytes"))
    if not hits and not (peak and limit and peak >= limit):
        return None
    how = [f"peak {peak / 2**20:,.0f} MiB"] if peak else []
    if hits:
        how.append(f"{hits:,} charges refused at the limit")
    return (
        f"held to memory = {record['limit']} and the server filled it ({', '.join(how)}): "
        "the kernel evicted cached pages to stay within it, so reads beyond it went to "
        "the device; these results hold for this memory size"
    )


def _virtual(facts: dict) -> str | None:
    text = " ".join(str(facts.get(k) or "") for k in ("vendor", "model"))
    for key, name in VIRTUAL_VENDORS.items():
        if key.lower() in text.lower():
            return name
    if str(facts.get("name") or "").startswith(("xvd", "vd")):
        return "xen" if str(facts["name"]).startswith("xvd") else "virtio"
    return None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def fill_verdict_caveats(lines: list, campaign: Campaign) -> list:
    """Set each verdict line's ``caveats`` from the runs and targets it rests on."""
    for line in lines:
        line.caveats = measurement_caveats(
            campaign, line.workload, line.label, list(line.durability)
        )
    return lines
