"""Device targets and their safety refusals, on loop devices made to look like each case.

Every loop device, partition and mount here is made by the test and undone in a
finalizer; no other device of the machine is ever named. Backing files are not
called *.img and mounts not pgfsbench-*, so other tests' leftover checks never
mistake ours for theirs while both run.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from pgfsbench import ledger as ledger_mod
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Target
from pgfsbench.proc import RunAs, which
from pgfsbench.provision import device as device_mod
from pgfsbench.provision.device import device_target
from pgfsbench.provision.mountinfo import mount_points
from pgfsbench.provision.safety import check_formattable
from tests.integration.conftest import loops_backed_by

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (loop devices, mkfs, mount)")


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=check, capture_output=True, text=True)


class Loops:
    """Loop devices (and mounts on them) this test made, all undone by ``close``."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.images: list[Path] = []
        self.mounts: list[Path] = []

    def make(self, size_mb: int = 64, partscan: bool = False) -> str:
        image = self.directory / f"disk{len(self.images)}.raw"
        with open(image, "wb") as f:
            f.truncate(size_mb * 2**20)
        self.images.append(image)
        argv = ["losetup", "--find", "--show", *(["--partscan"] if partscan else []), str(image)]
        return sh(*argv).stdout.strip()

    def mount(self, device: str, name: str) -> Path:
        where = self.directory / name
        where.mkdir()
        self.mounts.append(where)
        sh("mount", device, str(where))
        return where

    def close(self) -> None:
        for where in reversed(self.mounts):
            if str(where) in mount_points():
                sh("umount", str(where), check=False)
        # Detach only what is backed by our own images, found by image, not by name.
        for image in reversed(self.images):
            for device in loops_backed_by(image):
                sh("partx", "-d", device, check=False)  # partitions we added by hand
                for attempt in range(10):
                    if sh("losetup", "-d", device, check=False).returncode == 0:
                        break
                    time.sleep(0.2 * (attempt + 1))
            if not loops_backed_by(image):
                image.unlink(missing_ok=True)  # up to 400 MB each, even if sparse


@pytest.fixture
def loops(tmp_path):
    made = Loops(tmp_path)
    yield made
    made.close()
    assert not any(image.exists() for image in made.images), "a loop device stayed"


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Ledger:
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    return Ledger.create("device-safety", tmp_path)


def needs(tool: str, package: str) -> None:
    if which(tool) is None:
        pytest.skip(f"{tool} is missing: apt-get install {package}")


def sysfs_partitions(device: str) -> list[str]:
    block = Path("/sys/block") / Path(device).name
    return sorted(p.name for p in block.iterdir() if (p / "partition").is_file())


def gpt_with_one_partition(device: str) -> None:
    needs("sfdisk", "fdisk")
    subprocess.run(
        ["sfdisk", "--quiet", device],
        input="label: gpt\n,,L\n",
        text=True,
        check=True,
        capture_output=True,
    )


def add_partitions(device: str) -> list[str]:
    """Make the kernel see the partitions: re-read, or add them by hand when the
    kernel was built without partition-table parsers (partscan finds nothing)."""
    sh("blockdev", "--rereadpt", device, check=False)
    if not sysfs_partitions(device):
        sh("partx", "--add", device)
    return sysfs_partitions(device)


# --- refusals ----------------------------------------------------------------


def test_a_device_not_on_the_allow_list_is_refused(loops):
    device = loops.make()
    other = loops.make()
    for allowed in ([], [other]):
        with pytest.raises(UserError) as exc:
            check_formattable(device, allowed, True)
        assert str(exc.value) == (
            f"{device} is not allowed to be formatted: formatting erases everything on it. "
            f"If that is what you want, repeat it on the command line: "
            f"--allow-format {device}"
        )


