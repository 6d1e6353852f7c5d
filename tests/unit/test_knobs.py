"""OS knobs on a fake /proc/sys and /sys/class/block: bookkeeping, restore, messages."""

from __future__ import annotations

import errno
import json
import re
from pathlib import Path

import pytest

from pgfsbench import ledger as ledger_mod
from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.provision import knobs
from pgfsbench.provision.knobs import choices, normalize, os_knobs


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Ledger:
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    return Ledger.create("knobs", tmp_path)


@pytest.fixture
def proc_sys(tmp_path) -> Path:
    root = tmp_path / "proc_sys"
    values = {
        "vm/dirty_ratio": "20",
        "vm/dirty_bytes": "0",
        "vm/dirty_background_ratio": "10",
        "vm/dirty_background_bytes": "0",
        "vm/swappiness": "60",
        "kernel/printk": "4\t4\t1\t7",
        "fs/file-nr": "1 0 9",
    }
    for name, value in values.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(value + "\n")
    (root / "fs/file-nr").chmod(0o444)
    return root


@pytest.fixture
def sys_block(tmp_path) -> Path:
    root = tmp_path / "sys_block"
    queue = root / "loop7" / "queue"
    queue.mkdir(parents=True)
    (queue / "scheduler").write_text("[none] mq-deadline kyber bfq \n")
    (queue / "read_ahead_kb").write_text("128\n")
    (queue / "nr_requests").write_text("128\n")
    (queue / "rotational").write_text("1\n")
    (queue / "hw_sector_size").write_text("512\n")
    (queue / "hw_sector_size").chmod(0o444)
    # a partition's queue is its disk's
    (root / "vda" / "queue").mkdir(parents=True)
    (root / "vda" / "queue" / "read_ahead_kb").write_text("4096\n")
    (root / "vda" / "vda1").mkdir()
    (root / "vda" / "vda1" / "partition").write_text("1\n")
    (root / "vda1").symlink_to(root / "vda" / "vda1")
    return root


def read(path: Path) -> str:
    return path.read_text().strip()


# --- parsing ------------------------------------------------------------------------


def test_a_choice_file_reads_as_its_bracketed_entry():
    assert normalize("none [mq-deadline] kyber bfq\n") == "mq-deadline"
    assert normalize("[none] mq-deadline kyber bfq \n") == "none"
    assert choices("none [mq-deadline] kyber bfq\n") == ["none", "mq-deadline", "kyber", "bfq"]


def test_plain_values_have_their_whitespace_collapsed():
    assert normalize("102400000\n") == "102400000"
    assert normalize("4\t4\t1\t7\n") == "4 4 1 7"
    assert normalize("write back\n") == "write back"
    assert knobs.as_text(True) == "1" and knobs.as_text(80) == "80"


# --- bookkeeping ------------------------------------------------------------------


def test_old_values_are_in_the_ledger_before_the_new_ones_are_written(
    ledger, proc_sys, sys_block, monkeypatch
):
    seen: list[tuple[str, list[dict]]] = []
    real_write = knobs.write_value

    def spying_write(path: Path, value: str) -> None:
        on_disk = json.loads(ledger.path.read_text())["resources"]
        seen.append((str(path), on_disk))
        real_write(path, value)

    monkeypatch.setattr(knobs, "write_value", spying_write)
    with os_knobs(
        {"vm.swappiness": 10},
        {"read_ahead_kb": 256},
        "/dev/loop7",
        ledger,
        proc_sys=proc_sys,
        sys_block=sys_block,
    ) as record:
        assert read(proc_sys / "vm/swappiness") == "10"
        assert read(sys_block / "loop7/queue/read_ahead_kb") == "256"
    assert [p for p, _ in seen[:2]] == [
        str(proc_sys / "vm/swappiness"),
        str(sys_block / "loop7/queue/read_ahead_kb"),
    ]
    first_write_ledger = seen[0][1]
    assert {
        "kind": "sysctl",
        "name": "vm.swappiness",
        "path": str(proc_sys / "vm/swappiness"),
        "old": "60",
    } in first_write_ledger
    assert {
        "kind": "sysfs",
        "path": str(sys_block / "loop7/queue/read_ahead_kb"),
        "old": "128",
    } in first_write_ledger
    assert record["sysctls"] == {"vm.swappiness": {"before": "60", "asked": "10", "during": "10"}}
    assert record["queue"] == {"read_ahead_kb": {"before": "128", "asked": "256", "during": "256"}}
    assert record["device"] == "/dev/loop7" and record["restore_problems"] == []
    # restored on exit, and the ledger is empty again
    assert read(proc_sys / "vm/swappiness") == "60"
    assert read(sys_block / "loop7/queue/read_ahead_kb") == "128"
    assert Ledger.load(ledger.path).resources == []


