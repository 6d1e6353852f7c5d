"""Stripe geometry → mkfs options: the XFS-vs-ext4 study's arithmetic, and what the real mkfs makes of it.

stride = stripe / block size; stripe-width = stride × data disks (ext, in blocks);
sunit = stripe / 512, swidth = sunit × data disks (xfs, in 512-byte sectors).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from pgfsbench.filesystems.ext import parse_dumpe2fs
from pgfsbench.filesystems.registry import recipe
from pgfsbench.plan.model import Target
from pgfsbench.plan.stripe import data_disks, idle_stripe_options, stripe_mkfs_options


def _target(**kw) -> Target:
    return Target(name="t", size="1G", **kw)


def test_the_xfs_vs_ext4_studys_lvm_stripe_gives_its_ext4_stride_and_width():
    # lvcreate -i 3 -I 8 → mkfs.ext4 -b 4096 -E stride=2,stripe-width=6 (the study's own)
    t = _target(fs="ext4", images=3, volume={"kind": "lvm-stripe", "stripe": "8K"})
    options, geometry = stripe_mkfs_options(t)
    assert options == ["-b", "4096", "-E", "stride=2,stripe-width=6"]
    assert geometry["computed_options"] == ["stride=2", "stripe-width=6"]
    assert (geometry["data_disks"], geometry["stripe_width_bytes"]) == (3, 24576)


def test_the_xfs_vs_ext4_studys_lvm_stripe_gives_its_xfs_sunit_and_swidth():
    # the study: mkfs.xfs -d agcount=9000,sunit=16,swidth=48 on the same stripe
    t = _target(
        fs="xfs",
        images=3,
        volume={"kind": "lvm-stripe", "stripe": "8K"},
        mkfs=["-b", "size=4096", "-d", "agcount=8"],
    )
    options, _ = stripe_mkfs_options(t)
    assert options == ["-b", "size=4096", "-d", "agcount=8,sunit=16,swidth=48"]


def test_ext_stride_counts_in_the_plans_block_size_and_joins_its_extended_options():
    t = _target(
        fs="ext4",
        images=4,
        volume={"kind": "md-raid0", "stripe": "64K"},
        mkfs=["-b", "1024", "-E", "discard"],
    )
    options, _ = stripe_mkfs_options(t)
    assert options == ["-b", "1024", "-E", "discard,stride=64,stripe-width=256"]
    # the recipe's no-lazy-init defaults join the same (last) -E list
    assert (
        recipe("ext4").mkfs_argv("/dev/md0", options)[-2]
        == "discard,stride=64,stripe-width=256,lazy_itable_init=0,lazy_journal_init=0"
    )


@pytest.mark.parametrize(
    "kind, members, disks",
    [
        ("lvm-stripe", 3, 3),
        ("md-raid0", 2, 2),
        ("md-raid1", 2, 1),
        ("md-raid10", 4, 2),
        ("md-raid10", 6, 3),
    ],
)
def test_data_disks_per_volume_kind(kind, members, disks):
    t = _target(fs="xfs", images=members, volume={"kind": kind})
    assert data_disks(t.volume, members) == disks


def test_a_mirror_gets_no_stripe_options():
    t = _target(fs="xfs", images=2, volume={"kind": "md-raid1", "stripe": "64K"})
    options, geometry = stripe_mkfs_options(t)
    assert options == [] and "mirror" in geometry["mkfs"]


def test_the_plans_own_stripe_options_are_kept_and_said():
    t = _target(
        fs="xfs",
        images=3,
        volume={"kind": "lvm-stripe", "stripe": "8K"},
        mkfs=["-d", "su=64k,sw=3"],
    )
    options, geometry = stripe_mkfs_options(t)
    assert options == ["-d", "su=64k,sw=3"]
    assert geometry["mkfs"] == "the plan's own: su=64k,sw=3"
    assert idle_stripe_options(t) is None


def test_btrfs_takes_no_stripe_geometry():
    t = _target(fs="btrfs", images=3, volume={"kind": "md-raid0", "stripe": "8K"})
    assert stripe_mkfs_options(t) == (
        [],
        {
            "stripe_bytes": 8192,
            "data_disks": 3,
            "stripe_width_bytes": 24576,
            "mkfs": "btrfs takes no stripe geometry",
        },
    )


@pytest.mark.parametrize(
    "fs, mkfs",
    [("ext4", ["-E", "stride=2,stripe-width=6"]), ("xfs", ["-d", "agcount=8,sunit=16,swidth=48"])],
)
def test_stripe_options_on_one_device_are_a_warning(fs, mkfs):
    warning = idle_stripe_options(_target(fs=fs, mkfs=mkfs))
    assert warning is not None and "does nothing without a stripe" in warning
    assert "volume" in warning


def test_no_warning_without_stripe_options():
    assert idle_stripe_options(_target(fs="ext4", mkfs=["-E", "discard"])) is None


@pytest.mark.parametrize("stripe", ["3K", "12K", "2K"])
def test_a_stripe_must_be_a_power_of_two_from_4k(stripe):
    with pytest.raises(ValueError, match="power of two"):
        _target(fs="ext4", images=3, volume={"kind": "lvm-stripe", "stripe": stripe})


# --- what the real mkfs makes of the computed options (on an image file: no root) ---


@pytest.mark.skipif(
    not (
        shutil.which("mkfs.ext4", path="/usr/sbin:/sbin:/usr/bin")
        and shutil.which("dumpe2fs", path="/usr/sbin:/sbin:/usr/bin")
    ),
    reason="needs e2fsprogs: apt-get install e2fsprogs",
)
def test_real_mke2fs_records_the_computed_stride(tmp_path):
    t = _target(fs="ext4", images=3, volume={"kind": "lvm-stripe", "stripe": "8K"})
    options, _ = stripe_mkfs_options(t)
    image = tmp_path / "fs.img"
    image.write_bytes(b"")
    subprocess.run(["truncate", "-s", "64M", str(image)], check=True)
    argv = recipe("ext4").mkfs_argv(str(image), options)
    subprocess.run(
        argv, check=True, capture_output=True, env={"PATH": "/usr/sbin:/sbin:/usr/bin:/bin"}
    )
    dump = subprocess.run(
        ["dumpe2fs", "-h", str(image)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/sbin:/sbin:/usr/bin:/bin"},
    ).stdout
    facts = parse_dumpe2fs(dump)
    assert (facts["block_size"], facts["raid_stride"], facts["raid_stripe_width"]) == (4096, 2, 6)


@pytest.mark.skipif(
    not shutil.which("mkfs.xfs", path="/usr/sbin:/sbin:/usr/bin"),
    reason="needs xfsprogs: apt-get install xfsprogs",
)
def test_real_mkfs_xfs_takes_the_computed_sunit_and_swidth(tmp_path):
    t = _target(fs="xfs", images=3, volume={"kind": "lvm-stripe", "stripe": "8K"})
    options, _ = stripe_mkfs_options(t)
    image = tmp_path / "fs.img"
    subprocess.run(["truncate", "-s", "1G", str(image)], check=True)
    # -N: print the geometry mkfs.xfs would make, write nothing
    out = subprocess.run(
        ["mkfs.xfs", "-N", *options, str(image)],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/sbin:/sbin:/usr/bin:/bin"},
    ).stdout
    from pgfsbench.filesystems.xfs import parse_xfs_info

    facts = parse_xfs_info(out)
    # xfs reports them in filesystem blocks: 8 KiB = 2 blocks, 24 KiB = 6 blocks
    assert (facts["data.sunit_bytes"], facts["data.swidth_bytes"]) == (8192, 24576)