def test_a_mounted_device_is_refused_naming_the_mount_point(loops):
    device = loops.make()
    sh("mkfs.ext4", "-q", "-F", device)
    where = loops.mount(device, "somewhere")
    for wipe in (False, True):
        with pytest.raises(UserError, match=f"is mounted .*on {where}\\).*umount {where}"):
            check_formattable(device, [device], wipe)


def test_a_mounted_partition_is_found_by_device_number_not_name(loops):
    device = loops.make(partscan=True)
    gpt_with_one_partition(device)
    (part,) = add_partitions(device)
    # No udev here to make /dev/loopNp1: make our own node under another name and mount
    # through it, so only major:minor can tell the partition is mounted.
    major, minor = (Path("/sys/block") / Path(device).name / part / "dev").read_text().split(":")
    node = loops.directory / "renamed-partition"
    sh("mknod", str(node), "b", major.strip(), minor.strip())
    sh("mkfs.ext4", "-q", "-F", str(node))
    where = loops.mount(str(node), "part-mount")
    with pytest.raises(UserError, match=f"is mounted \\({part} on {where}\\)"):
        check_formattable(device, [device], True)


def test_a_filesystem_signature_is_refused_unless_wiping_is_asked_for(loops):
    device = loops.make()
    sh("mkfs.ext4", "-q", "-F", device)
    with pytest.raises(UserError) as exc:
        check_formattable(device, [device], False)
    message = str(exc.value)
    assert message.startswith(f"{device} carries signatures (ext4 at 0x438 (UUID ")
    assert "add --wipe-signatures" in message and f"wipefs --all {device}" in message
    found = check_formattable(device, [device], True).signatures
    assert len(found) == 1 and found[0].startswith("ext4 at 0x438")


def test_a_partition_table_is_a_signature(loops):
    device = loops.make()  # no partscan: the kernel sees no partitions, only the table
    gpt_with_one_partition(device)
    with pytest.raises(UserError, match=r"carries signatures \(gpt at 0x200; .*PMBR at 0x1fe"):
        check_formattable(device, [device], False)


def test_a_device_with_partitions_is_refused_even_with_wipe_signatures(loops):
    device = loops.make(partscan=True)
    gpt_with_one_partition(device)
    parts = add_partitions(device)
    assert parts == [f"{Path(device).name}p1"]
    for wipe in (False, True):
        with pytest.raises(UserError) as exc:
            check_formattable(device, [device], wipe)
        assert str(exc.value) == (
            f"{device} has partitions ({parts[0]}): name one partition as the device "
            f"instead, or delete them (sfdisk --delete {device}) if their data is not needed"
        )


def test_a_device_held_open_exclusively_is_refused_as_busy(loops):
    device = loops.make()
    fd = os.open(device, os.O_RDONLY | os.O_EXCL)  # what a RAID or btrfs member looks like
    try:
        with pytest.raises(UserError, match="is busy .*exclusive access"):
            check_formattable(device, [device], True)
    finally:
        os.close(fd)


# --- formatting ----------------------------------------------------------------


def test_a_clean_allowed_device_is_formatted_mounted_and_unmounted(loops, ledger, tmp_path):
    device = loops.make(size_mb=64)
    link = tmp_path / "by-id"  # named in the plan through a symlink, as /dev/disk/by-id does
    link.symlink_to(device)
    spec = Target(name="dev", fs="ext4", device=link, mount="noatime")
    owner = RunAs.current()
    with device_target(spec, ledger, owner, [device], False) as target:
        assert target.kind == "device" and target.device == device
        assert target.mount.fs_type == "ext4" and "noatime" in target.mount.options
        assert target.workdir.is_dir() and target.workdir.parent == Path(target.mount.mount_point)
        assert [r["kind"] for r in ledger.resources] == ["mount"]
        tools = [Path(c.argv[0]).name for c in target.commands]
        assert tools == ["mkfs.ext4", "mount"]  # nothing to wipe on a clean device
        assert target.provenance()["kind"] == "device"
        mount_point = target.mount.mount_point
    assert mount_point not in mount_points() and not os.path.exists(mount_point)
    assert ledger.resources == []
    assert loops_backed_by(loops.images[0]) == [device]  # the device is the user's: kept


