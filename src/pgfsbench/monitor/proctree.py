"""CPU time of our own processes, so that CPU used outside them shows as other load.

Two groups, read from /proc each tick:

- ``server``: the PostgreSQL postmaster (its pid from ``postmaster.pid``; pg_ctl
  detached it from us) and its children, the backends and auxiliary processes, and a
  user-space filesystem's daemon serving them (zfs-fuse: its recipe names its pid
  files), whose CPU is the filesystem's work, not someone else's load;
- ``client``: the pgfsbench process and everything it started (pgbench, fio, dd,
  pg_test_fsync), walked through ``/proc/<pid>/task/<tid>/children``.

A process's ticks plus its waited-for children's (cutime/cstime) make each group's
count cumulative: a backend or a tool that exits between two ticks moves into its
parent's cutime instead of vanishing. Cost: one small read per process in the tree
(about 3 µs each), nothing for the rest of the machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.monitor.procfs import parse_children, parse_pid_stat

MAX_DEPTH = 8  # runuser → shell → tool is 3; deeper is not something we started


@dataclass(frozen=True)
class TreeCpu:
    """Cumulative clock ticks of each group."""

    server_user: int = 0
    server_system: int = 0
    client_user: int = 0
    client_system: int = 0

    @property
    def user(self) -> int:
        return self.server_user + self.client_user


class ProcessTree:
    """Reads our process groups' CPU ticks; ``problems`` collects what it could not read."""

    def __init__(
        self,
        own_pid: int | None = None,
        server_pidfile: Path | None = None,
        proc: Path = Path("/proc"),
        daemon_pidfiles: tuple[Path, ...] | None = None,
    ) -> None:
        self.own_pid = own_pid if own_pid is not None else os.getpid()
        self.server_pidfile = server_pidfile
        if daemon_pidfiles is None:  # the real machine's: every recipe's daemon
            from pgfsbench.filesystems.registry import recipes

            daemon_pidfiles = (
                tuple(Path(p) for r in recipes() for p in r.daemon_pidfiles)
                if proc == Path("/proc")
                else ()
            )
        self.daemon_pidfiles = daemon_pidfiles
        self._proc = proc
        self._root = str(proc)
        self._server_pid: int | None = None
        self.problems: list[str] = []

    def _text(self, *parts: str | int) -> str | None:
        try:  # a joined string, not a Path: this runs for every backend every tick
            fd = os.open("/".join((self._root, *map(str, parts))), os.O_RDONLY)
        except OSError:
            return None  # exited meanwhile: its time is in its parent's cutime now
        try:
            return os.read(fd, 4096).decode(errors="replace")
        except OSError:
            return None
        finally:
            os.close(fd)

    def _children(self, pid: int, all_threads: bool = False) -> list[int]:
        tids = [pid]
        if all_threads:  # our own process starts tools from more than one thread
            try:
                tids = [int(t) for t in os.listdir(self._proc / str(pid) / "task")]
            except (OSError, ValueError):
                pass
        out: list[int] = []
        for tid in tids:
            out += parse_children(self._text(pid, "task", tid, "children") or "")
        return out

    def _postmaster(self) -> int | None:
        if self.server_pidfile is None:
            return None
        if self._server_pid is None or self._text(self._server_pid, "stat") is None:
            try:
                self._server_pid = int(self.server_pidfile.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                self._server_pid = None
        return self._server_pid

    def _daemons(self) -> list[int]:
        pids = []
        for pidfile in self.daemon_pidfiles:
            try:  # absent unless such a filesystem is in use: one failed open a tick
                pids.append(int(pidfile.read_text().split()[0]))
            except (OSError, ValueError, IndexError):
                continue
        return pids

    def _read(self, pid: int, seen: set[int]) -> tuple[int, int] | None:
        """(user, system) ticks of pid and its waited-for children; None: not readable."""
        if pid in seen or (text := self._text(pid, "stat")) is None:
            return None
        seen.add(pid)
        try:
            cpu = parse_pid_stat(text)
        except ValueError as exc:
            if str(exc) not in self.problems:
                self.problems.append(str(exc))
            return None
        return cpu.user, cpu.system

    def sample(self) -> TreeCpu | None:
        """None when our own process cannot be read: nothing is known then."""
        seen: set[int] = set()
        su = ss = cu = cs = 0
        if (pm := self._postmaster()) is not None:
            # Backends and parallel workers are the postmaster's children; they start
            # no processes of their own that matter, so one level is read.
            for pid in (pm, *self._children(pm)):
                if got := self._read(pid, seen):
                    su, ss = su + got[0], ss + got[1]
        for pid in self._daemons():  # every thread's time is in the process's stat
            if got := self._read(pid, seen):
                su, ss = su + got[0], ss + got[1]
        own = self._read(self.own_pid, seen)
        if own is None:
            return None
        cu, cs = own
        level = self._children(self.own_pid, all_threads=True)
        for _ in range(MAX_DEPTH):
            nxt: list[int] = []
            for pid in level:
                if got := self._read(pid, seen):
                    cu, cs = cu + got[0], cs + got[1]
                    nxt += self._children(pid)
            level = [p for p in nxt if p not in seen]
        return TreeCpu(su, ss, cu, cs)
