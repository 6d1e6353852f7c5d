r"""A noisy neighbour: bursts of CPU and of fsync'd disk writes at a stated duty cycle.

    .venv/bin/python benchmarks/neighbour.py [--duty 0.4] [--period 30] [--seconds 900]
        [--cpu N] [--no-cpu] [--no-disk] [--block-kb 256] [--file-mb 64] [--seed S]
        [--dir DIR] [--log FILE]
    .venv/bin/python benchmarks/neighbour.py --while-exists FILE [--seconds 900] ...
    .venv/bin/python benchmarks/neighbour.py ... --detach --pidfile FILE

What a shared machine does to a campaign, made reproducible: someone else's job that
runs in bursts (a build, a cron job, a backup, a neighbour VM's batch), on the same
CPUs and the same disk as the benchmark.

- **Bursts at a duty cycle.** Time is cut into cycles whose lengths are drawn
  uniformly from 0.5x to 1.5x ``--period`` seconds (seeded: ``--seed``); each cycle is
  a quiet gap followed by a burst of ``--duty`` of the cycle, so over a long run the
  neighbour is busy ``--duty`` of the time (default 40% of 30 s cycles: bursts of
  6-18 s, gaps of 9-27 s). The first cycle starts at a random point of a cycle.
- **CPU**: during a burst ``--cpu`` processes (default: one per CPU) spin in user
  space, as a compiler or a compression job would.
- **Disk**: during a burst one process writes ``--block-kb`` blocks and fsyncs each
  one, into one file of at most ``--file-mb`` (rewritten from its start when full),
  as a database or a backup would.
- ``--while-exists FILE``: no schedule; a burst lasts while FILE exists (polled every
  50 ms). A test starts and stops bursts by creating and removing the file.

Bounded and local: it stops after ``--seconds`` (at most 4 hours) or on SIGTERM /
SIGINT, opens no socket, and writes only inside a temporary directory it makes under
``--dir`` (default: the system's temporary directory) and removes when it stops, with
its file. ``--log FILE`` appends one line per burst (``burst START END`` as Unix times)
so a run can be matched with the bursts that overlapped it. ``--detach`` runs it as a
daemon (its parent the init process, not the caller): pgfsbench counts the processes it
started as its own load, so a test that starts the neighbour from inside a campaign's
process must detach it to have it seen as someone else's.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

MAX_SECONDS = 4 * 3600
POLL = 0.05


def cycles(duty: float, period: float, seed: int | None, start: float, end: float):
    """(burst start, burst end) times from ``start`` to ``end``: each cycle a quiet gap,
    then a burst of ``duty`` of it; cycle lengths uniform in 0.5-1.5 x ``period``."""
    rng = random.Random(seed)
    length = period * rng.uniform(0.5, 1.5)
    t = start - length * rng.random()  # a random phase of the first cycle
    while t < end:
        burst = duty * length
        on, off = t + length - burst, t + length
        if off > start:
            yield max(on, start), min(off, end)
        t = off
        length = period * rng.uniform(0.5, 1.5)


def spin(on, stop) -> None:
    """Burn user CPU while ``on`` is set; sleep otherwise."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers
    x = 1.0
    while not stop.is_set():
        if not on.wait(POLL):
            continue
        deadline = time.monotonic() + POLL
        while time.monotonic() < deadline:
            x = x * 1.0000001 + 1e-9
    _ = x


