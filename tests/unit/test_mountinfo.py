import os
from pathlib import Path

from pgfsbench.provision.mountinfo import mount_of, parse_mountinfo

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mountinfo_xfs_loop.txt"

MOUNTINFO = (
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"
    "40 27 7:3 / /tmp/with\\040space rw,relatime - ext4 /dev/loop3 rw\n"
    "41 27 0:52 / /mnt/b rw,relatime - btrfs /dev/loop4 rw,space_cache=v2\n"
    "not a mountinfo line\n"
)


def test_parses_a_real_xfs_loop_mount():
    root, xfs = parse_mountinfo(FIXTURE.read_text())
    assert (root.mount_point, root.fs_type, root.source) == ("/", "ext4", "/dev/vda")
    assert xfs.mount_point == "/tmp/mi dir"  # \040 unescaped
    assert xfs.fs_type == "xfs"
    assert xfs.source == "/dev/loop0"
    # per-mount and superblock options merged, each once
    assert xfs.options == ["rw", "noatime", "inode64", "logbufs=8", "logbsize=256k", "noquota"]


def test_skips_garbage_lines():
    assert parse_mountinfo("garbage\n\n1 2 3 - x\n") == []


def test_mount_of_finds_the_longest_prefix(tmp_path):
    entry = mount_of(tmp_path)
    assert tmp_path.as_posix().startswith(entry.mount_point)


def test_mountinfo_gives_device_numbers_and_unescaped_paths():
    mounts = parse_mountinfo(MOUNTINFO)
    assert [(os.major(m.dev), os.minor(m.dev), m.source, m.mount_point) for m in mounts] == [
        (254, 0, "/dev/vda", "/"),
        (7, 3, "/dev/loop3", "/tmp/with space"),
        (0, 52, "/dev/loop4", "/mnt/b"),  # btrfs: anonymous number, the source tells
    ]
