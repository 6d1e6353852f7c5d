"""Filesystem geometry parsers on real tool outputs, and device facts from /sys.

Fixtures were captured on this project's machine (xfsprogs, e2fsprogs 1.47.0,
btrfs-progs, kernel 6.18) from small loop filesystems:
- xfs_info_su_sw.txt: mkfs.xfs -d agcount=4,sunit=16,swidth=48, mounted
  noatime,nodiratime,logbsize=262144,swalloc,allocsize=16M,inode64 (the XFS-vs-ext4 study)
- xfs_info_logdev.txt: mkfs.xfs -l logdev=/dev/loop5,size=64m (external log)
- dumpe2fs_ext4_stride.txt: mkfs.ext4 -E stride=2,stripe-width=6, read while mounted
- dumpe2fs_ext4_extjournal.txt: mkfs.ext4 -J device=<journal_dev loop>
- dumpe2fs_ext2.txt / dumpe2fs_ext3.txt: mkfs.ext2 / mkfs.ext3 defaults
- btrfs_dump_super_default.txt / _tuned.txt: mkfs.btrfs / mkfs.btrfs -m single -n 4096
- btrfs_filesystem_df_*.txt: btrfs filesystem df on those, mounted
- *_error_*_exitN.{stdout,stderr}.txt: each tool pointed at another filesystem
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pgfsbench.filesystems.btrfs import parse_btrfs_df, parse_btrfs_super
from pgfsbench.filesystems.ext import parse_dumpe2fs
from pgfsbench.filesystems.xfs import parse_xfs_info
from pgfsbench.provision import devinfo, geometry
from pgfsbench.provision.geometry import filesystem_geometry

FIXTURES = Path(__file__).parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# --- xfs -----------------------------------------------------------------------------


def test_xfs_info_stripe_alignment_and_internal_log() -> None:
    facts = parse_xfs_info(fixture("xfs_info_su_sw.txt"))
    assert facts["meta-data.agcount"] == 4 and facts["meta-data.agsize"] == 25600
    assert facts["data.bsize"] == 4096 and facts["data.blocks"] == 102400
    # mkfs sunit=16,swidth=48 are 512-byte sectors; xfs_info counts 4 kB blocks
    assert (facts["data.sunit"], facts["data.swidth"]) == (2, 6)
    assert (facts["data.sunit_bytes"], facts["data.swidth_bytes"]) == (8192, 24576)
    assert facts["log.internal"] is True and "log.device" not in facts
    assert facts["log.bsize"] == 4096 and facts["log.blocks"] == 16384
    assert facts["log.version"] == 2 and facts["log.lazy-count"] == 1
    assert facts["naming.version"] == 2 and facts["naming.ftype"] == 1
    assert facts["meta-data.crc"] == 1 and facts["meta-data.reflink"] == 1
    assert "realtime.device" not in facts  # "realtime =none"


def test_xfs_info_external_log() -> None:
    facts = parse_xfs_info(fixture("xfs_info_logdev.txt"))
    assert facts["log.internal"] is False and facts["log.device"] == "/dev/loop5"
    assert facts["data.sunit"] == 0 and facts["log.blocks"] == 16384


def test_xfs_info_older_spelling_of_internal_log() -> None:
    text = fixture("xfs_info_su_sw.txt").replace("=internal log", "=internal    ")
    assert "internal log" not in text
    assert parse_xfs_info(text)["log.internal"] is True


def test_xfs_info_error_output_gives_no_facts() -> None:
    assert fixture("xfs_info_error_not_xfs_exit1.stdout.txt") == ""
    assert parse_xfs_info(fixture("xfs_info_error_not_xfs_exit1.stderr.txt")) == {}


# --- ext2/3/4 ------------------------------------------------------------------------


def test_dumpe2fs_raid_stride_and_internal_journal() -> None:
    facts = parse_dumpe2fs(fixture("dumpe2fs_ext4_stride.txt"))
    assert facts["raid_stride"] == 2 and facts["raid_stripe_width"] == 6
    assert facts["block_size"] == 1024 and facts["inode_count"] == 76912
    assert facts["inode_size"] == 256  # "Inode size:\t  256": a tab in the real output
    assert facts["journal"] == "internal" and facts["total_journal_size"] == "8M"
    features = facts["filesystem_features"].split()
    assert "has_journal" in features and "metadata_csum" in features
    assert "needs_recovery" not in features  # mounted-state flag, not a mkfs choice
    # Counters, dates and UUIDs would make two identical targets differ.
    assert not {"free_blocks", "filesystem_uuid", "last_mount_time", "mount_count"} & set(facts)


def test_dumpe2fs_external_journal_ext2_ext3() -> None:
    ext = parse_dumpe2fs(fixture("dumpe2fs_ext4_extjournal.txt"))
    assert ext["journal"] == "external" and ext["block_size"] == 4096
    assert "raid_stride" not in ext
    assert parse_dumpe2fs(fixture("dumpe2fs_ext2.txt"))["journal"] == "none"
    ext3 = parse_dumpe2fs(fixture("dumpe2fs_ext3.txt"))
    assert ext3["journal"] == "internal" and ext3["total_journal_blocks"] == 4096
    assert "extent" not in ext3["filesystem_features"].split()


def test_dumpe2fs_error_output_gives_no_facts() -> None:
    assert parse_dumpe2fs(fixture("dumpe2fs_error_not_ext_exit19.stdout.txt")) == {}
    assert parse_dumpe2fs(fixture("dumpe2fs_error_not_ext_exit19.stderr.txt")) == {}


# --- btrfs ---------------------------------------------------------------------------


def test_btrfs_dump_super_default_and_tuned() -> None:
    default = parse_btrfs_super(fixture("btrfs_dump_super_default.txt"))
    tuned = parse_btrfs_super(fixture("btrfs_dump_super_tuned.txt"))
    assert default["nodesize"] == 16384 and tuned["nodesize"] == 4096  # -n 4096
    assert default["sectorsize"] == tuned["sectorsize"] == 4096
    assert default["csum_type"] == "crc32c" and default["num_devices"] == 1
    assert default["incompat_flags"] == "MIXED_BACKREF EXTENDED_IREF SKINNY_METADATA NO_HOLES"
    assert default["compat_ro_flags"] == "FREE_SPACE_TREE FREE_SPACE_TREE_VALID"
    assert "fsid" not in default and "generation" not in default


def test_btrfs_profiles_from_filesystem_df() -> None:
    assert parse_btrfs_df(fixture("btrfs_filesystem_df_default.txt")) == {
        "profile.data": "single",
        "profile.system": "DUP",
        "profile.metadata": "DUP",
    }
    assert parse_btrfs_df(fixture("btrfs_filesystem_df_tuned.txt")) == {  # -m single
        "profile.data": "single",
        "profile.system": "single",
        "profile.metadata": "single",
    }
    assert parse_btrfs_df(fixture("btrfs_filesystem_df_error_not_btrfs_exit1.stderr.txt")) == {}


def test_btrfs_error_output_gives_no_facts() -> None:
    assert parse_btrfs_super(fixture("btrfs_dump_super_error_not_btrfs_exit1.stdout.txt")) == {}


# --- running the tools never raises ---------------------------------------------------


def test_geometry_of_an_unknown_fs_or_missing_device_is_an_error_entry() -> None:
    g = filesystem_geometry("tmpfs", None)
    assert g["tool"] is None and g["facts"] == {} and "tmpfs" in g["error"]
    g = filesystem_geometry("ext4", None, "/mnt")
    assert "without a device" in g["error"]


def test_a_missing_tool_is_an_error_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(geometry.proc, "which", lambda name, *a, **k: None)
    g = filesystem_geometry("xfs", "/dev/loop0", "/mnt")
    assert g["tool"] == ["xfs_info", "/mnt"] and g["facts"] == {}
    assert "xfs_info not found" in g["error"]


def test_a_parser_bug_is_an_error_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(geometry, "_run", lambda argv: (1 / 0, None))
    assert "ZeroDivisionError" in filesystem_geometry("xfs", "/dev/loop0")["error"]


@pytest.mark.skipif(
    shutil.which("dumpe2fs") is None and not Path("/usr/sbin/dumpe2fs").exists(),
    reason="dumpe2fs (e2fsprogs) is not installed",
)
def test_a_failing_tool_returns_its_error_text() -> None:
    g = filesystem_geometry("ext4", "/dev/pgfsbench-no-such-device")
    assert g["facts"] == {} and g["tool"][:2] == ["dumpe2fs", "-h"]
    assert "No such file or directory" in g["error"] and g["error"].startswith("dumpe2fs exited")


# --- device facts from a fake /sys ----------------------------------------------------


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _fake_sys(root: Path) -> Path:
    """/sys/class/block with a loop device, a disk and one partition of it."""
    devices = root / "devices"
    loop = devices / "virtual" / "block" / "loop3"
    for attr, value in {
        "dev": "7:3",
        "size": "4194304",
        "queue/rotational": "0",
        "queue/logical_block_size": "512",
        "queue/physical_block_size": "4096",
        "queue/scheduler": "none [mq-deadline] kyber bfq",
        "queue/read_ahead_kb": "128",
        "queue/nr_requests": "4",
        "queue/write_cache": "write back",
        "loop/backing_file": "/var/tmp/pgfsbench/x/image.img",
        "loop/dio": "1",
    }.items():
        _write(loop / attr, value)
    disk = devices / "pci0" / "block" / "sda"
    for attr, value in {
        "dev": "8:0",
        "size": "2000409264",
        "queue/rotational": "1",
        "queue/scheduler": "[none] mq-deadline",
        "queue/write_cache": "write through",
        "device/model": "ST1000DM010-2EP1",
        "device/vendor": "ATA",
    }.items():
        _write(disk / attr, value)
    _write(disk / "sda1" / "dev", "8:1")
    _write(disk / "sda1" / "size", "2048")
    _write(disk / "sda1" / "partition", "1")
    klass = root / "class" / "block"
    klass.mkdir(parents=True)
    for name, target in (("loop3", loop), ("sda", disk), ("sda1", disk / "sda1")):
        (klass / name).symlink_to(target)
    return klass


def test_device_facts_of_a_loop_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devinfo, "SYS_CLASS_BLOCK", _fake_sys(tmp_path))
    facts = devinfo.device_facts("/dev/loop3")
    assert facts == {
        "device": "/dev/loop3",
        "name": "loop3",
        "dev": "7:3",
        "size_bytes": 2 * 2**30,
        "rotational": False,
        "logical_block_size": 512,
        "physical_block_size": 4096,
        "scheduler": "mq-deadline",
        "read_ahead_kb": 128,
        "nr_requests": 4,
        "write_cache": "write back",
        "loop_backing_file": "/var/tmp/pgfsbench/x/image.img",
        "loop_dio": True,
    }


def test_device_facts_of_a_partition_use_its_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(devinfo, "SYS_CLASS_BLOCK", _fake_sys(tmp_path))
    facts = devinfo.device_facts("/dev/sda1")
    assert facts["size_bytes"] == 2048 * 512 and facts["partition_of"] == "sda"
    assert facts["rotational"] is True and facts["scheduler"] == "none"
    assert facts["write_cache"] == "write through"
    assert (facts["model"], facts["vendor"]) == ("ST1000DM010-2EP1", "ATA")
    assert "loop_dio" not in facts


def test_device_facts_of_an_unknown_device(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devinfo, "SYS_CLASS_BLOCK", _fake_sys(tmp_path))
    assert "not a block device" in devinfo.device_facts("/dev/nvme9n9")["error"]


def test_backing_device_of_a_tmpfs_file_says_there_is_none(tmp_path: Path) -> None:
    if not Path("/dev/shm").is_dir():
        pytest.skip("no /dev/shm on this machine")
    facts = devinfo.backing_device_facts("/dev/shm")
    assert facts["filesystem"] == "tmpfs" and "no block device" in facts["error"]
    assert "error" in devinfo.backing_device_facts(tmp_path / "missing")


def test_backing_device_of_this_file_is_a_real_block_device() -> None:
    st = os.stat(__file__)
    if os.major(st.st_dev) == 0:
        pytest.skip("the tests live on a filesystem without a block device (overlay, tmpfs)")
    facts = devinfo.backing_device_facts(__file__)
    assert facts["device"].startswith("/dev/") and facts["size_bytes"] > 0
    assert "scheduler" in facts and "loop_backing_file" not in facts


def test_sysctl_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "vm" / "dirty_ratio", "20")
    _write(tmp_path / "vm" / "dirty_bytes", "0")
    _write(tmp_path / "kernel" / "sched_autogroup_enabled", "1")
    _write(tmp_path / "net" / "ipv4" / "ip_local_port_range", "32768\t60999")
    monkeypatch.setattr(devinfo, "PROC_SYS", tmp_path)
    snap = devinfo.sysctl_snapshot(
        ["kernel.sched_autogroup_enabled", "net.ipv4.ip_local_port_range", "vm.dirty_ratio"]
    )
    assert snap == {
        "vm.dirty_ratio": 20,
        "vm.dirty_bytes": 0,
        "kernel.sched_autogroup_enabled": 1,
        "net.ipv4.ip_local_port_range": "32768 60999",
    }


def test_sysctl_snapshot_of_this_machine() -> None:
    snap = devinfo.sysctl_snapshot()
    assert {"vm.dirty_ratio", "vm.dirty_background_ratio", "vm.swappiness"} <= set(snap)
    assert all(isinstance(v, int) for v in snap.values())
