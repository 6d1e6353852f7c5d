"""The CPUs' wake-up latency held while a campaign measures (the kernel's PM QoS).

A CPU with nothing to run halts. When an fsync completes, the backend waiting for it
runs once that CPU has woken: on a VM a halt is an exit to the hypervisor, and waking
costs tens of microseconds at every commit of an fsync-bound TPC-B run. How often it is
paid depends on what else keeps the CPUs busy, so someone else's load can *speed* such a
run up, and the runs between its bursts vary with it.

Writing a latency to ``/dev/cpu_dma_latency`` and keeping the file open asks the kernel
to use no idle state slower to leave than that (0: poll, never halt), as tuned's
latency-performance profile does. The kernel drops the request when the file is closed,
so nothing is left to restore, even after a kill -9. A poll counts as idle time in
/proc/stat, so the monitors' figures of others' CPU do not change.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterator
from pathlib import Path

DEVICE = Path("/dev/cpu_dma_latency")
CPUIDLE = Path("/sys/devices/system/cpu/cpuidle")


def idle_driver() -> str | None:
    """The kernel's cpuidle driver (haltpoll on a KVM guest, intel_idle, acpi_idle)."""
    try:
        return (CPUIDLE / "current_driver").read_text().strip() or None
    except OSError:
        return None


def current_us() -> int | None:
    """The latency the kernel holds now (every open request's smallest), or None."""
    try:
        with open(DEVICE, "rb") as f:
            return int(struct.unpack("=i", f.read(4))[0])
    except (OSError, struct.error):
        return None


@contextlib.contextmanager
def held(us: int | None) -> Iterator[dict]:
    """Hold the CPUs' wake-up latency at ``us`` microseconds while the block runs.
    Yields what was done, for the campaign's record: ``{}`` when nothing was asked,
    else the latency asked, whether it is held and what the kernel holds
    (``effective_us``; ``why_not`` when it is not held: no root, no such device), and
    the idle driver it applies to."""
    if us is None:
        yield {}
        return
    record: dict = {"asked_us": us, "held": False, "idle_driver": idle_driver()}
    try:
        fd = os.open(DEVICE, os.O_WRONLY)
    except OSError as e:
        record["why_not"] = f"{DEVICE}: {e.strerror}"
        yield record
        return
    try:
        os.write(fd, struct.pack("=i", us))
        record["held"] = True
        # read back, as the OS knobs are: every open request's smallest, ours or lower
        record["effective_us"] = current_us()
    except OSError as e:
        record["why_not"] = f"{DEVICE}: {e.strerror}"
    try:
        yield record
    finally:
        os.close(fd)  # the kernel lets the request go
