"""Starting, telling and stopping the recording layer (``recorder.py``).

A loop target whose plan has a crash workload keeps its images in a recorder mount:
``provision/loop.py`` holds the ``recorder`` resource in the ledger (the backing
directory and the mount point) before it starts the daemon; ``stop_recorder`` unmounts
it, ends the daemon and removes the backing directory, also after a crash (``pgfsbench
cleanup``). The loop devices over its images are released first (the ledger undoes in
reverse), so the mount is no longer busy by then.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.ledger import releaser

CONTROL = ".pgfsbench-recorder"
FSNAME = "pgfsbench-recorder"
START_WAIT = 15.0


def unavailable_reason() -> str | None:
    """Why the recording layer cannot run here (no /dev/fuse, no libfuse), or None."""
    if not os.path.exists("/dev/fuse"):
        return "/dev/fuse is missing (the fuse kernel module is not loaded)"
    try:
        import mfusepy  # type: ignore[import-untyped]  # noqa: F401  (loads libfuse: the check)
    except (ImportError, OSError) as exc:
        return f"libfuse cannot be loaded ({exc}): install libfuse2 (make setup does)"
    return None


def _fuse_mounted(mountpoint: Path) -> bool:
    target = os.path.realpath(mountpoint)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[4] == target and fields[sep + 1].startswith("fuse"):
                return True
    return False


def _ours(pid: int) -> bool:
    try:
        return b"pgfsbench.crash.recorder" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def start_recorder(res: dict) -> None:
    """Start the daemon recorded in ``res`` (``backing``, ``mountpoint``, ``log``: all
    made here) and wait for its mount; the pid goes into ``res``. Raises UserError with
    the daemon's own words when it does not come up."""
    backing, mountpoint = Path(res["backing"]), Path(res["mountpoint"])
    backing.mkdir(parents=True, exist_ok=True)
    mountpoint.mkdir(parents=True, exist_ok=True)
    with open(res["log"], "ab") as log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "pgfsbench.crash.recorder", str(backing), str(mountpoint)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # a Ctrl-C at the terminal must not end it under a mount
        )
    res["pid"] = daemon.pid
    deadline = time.monotonic() + START_WAIT
    while not _fuse_mounted(mountpoint):
        if daemon.poll() is not None or time.monotonic() > deadline:
            words = Path(res["log"]).read_text(errors="replace").strip().splitlines()
            raise UserError(
                "the crash workload's recording layer (a FUSE filesystem) did not start: "
                f"{words[-1] if words else 'no message'}; "
                f"{unavailable_reason() or 'see ' + res['log']}"
            )
        time.sleep(0.05)


def control(mountpoint: str | Path, command: str) -> dict:
    """Send ``command`` (``start DIR`` or ``stop``) and return the recorder's status."""
    path = Path(mountpoint) / CONTROL
    try:
        with open(path, "w") as f:
            f.write(command + "\n")
    except OSError as exc:
        raise UserError(
            f"the recording layer at {mountpoint} refused '{command}': {exc.strerror}; "
            f"its status: {status(mountpoint)}"
        ) from None
    return status(mountpoint)


def status(mountpoint: str | Path) -> dict:
    return json.loads((Path(mountpoint) / CONTROL).read_text())


def recorder_of(image: str | Path) -> Path | None:
    """The recorder mount holding ``image`` (a loop device's backing file), or None."""
    parent = Path(image).parent
    return parent if (parent / CONTROL).exists() else None


def backing_file(loop_device: str) -> str | None:
    try:
        return Path(f"/sys/block/{Path(loop_device).name}/loop/backing_file").read_text().strip()
    except OSError:
        return None


@releaser("recorder")
def stop_recorder(res: dict) -> list[str]:
    """Unmount the recording layer, end its daemon, remove its backing directory."""
    problems: list[str] = []
    mountpoint = res["mountpoint"]
    if os.path.isdir(mountpoint) and _fuse_mounted(Path(mountpoint)):
        for argv in (["umount", mountpoint], ["umount", "-l", mountpoint]):
            if proc.run(argv, check=False).ok:
                break
        else:
            problems.append(f"could not unmount the recording layer at {mountpoint}")
    pid = res.get("pid")
    if pid and _ours(pid):
        for _ in range(50):  # the daemon ends by itself once unmounted
            if not _ours(pid):
                break
            time.sleep(0.1)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    if problems:
        return problems
    with contextlib.suppress(FileNotFoundError, OSError):
        os.rmdir(mountpoint)
    shutil.rmtree(res["backing"], ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(res["log"])
    return []