def test_signatures_are_wiped_and_recorded_only_when_asked(loops, ledger):
    device = loops.make(size_mb=400)
    sh("mkfs.ext4", "-q", "-F", device)
    spec = Target(name="wiped", fs="xfs", device=Path(device))
    owner = RunAs.current()
    with pytest.raises(UserError, match="^target 'wiped': .* carries signatures"):
        with device_target(spec, ledger, owner, [device], False):
            pass
    assert ledger.resources == []
    with device_target(spec, ledger, owner, [device], True) as target:
        assert target.mount.fs_type == "xfs"
        wipe, mkfs = target.commands[0], target.commands[1]
        assert Path(wipe.argv[0]).name == "wipefs" and "--all" in wipe.argv
        assert "ext4" in wipe.stdout  # wipefs says what it erased: kept as the record
        assert Path(mkfs.argv[0]).name == "mkfs.xfs"
        assert any(
            n.startswith("signatures wiped before mkfs") and "ext4 at 0x438" in n
            for n in target.notes
        )
        mount_point = target.mount.mount_point
    assert mount_point not in mount_points()


def test_a_refused_device_is_never_formatted(loops, ledger, monkeypatch):
    device = loops.make()
    sh("mkfs.ext4", "-q", "-F", "-L", "keepme", device)
    where = loops.mount(device, "in-use")
    spec = Target(name="busy", fs="ext4", device=Path(device))
    with pytest.raises(UserError, match=f"^target 'busy': {device} is mounted"):
        with device_target(spec, ledger, RunAs.current(), [device], True):
            pass
    assert ledger.resources == [] and str(where) in mount_points()
    assert sh("blkid", "-o", "value", "-s", "LABEL", device).stdout.strip() == "keepme"


def test_a_device_too_small_for_the_filesystem_is_refused(loops, ledger):
    device = loops.make(size_mb=64)
    spec = Target(name="small", fs="xfs", device=Path(device))
    with pytest.raises(UserError, match="has 64 MB, xfs needs at least 300 MB"):
        with device_target(spec, ledger, RunAs.current(), [device], False):
            pass
    assert ledger.resources == []


@pytest.mark.parametrize(
    "fs, option",
    [("btrfs", "{victim}"), ("ext4", "device={victim}"), ("xfs", "logdev={victim},size=8m")],
)
def test_mkfs_options_that_name_another_device_are_refused(loops, ledger, fs, option):
    device, victim = loops.make(size_mb=400), loops.make()
    mkfs = ["-l", option.format(victim=victim)] if fs == "xfs" else [option.format(victim=victim)]
    if fs == "ext4":
        mkfs.insert(0, "-J")
    fields = dict(name="greedy", fs=fs, device=Path(device), mkfs=mkfs)
    # The plan refuses it (plan check says so)...
    with pytest.raises(ValidationError, match="names a device"):
        Target(**fields)
    # ...and so does the target itself, on the machine that formats.
    spec = Target.model_construct(**fields)  # as if validation had let it through
    with pytest.raises(UserError, match="^target 'greedy': option .* names another device"):
        with device_target(spec, ledger, RunAs.current(), [device, victim], True):
            pass
    assert sh("wipefs", "--no-act", "--json", device).stdout.count('"type"') == 0
    assert sh("wipefs", "--no-act", "--json", victim).stdout.count('"type"') == 0


def test_a_device_backing_a_loop_device_is_refused(loops):
    device = loops.make()
    stacked = sh("losetup", "--find", "--show", device).stdout.strip()
    try:
        with pytest.raises(UserError, match=f"backs loop device {Path(stacked).name}"):
            check_formattable(device, [device], True)
    finally:
        sh("losetup", "-d", stacked)


# --- check, then use: the device formatted is the device checked --------------------


