"""The cgroup helpers the throttle and the memory limit share (provision/cgroups.py), and
the two together on cgroup v2: one process is in one v2 cgroup, so the server's memory
cgroup is made under the throttle's cgroup, whose io.max then holds it too.

This machine has cgroup v1 only: v2 is a fake hierarchy in a temporary directory (the
interface files a real kernel makes with each cgroup are made by a stand-in mkdir),
and what the code writes and where it moves pgfsbench are what is checked.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from pgfsbench import ledger as ledger_mod
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Throttle
from pgfsbench.provision import cgroups, memory, throttle
from pgfsbench.provision.memory import MemoryHierarchy, memory_limited
from pgfsbench.provision.throttle import Hierarchy, throttled

INTERFACE = ("cgroup.procs", "cgroup.subtree_control", "io.max", "memory.max", "memory.swap.max")


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Ledger:
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    return Ledger.create("cgroups", tmp_path)


class FakeV2:
    """A cgroup v2 hierarchy in a directory: what was written, where pgfsbench went."""

    def __init__(self, root: Path, monkeypatch) -> None:
        self.root = root
        self.moves: list[tuple[int, Path]] = []
        root.mkdir()
        (root / "cgroup.controllers").write_text("cpu io memory pids\n")
        for name in INTERFACE[:2]:
            (root / name).touch()
        real_mkdir, real_rmdir = os.mkdir, os.rmdir

        def mkdir(path, *args, **kwargs):
            real_mkdir(path, *args, **kwargs)
            if Path(path).is_relative_to(root):  # the kernel makes the interface files
                for name in INTERFACE:
                    (Path(path) / name).touch()

        def rmdir(path):
            if Path(path).is_relative_to(root):  # the kernel removes its files itself
                for name in INTERFACE:
                    (Path(path) / name).unlink(missing_ok=True)
            real_rmdir(path)  # still ENOTEMPTY with a cgroup under it, as in the kernel

        def write(path: Path, text: str) -> None:
            if not path.exists():
                raise OSError(errno.ENOENT, "No such file or directory")
            if path.name == "cgroup.subtree_control":
                have = path.read_text().split()
                text = " ".join([*have, text.lstrip("+")])
            path.write_text(text)

        monkeypatch.setattr(os, "mkdir", mkdir)
        monkeypatch.setattr(os, "rmdir", rmdir)
        for module in (cgroups, throttle, memory):
            monkeypatch.setattr(module, "write", write)
        move = lambda pid, procs: self.moves.append((pid, Path(procs)))  # noqa: E731
        for module in (cgroups, throttle):
            monkeypatch.setattr(module, "move_to_cgroup", move)
        monkeypatch.setattr(throttle, "_hierarchy", lambda: Hierarchy(2, root, root))
        monkeypatch.setattr(throttle, "device_number", lambda device: ("7:3", None))
        monkeypatch.setattr(memory, "_hierarchy", lambda: MemoryHierarchy(2, root, root))

    def left(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if p.is_dir())


def test_v2_throttle_and_memory_share_one_cgroup(tmp_path, monkeypatch, ledger):
    v2 = FakeV2(tmp_path / "cg", monkeypatch)
    workdir = tmp_path / "work"
    workdir.mkdir()
    with throttled("/dev/loop3", Throttle(write_iops=50), ledger) as limits:
        top = Path(limits["cgroup"])
        assert top.parent == v2.root and limits["version"] == 2
        assert (top / "io.max").read_text() == "7:3 wiops=50"
        # pgfsbench (and every tool it starts) in a leaf under the limited cgroup
        assert v2.moves == [(os.getpid(), top / "pgfsbench" / "cgroup.procs")]
        assert limits["procs"] == str(top / "pgfsbench" / "cgroup.procs")
        with memory_limited("256M", workdir, ledger, limits) as mem:
            server = Path(mem["cgroup"])
            assert server.parent == top  # beside the leaf: under the same io.max
            assert mem["procs"] == str(server / "cgroup.procs")
            assert (server / "memory.max").read_text() == str(256 * 2**20)
            assert (server / "memory.swap.max").read_text() == "0"
            # the root passes memory on to the throttle's cgroup, which passes it on
            assert (v2.root / "cgroup.subtree_control").read_text().split() == ["io", "memory"]
            assert (top / "cgroup.subtree_control").read_text().split() == ["memory"]
            assert "throttle's cgroup" in mem["shared_with"] and str(top) in mem["shared_with"]
        assert mem["release_problems"] == []
        assert not server.exists()
    assert limits["release_problems"] == []
    assert v2.moves[-1] == (os.getpid(), v2.root / "cgroup.procs")  # back home
    assert v2.left() == [] and ledger.resources == []


def test_v2_memory_alone_is_made_at_the_top(tmp_path, monkeypatch, ledger):
    v2 = FakeV2(tmp_path / "cg", monkeypatch)
    with memory_limited("256M", tmp_path, ledger, {}) as mem:
        assert Path(mem["cgroup"]).parent == v2.root and "shared_with" not in mem
    assert v2.left() == [] and ledger.resources == []


def test_a_v1_throttle_leaves_a_v2_memory_cgroup_at_the_top(tmp_path, monkeypatch, ledger):
    # v1 blkio and v2 memory are two hierarchies: the server is in a cgroup of each
    v2 = FakeV2(tmp_path / "cg", monkeypatch)
    v1_limits = {"version": 1, "cgroup": "/sys/fs/cgroup/blkio/pgfsbench-1-0"}
    with memory_limited("256M", tmp_path, ledger, v1_limits) as mem:
        assert Path(mem["cgroup"]).parent == v2.root and "shared_with" not in mem


def test_a_controller_already_on_is_left_alone_and_a_refusal_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "cgroup.subtree_control").write_text("io memory\n")
    assert cgroups.enable_controller(tmp_path, "memory", "memory", "fix it") is None

    def refuse(path, text):
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(cgroups, "write", refuse)
    (tmp_path / "cgroup.subtree_control").write_text("io\n")
    with pytest.raises(UserError) as exc:
        cgroups.enable_controller(tmp_path, "memory", "memory", "fix it")
    assert str(exc.value) == (
        f"memory: cannot enable the memory controller in {tmp_path}/cgroup.subtree_control: "
        "Device or resource busy: fix it"
    )


def test_support_is_the_reason_or_none():
    assert cgroups.support("no cgroups here") == "no cgroups here"
    assert cgroups.support(Hierarchy(1, Path("/a"), Path("/a"))) is None
