"""Targets on several members: the plan model, btrfs profiles against what mkfs.btrfs
says, and md / LVM command construction and teardown against their captured outputs
(this project's kernel has neither md nor device-mapper: what their tools print here,
including their errors, is in tests/fixtures)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from pgfsbench import proc
from pgfsbench.errors import CommandFailed
from pgfsbench.filesystems.btrfs import (
    PROFILE_MIN_DEVICES,
    parse_btrfs_df,
    parse_btrfs_show,
    profile_problems,
)
from pgfsbench.filesystems.registry import recipe
from pgfsbench.ledger import STATE_ENV, Ledger
from pgfsbench.plan.model import Target
from pgfsbench.provision import lvm, md
from pgfsbench.provision.members import member_record
from pgfsbench.provision.target import Provisioning
from pgfsbench.provision.volume import join

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# --- the plan model -------------------------------------------------------------------


def test_a_btrfs_target_spans_its_images_and_mkfs_gets_them_all():
    t = Target(name="b", fs="btrfs", size="1G", images=3, mkfs=["-d", "raid0", "-m", "raid1"])
    assert (t.kind, t.member_count) == ("loop", 3)
    argv = recipe("btrfs").mkfs_argv("/dev/loop1", t.mkfs, ["/dev/loop2", "/dev/loop3"])
    assert argv == [
        "mkfs.btrfs",
        "-f",
        "-d",
        "raid0",
        "-m",
        "raid1",
        "/dev/loop1",
        "/dev/loop2",
        "/dev/loop3",
    ]


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"fs": "ext4", "images": 3}, "add volume"),
        ({"fs": "ext4", "volume": {"kind": "lvm-stripe"}}, "joins several members"),
        ({"fs": "xfs", "images": 3, "volume": {"kind": "md-raid10"}}, "even number"),
        ({"fs": "btrfs", "images": 2, "mkfs": ["-d", "raid1c3"]}, "needs 3 devices"),
        ({"fs": "btrfs", "mkfs": ["-m", "raid1"]}, "needs 2 devices, the target has 1"),
        ({"fs": "btrfs", "images": 2, "mkfs": ["--data=raid7"]}, "no data profile 'raid7'"),
        (
            {
                "fs": "ext4",
                "images": 2,
                "volume": {"kind": "md-raid0"},
                "queue": {"nr_requests": 8},
            },
            "apply to one device",
        ),
        ({"fs": "ext4", "device": "/dev/x", "devices": ["/dev/y"]}, "not both"),
        (
            {"fs": "ext4", "devices": ["/dev/y", "/dev/y"], "volume": {"kind": "md-raid0"}},
            "same device twice",
        ),
        ({"fs": "ext4", "device": "/dev/x", "images": 2}, "images makes loop images"),
        ({"dir": "/tmp", "volume": {"kind": "md-raid0"}}, "volume cannot apply"),
    ],
)
def test_multi_member_plans_that_cannot_work_are_refused(fields, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Target(name="t", **fields)


def test_btrfs_on_a_volume_sees_one_device():
    # -m raid1 would need 2 devices on its own, but mkfs.btrfs sees the one md array
    with pytest.raises(ValueError, match="needs 2 devices, the target has 1"):
        Target(name="t", fs="btrfs", images=2, volume={"kind": "md-raid0"}, mkfs=["-m", "raid1"])


def test_named_devices_make_a_device_target():
    t = Target(name="t", fs="btrfs", devices=["/dev/x", "/dev/y"])
    assert (t.kind, t.member_count, t.member_devices) == (
        "device",
        2,
        [Path("/dev/x"), Path("/dev/y")],
    )


# --- btrfs profiles: the table agrees with mkfs.btrfs's own errors ----------------------


@pytest.mark.parametrize(
    "path", sorted(FIXTURES.glob("mkfs_btrfs_error_*_on_*_exit1.stderr.txt")), ids=lambda p: p.name
)
def test_profile_minimums_match_what_mkfs_btrfs_refuses(path):
    flag, profile, have = re.match(r"mkfs_btrfs_error_(\w)_(\w+)_on_(\d)_", path.name).groups()
    text = path.read_text()
    problems = profile_problems([f"-{flag}", profile], int(have))
    if m := re.search(r"have (\d+) devices but (\d+) devices are required", text):
        assert PROFILE_MIN_DEVICES[profile] == int(m.group(2)) > int(m.group(1))
        assert problems and f"needs {m.group(2)} devices" in problems[0]
    else:
        assert "unknown data profile" in text
        assert problems and "no data profile" in problems[0]


def test_what_mkfs_btrfs_accepts_on_one_device_passes():
    for profile in ("single", "dup", "raid0"):
        assert profile_problems(["-d", profile, "-m", "single"], 1) == []


def test_btrfs_show_and_df_of_a_three_device_raid0_raid1():
    show = parse_btrfs_show(fixture("btrfs_filesystem_show_raid0_raid1_3dev.txt"))
    assert show["total_devices"] == 3
    assert show["devices"] == "/dev/loop3 /dev/loop4 /dev/loop5"
    df = parse_btrfs_df(fixture("btrfs_filesystem_df_raid0_raid1_3dev.txt"))
    assert df == {"profile.data": "RAID0", "profile.system": "RAID1", "profile.metadata": "RAID1"}


# --- md and LVM: commands, ledger and teardown order, on the outputs captured here ------


def test_mdadm_create_commands():
    assert md.create_argv(
        "/dev/md/pgfsbench-x", "md-raid0", 8192, ["/dev/loop3", "/dev/loop4"]
    ) == [
        "mdadm",
        "--create",
        "/dev/md/pgfsbench-x",
        "--run",
        "--metadata=1.2",
        "--level=0",
        "--raid-devices=2",
        "--chunk=8K",
        "/dev/loop3",
        "/dev/loop4",
    ]
    mirror = md.create_argv("/dev/md/m", "md-raid1", 65536, ["/dev/a", "/dev/b"])
    assert "--level=1" in mirror and "--bitmap=none" in mirror
    assert not any(a.startswith("--chunk") for a in mirror)
    assert "--level=10" in md.create_argv("/dev/md/m", "md-raid10", 65536, list("abcd"))


def test_lvm_commands_are_the_xfs_vs_ext4_studys():
    # the XFS-vs-ext4 study: lvcreate -i 3 -I 8 (KiB) over the three physical volumes
    assert lvm.lvcreate_argv("vg", "data", 3, 8192) == [
        "lvcreate",
        "--yes",
        "-i",
        "3",
        "-I",
        "8k",
        "-l",
        "100%FREE",
        "-n",
        "data",
        "vg",
    ]
    assert lvm.vgcreate_argv("vg", ["/dev/a", "/dev/b"]) == [
        "vgcreate",
        "--yes",
        "vg",
        "/dev/a",
        "/dev/b",
    ]
    assert lvm.pvcreate_argv("/dev/a") == ["pvcreate", "--yes", "/dev/a"]


class Replay:
    """proc.run answering each tool with its output captured on this machine."""

    def __init__(self, answers: dict[str, str]):
        self.answers = answers  # "tool" or "tool subcommand" → fixture stem (…_exitN)
        self.calls: list[list[str]] = []

    def __call__(self, argv, **kwargs):
        argv = list(argv)
        self.calls.append(argv)
        tool = Path(argv[0]).name
        stem = self.answers.get(f"{tool} {argv[1]}", self.answers.get(tool))
        if stem is None:
            return proc.CommandResult(tuple(argv), 0, "", "", 0.0)
        code = int(stem.rsplit("_exit", 1)[1])
        result = proc.CommandResult(
            tuple(argv), code, fixture(f"{stem}.stdout.txt"), fixture(f"{stem}.stderr.txt"), 0.0
        )
        if kwargs.get("check", True) and code:
            raise CommandFailed(result)
        return result


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "state"))
    return Ledger.create("c", tmp_path)


def _members(n: int) -> list[dict]:
    return [member_record(f"/dev/loop{i}", None) for i in range(3, 3 + n)]


def test_lvm_stripe_without_device_mapper_fails_at_lvcreate_and_undoes_in_reverse(
    ledger, monkeypatch
):
    replay = Replay(
        {
            "pvcreate": "pvcreate_loops_no_dm_exit0",
            "vgcreate": "vgcreate_no_dm_exit0",
            "lvcreate": "lvcreate_stripe_no_dm_exit3",
            # the releasers' look-ups (vgs, lvs, pvs) answer exit 0 with no
            # output: the VG and PVs exist, the LV is not listed (never made)
            "vgremove": "vgremove_no_dm_exit0",
            "pvremove": "pvremove_no_dm_exit0",
        }
    )
    monkeypatch.setattr(proc, "run", replay)
    spec = Target(name="e", fs="ext4", images=3, volume={"kind": "lvm-stripe", "stripe": "8K"})
    commands: list = []
    with pytest.raises(CommandFailed) as failed:
        with contextlib.ExitStack() as undo:
            join(spec, recipe("ext4"), _members(3), Provisioning(ledger, undo, commands))
            pytest.fail("lvcreate failed: join must not return")
        # (the ExitStack has undone everything by here)
    assert "device-mapper" in failed.value.result.stderr
    made = [Path(c[0]).name for c in replay.calls[:5]]
    assert made == ["pvcreate", "pvcreate", "pvcreate", "vgcreate", "lvcreate"]
    assert replay.calls[4][1:] == [
        "--yes",
        "-i",
        "3",
        "-I",
        "8k",
        "-l",
        "100%FREE",
        "-n",
        "data",
        replay.calls[3][2],
    ]
    undone = [
        Path(c[0]).name
        for c in replay.calls[5:]
        if Path(c[0]).name in ("lvremove", "vgremove", "pvremove")
    ]
    # the LV was never made (lvs does not list it): the group, then each volume's label
    assert undone == ["vgremove", "pvremove", "pvremove", "pvremove"]
    pvremoved = [c[-1] for c in replay.calls if Path(c[0]).name == "pvremove"]
    assert pvremoved == ["/dev/loop5", "/dev/loop4", "/dev/loop3"]
    assert ledger.resources == []


def test_md_without_the_driver_fails_at_create_and_leaves_nothing_recorded(ledger, monkeypatch):
    replay = Replay(
        {
            "mdadm --create": "mdadm_create_raid0_no_md_exit1",
            "mdadm --zero-superblock": "mdadm_zero_superblock_clean_exit0",
        }
    )
    monkeypatch.setattr(proc, "run", replay)
    spec = Target(name="x", fs="xfs", images=3, volume={"kind": "md-raid0", "stripe": "8K"})
    with pytest.raises(CommandFailed) as failed:
        with contextlib.ExitStack() as undo:
            join(spec, recipe("xfs"), _members(3), Provisioning(ledger, undo))
    assert "unexpected failure opening /dev/md" in failed.value.result.stderr
    create = replay.calls[0]
    assert create[:2] == ["mdadm", "--create"] and create[-3:] == [
        "/dev/loop3",
        "/dev/loop4",
        "/dev/loop5",
    ]
    # no array appeared, so it is not stopped; each member's superblock is zeroed
    # (the captured --zero-superblock of a clean member exits 0)
    assert [c[1] for c in replay.calls[1:]] == ["--zero-superblock"] * 3
    assert ledger.resources == []


def test_teardown_order_unmount_volume_loops_images(ledger, monkeypatch):
    """The ledger holds what loop_target makes, in the order it makes it; release_all
    undoes it from the end: unmount, the volume, then each loop and its image."""
    order: list[str] = []
    from pgfsbench import ledger as ledger_mod

    for kind in ("file", "loop", "lvm-pv", "lvm-vg", "lvm-lv", "mount"):
        monkeypatch.setitem(
            ledger_mod.RELEASERS,
            kind,
            lambda res: order.append(f"{res['kind']} {res.get('n', '')}".strip()) or [],
        )
    for n in (1, 2, 3):
        ledger.add("file", n=n)
        ledger.add("loop", n=n)
    for n in (1, 2, 3):
        ledger.add("lvm-pv", n=n)
    ledger.add("lvm-vg")
    ledger.add("lvm-lv")
    ledger.add("mount")
    assert ledger.release_all() == []
    assert order == [
        "mount",
        "lvm-lv",
        "lvm-vg",
        "lvm-pv 3",
        "lvm-pv 2",
        "lvm-pv 1",
        "loop 3",
        "file 3",
        "loop 2",
        "file 2",
        "loop 1",
        "file 1",
    ]


def test_the_ledger_summary_names_volumes(ledger):
    ledger.add("md", array="/dev/md/x", members=[])
    ledger.add("lvm-vg", vg="v")
    assert ledger.summary() == "1 md array, 1 LVM volume group"
