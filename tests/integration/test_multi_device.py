"""Targets on several loop images: btrfs raid0/raid1 for real, LVM as far as this kernel
goes (pvcreate and vgcreate run, lvcreate needs device-mapper), and nothing left behind."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess

import pytest

from pgfsbench.errors import CommandFailed
from pgfsbench.filesystems.registry import recipe
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Target
from pgfsbench.proc import CommandResult
from pgfsbench.provision import lvm
from pgfsbench.provision.loop import attach_images
from pgfsbench.provision.target import Provisioning
from pgfsbench.provision.volume import join
from tests.integration.conftest import export, ledgers, leftovers, loops_backed_by, run_plan

BTRFS_RAID = """
name = "btrfs-raid"
[[targets]]
name = "btrfs-raid0"
fs = "btrfs"
size = "256M"
images = 3
mkfs = ["-d", "raid0", "-m", "raid1"]
[[workloads]]
type = "fsync"
seconds = 1
"""


def test_btrfs_raid0_data_raid1_metadata_over_three_images(tmp_path, state_dir):
    results, run = run_plan(tmp_path, BTRFS_RAID)
    db = sqlite3.connect(results / "results.db")
    (prov_json,) = db.execute("SELECT provenance_json FROM targets").fetchone()
    prov = json.loads(prov_json)
    assert {s for (s,) in db.execute("SELECT status FROM runs")} == {"ok"}
    db.close()

    members = prov["devices"]
    assert len(members) == 3 and all(m.startswith("/dev/loop") for m in members)
    assert prov["device"] == members[0]
    assert prov["layout"] == {"members": members, "spanned_by": "btrfs"}
    (mkfs,) = [c["argv"] for c in prov["commands"] if c["argv"][0].endswith("mkfs.btrfs")]
    assert mkfs[-3:] == members and mkfs[1:-3] == ["-f", "-d", "raid0", "-m", "raid1"]
    facts = prov["geometry"]["facts"]
    # what btrfs itself reports about the mounted filesystem: every device, the profiles
    assert facts["num_devices"] == 3 and facts["total_devices"] == 3
    assert facts["devices"].split() == members
    assert (facts["profile.data"], facts["profile.metadata"]) == ("RAID0", "RAID1")
    show = next(
        e for e in prov["geometry"]["extra"] if e["tool"][:3] == ["btrfs", "filesystem", "show"]
    )
    assert all(m in show["raw"] for m in members)
    assert [n for n in prov["notes"] if n.startswith("loop ")] and len(
        [n for n in prov["notes"] if "direct I/O" in n]
    ) == 3

    # the advice's mkfs names every member by a placeholder, never a loop device
    assert "mkfs.btrfs -d raid0 -m raid1 DEVICE DEVICE2 DEVICE3" in run.stdout
    (target,) = export(results)["targets"]
    assert target["status"] == "ok"
    images = [results / "images" / f"btrfs-raid0-{i}.img" for i in (1, 2, 3)]
    assert [loops_backed_by(i) for i in images] == [[], [], []]
    assert not any(i.exists() for i in images)
    assert ledgers(state_dir) == []
    assert leftovers() == []  # machine-wide: another helper's campaign shows here too


def test_an_lvm_stripe_on_a_kernel_without_device_mapper_is_skipped(tmp_path, state_dir):
    if lvm.unavailable_reason() is None:
        pytest.skip("this kernel has device-mapper: the LVM target would run")
    results, run = _run_unchecked(tmp_path)
    (target,) = export(results)["targets"]
    assert target["status"] == "skipped" and "device-mapper" in target["reason"]
    assert run.returncode == 1
    assert leftovers() == [] and ledgers(state_dir) == []


def _run_unchecked(tmp_path):
    from tests.integration.conftest import cli

    plan = tmp_path / "plan.toml"
    plan.write_text(
        'name = "lvm"\n[[targets]]\nname = "ext4-lvm"\nfs = "ext4"\n'
        'size = "128M"\nimages = 3\nvolume = { kind = "lvm-stripe", stripe = "8K" }\n'
        '[[workloads]]\ntype = "fsync"\nseconds = 1\n'
    )
    results = tmp_path / "r"
    return results, cli("run", str(plan), "--results", str(results), check=False)


def _lvm_knows(*args: str) -> str:
    return subprocess.run(
        ["pvs", "--noheadings", "-o", "pv_name,vg_name", *args],
        capture_output=True,
        text=True,
        env={"LVM_SUPPRESS_FD_WARNINGS": "1", "PATH": "/usr/sbin:/sbin:/usr/bin:/bin"},
    ).stdout


@pytest.mark.skipif(
    lvm.unavailable_reason() is not None and "lvcreate is missing" in lvm.unavailable_reason(),
    reason="needs lvm2: apt-get install lvm2",
)
def test_lvm_volumes_are_made_and_undone_for_real_on_loop_images(tmp_path, state_dir):
    """pvcreate and vgcreate run for real here; lvcreate needs device-mapper. Whatever
    got made, the ledger's releasers take it apart: no PV label or VG is left."""
    spec = Target(
        name="lvm", fs="ext4", size="64M", images=3, volume={"kind": "lvm-stripe", "stripe": "8K"}
    )
    ledger = Ledger.create("lvm-test", tmp_path)
    commands: list = []
    members: list = []
    outcome = None
    try:
        with contextlib.ExitStack() as undo:
            p = Provisioning(ledger, undo, commands)
            members = attach_images(spec, tmp_path / "images", p, False)
            joined = join(spec, recipe("ext4"), members, p)
            outcome = joined.layout["volume"]["path"]
            during = _lvm_knows(*[m["device"] for m in members])
            assert joined.layout["volume"]["vg"] in during
    except CommandFailed as exc:
        outcome = exc.result
    ran = [c.argv[0].rsplit("/", 1)[-1] for c in commands]
    assert ran[:3] == ["losetup"] * 3 and ran[3:7] == ["pvcreate"] * 3 + ["vgcreate"]
    assert [c.ok for c in commands[3:7]] == [True] * 4  # real on any kernel with lvm2
    if lvm.unavailable_reason() is not None:  # no device-mapper: lvcreate fails, as captured
        assert isinstance(outcome, CommandResult) and not outcome.ok
        assert "device-mapper" in outcome.stderr
    assert ledger.resources == []
    for m in members:
        assert loops_backed_by(m["image"]) == []
    assert "pgfsbench-lvm-" not in _lvm_knows()
    ledger.close()
    assert leftovers() == [] and ledgers(state_dir) == []
