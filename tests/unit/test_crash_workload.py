"""The crash workload's pieces that need no root: the plan's refusals (a target the
recording layer cannot intercept), the recorder's log written by its FUSE operations
called directly, the built-in crash-safety plan, and the clients' acknowledgements."""

from __future__ import annotations

import json
import os

import pytest
from pydantic import ValidationError

from pgfsbench.crash.client import Acks
from pgfsbench.crash.recorder import CONTROL_PATH, Recorder, sparse_copy
from pgfsbench.crash.writelog import FLUSH, WRITE, read_files, read_ops
from pgfsbench.plan.load import load_plan
from pgfsbench.plan.model import Plan

CRASH = {"type": "crash", "states": 10}


def _plan(**target) -> Plan:
    return Plan.model_validate(
        {"name": "p", "targets": [{"name": "t", **target}], "workloads": [CRASH]}
    )


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ({"dir": "/srv"}, "target 't' is a directory: the crash workload records the writes"),
        ({"fs": "ext4", "device": "/dev/sdz"}, "target 't' is a block device: the crash"),
        ({"fs": "btrfs", "images": 2}, "this target is more than one image"),
        ({"fs": "ext4", "log_size": "64M"}, "this target is more than one image"),
        ({"fs": "zfs"}, "this target is a ZFS pool"),
    ],
)
def test_a_target_the_recording_layer_cannot_intercept_is_refused_in_one_line(target, said):
    with pytest.raises(ValidationError) as exc:
        _plan(**target)
    [error] = exc.value.errors()
    assert said in error["msg"] and "\n" not in error["msg"]


def test_a_loop_target_is_recorded_and_other_plans_are_not():
    assert _plan(fs="ext4").records_device()
    assert not Plan.model_validate(
        {"name": "p", "targets": [{"name": "t", "dir": "/srv"}], "workloads": [{"type": "fsync"}]}
    ).records_device()


def test_the_built_in_crash_safety_plan_asks_the_common_questions():
    plan = load_plan("crash-safety")
    assert plan.records_device()
    names = {t.name for t in plan.targets}
    assert {"ext4", "ext4-nobarrier", "ext4-writeback", "ext4-fpw-off", "btrfs-fpw-off"} <= names
    settings = {t.name: plan.server_settings(t) for t in plan.targets}
    assert settings["ext4-async-commit"]["synchronous_commit"] == "off"
    [crash] = plan.workloads
    assert crash.states >= 100  # 0 of 100 bounds the rate at 3%


def test_the_recorder_logs_writes_and_flushes_once_started(tmp_path):
    backing, recording = tmp_path / "backing", tmp_path / "rec"
    backing.mkdir()
    r = Recorder(str(backing))
    fh = r.create("/t.img", 0o644)
    r.truncate("/t.img", 1 << 20)
    r.write("/t.img", b"a" * 4096, 0, fh)  # before start: passed through, not logged
    ctl = r.open(CONTROL_PATH, os.O_WRONLY)
    assert r.write(CONTROL_PATH, f"start {recording}\n".encode(), 0, ctl) > 0
    r.write("/t.img", b"b" * 8192, 8192, fh)
    r.fsync("/t.img", 1, fh)
    r.write("/t.img", b"c" * 512, 512, fh)
    status = json.loads(r.read(CONTROL_PATH, 4096, 0, r.open(CONTROL_PATH, os.O_RDONLY)))
    assert status == {
        "recording": True,
        "dir": str(recording),
        "files": ["t.img"],
        "writes": 2,
        "flushes": 1,
        "bytes": 8192 + 512,
    }
    r.write(CONTROL_PATH, b"stop\n", 0, ctl)
    ops = read_ops(recording)
    assert [(o.op, o.offset, o.length) for o in ops] == [
        (WRITE, 8192, 8192),
        (FLUSH, 0, 0),
        (WRITE, 512, 512),
    ]
    assert ops[0].time <= ops[1].time <= ops[2].time
    assert (recording / "writes.data").read_bytes() == b"b" * 8192 + b"c" * 512
    assert read_files(recording) == [{"name": "t.img", "size": 1 << 20}]
    base = (recording / "t.img.base").read_bytes()
    assert base[:4096] == b"a" * 4096 and base[4096:] == bytes((1 << 20) - 4096)
    # the image itself has every write
    image = (backing / "t.img").read_bytes()
    assert image[8192:16384] == b"b" * 8192 and image[512:1024] == b"c" * 512
    assert r.write(CONTROL_PATH, b"rewind\n", 0, ctl) < 0  # an unknown command: EINVAL
    r.release("/t.img", fh)


def test_sparse_copy_keeps_the_holes(tmp_path):
    src = tmp_path / "src"
    with open(src, "wb") as f:
        f.truncate(64 << 20)
        f.seek(32 << 20)
        f.write(b"x" * 4096)
    copied = sparse_copy(str(src), str(tmp_path / "dst"))
    assert copied < 1 << 20
    assert (tmp_path / "dst").stat().st_size == 64 << 20
    assert (tmp_path / "dst").stat().st_blocks * 512 < 1 << 20


def test_acks_say_how_many_commits_each_client_had_acknowledged_before_a_cut():
    acks = Acks({0: [1.0, 2.0, 3.0], 1: [1.5]})
    assert acks.required(2.0) == {0: 1, 1: 1}  # acknowledged strictly before the cut
    assert acks.required(10.0) == {0: 3, 1: 1}
    assert acks.total == 4