def test_what_the_kernel_makes_of_a_value_is_recorded_as_during(ledger, sys_block, monkeypatch):
    def rounding_write(path: Path, value: str) -> None:  # read_ahead_kb counts whole pages
        path.write_text(str(int(value) // 4 * 4) + "\n")

    monkeypatch.setattr(knobs, "write_value", rounding_write)
    with os_knobs({}, {"read_ahead_kb": 130}, "/dev/loop7", ledger, sys_block=sys_block) as rec:
        assert rec["queue"]["read_ahead_kb"] == {"before": "128", "asked": "130", "during": "128"}


def test_a_crash_leaves_the_old_values_for_cleanup(ledger, proc_sys, sys_block):
    ctx = os_knobs(
        {"vm.swappiness": 1},
        {"scheduler": "mq-deadline"},
        "/dev/loop7",
        ledger,
        proc_sys=proc_sys,
        sys_block=sys_block,
    )
    ctx.__enter__()  # and never exits: the process "dies" here (ctx is kept referenced:
    # a collected generator would run its own restore)
    assert read(sys_block / "loop7/queue/scheduler") == "mq-deadline"
    # what pgfsbench cleanup does with a stale ledger
    assert Ledger.load(ledger.path).release_all() == []
    assert read(proc_sys / "vm/swappiness") == "60"
    assert read(sys_block / "loop7/queue/scheduler") == "none"
    assert read(sys_block / "loop7/queue/nr_requests") == "128"
    del ctx


class SchedulerKernel:
    """Switching the scheduler resets nr_requests to the new scheduler's default."""

    defaults = {"none": "128", "mq-deadline": "256"}

    def write(self, path: Path, value: str) -> None:
        if path.name == "scheduler":
            options = " ".join(f"[{c}]" if c == value else c for c in choices(path.read_text()))
            path.write_text(options + "\n")
            (path.parent / "nr_requests").write_text(self.defaults[value] + "\n")
        else:
            path.write_text(value + "\n")


@pytest.mark.parametrize(
    "queue",
    [
        {"read_ahead_kb": 64, "scheduler": "mq-deadline"},
        {"read_ahead_kb": 64, "scheduler": "mq-deadline", "nr_requests": 64},
    ],
)
def test_a_scheduler_change_also_records_what_it_resets(ledger, sys_block, monkeypatch, queue):
    nr_requests = sys_block / "loop7/queue/nr_requests"
    nr_requests.write_text("32\n")  # not the default of either scheduler
    monkeypatch.setattr(knobs, "write_value", SchedulerKernel().write)
    with os_knobs({}, queue, "/dev/loop7", ledger, sys_block=sys_block) as record:
        kinds = [Path(r["path"]).name for r in ledger.resources]
        # restored in reverse: nr_requests (which a scheduler switch resets) comes
        # back after the scheduler, whether or not it was asked for
        assert kinds[:2] == ["nr_requests", "scheduler"]
        assert record["queue"]["nr_requests"] == {
            "before": "32",
            "asked": queue.get("nr_requests") and "64",
            "during": "64" if "nr_requests" in queue else "256",
        }
        assert record["queue"]["scheduler"]["before"] == "none"
    assert record["restore_problems"] == []
    assert read(nr_requests) == "32"
    assert normalize((sys_block / "loop7/queue/scheduler").read_text()) == "none"


def test_a_partition_uses_its_disks_queue(ledger, sys_block):
    with os_knobs({}, {"read_ahead_kb": 512}, "/dev/vda1", ledger, sys_block=sys_block):
        assert read(sys_block / "vda/queue/read_ahead_kb") == "512"
    assert read(sys_block / "vda/queue/read_ahead_kb") == "4096"


def test_restoring_something_gone_is_fine(ledger, tmp_path):
    res = ledger.add("sysfs", path=str(tmp_path / "gone/queue/read_ahead_kb"), old="128")
    assert ledger.release(res) == []
    res = ledger.add("sysctl", name="vm.gone", path=str(tmp_path / "vm/gone"), old="1")
    assert ledger.release(res) == []


def test_a_value_that_does_not_come_back_is_a_problem(ledger, proc_sys, monkeypatch):
    path = proc_sys / "vm/swappiness"
    res = ledger.add("sysctl", name="vm.swappiness", path=str(path), old="60")
    path.write_text("10\n")

    def refusing_write(path: Path, value: str) -> None:
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(knobs, "write_value", refusing_write)
    assert ledger.release(res) == ["could not restore vm.swappiness to 60: Invalid argument"]


# --- linked sysctls ------------------------------------------------------------------


class FakeKernel:
    """The vm.dirty_* rules: writing a member zeroes its partner if the value changes,
    and a *_bytes member refuses 0."""

    def __init__(self, root: Path):
        self.root = root

    def write(self, path: Path, value: str) -> None:
        name = "vm." + path.name
        partner = knobs.LINKED_SYSCTLS.get(name)
        if name.endswith("_bytes") and value == "0":
            raise OSError(errno.EINVAL, "Invalid argument")
        changed = read(path) != value
        path.write_text(value + "\n")
        if partner and changed:
            (self.root / partner.replace(".", "/")).write_text("0\n")


@pytest.mark.parametrize(
    "asked",
    [
        {"vm.dirty_bytes": 1 << 26},  # ratio was the one in use
        {"vm.dirty_ratio": 80, "vm.dirty_background_bytes": 102400000},  # the XFS-vs-ext4 study
        {"vm.dirty_background_ratio": 5},
    ],
)
def test_a_linked_pair_comes_back_whole(ledger, proc_sys, monkeypatch, asked):
    monkeypatch.setattr(knobs, "write_value", FakeKernel(proc_sys).write)
    before = {p.name: read(p) for p in (proc_sys / "vm").iterdir()}
    with os_knobs(asked, {}, None, ledger, proc_sys=proc_sys) as record:
        for name, value in asked.items():
            assert record["sysctls"][name]["during"] == str(value)
            partner = knobs.LINKED_SYSCTLS[name]
            # the partner is recorded too: the kernel zeroed it
            assert record["sysctls"][partner]["asked"] is None
            assert record["sysctls"][partner]["during"] == "0"
    assert record["restore_problems"] == []
    assert {p.name: read(p) for p in (proc_sys / "vm").iterdir()} == before


def test_a_linked_pair_comes_back_when_bytes_was_in_use(ledger, proc_sys, monkeypatch):
    (proc_sys / "vm/dirty_bytes").write_text("67108864\n")
    (proc_sys / "vm/dirty_ratio").write_text("0\n")
    monkeypatch.setattr(knobs, "write_value", FakeKernel(proc_sys).write)
    with os_knobs({"vm.dirty_ratio": 30}, {}, None, ledger, proc_sys=proc_sys):
        names = [r["name"] for r in ledger.resources]
        assert names == ["vm.dirty_bytes", "vm.dirty_ratio"]  # bytes restored last
        assert read(proc_sys / "vm/dirty_bytes") == "0"
    assert read(proc_sys / "vm/dirty_bytes") == "67108864"
    assert read(proc_sys / "vm/dirty_ratio") == "0"


def test_a_crash_restores_a_linked_pair_too(ledger, proc_sys, monkeypatch):
    monkeypatch.setattr(knobs, "write_value", FakeKernel(proc_sys).write)
    ctx = os_knobs({"vm.dirty_background_bytes": 102400000}, {}, None, ledger, proc_sys=proc_sys)
    ctx.__enter__()  # the process "dies" here
    assert read(proc_sys / "vm/dirty_background_ratio") == "0"
    assert Ledger.load(ledger.path).release_all() == []
    assert read(proc_sys / "vm/dirty_background_ratio") == "10"
    assert read(proc_sys / "vm/dirty_background_bytes") == "0"
    del ctx


def test_both_members_of_a_pair_is_an_error(ledger, proc_sys):
    with pytest.raises(UserError, match="either vm.dirty_bytes or vm.dirty_ratio, not both"):
        with os_knobs(
            {"vm.dirty_bytes": 1 << 26, "vm.dirty_ratio": 30}, {}, None, ledger, proc_sys=proc_sys
        ):
            pass


# --- what a user can get wrong -------------------------------------------------------


def test_an_unknown_sysctl_is_named_with_what_exists(ledger, proc_sys):
    with pytest.raises(UserError) as exc:
        with os_knobs({"vm.dirty_ratoi": 10}, {}, None, ledger, proc_sys=proc_sys):
            pass
    message = str(exc.value)
    assert "sysctl 'vm.dirty_ratoi' does not exist" in message
    assert "did you mean vm.dirty_ratio" in message
    assert "dirty_background_bytes, dirty_background_ratio, dirty_bytes" in message
    assert ledger.resources == []  # nothing touched


def test_an_unknown_sysctl_directory_lists_the_top_level(ledger, proc_sys):
    with pytest.raises(
        UserError,
        match=r"'vn.dirty_ratio' does not exist on this kernel; "
        r".*proc_sys has: fs, kernel, vm$",
    ):
        with os_knobs({"vn.dirty_ratio": 10}, {}, None, ledger, proc_sys=proc_sys):
            pass


def test_a_read_only_sysctl_is_refused(ledger, proc_sys):
    with pytest.raises(UserError, match="sysctl 'fs.file-nr' is read-only"):
        with os_knobs({"fs.file-nr": 1}, {}, None, ledger, proc_sys=proc_sys):
            pass


def test_an_unknown_queue_key_is_named_with_what_can_be_set(ledger, sys_block):
    with pytest.raises(UserError) as exc:
        with os_knobs({}, {"read_ahead": 64}, "/dev/loop7", ledger, sys_block=sys_block):
            pass
    message = str(exc.value)
    assert "queue setting 'read_ahead' of /dev/loop7 does not exist" in message
    assert "did you mean read_ahead_kb" in message
    assert "has: nr_requests, read_ahead_kb, rotational, scheduler" in message  # writable only


def test_a_queue_key_cannot_leave_the_queue_directory(ledger, sys_block):
    with pytest.raises(UserError, match="does not exist"):
        with os_knobs(
            {}, {"../../vda/queue/read_ahead_kb": 1}, "/dev/loop7", ledger, sys_block=sys_block
        ):
            pass


def test_queue_settings_need_a_device(ledger):
    with pytest.raises(UserError, match="need a block device"):
        with os_knobs({}, {"scheduler": "none"}, None, ledger):
            pass


def test_a_refused_value_is_a_user_error_and_nothing_stays_changed(
    ledger, proc_sys, sys_block, monkeypatch
):
    real_write = knobs.write_value

    def kernel(path: Path, value: str) -> None:
        if path.name == "read_ahead_kb" and int(value) > 100_000:  # a limit no file shows
            raise OSError(errno.EINVAL, "Invalid argument")
        real_write(path, value)

    monkeypatch.setattr(knobs, "write_value", kernel)
    with pytest.raises(
        UserError,
        match=r"refused queue setting .*read_ahead_kb = 5000000: "
        r"Invalid argument",
    ):
        with os_knobs(
            {"vm.swappiness": 5},
            {"read_ahead_kb": 5_000_000},
            "/dev/loop7",
            ledger,
            proc_sys=proc_sys,
            sys_block=sys_block,
        ):
            pass
    assert read(proc_sys / "vm/swappiness") == "60"  # applied before the refusal, restored
    assert Ledger.load(ledger.path).resources == []


@pytest.mark.parametrize(
    "sysctls, queue, said",
    [
        (
            {"vm.dirty_ratio": "20; touch x"},
            {},
            "sysctl vm.dirty_ratio = '20; touch x': the kernel takes a whole number there",
        ),
        (
            {"vm.dirty_ratio": 150},
            {},
            "sysctl vm.dirty_ratio = 150: the kernel takes a whole number from 0 to 100",
        ),
        ({"vm.swappiness": 1.5}, {}, "sysctl vm.swappiness = '1.5': the kernel takes a whole"),
        (
            {"kernel.printk": "4 4 1"},
            {},
            "the kernel takes 4 whole numbers there (it holds '4 4 1 7')",
        ),
        (
            {},
            {"scheduler": "deadline"},
            "queue setting scheduler = 'deadline': this device offers "
            "none, mq-deadline, kyber, bfq",
        ),
        (
            {},
            {"read_ahead_kb": "lots"},
            "queue setting read_ahead_kb = 'lots': the kernel takes a whole number",
        ),
        (
            {},
            {"read_ahead_kb": -1},
            "queue setting read_ahead_kb = -1: the kernel takes a whole number of at least 0",
        ),
    ],
)
def test_values_are_judged_by_the_kernel_files_type_before_anything_is_written(
    ledger, proc_sys, sys_block, sysctls, queue, said
):
    """A value the kernel would refuse: refused up front by check_knobs (plan check, the
    run's preflight) and again by os_knobs before its first write."""
    with pytest.raises(UserError) as e:
        knobs.check_knobs(sysctls, queue, "/dev/loop7", proc_sys=proc_sys, sys_block=sys_block)
    assert said in str(e.value)
    with pytest.raises(UserError, match=re.escape(said)):
        with os_knobs(
            {"vm.swappiness": 5, **sysctls},
            queue,
            "/dev/loop7",
            ledger,
            proc_sys=proc_sys,
            sys_block=sys_block,
        ):
            pass
    assert read(proc_sys / "vm/swappiness") == "60"  # never written
    assert Ledger.load(ledger.path).resources == []


def test_good_values_pass_and_a_loop_target_is_judged_on_a_stand_in(proc_sys, sys_block):
    knobs.check_knobs(
        {"vm.dirty_ratio": 40, "kernel.printk": "3 4 1 7"},
        {"scheduler": "mq-deadline", "read_ahead_kb": 4096},
        "/dev/loop7",
        proc_sys=proc_sys,
        sys_block=sys_block,
    )
    assert knobs.standin_device(sys_block) == "/dev/loop7"
    assert knobs.standin_device(sys_block / "none") is None
