"""Our processes' CPU time, on /proc files captured during a real pgbench.

Captured by tests/fixtures/proctree_capture.py (kernel 6.18, 2 CPUs): a throwaway
PostgreSQL 18 (postmaster 7543 and its 12 children), pgbench -S -c 4 -j 2 started by
the capturing Python process 7525; snapshots ``a`` and ``b`` 1 s apart. Others'
jobs were running on the machine meanwhile, so not all user CPU was ours.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from pgfsbench.monitor.procfs import parse_children, parse_pid_stat
from pgfsbench.monitor.proctree import ProcessTree, TreeCpu
from pgfsbench.monitor.system import SystemMonitor

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "proctree"
META = json.loads((FIXTURES / "meta.json").read_text())
OWN, PM = META["own_pid"], META["postmaster"]
BACKENDS = (7579, 7580, 7581, 7582)  # the four pgbench connections
# Deltas a → b, in clock ticks, from the captured files:
SERVER = (40 + 17 + 51 + 18 + 48 + 21 + 38 + 20) - (26 + 12 + 39 + 12 + 32 + 11 + 25 + 13)
CLIENT = (19 + 57) - (14 + 36)  # pgbench; the capturing process itself was idle
OURS_USER = (40 + 51 + 48 + 38 + 19) - (26 + 39 + 32 + 25 + 14)
MACHINE_USER = 12227 - 12133
TOTAL = sum(map(int, "12227 0 6896 410261 3223 0 713 16".split())) - sum(
    map(int, "12133 0 6800 410258 3220 0 708 16".split())
)


def fake_proc(root: Path, snapshot: str, pidfile: bool = True) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(FIXTURES / snapshot, root)
    if pidfile:
        (root.parent / "postmaster.pid").write_text(f"{PM}\n/tmp/pgdata\n")
    return root


def test_parse_pid_stat_captured_and_awkward_names():
    cpu = parse_pid_stat((FIXTURES / "b" / "7576" / "stat").read_text())
    assert (cpu.ppid, cpu.utime, cpu.stime, cpu.cutime, cpu.cstime) == (OWN, 19, 57, 0, 0)
    own = parse_pid_stat((FIXTURES / "a" / str(OWN) / "stat").read_text())
    assert (own.user, own.system) == (4 + 20, 0 + 15)  # its own ticks + waited-for children
    # A command name may hold spaces and parentheses: fields count from the last ')'.
    odd = "42 (a b) (c)) S 7 42 42 0 -1 0 0 0 0 0 5 6 7 8 20 0 1 0 1 1 1"
    assert parse_pid_stat(odd).ppid == 7 and parse_pid_stat(odd).user == 12


@pytest.mark.parametrize("text", ["", "12 (x) S 1 2", "12 (x) S a b c d e f g h i j k l m n o"])
def test_bad_pid_stat_raises(text):
    with pytest.raises(ValueError, match="stat"):
        parse_pid_stat(text)


def test_parse_children():
    assert parse_children((FIXTURES / "a" / str(PM) / "task" / str(PM) / "children").read_text())[
        -4:
    ] == list(BACKENDS)
    assert parse_children("") == [] and parse_children("12 x 13\n") == [12, 13]


def test_tree_groups_server_and_client(tmp_path):
    a = ProcessTree(OWN, tmp_path / "postmaster.pid", fake_proc(tmp_path / "proc", "a")).sample()
    b = ProcessTree(OWN, tmp_path / "postmaster.pid", fake_proc(tmp_path / "proc", "b")).sample()
    assert a == TreeCpu(
        server_user=7 + 26 + 39 + 32 + 25,
        server_system=6 + 12 + 12 + 11 + 13,
        client_user=4 + 20 + 14,
        client_system=15 + 36,
    )
    assert (b.server_user + b.server_system) - (a.server_user + a.server_system) == SERVER
    assert (b.client_user + b.client_system) - (a.client_user + a.client_system) == CLIENT


def test_without_a_server_everything_we_started_is_client(tmp_path):
    tree = ProcessTree(OWN, None, fake_proc(tmp_path / "proc", "a", pidfile=False))
    got = tree.sample()
    assert got.server_user == got.server_system == 0 and got.client_user == 4 + 20 + 14
    # a stale pidfile naming no process is no server either
    (tmp_path / "postmaster.pid").write_text("999999\n")
    assert ProcessTree(OWN, tmp_path / "postmaster.pid", tmp_path / "proc").sample() == got


def test_a_filesystem_daemon_counts_with_the_server(tmp_path):
    """zfs-fuse does the filesystem's work for PostgreSQL: its CPU is ours, not others'
    load. Its pid comes from the pid files the recipes name."""
    root = fake_proc(tmp_path / "proc", "a")
    (root / "4242").mkdir()
    (root / "4242" / "stat").write_text(
        "4242 (zfs-fuse) S 1 4242 4242 0 -1 0 0 0 0 0 300 200 0 0 20 0 30 0 1 1 1\n"
    )
    (tmp_path / "zfs-fuse.pid").write_text("4242\n")
    without = ProcessTree(OWN, tmp_path / "postmaster.pid", root, daemon_pidfiles=()).sample()
    got = ProcessTree(
        OWN,
        tmp_path / "postmaster.pid",
        root,
        daemon_pidfiles=(tmp_path / "none.pid", tmp_path / "zfs-fuse.pid"),
    ).sample()
    assert (got.server_user, got.server_system) == (
        without.server_user + 300,
        without.server_system + 200,
    )
    assert (got.client_user, got.client_system) == (without.client_user, without.client_system)
    assert ProcessTree(OWN, None, root).daemon_pidfiles == ()  # a fake /proc: none of the host's
    assert Path("/run/pgfsbench-zfs-fuse.pid") in ProcessTree().daemon_pidfiles


def test_unreadable_own_process_is_unknown_not_zero(tmp_path):
    assert ProcessTree(1, None, fake_proc(tmp_path / "proc", "a")).sample() is None


def monitor_on(tmp_path, second: str = "b", edit=None) -> SystemMonitor:
    root = fake_proc(tmp_path / "proc", "a")
    mon = SystemMonitor(3600, proc=root, server_pidfile=tmp_path / "postmaster.pid", own_pid=OWN)
    mon.start(time.monotonic())
    fake_proc(root, second)
    if edit:
        edit(root)
    mon.stop()
    return mon


def test_monitor_series_and_totals(tmp_path):
    mon = monitor_on(tmp_path)
    series = {s.name: s.points[0][1] for s in mon.series()}
    assert series["mon.cpu.server_pct"] == pytest.approx(100 * SERVER / TOTAL)
    assert series["mon.cpu.client_pct"] == pytest.approx(100 * CLIENT / TOTAL)
    assert series["mon.cpu.other_user_pct"] == pytest.approx(
        100 * (MACHINE_USER - OURS_USER) / TOTAL
    )
    totals = {m.name: m.value for m in mon.totals()}
    assert totals["mon.cpu.server_s"] == pytest.approx(SERVER / mon.clock_ticks)
    assert totals["mon.cpu.client_s"] == pytest.approx(CLIENT / mon.clock_ticks)
    assert [p for p in mon.problems if "meminfo" not in p] == []  # not captured


def test_a_process_leaving_the_tree_is_never_negative(tmp_path):
    # The busiest backend vanished without being reaped by one of ours.
    mon = monitor_on(tmp_path, edit=lambda root: shutil.rmtree(root / "7580"))
    series = {s.name: s.points[0][1] for s in mon.series()}
    assert series["mon.cpu.server_pct"] == pytest.approx(100 * (SERVER - (51 + 18)) / TOTAL)
    assert all(v >= 0 for v in series.values())


def test_garbled_stat_is_a_problem_not_a_crash(tmp_path):
    mon = monitor_on(tmp_path, edit=lambda root: (root / "7576" / "stat").write_text("junk"))
    assert any("unreadable" in p for p in mon.problems)
    assert {s.name for s in mon.series()} >= {"mon.cpu.client_pct", "mon.cpu.user_pct"}
