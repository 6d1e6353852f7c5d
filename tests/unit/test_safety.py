"""The device safety check: parsers, the sysfs walk, and refusals that need no root.

The root filesystem's device is only ever stat'ed here: every test that names it
asserts that nothing was run and nothing was opened.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.plan.fsoptions import device_options
from pgfsbench.provision import safety
from pgfsbench.provision.mountinfo import parse_mountinfo
from pgfsbench.provision.safety import check_formattable, parse_wipefs_json

# Captured from util-linux 2.38.1 (Debian 12): `wipefs --no-act --json /dev/loop0`.
WIPEFS_EXT4 = """{
   "signatures": [
      {
         "device": "loop0",
         "offset": "0x438",
         "type": "ext4",
         "uuid": "c36c9a5a-12ae-45a4-bbaa-8d7e5f6980d5",
         "label": null
      }
   ]
}
"""
WIPEFS_GPT = """{
   "signatures": [
      {
         "device": "loop0",
         "offset": "0x200",
         "type": "gpt",
         "uuid": null,
         "label": null
      },{
         "device": "loop0",
         "offset": "0x3fffe00",
         "type": "gpt",
         "uuid": null,
         "label": null
      },{
         "device": "loop0",
         "offset": "0x1fe",
         "type": "PMBR",
         "uuid": null,
         "label": null
      }
   ]
}"""
WIPEFS_CLEAN = """{
   "signatures": [

   ]
}
"""


def test_wipefs_json_is_parsed_into_signatures():
    assert parse_wipefs_json(WIPEFS_EXT4) == [
        "ext4 at 0x438 (UUID c36c9a5a-12ae-45a4-bbaa-8d7e5f6980d5)"
    ]
    assert parse_wipefs_json(WIPEFS_GPT) == ["gpt at 0x200", "gpt at 0x3fffe00", "PMBR at 0x1fe"]
    assert parse_wipefs_json(WIPEFS_CLEAN) == []
    assert parse_wipefs_json("") == []


def _fake_block(directory: Path, dev: str, partition: bool = False) -> Path:
    directory.mkdir(parents=True)
    (directory / "dev").write_text(dev + "\n")
    (directory / "holders").mkdir()
    if partition:
        (directory / "partition").write_text("1\n")
    return directory


def test_the_family_walk_follows_partitions_and_holders(tmp_path):
    # sdx → sdx1 (a partition) → dm-0 (LVM on it) → dm-1 (a snapshot on that)
    sdx = _fake_block(tmp_path / "block/sdx", "8:16")
    sdx1 = _fake_block(sdx / "sdx1", "8:17", partition=True)
    dm0 = _fake_block(tmp_path / "virtual/dm-0", "253:0")
    dm1 = _fake_block(tmp_path / "virtual/dm-1", "253:1")
    (sdx1 / "holders/dm-0").symlink_to(dm0)
    (dm0 / "holders/dm-1").symlink_to(dm1)
    (dm1 / "holders/dm-0").symlink_to(dm0)  # a loop must not hang the walk
    family = safety._family(sdx)
    assert {(os.major(d), os.minor(d)): n for d, n in family.items()} == {
        (8, 16): "sdx",
        (8, 17): "sdx1",
        (253, 0): "dm-0",
        (253, 1): "dm-1",
    }
    assert [p.name for p in safety._partitions(sdx)] == ["sdx1"]
    assert [h.name for h in safety._holders(sdx1)] == ["dm-0"]


def test_a_missing_device_is_refused(tmp_path):
    with pytest.raises(UserError, match="does not exist: fix the 'device' path"):
        check_formattable(str(tmp_path / "nope"), [str(tmp_path / "nope")], False)


@pytest.mark.parametrize("kind", ["file", "char"])
def test_something_that_is_not_a_block_device_is_refused(tmp_path, kind):
    path = str(tmp_path / "image") if kind == "file" else "/dev/null"
    if kind == "file":
        Path(path).write_bytes(b"\0" * 4096)
    with pytest.raises(UserError, match="is not a block device: .*use a loop target"):
        check_formattable(path, [path], True)


# --- the root filesystem's device: refused before anything touches it ----------


def _root_device() -> str:
    for mount in parse_mountinfo(Path("/proc/self/mountinfo").read_text()):
        if mount.mount_point == "/" and mount.source.startswith("/dev/"):
            try:
                if stat.S_ISBLK(os.stat(mount.source).st_mode):
                    return mount.source
            except OSError:
                pass
    pytest.skip("/ is not on a block device here (overlay or similar): nothing to protect")


@pytest.fixture
def nothing_runs(monkeypatch):
    """Fail loudly if the check runs a command or opens a device."""
    calls: list[object] = []

    def refuse(*args, **kwargs):
        calls.append(args)
        raise AssertionError(f"the safety check ran or opened something: {args}")

    monkeypatch.setattr(proc, "run", refuse)
    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(os, "open", refuse)
    return calls


def test_the_root_device_is_not_allowed_unless_named_on_the_command_line(nothing_runs):
    root = _root_device()
    with pytest.raises(UserError, match=f"not allowed to be formatted.*--allow-format {root}"):
        check_formattable(root, [], False)
    assert nothing_runs == []


@pytest.mark.parametrize("wipe", [False, True])
def test_the_root_device_is_refused_even_when_allowed(nothing_runs, wipe):
    root = _root_device()
    with pytest.raises(UserError, match="root filesystem.*never formats it"):
        check_formattable(root, [root], wipe)
    assert nothing_runs == []


def test_allowed_devices_are_compared_by_real_path(tmp_path, nothing_runs):
    root = _root_device()
    link = tmp_path / "by-id-link"  # like /dev/disk/by-id/...: a symlink to the node
    link.symlink_to(root)
    for device, allowed in ((root, [str(link)]), (str(link), [root])):
        # Matched as allowed, so it gets as far as the root rule (not "not allowed").
        with pytest.raises(UserError, match="root filesystem"):
            check_formattable(device, allowed, False)
    assert nothing_runs == []


def test_options_that_name_another_device_are_found(tmp_path):
    root = _root_device()
    link = tmp_path / "disk-link"
    link.symlink_to(root)
    harmless = [
        "-E",
        "stride=2,stripe-width=6",
        "-m",
        "single",
        "-n",
        "4096",
        "-L",
        "data",
        "noatime,nodiratime,nobarrier,logbsize=262144",
        "-O",
        "^has_journal",
        str(tmp_path),
    ]  # a path, but not a device
    assert device_options(harmless) == []
    naming = [
        "-J",
        "device=/dev/sdz9",
        "-l",
        "logdev=/x,size=8m",
        "journal_path=/j",
        str(link),
        f"file={link}",
    ]  # mkfs.btrfs formats every device it is given
    assert device_options(naming) == naming[1:2] + naming[3:]
