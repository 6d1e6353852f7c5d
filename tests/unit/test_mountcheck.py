"""Asked mount options vs what the kernel lists, on cases observed on this kernel (6.18).

``mountinfo_mount_options.txt`` holds, for each case, the mount command as a
comment and the /proc/self/mountinfo line the kernel wrote after it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.filesystems.mountcheck import (
    CHANGED,
    DEFAULT,
    EQUIVALENT,
    IGNORED,
    IMPLIED,
    KEPT,
    changes_for,
    describe,
    mount_option_changes,
    problems,
)
from pgfsbench.provision.mountinfo import parse_mountinfo

FIXTURE = Path(__file__).parent.parent / "fixtures" / "mountinfo_mount_options.txt"


def _observed() -> dict[str, tuple[str, str, list[str] | None]]:
    """label → (fs, asked options, effective options or None when the mount failed)."""
    cases: dict[str, tuple[str, str, list[str] | None]] = {}
    lines = FIXTURE.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            label, _, command = line[2:].partition(": ")
            words = command.split()
            failed = words[-1] == "FAILED"
            effective = None if failed else parse_mountinfo(lines[i + 1])[0].options
            cases[label] = (words[2], words[4], effective)
    return cases


CASES = _observed()


def _status(label: str) -> dict[str, str]:
    fs, asked, effective = CASES[label]
    assert effective is not None
    return {c["option"]: c["status"] for c in mount_option_changes(asked, effective, fs=fs)}


def test_fixture_holds_the_real_cases() -> None:
    assert CASES["ext4_seed000"][2] == [
        "rw",
        "noatime",
        "nodiratime",
        "nodelalloc",
        "nobarrier",
        "stripe=6",
    ]
    assert CASES["btrfs_space_cache_v1"][2] is None  # refused: the fs has a free-space tree


def test_ext4_seed000_everything_kept() -> None:
    assert _status("ext4_seed000") == {
        "noatime": KEPT,
        "nodiratime": KEPT,
        "nodelalloc": KEPT,
        "nobarrier": KEPT,
    }


def test_ext4_barrier_0_is_nobarrier() -> None:
    fs, asked, effective = CASES["ext4_seed003"]
    changes = mount_option_changes(asked, effective, fs=fs)
    assert {c["option"]: c["status"] for c in changes} == {
        "noatime": KEPT,
        "nodiratime": KEPT,
        "data=writeback": KEPT,
        "barrier=0": EQUIVALENT,
    }
    assert changes[-1]["effective"] == "nobarrier"
    assert problems(changes) == []


def test_brief_cases_from_the_lead() -> None:
    # As listed in the task (ext4 without -E stride: no stripe=).
    effective = "rw,noatime,nodiratime,nobarrier,data=writeback".split(",")
    assert (
        problems(mount_option_changes("noatime,nodiratime,data=writeback,barrier=0", effective))
        == []
    )
    effective = "rw,noatime,nodiratime,nodelalloc,nobarrier,stripe=6".split(",")
    assert (
        problems(mount_option_changes("noatime,nodiratime,nodelalloc,nobarrier", effective)) == []
    )


def test_xfs_units_are_normalised_before_calling_a_value_changed() -> None:
    fs, asked, effective = CASES["xfs_seed000"]
    changes = {c["option"]: c for c in mount_option_changes(asked, effective, fs=fs)}
    assert changes["logbsize=262144"]["status"] == EQUIVALENT
    assert changes["logbsize=262144"]["effective"] == "logbsize=256k"
    assert changes["allocsize=16M"]["status"] == EQUIVALENT
    assert changes["allocsize=16M"]["effective"] == "allocsize=16384k"
    assert {o for o, c in changes.items() if c["status"] == KEPT} == {
        "noatime",
        "nodiratime",
        "swalloc",
        "inode64",
    }
    assert _status("xfs_allocsize") == {"allocsize=1g": EQUIVALENT, "logbsize=64k": KEPT}


def test_xfs_nolargeio_is_the_default_not_an_ignored_option() -> None:
    # The kernel lists only "largeio"; nolargeio is its documented default, so
    # its absence is not a sign it was dropped.
    assert _status("xfs_nolargeio") == {"nolargeio": DEFAULT}


def test_xfs_ikeep_is_ignored_by_this_kernel() -> None:
    # dmesg: "XFS: ikeep mount option is deprecated." and it is not listed.
    fs, asked, effective = CASES["xfs_ikeep"]
    changes = mount_option_changes(asked, effective, fs=fs)
    assert {c["option"]: c["status"] for c in changes} == {
        "ikeep": IGNORED,
        "attr2": DEFAULT,
        "logbufs=4": KEPT,
    }
    assert [c["option"] for c in problems(changes)] == ["ikeep"]
    assert describe(problems(changes)[0]).startswith("the kernel ignored ikeep")


def test_ext4_nobh_is_ignored() -> None:
    # dmesg: "EXT4-fs: Ignoring removed nobh option"
    assert _status("ext4_nobh") == {"noatime": KEPT, "nobh": IGNORED}


def test_ext4_defaults_and_strictatime() -> None:
    assert _status("ext4_commit") == {
        "commit=5": DEFAULT,
        "errors=remount-ro": KEPT,
        "strictatime": KEPT,
    }


def test_btrfs_tuned_compress_no_is_the_default() -> None:
    assert _status("btrfs_tuned") == {
        "ssd": KEPT,
        "discard": KEPT,
        "nodatacow": KEPT,
        "compress=no": DEFAULT,
    }
    # the lead's effective list for the same mount, without fs given
    effective = (
        "rw,relatime,nodatasum,nodatacow,ssd,discard,space_cache=v2,subvolid=5,subvol=/"
    ).split(",")
    assert problems(mount_option_changes("ssd,discard,nodatacow,compress=no", effective)) == []


def test_btrfs_spellings() -> None:
    fs, asked, effective = CASES["btrfs_compress"]
    changes = {c["option"]: c for c in mount_option_changes(asked, effective, fs=fs)}
    assert changes["compress=zstd"]["status"] == EQUIVALENT
    assert changes["compress=zstd"]["effective"] == "compress=zstd:3"
    assert changes["discard=sync"]["status"] == EQUIVALENT
    assert changes["commit=30"]["status"] == DEFAULT


@pytest.mark.parametrize(
    "asked, effective, status, shown",
    [
        (
            "logbsize=64k",
            "rw,relatime,inode64,logbufs=8,logbsize=256k,noquota",
            CHANGED,
            "logbsize=256k",
        ),
        ("noatime", "rw,relatime", CHANGED, "relatime"),
        ("relatime", "rw,noatime", CHANGED, "noatime"),
        ("nobarrier", "rw,relatime", IGNORED, None),
        ("barrier=1", "rw,nobarrier", CHANGED, "nobarrier"),
        ("barrier=1", "rw,relatime", DEFAULT, None),
        ("defaults", "rw,relatime", DEFAULT, None),
        ("nodiratime", "rw,noatime", IMPLIED, "noatime"),
        ("ro", "rw,relatime", CHANGED, "rw"),
        ("nodiscard", "rw,discard=async", CHANGED, "discard=async"),
        ("space_cache", "rw,space_cache=v2", KEPT, "space_cache=v2"),
    ],
)
def test_status_rules(asked: str, effective: str, status: str, shown: str | None) -> None:
    (change,) = mount_option_changes(asked, effective.split(","))
    assert (change["status"], change["effective"]) == (status, shown)


def test_messages_say_what_the_kernel_did() -> None:
    (changed,) = mount_option_changes("logbsize=64k", ["rw", "logbsize=256k"])
    assert describe(changed) == "the kernel changed logbsize=64k: in effect logbsize=256k"
    (ignored,) = mount_option_changes("nolargeio", ["rw"], fs="ext4")
    assert describe(ignored).startswith("the kernel ignored nolargeio")


def test_empty_blank_and_repeated_options() -> None:
    assert mount_option_changes("", ["rw"]) == []
    assert [c["option"] for c in mount_option_changes(" noatime, ,noatime ", ["noatime"])] == [
        "noatime"
    ]


def test_changes_for_prefers_the_stored_check() -> None:
    stored = [{"option": "x", "status": IGNORED, "effective": None, "note": ""}]
    assert changes_for({"mount_option_changes": stored}, {"mount": "noatime"}) is stored
    computed = changes_for(
        {"effective_mount_options": ["rw"], "mounted_fs_type": "ext4"}, {"mount": "nobh"}
    )
    assert [c["status"] for c in computed] == [IGNORED]
    assert changes_for({}, {"mount": "noatime"}) == []  # never mounted: nothing to say
