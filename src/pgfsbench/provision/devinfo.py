"""What the block layer says about a device, and the VM sysctls that shape writeback.

Read from /sys and /proc only (no tools, nothing written). A loop device's
numbers also depend on the disk under its image file, so that one is recorded
too. Every reader returns what it could read: provenance never fails a run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pgfsbench.provision.mountinfo import mount_of

SYS_CLASS_BLOCK = Path("/sys/class/block")
SYS_DEV_BLOCK = Path("/sys/dev/block")
PROC_SYS = Path("/proc/sys")

# queue/ attributes recorded as they are (the scheduler is reduced to its [choice]).
QUEUE = (
    "rotational",
    "logical_block_size",
    "physical_block_size",
    "scheduler",
    "read_ahead_kb",
    "nr_requests",
    "write_cache",
    "max_sectors_kb",
    "discard_max_bytes",
)
VM_SYSCTLS = (
    "vm.dirty_ratio",
    "vm.dirty_background_ratio",
    "vm.dirty_bytes",
    "vm.dirty_background_bytes",
    "vm.dirty_expire_centisecs",
    "vm.dirty_writeback_centisecs",
    "vm.dirtytime_expire_seconds",
    "vm.swappiness",
    "vm.overcommit_memory",
)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _value(text: str) -> int | str:
    return int(text) if text.lstrip("-").isdigit() else text


def _scheduler(text: str) -> str:
    """'none [mq-deadline] kyber bfq' → 'mq-deadline' (the one in use)."""
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text


def _facts_of(sysdir: Path) -> dict:
    facts: dict = {"name": sysdir.name}
    if (dev := _read(sysdir / "dev")) is not None:
        facts["dev"] = dev
    if (size := _read(sysdir / "size")) is not None and size.isdigit():
        facts["size_bytes"] = int(size) * 512  # always 512-byte sectors, whatever the device
    # A partition has no queue/ of its own: its disk's queue is the one in use.
    queue_dir = sysdir / "queue"
    if not queue_dir.is_dir() and (sysdir / "partition").exists():
        facts["partition_of"] = sysdir.parent.name
        queue_dir = sysdir.parent / "queue"
    for attr in QUEUE:
        text = _read(queue_dir / attr)
        if text is not None:
            facts[attr] = _scheduler(text) if attr == "scheduler" else _value(text)
    if "rotational" in facts:
        facts["rotational"] = facts["rotational"] == 1
    hw = sysdir.parent if "partition_of" in facts else sysdir
    for attr in ("model", "vendor"):
        if text := _read(hw / "device" / attr):
            facts[attr] = text
    # What names this very disk across boots and hosts (a store keeps many hosts' runs).
    for attr in ("serial", "wwid"):
        if text := _read(hw / attr) or _read(hw / "device" / attr):
            facts[attr] = text
    if dm_name := _read(sysdir / "dm" / "name"):
        facts["dm_name"] = dm_name
        try:
            facts["slaves"] = sorted(p.name for p in (sysdir / "slaves").iterdir())
        except OSError:
            pass
    if (sysdir / "loop").is_dir():
        if (backing := _read(sysdir / "loop" / "backing_file")) is not None:
            facts["loop_backing_file"] = backing
        if (dio := _read(sysdir / "loop" / "dio")) is not None:
            facts["loop_dio"] = dio == "1"
    return facts


def device_facts(device: str) -> dict:
    """Size, rotational, block sizes, scheduler, read-ahead, write cache, model; loop details."""
    try:
        name = Path(os.path.realpath(device)).name
        link = SYS_CLASS_BLOCK / name
        if not link.exists():
            return {"device": device, "error": f"{device} is not a block device known to /sys"}
        # The real path: a partition's parent directory there is its disk.
        return {"device": device, **_facts_of(Path(os.path.realpath(link)))}
    except Exception as exc:  # provenance must never fail a run
        return {"device": device, "error": f"reading /sys for {device} failed: {exc!r}"}


def backing_device_facts(image_path: str | os.PathLike) -> dict:
    """The block device under the filesystem that holds ``image_path`` (a loop image)."""
    path = str(image_path)
    try:
        facts: dict = {"path": path}
        try:
            mount = mount_of(path)
            facts.update(
                filesystem=mount.fs_type, mount_point=mount.mount_point, source=mount.source
            )
        except (LookupError, OSError):
            mount = None
        st = os.stat(path)
        major, minor = os.major(st.st_dev), os.minor(st.st_dev)
        sysdir = SYS_DEV_BLOCK / f"{major}:{minor}"
        if major == 0 or not sysdir.exists():
            # tmpfs, overlay, btrfs (anonymous device numbers): the mount's source may
            # still name the block device.
            if mount is not None and mount.source.startswith("/dev/"):
                facts.update(device_facts(mount.source))
                return facts
            facts["error"] = (
                f"{path} is on {facts.get('filesystem', 'a filesystem')} with no "
                "block device of its own"
            )
            return facts
        facts["device"] = "/dev/" + Path(os.path.realpath(sysdir)).name
        facts.update(_facts_of(Path(os.path.realpath(sysdir))))
        return facts
    except Exception as exc:
        return {"path": path, "error": f"finding the device under {path} failed: {exc!r}"}


def sysctl_snapshot(extra: Iterable[str] = ()) -> dict:
    """``{"vm.dirty_ratio": 20, ...}``: the writeback and memory sysctls, plus ``extra``.

    A sysctl this kernel does not have is left out rather than guessed.
    """
    out: dict = {}
    for name in (*VM_SYSCTLS, *extra):
        if name in out:
            continue
        try:
            text = _read(PROC_SYS / name.replace(".", "/"))
        except Exception:
            text = None
        if text is not None:
            out[name] = _value(" ".join(text.split()))
    return out
