"""OS knobs on this machine's kernel, and loop targets with an external log device.

Every sysctl a test touches is restored by the ``dirty_sysctls`` fixture even
when the test fails half-way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pgfsbench import proc
from pgfsbench.ledger import Ledger
from pgfsbench.plan.model import Target
from pgfsbench.provision.knobs import os_knobs, read_value, write_value
from pgfsbench.provision.loop import loop_target
from tests.integration.conftest import loops_backed_by

PROC_VM = Path("/proc/sys/vm")
DIRTY = ("dirty_ratio", "dirty_bytes", "dirty_background_ratio", "dirty_background_bytes")


def vm(name: str) -> str:
    return read_value(PROC_VM / name)


@pytest.fixture
def dirty_sysctls():
    """The vm.dirty_* values as they were; put back whatever a failed test left."""
    saved = {name: vm(name) for name in DIRTY}
    yield saved
    for name in DIRTY:  # of each pair the non-zero member: writing it zeroes the other
        if saved[name] != "0" and vm(name) != saved[name]:
            write_value(PROC_VM / name, saved[name])
    assert {name: vm(name) for name in DIRTY} == saved


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Ledger:
    monkeypatch.setenv("PGFSBENCH_STATE_DIR", str(tmp_path / "state"))
    return Ledger.create("knobs", tmp_path)


@pytest.fixture
def loop_device(tmp_path):
    """A loop device of our own (for queue settings), its queue left as found: some
    settings (nr_requests) outlive the detach and would reach the loop's next user."""
    image = tmp_path / "queue.img"
    image.write_bytes(b"")
    os.truncate(image, 64 * 2**20)
    device = proc.run(["losetup", "--find", "--show", str(image)]).stdout.strip()
    queue = Path("/sys/block") / Path(device).name / "queue"
    saved = {key: read_value(queue / key) for key in ("scheduler", "nr_requests")}
    yield device
    for key, value in saved.items():  # the scheduler first: switching it resets nr_requests
        if read_value(queue / key) != value:
            write_value(queue / key, value)
    proc.run(["losetup", "-d", device])


def queue_value(device: str, key: str) -> str:
    return read_value(Path("/sys/block") / Path(device).name / "queue" / key)


# --- sysctls ---------------------------------------------------------------------


def test_the_xfs_vs_ext4_studys_sysctls_are_set_while_running_and_restored(ledger, dirty_sysctls):
    if dirty_sysctls["dirty_background_bytes"] != "0" or dirty_sysctls["dirty_bytes"] != "0":
        pytest.skip("this machine already uses byte limits: the test expects ratios")
    asked = {"vm.dirty_background_bytes": 102400000, "vm.dirty_ratio": 80}
    with os_knobs(asked, {}, None, ledger) as record:
        assert vm("dirty_background_bytes") == "102400000"
        assert vm("dirty_ratio") == "80"
        assert vm("dirty_background_ratio") == "0"  # the kernel zeroed the partner
        assert record["sysctls"]["vm.dirty_background_bytes"] == {
            "before": "0",
            "asked": "102400000",
            "during": "102400000",
        }
        assert record["sysctls"]["vm.dirty_ratio"] == {
            "before": dirty_sysctls["dirty_ratio"],
            "asked": "80",
            "during": "80",
        }
        assert record["sysctls"]["vm.dirty_background_ratio"] == {
            "before": dirty_sysctls["dirty_background_ratio"],
            "asked": None,
            "during": "0",
        }
    assert record["restore_problems"] == []
    assert {name: vm(name) for name in DIRTY} == dirty_sysctls
    assert ledger.resources == []


def test_dirty_bytes_and_dirty_ratio_both_come_back(ledger, dirty_sysctls):
    if dirty_sysctls["dirty_bytes"] != "0":
        pytest.skip("this machine already uses vm.dirty_bytes")
    with os_knobs({"vm.dirty_bytes": 256 * 2**20}, {}, None, ledger) as record:
        assert vm("dirty_bytes") == str(256 * 2**20)
        assert vm("dirty_ratio") == "0"
        assert record["sysctls"]["vm.dirty_ratio"]["during"] == "0"
    assert record["restore_problems"] == []
    assert vm("dirty_bytes") == "0"  # which the kernel refuses as a value: 0 came back
    assert vm("dirty_ratio") == dirty_sysctls["dirty_ratio"]  # by restoring the ratio


