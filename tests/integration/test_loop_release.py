"""Releasing a loop device that something else still holds open.

`losetup -d` on an open device succeeds but only marks it for detaching (it goes
at the last close), as when udev probes a device right after a umount. The ledger
must wait for that instead of calling the device released, and say so when it
stays.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

import pytest

from pgfsbench import releasers
from pgfsbench.ledger import Ledger
from tests.integration.conftest import loops_backed_by


@pytest.fixture
def held_loop(tmp_path, state_dir):
    """A ledger with one loop device on a sparse image, and an open fd on the device."""
    releasers.load_all()
    image = tmp_path / "held.img"
    with open(image, "wb") as f:
        f.truncate(16 * 2**20)
    ledger = Ledger.create(f"held-{tmp_path.name}", tmp_path)
    res = ledger.add("loop", image=str(image))
    device = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
    ).stdout.strip()
    fd = os.open(device, os.O_RDONLY)
    closed = threading.Event()

    def close() -> None:
        if not closed.is_set():
            closed.set()
            os.close(fd)

    try:
        yield ledger, res, image, close
    finally:
        close()
        for _ in range(50):  # the detach is pending: it happens at the close
            if not loops_backed_by(image):
                break
            time.sleep(0.1)
        else:
            subprocess.run(["losetup", "-d", *loops_backed_by(image)], check=False)
        ledger.resources.clear()
        ledger.close()


def test_a_detach_pending_on_an_open_device_is_waited_for(held_loop):
    ledger, res, image, close = held_loop
    closer = threading.Timer(1.0, close)  # like udev's probe, only longer
    closer.start()
    try:
        start = time.monotonic()
        assert ledger.release(res) == []
        waited = time.monotonic() - start
    finally:
        closer.cancel()
    assert loops_backed_by(image) == [] and ledger.resources == []
    assert 0.9 <= waited < 5  # it waited for the close, not the full 5 s


def test_a_device_held_open_stays_in_the_ledger_with_a_problem(held_loop):
    ledger, res, image, close = held_loop
    problems = ledger.release(res)
    (device,) = loops_backed_by(image)
    assert problems == [
        f"{device} is still backed by {image} 5 s after detaching: something holds it open"
    ]
    assert ledger.resources == [res]  # kept, so the final sweep or `cleanup` tries again
    close()
    assert ledger.release(res) == [] and loops_backed_by(image) == [] and ledger.resources == []
