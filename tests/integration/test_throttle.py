"""Throttled targets on this machine's kernel: a real loop device, a real cgroup.

Skipped with the reason when the machine cannot throttle (no cgroup v1 blkio
and no cgroup v2 io controller, or not root).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pgfsbench.ledger import Ledger, stale_ledgers
from pgfsbench.plan.model import Throttle
from pgfsbench.provision.throttle import throttle_support, throttled


@pytest.fixture(autouse=True)
def _supported():
    if reason := throttle_support():
        pytest.skip(reason)


@pytest.fixture
def ledger(tmp_path, state_dir) -> Ledger:
    ledger = Ledger.create(f"throttle-{tmp_path.name}", tmp_path)
    yield ledger
    problems = ledger.release_all()  # only matters when a test failed half-way
    ledger.close()
    assert problems == [] and not ledger.path.exists()


@pytest.fixture
def loop_device(tmp_path):
    """A 64M sparse image on a loop device of our own, detached whatever happens."""
    image = tmp_path / "throttle.img"
    with open(image, "wb") as f:
        f.truncate(64 * 2**20)
    attach = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)], capture_output=True, text=True
    )
    if attach.returncode != 0:  # a backing filesystem without O_DIRECT
        attach = subprocess.run(
            ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
        )
    device = attach.stdout.strip()
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], check=True)


def dd_seconds(device: str, count: int = 100) -> float:
    start = time.monotonic()
    subprocess.run(
        ["dd", "if=/dev/zero", f"of={device}", "bs=8k", f"count={count}", "oflag=direct,dsync"],
        check=True,
        capture_output=True,
    )
    return time.monotonic() - start


def own_cgroups() -> str:
    return Path("/proc/self/cgroup").read_text()


def test_a_throttled_target_is_slower_and_everything_is_put_back(ledger, loop_device):
    home = own_cgroups()
    dd_seconds(loop_device)  # untimed: the sparse image's blocks get allocated first
    fast = dd_seconds(loop_device)
    # A limit that makes 100 writes take at least 4x what they take unthrottled (and
    # at least 2 s), so a slow CI disk cannot close the gap: 50 IOPS on a quick one.
    iops = max(1, min(50, int(100 / max(2.0, 4 * fast))))
    floor = 100 / iops  # seconds 100 writes take at the limit, whatever the disk
    with throttled(loop_device, Throttle(write_iops=iops), ledger) as record:
        cgroup = Path(record["cgroup"])
        assert cgroup.is_dir() and cgroup.name.startswith(f"pgfsbench-{os.getpid()}-")
        assert own_cgroups() != home  # we moved, so everything we start is in it
        assert Path(ledger.path).exists() and ledger.resources[-1]["path"] == str(cgroup)
        slow = dd_seconds(loop_device)
    print(
        f"\ndd 100 x 8k direct+dsync on {loop_device}: unthrottled {fast:.3f} s, "
        f"throttled to {iops} write IOPS {slow:.3f} s"
    )
    assert slow >= 0.75 * floor  # the limit held (the first writes may use up a burst)
    major, minor = os.major(os.stat(loop_device).st_rdev), os.minor(os.stat(loop_device).st_rdev)
    assert record["device"] == f"{major}:{minor}" and record["limits"] == {"write_iops": iops}
    if record["mechanism"] == "cgroup v1 blkio":
        assert record["effective"] == {
            "blkio.throttle.write_iops_device": f"{major}:{minor} {iops}"
        }
    else:
        assert f"wiops={iops}" in record["effective"]["io.max"]
    assert record["release_problems"] == []
    assert not cgroup.exists()
    assert own_cgroups() == home
    assert ledger.resources == []
    assert dd_seconds(loop_device) < floor / 2  # and the device is fast again for us


def test_the_cgroup_is_removed_when_the_block_fails(ledger, loop_device):
    home = own_cgroups()
    with pytest.raises(RuntimeError, match="workload failed"):
        with throttled(loop_device, Throttle(read_iops=10, write_bps="1M"), ledger) as record:
            raise RuntimeError("workload failed")
    assert not Path(record["cgroup"]).exists()
    assert own_cgroups() == home and ledger.resources == []


CRASHING_RUN = textwrap.dedent("""
    import os, signal, subprocess, sys
    from pathlib import Path
    from pgfsbench.ledger import Ledger
    from pgfsbench.plan.model import Throttle
    from pgfsbench.provision.throttle import throttled

    ledger = Ledger.create("crashed-throttle", Path(sys.argv[2]))
    with throttled(sys.argv[1], Throttle(write_iops=50), ledger) as record:
        # an orphan left in the cgroup (not holding our stdout: the test reads to EOF)
        child = subprocess.Popen(["sleep", "120"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        print(ledger.path, record["cgroup"], child.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no cleanup of any kind runs
""")


def test_a_crashed_runs_cgroup_is_removed_by_cleanup(tmp_path, state_dir, loop_device):
    run = subprocess.run(
        [sys.executable, "-c", CRASHING_RUN, loop_device, str(tmp_path)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert run.returncode == -signal.SIGKILL, run.stderr
    ledger_path, cgroup, orphan = run.stdout.split()
    orphan_pid = int(orphan)
    try:
        assert Path(cgroup).is_dir()
        assert str(orphan_pid) in Path(cgroup, "cgroup.procs").read_text().split()
        # what `pgfsbench cleanup` does: release every stale ledger's resources
        crashed = [l for l in stale_ledgers() if str(l.path) == ledger_path]
        assert len(crashed) == 1
        assert crashed[0].release_all() == []
        crashed[0].close()
        assert not Path(cgroup).exists()
        assert not Path(ledger_path).exists()
        # the orphan was moved back where the run came from, out of the throttle
        assert Path(f"/proc/{orphan_pid}/cgroup").read_text() == own_cgroups()
    finally:
        try:
            os.kill(orphan_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if Path(ledger_path).exists():  # the test failed before cleaning up: do it now
            leftover = Ledger.load(Path(ledger_path))
            leftover.release_all()
            leftover.close()
