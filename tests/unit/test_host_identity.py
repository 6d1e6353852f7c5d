"""Which machine and disks a campaign ran on: recorded with it, read back from it."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import pytest

from pgfsbench.provision import devinfo
from pgfsbench.provision.host import host_facts
from pgfsbench.store.db import Store
from pgfsbench.store.identity import host_identity
from pgfsbench.store.read import load_campaign
from tests.unit.test_geometry import _fake_sys, _write


def test_host_facts_identify_this_machine() -> None:
    facts = host_facts(None)
    assert facts["hostname"] == platform.node()
    assert facts["kernel"] == platform.release()
    assert facts["arch"] == platform.machine()
    assert facts["cpus"] == os.cpu_count() and facts["cpu"]
    assert facts["memory_mb"] > 0
    if Path("/etc/machine-id").is_file():
        assert facts["machine_id"] == Path("/etc/machine-id").read_text().strip()
        assert len(facts["machine_id"]) == 32
    if Path("/etc/os-release").is_file():
        assert facts["os"] == platform.freedesktop_os_release()["PRETTY_NAME"]


def test_a_disk_serial_and_wwid_are_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    klass = _fake_sys(tmp_path)
    disk = tmp_path / "devices" / "pci0" / "block" / "sda"
    _write(disk / "device" / "serial", "ZA1B2C3D")
    _write(disk / "device" / "wwid", "naa.5000c500a1b2c3d4")
    monkeypatch.setattr(devinfo, "SYS_CLASS_BLOCK", klass)
    facts = devinfo.device_facts("/dev/sda1")  # a partition: its disk's identity
    assert (facts["serial"], facts["wwid"]) == ("ZA1B2C3D", "naa.5000c500a1b2c3d4")
    assert "serial" not in devinfo.device_facts("/dev/loop3")  # none to read: left out


def test_the_identity_names_each_targets_disk(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "r")
    host = {
        "hostname": "db1",
        "machine_id": "m" * 32,
        "os": "Debian",
        "arch": "x86_64",
        "kernel": "6.1",
        "cpu": "Xeon",
        "cpus": 8,
        "memory_mb": 32000,
        "root": True,
    }
    store.start_campaign("c1", "p", {"name": "p"}, host, "0")
    loop = store.add_target("loop", 0, "loop", "ext4", {})
    store.set_target(
        loop,
        "ok",
        provenance={  # a loop image: the disk under the image
            "device_facts": {"device": "/dev/loop3", "loop_backing_file": "/var/tmp/x.img"},
            "backing_device": {
                "path": "/var/tmp/x.img",
                "device": "/dev/nvme0n1",
                "model": "Samsung 990",
                "serial": "S6Z",
                "size_bytes": 10,
                "rotational": False,
                "scheduler": "none",
            },
        },
    )
    device = store.add_target("dev", 1, "device", "xfs", {})
    store.set_target(
        device,
        "ok",
        provenance={"device_facts": {"device": "/dev/sdb", "model": "ST1000", "wwid": "naa.5"}},
    )
    directory = store.add_target("dir", 2, "dir", "dir", {})
    store.set_target(directory, "ok", provenance={"kind": "dir"})
    store.close()
    identity = host_identity(load_campaign(tmp_path / "r"))
    assert {k: identity[k] for k in host if k != "root"} == {
        k: v for k, v in host.items() if k != "root"
    }
    assert identity["devices"] == {
        "loop": {
            "device": "/dev/nvme0n1",
            "model": "Samsung 990",
            "serial": "S6Z",
            "size_bytes": 10,
            "rotational": False,
        },
        "dev": {"device": "/dev/sdb", "model": "ST1000", "wwid": "naa.5"},
    }
    json.dumps(identity)  # it is stored and listed as JSON