def write(on, stop, path: str, block: int, size: int) -> None:
    """While ``on`` is set, write ``block`` bytes and fsync, over and over, into ``path``
    (at most ``size`` bytes: rewritten from its start)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    data = os.urandom(block)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        offset = 0
        while not stop.is_set():
            if not on.wait(POLL):
                continue
            os.pwrite(fd, data, offset)
            os.fsync(fd)
            offset = 0 if offset + 2 * block > size else offset + block
    finally:
        os.close(fd)


class Neighbour:
    """The worker processes and their switch; ``with Neighbour(...) as n: n.burst(True)``."""

    def __init__(
        self, cpus: int, disk: bool, directory: Path, block_kb: int = 256, file_mb: int = 64
    ) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="pgfsbench-neighbour-", dir=directory))
        ctx = mp.get_context("fork")
        self.on, self.stop = ctx.Event(), ctx.Event()
        self.workers = [ctx.Process(target=spin, args=(self.on, self.stop)) for _ in range(cpus)]
        if disk:
            self.workers.append(
                ctx.Process(
                    target=write,
                    args=(
                        self.on,
                        self.stop,
                        str(self.dir / "burst.dat"),
                        block_kb * 1024,
                        file_mb * 1024 * 1024,
                    ),
                )
            )

    def __enter__(self) -> Neighbour:
        for w in self.workers:
            w.daemon = True
            w.start()
        return self

    def burst(self, on: bool) -> None:
        if on:
            self.on.set()
        else:
            self.on.clear()

    def __exit__(self, *exc) -> None:
        self.on.clear()
        self.stop.set()
        for w in self.workers:
            w.join(5)
            if w.is_alive():
                w.kill()
                w.join()
        shutil.rmtree(self.dir, ignore_errors=True)


class Switched:
    """A detached neighbour that bursts while its switch is on: the integration test's
    and the fixtures' (``with Switched(workdir, cpu=True, disk=False) as n: n.on() ...``).
    Detached, so that a campaign in the process that starts it counts it as someone
    else's load; stopped and its files removed on exit."""

    def __init__(
        self, directory: Path, cpu: bool = True, disk: bool = True, seconds: float = 1800
    ) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="pgfsbench-switch-", dir=directory))
        self.flag, self.pidfile = self.dir / "on", self.dir / "pid"
        self.argv = [
            sys.executable,
            __file__,
            "--while-exists",
            str(self.flag),
            "--detach",
            "--pidfile",
            str(self.pidfile),
            "--seconds",
            str(seconds),
            "--dir",
            str(self.dir),
            *([] if cpu else ["--no-cpu"]),
            *([] if disk else ["--no-disk"]),
        ]
        self.pid: int | None = None

    def __enter__(self) -> Switched:
        import subprocess

        subprocess.run(self.argv, check=True)  # returns once the daemon is forked off
        deadline = time.monotonic() + 10
        while not self.pidfile.exists() or not self.pidfile.read_text().strip():
            if time.monotonic() > deadline:
                raise RuntimeError("the neighbour did not start")
            time.sleep(0.05)
        self.pid = int(self.pidfile.read_text())
        return self

    def on(self) -> None:
        self.flag.touch()

    def off(self) -> None:
        self.flag.unlink(missing_ok=True)

    def __exit__(self, *exc) -> None:
        self.off()
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 15
            while _alive(self.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        shutil.rmtree(self.dir, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Running (a zombie its new parent has not reaped yet is done)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _stop_on_signals() -> None:
    def stop(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def _detach(pidfile: Path | None) -> None:
    """Become a daemon whose parent is the init process (double fork)."""
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    if pidfile:
        pidfile.write_text(f"{os.getpid()}\n")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


def run(args: argparse.Namespace) -> None:
    started = time.time()
    end = started + args.seconds
    log = open(args.log, "a", buffering=1) if args.log else None
    with Neighbour(
        0 if args.no_cpu else args.cpu,
        not args.no_disk,
        args.dir,
        args.block_kb,
        args.file_mb,
    ) as n:
        if args.while_exists:
            burst_from = None
            while time.time() < end:
                on = args.while_exists.exists()
                if on and burst_from is None:
                    burst_from = time.time()
                elif not on and burst_from is not None:
                    if log:
                        log.write(f"burst {burst_from:.3f} {time.time():.3f}\n")
                    burst_from = None
                n.burst(on)
                time.sleep(POLL)
            return
        for on, off in cycles(args.duty, args.period, args.seed, started, end):
            time.sleep(max(0.0, on - time.time()))
            n.burst(True)
            time.sleep(max(0.0, off - time.time()))
            n.burst(False)
            if log:
                log.write(f"burst {on:.3f} {off:.3f}\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duty", type=float, default=0.4, help="share of the time in bursts")
    parser.add_argument("--period", type=float, default=30.0, help="mean cycle, seconds")
    parser.add_argument("--seconds", type=float, default=900.0, help="stop after (≤ 4 h)")
    parser.add_argument("--cpu", type=int, default=os.cpu_count() or 1, help="spinners")
    parser.add_argument("--no-cpu", action="store_true", help="no CPU bursts")
    parser.add_argument("--no-disk", action="store_true", help="no disk bursts")
    parser.add_argument("--block-kb", type=int, default=256, help="each fsync'd write")
    parser.add_argument("--file-mb", type=int, default=64, help="the file's largest size")
    parser.add_argument("--seed", type=int, help="the bursts' schedule (default: random)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--log", type=Path, help="append 'burst START END' lines")
    parser.add_argument("--while-exists", type=Path, help="burst while this file exists")
    parser.add_argument("--detach", action="store_true", help="run as a daemon")
    parser.add_argument("--pidfile", type=Path, help="with --detach: where its pid goes")
    args = parser.parse_args(argv)
    if not 0 < args.duty < 1:
        parser.error("--duty must lie between 0 and 1")
    if not 0 < args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds must lie between 0 and {MAX_SECONDS}")
    if args.period <= 0 or args.cpu < 0 or args.block_kb < 1 or args.file_mb < 1:
        parser.error("--period, --block-kb and --file-mb must be positive, --cpu at least 0")
    if args.file_mb * 1024 < 2 * args.block_kb:
        parser.error("--file-mb must hold at least two blocks")
    if args.detach:
        _detach(args.pidfile)
    _stop_on_signals()
    try:
        run(args)
    except SystemExit:
        pass


if __name__ == "__main__":
    sys.exit(main())
