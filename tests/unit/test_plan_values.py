"""Values judged when the plan loads, before anything is made: mount option values by
the option's type (and never a separator or shell character), sysctl and queue values by
what this kernel's files hold. Each is refused by `plan check` and by `run` alike: exit 2,
one line naming the key, nothing made."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pgfsbench.provision.knobs import standin_device

PLAN = """name = "values"
[[targets]]
name = "a"
fs = "{fs}"
{target}
[[workloads]]
type = "fsync"
seconds = 1
"""

NEEDS_LOOP = pytest.mark.skipif(
    standin_device() is None, reason="no loop device in /sys/class/block to judge by"
)

BAD = [
    # the values the issue found accepted
    (
        "ext4",
        'mount = "noatime,commit=$(touch /tmp/pgfsbench-x)"',
        "targets.a.mount: ext4 mount option commit=$(touch /tmp/pgfsbench-x): no mount option "
        "takes '$', '(', ' ', ')' in its value (a separator or shell character); commit is a "
        "whole number of seconds",
    ),
    ("ext4", 'mount = "errors=$(reboot)"', "errors is one of continue, remount-ro, panic"),
    (
        "ext4",
        'mount = "data=<script>"',
        "ext4 mount option data=<script>: no mount option takes '<', '>'",
    ),
    (
        "ext4",
        'sysctls = { "vm.dirty_ratio" = "20; touch /tmp/pgfsbench-x" }',
        "targets.a: sysctls: vm.dirty_ratio = '20; touch /tmp/pgfsbench-x': no kernel setting "
        "takes ';' in its value",
    ),
    (
        "ext4",
        'queue = { scheduler = "$(touch /tmp/pgfsbench-x)" }',
        "targets.a: queue: scheduler = '$(touch /tmp/pgfsbench-x)': no kernel setting takes '$'",
    ),
    # values of the wrong type for their option
    (
        "ext4",
        'mount = "data=fast"',
        "ext4 mount option data=fast: data is one of ordered, journal, writeback",
    ),
    ("ext4", 'mount = "errors=reboot"', "errors is one of continue, remount-ro, panic"),
    ("ext4", 'mount = "commit=soon"', "commit=soon: commit is a whole number of seconds"),
    ("ext3", 'mount = "journal_ioprio=9"', "journal_ioprio is a whole number from 0 to 7"),
    ("xfs", 'mount = "logbsize=100k"', "logbsize is one of 16k, 32k, 64k, 128k, 256k"),
    ("xfs", 'mount = "logbufs=1"', "logbufs is a whole number from 2 to 8"),
    ("btrfs", 'mount = "compress=gzip"', "compress is one of zlib, lzo, zstd, no, none"),
    ("btrfs", 'mount = "space_cache=v3"', "space_cache is one of v1, v2"),
    ("ext4", 'mount = "noatime=1"', "noatime=1: noatime takes no value"),
    # judged by this kernel's files
    (
        "ext4",
        'sysctls = { "vm.dirty_ratio" = "lots" }',
        "target 'a': sysctl vm.dirty_ratio = 'lots': the kernel takes a whole number there",
    ),
    (
        "ext4",
        'sysctls = { "vm.dirty_ratio" = 150 }',
        "target 'a': sysctl vm.dirty_ratio = 150: the kernel takes a whole number from 0 to 100",
    ),
    (
        "ext4",
        'sysctls = { "vm.dirty_ratoi" = 10 }',
        "target 'a': sysctl 'vm.dirty_ratoi' does not exist on this kernel (did you mean "
        "vm.dirty_ratio",
    ),
    pytest.param(
        "ext4",
        'queue = { scheduler = "fastest" }',
        "target 'a': queue setting scheduler = 'fastest': this device offers none",
        marks=NEEDS_LOOP,
    ),
    pytest.param(
        "ext4",
        'queue = { read_ahead_kb = "lots" }',
        "target 'a': queue setting read_ahead_kb = 'lots': the kernel takes a whole number",
        marks=NEEDS_LOOP,
    ),
]


def pgfsbench(*args):
    return subprocess.run(
        [sys.executable, "-m", "pgfsbench", *args], capture_output=True, text=True
    )


def refused(result, said: str) -> None:
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize("fs, target, said", BAD)
def test_plan_check_refuses_a_value_naming_its_key(tmp_path, fs, target, said):
    plan = tmp_path / "p.toml"
    plan.write_text(PLAN.format(fs=fs, target=target))
    refused(pgfsbench("plan", "check", str(plan)), said)


@pytest.mark.parametrize("fs, target, said", [BAD[0], BAD[3], BAD[15]])
def test_run_refuses_them_before_anything_is_made(tmp_path, fs, target, said):
    plan = tmp_path / "p.toml"
    plan.write_text(PLAN.format(fs=fs, target=target))
    refused(pgfsbench("run", str(plan), "--results", str(tmp_path / "r")), said)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "fs, target",
    [
        ("ext4", 'mount = "noatime,data=journal,errors=remount-ro,commit=30,barrier=0"'),
        ("ext4", 'mount = "inode_readahead_blks=64,journal_ioprio=0,dax=never"'),
        ("xfs", 'mount = "logbsize=262144,logbufs=8,allocsize=16M,sunit=128,swidth=256"'),
        ("xfs", 'mount = "logbsize=64k"'),
        (
            "btrfs",
            'mount = "compress=zstd:3,space_cache=v2,commit=120,discard=async,'
            'subvol=/data,rescue=usebackuproot"',
        ),
        ("ext4", 'sysctls = { "vm.dirty_ratio" = 40, "vm.dirty_background_bytes" = 102400000 }'),
        pytest.param(
            "ext4", 'queue = { scheduler = "none", read_ahead_kb = 256 }', marks=NEEDS_LOOP
        ),
    ],
)
def test_values_the_kernel_takes_pass(tmp_path, fs, target):
    plan = tmp_path / "p.toml"
    plan.write_text(PLAN.format(fs=fs, target=target))
    result = pgfsbench("plan", "check", str(plan))
    assert result.returncode == 0, result.stderr