CRASHING_RUN = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from pgfsbench.ledger import Ledger
    from pgfsbench.provision.knobs import os_knobs

    ledger = Ledger.create("crashed", Path(sys.argv[1]))
    with os_knobs({"vm.dirty_background_bytes": 102400000, "vm.dirty_ratio": 80}, {}, None,
                  ledger):
        print(ledger.path, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no cleanup of any kind runs
""")


def test_a_crashed_run_is_restored_from_its_ledger(tmp_path, ledger, dirty_sysctls):
    run = subprocess.run(
        [sys.executable, "-c", CRASHING_RUN, str(tmp_path)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )
    assert run.returncode == -signal.SIGKILL, run.stderr
    assert vm("dirty_ratio") == "80" and vm("dirty_background_bytes") == "102400000"
    # what `pgfsbench cleanup` does with the dead run's ledger
    crashed = Ledger.load(Path(run.stdout.strip()))
    assert crashed.release_all() == []
    crashed.close()
    assert {name: vm(name) for name in DIRTY} == dirty_sysctls
    assert not crashed.path.exists()


# --- block queue settings ------------------------------------------------------------


@pytest.mark.parametrize("with_nr_requests", [False, True])
def test_queue_settings_of_a_loop_device(ledger, loop_device, with_nr_requests):
    # a value no scheduler defaults to, so a restore that a scheduler switch undoes shows
    write_value(Path("/sys/block") / Path(loop_device).name / "queue/nr_requests", "32")
    before = {
        key: queue_value(loop_device, key) for key in ("read_ahead_kb", "scheduler", "nr_requests")
    }
    other = "mq-deadline" if before["scheduler"] != "mq-deadline" else "none"
    queue = {"read_ahead_kb": 130, "scheduler": other}
    if with_nr_requests:
        queue["nr_requests"] = 64
    with os_knobs({}, queue, loop_device, ledger) as record:
        # read-ahead is kept in whole pages: the kernel rounds 130 down
        assert queue_value(loop_device, "read_ahead_kb") == "128"
        assert record["queue"]["read_ahead_kb"] == {
            "before": before["read_ahead_kb"],
            "asked": "130",
            "during": "128",
        }
        assert record["queue"]["scheduler"]["during"] == other
        nr = record["queue"]["nr_requests"]
        assert nr["before"] == "32"
        if with_nr_requests:
            assert nr["asked"] == "64" and nr["during"] == "64"
        else:  # switching the scheduler reset it: recorded though not asked for
            assert nr["asked"] is None and nr["during"] != "32"
    assert record["restore_problems"] == []
    assert {key: queue_value(loop_device, key) for key in before} == before


# --- loop targets with an external log -----------------------------------------------


def run_loop_target(spec: Target, tmp_path: Path, ledger: Ledger, check) -> None:
    images = tmp_path / "images"
    data_image, log_image = images / f"{spec.name}.img", images / f"{spec.name}-log.img"
    with loop_target(spec, images, ledger, False, proc.RunAs.lookup("nobody")) as target:
        assert loops_backed_by(data_image) == [target.device]
        if spec.log_size:
            assert loops_backed_by(log_image) == [target.log_device]
            assert target.provenance()["log_device"] == target.log_device
        check(target)
    assert loops_backed_by(data_image) == [] and loops_backed_by(log_image) == []
    assert not data_image.exists() and not log_image.exists()
    assert not os.path.exists(target.mount.mount_point)
    assert ledger.resources == []


def test_xfs_with_an_external_log(tmp_path, ledger):
    spec = Target(name="xfslog", fs="xfs", size="512M", log_size="64M", mount="noatime")

    def check(target):
        info = proc.run(["xfs_info", target.mount.mount_point]).stdout
        log_line = next(line for line in info.splitlines() if line.startswith("log"))
        assert f"={target.log_device}" in log_line  # "log =internal log" otherwise
        assert "blocks=16384" in log_line  # 64 MiB of 4 KiB blocks
        assert f"logdev={target.log_device}" in target.mount.options  # read back
        assert "noatime" in target.mount.options
        mkfs = next(c for c in target.commands if "mkfs.xfs" in c.argv[0])
        assert f"logdev={target.log_device},size={64 * 2**20}" in mkfs.argv

    run_loop_target(spec, tmp_path, ledger, check)


def test_ext4_with_an_external_journal(tmp_path, ledger):
    spec = Target(name="ext4journal", fs="ext4", size="512M", log_size="64M")

    def check(target):
        header = proc.run(["dumpe2fs", "-h", target.device]).stdout
        assert "Journal device:" in header
        assert "Journal UUID:" in header
        journal = proc.run(["dumpe2fs", "-h", target.log_device], check=False)
        assert "journal_dev" in journal.stdout + journal.stderr
        argvs = [" ".join(c.argv) for c in target.commands]
        assert any("-O journal_dev -b 4096" in a and a.endswith(target.log_device) for a in argvs)
        assert any(f"-b 4096 -J device={target.log_device}" in a for a in argvs)

    run_loop_target(spec, tmp_path, ledger, check)


@pytest.mark.parametrize("direct_io", [False, True])
def test_loop_direct_io_is_as_asked(tmp_path, ledger, direct_io):
    spec = Target(
        name=f"dio{int(direct_io)}", fs="ext4", size="64M", log_size="16M", direct_io=direct_io
    )

    def check(target):
        for device in (target.device, target.log_device):
            dio = read_value(Path("/sys/block") / Path(device).name / "loop/dio")
            assert dio == ("1" if direct_io else "0")
        assert f"loop direct I/O: {'on' if direct_io else 'off'}" in target.notes
        losetups = [c.argv for c in target.commands if c.argv[0] == "losetup"]
        assert all(("--direct-io=on" in argv) == direct_io for argv in losetups)

    run_loop_target(spec, tmp_path, ledger, check)