def _signature_count(device: str) -> int:
    return sh("wipefs", "--no-act", "--json", device).stdout.count('"type"')


def test_a_link_switched_after_the_check_does_not_redirect_mkfs(
    loops, ledger, tmp_path, monkeypatch
):
    """The plan names a /dev/disk/by-id-like link; it is switched to another device
    right after the safety check. The checked device is formatted, not the new one."""
    checked, victim = loops.make(), loops.make()
    link = tmp_path / "by-id"
    link.symlink_to(checked)
    real_check = device_mod.check_formattable

    def check_then_switch(*args, **kwargs):
        result = real_check(*args, **kwargs)
        link.unlink()
        link.symlink_to(victim)  # what an attacker (or a udev rename) could do meanwhile
        return result

    monkeypatch.setattr(device_mod, "check_formattable", check_then_switch)
    spec = Target(name="switched", fs="ext4", device=link)
    with device_target(spec, ledger, RunAs.current(), [checked, victim], False) as target:
        assert target.device == checked
        assert any(
            n.startswith("formatted through /proc/self/fd/") and checked in n for n in target.notes
        )
    assert _signature_count(checked) == 1 and _signature_count(victim) == 0


def test_a_node_replaced_after_the_check_is_refused(loops, ledger, tmp_path, monkeypatch):
    """The checked path itself is made to name another device (a node renamed in its
    place): the device number no longer matches and nothing is formatted."""
    checked, victim = loops.make(), loops.make()
    node = tmp_path / "disk-node"

    def mknod(device: str) -> None:
        rdev = os.stat(device).st_rdev
        node.unlink(missing_ok=True)
        sh("mknod", str(node), "b", str(os.major(rdev)), str(os.minor(rdev)))

    mknod(checked)
    real_check = device_mod.check_formattable

    def check_then_replace(*args, **kwargs):
        result = real_check(*args, **kwargs)
        mknod(victim)
        return result

    monkeypatch.setattr(device_mod, "check_formattable", check_then_replace)
    spec = Target(name="replaced", fs="ext4", device=node)
    victim_rdev = os.stat(victim).st_rdev
    with pytest.raises(
        UserError,
        match=(
            f"^target 'replaced': {node} changed since it was checked: it is now "
            f"{os.major(victim_rdev)}:{os.minor(victim_rdev)}, it was .*refusing to format"
        ),
    ):
        with device_target(spec, ledger, RunAs.current(), [str(node), victim], False):
            pass
    assert ledger.resources == []
    assert _signature_count(checked) == 0 and _signature_count(victim) == 0


def test_btrfs_over_two_allowed_devices_and_each_is_checked(loops, ledger):
    """devices = [...]: every device passes the safety check; btrfs spans them (raid1)."""
    first, second = loops.make(size_mb=200), loops.make(size_mb=200)
    spec = Target(
        name="two",
        fs="btrfs",
        devices=[Path(first), Path(second)],
        mkfs=["-d", "raid1", "-m", "raid1"],
    )
    owner = RunAs.current()
    with pytest.raises(UserError, match=f"{second} is not allowed to be formatted"):
        with device_target(spec, ledger, owner, [first], False):
            pass
    assert _signature_count(first) == 0  # refused before anything was written
    with device_target(spec, ledger, owner, [first, second], False) as target:
        assert target.devices == [first, second] and target.device == first
        mkfs = next(c for c in target.commands if Path(c.argv[0]).name == "mkfs.btrfs")
        assert len([a for a in mkfs.argv if a.startswith("/proc/self/fd/")]) == 2
        scan = next(c for c in target.commands if c.argv[1:3] == ("device", "scan"))
        assert list(scan.argv[3:]) == [first, second]
        assert target.mount.fs_type == "btrfs"
        assert target.layout == {"members": [first, second], "spanned_by": "btrfs"}
        mount_point = target.mount.mount_point
    assert mount_point not in mount_points() and ledger.resources == []
