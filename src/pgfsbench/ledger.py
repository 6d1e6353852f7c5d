"""The ledger: every resource a run acquires, on disk before it is acquired.

A run writes each resource (image, loop device, mount, PostgreSQL cluster,
scratch directory, sysctl, throttling cgroup) into a JSON state file *before*
acquiring it and removes it once released. Normal teardown and ``pgfsbench
cleanup`` after a crash go through the same ``release`` code, so there is one
way to undo each thing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError

STATE_ENV = "PGFSBENCH_STATE_DIR"


def state_dir() -> Path:
    """Where ledgers live: overridable (tests use a private one)."""
    if os.environ.get(STATE_ENV):
        return Path(os.environ[STATE_ENV])
    if os.geteuid() == 0:
        return Path("/var/lib/pgfsbench/state")
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local/state")
    return Path(base) / "pgfsbench"


@dataclass
class Ledger:
    path: Path
    pid: int
    results_dir: str
    resources: list[dict] = field(default_factory=list)

    @classmethod
    def create(cls, campaign_id: str, results_dir: Path) -> "Ledger":
        directory = state_dir()
        ledger = cls(directory / f"{campaign_id}.json", os.getpid(), str(results_dir))
        try:
            directory.mkdir(parents=True, exist_ok=True)
            ledger.save()
        except OSError as exc:
            raise UserError(f"cannot write the state file in {directory}: {exc.strerror}; "
                            "pgfsbench records there what it changes, to undo it after a "
                            f"crash (set {STATE_ENV} to a writable directory)") from None
        return ledger

    @classmethod
    def load(cls, path: Path) -> "Ledger":
        data = json.loads(path.read_text())
        return cls(path, data["pid"], data["results_dir"], data["resources"])

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(
            {"pid": self.pid, "results_dir": self.results_dir, "resources": self.resources},
            indent=1))
        os.replace(tmp, self.path)

    def add(self, kind: str, **info) -> dict:
        resource = {"kind": kind, **info}
        self.resources.append(resource)
        self.save()
        return resource

    def release(self, resource: dict) -> list[str]:
        """Undo one resource; returns problems (empty when all went well).

        A resource that could not be undone stays in the ledger, so the campaign's
        final sweep and `pgfsbench cleanup` try it again.
        """
        problems = RELEASERS[resource["kind"]](resource)
        if not problems and resource in self.resources:
            self.resources.remove(resource)
            self.save()
        return problems

    def release_all(self) -> list[str]:
        problems: list[str] = []
        for resource in reversed(list(self.resources)):
            problems += self.release(resource)
        return problems

    def close(self) -> None:
        """Forget the ledger once everything is released."""
        if not self.resources:
            self.path.unlink(missing_ok=True)

    def summary(self) -> str:
        """What the ledger still holds, for a person: "a mount, 2 loop devices, sysctl
        vm.dirty_ratio"."""
        counts: dict[str, int] = {}
        named: list[str] = []
        for res in self.resources:
            if res["kind"] in ("sysctl",):
                named.append(f"sysctl {res.get('name')}")
            elif res["kind"] == "sysfs":
                named.append(f"queue setting {res.get('path')}")
            elif res["kind"] != "lock":
                counts[res["kind"]] = counts.get(res["kind"], 0) + 1
        words = {"mount": "mount", "loop": "loop device", "file": "image", "dir": "directory",
                 "postgres": "PostgreSQL server", "cgroup": "throttling cgroup"}
        parts = [f"{n} {words.get(k, k)}{'s' if n > 1 else ''}" for k, n in counts.items()]
        return ", ".join(parts + named) or "nothing but its record"

    def owner_alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        # A recycled pid is possible; a pgfsbench process still owns it only if
        # its command line says so.
        try:
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return False
        return b"pgfsbench" in cmdline


def stale_ledgers() -> list[Ledger]:
    """Ledgers whose run is no longer alive (crashed or killed)."""
    directory = state_dir()
    if not directory.is_dir():
        return []
    ledgers = []
    for path in sorted(directory.glob("*.json")):
        try:
            ledger = Ledger.load(path)
        except (OSError, ValueError, KeyError):
            continue
        if not ledger.owner_alive():
            ledgers.append(ledger)
    return ledgers


# --- how each kind of resource is undone -------------------------------------

def _mounted(path: str) -> bool:
    from pgfsbench.provision.mountinfo import mount_points

    return os.path.realpath(path) in mount_points()


def _users_of(path: str) -> set[int]:
    """Processes with their cwd or an open file under ``path``."""
    prefix = os.path.realpath(path).rstrip("/") + "/"
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = [entry / "cwd", *(entry / "fd").iterdir()]
            for link in links:
                if (os.readlink(link) + "/").startswith(prefix):
                    pids.add(int(entry.name))
                    break
        except OSError:
            continue
    return pids


def _release_mount(res: dict) -> list[str]:
    path = res["path"]
    for attempt in range(8):
        if not _mounted(path):
            break
        if proc.run(["umount", path], check=False).ok:
            break
        if attempt >= 1:
            # Still busy: a tool orphaned by a killed run (pgbench, pg_test_fsync) holds
            # files on our own mount. Nothing else can be there: end it.
            for pid in _users_of(path):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.5 * (attempt + 1))
    else:
        return [f"could not unmount {path}: still busy"]
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        return [f"could not remove mount point {path}: {exc}"]
    return []


def _attached_loops(image: str) -> list[str]:
    result = proc.run(["losetup", "-j", image, "-O", "NAME", "-n"], check=False)
    return [line.strip() for line in result.stdout.splitlines() if line.strip()]


def _release_loop(res: dict, pending_wait: float = 5.0) -> list[str]:
    failed = []
    # The device may not have been recorded yet if we crashed right after attach:
    # find every loop device backed by the image.
    for device in _attached_loops(res["image"]):
        for attempt in range(10):
            if proc.run(["losetup", "-d", device], check=False).ok:
                break
            time.sleep(0.3 * (attempt + 1))
        else:
            failed.append(device)
    # A device someone still holds open (udev probing it after a umount, say) is only
    # marked for detaching, and goes at the last close: wait for that, briefly.
    deadline = time.monotonic() + pending_wait
    while (held := [d for d in _attached_loops(res["image"]) if d not in failed]) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    return [f"could not detach {d}" for d in failed] + [
        f"{d} is still backed by {res['image']} {pending_wait:g} s after detaching: "
        "something holds it open" for d in held]


def _release_file(res: dict) -> list[str]:
    Path(res["path"]).unlink(missing_ok=True)
    return []


def _release_dir(res: dict) -> list[str]:
    shutil.rmtree(res["path"], ignore_errors=True)
    if os.path.exists(res["path"]):
        return [f"could not remove {res['path']}"]
    return []


def _postmaster_pid(pgdata: str) -> int | None:
    try:
        return int(Path(pgdata, "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _is_postmaster(pid: int, uid: int) -> bool:
    """Whether pid is a running postgres program owned by uid (from /proc)."""
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
        owner = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return False
    # A binary replaced on disk while running reads as "postgres (deleted)".
    return exe.split(" ")[0] == "postgres" and owner == uid


def _release_postgres(res: dict) -> list[str]:
    pgdata = res["pgdata"]
    pid = _postmaster_pid(pgdata)
    if pid is None:
        return []
    user = proc.RunAs.lookup(res["user"]) if res.get("user") else None
    stop = proc.run([res["pg_ctl"], "stop", "-D", pgdata, "-m", "fast", "-w", "-t", "60"],
                    as_user=user, check=False)
    if stop.ok:
        return []
    # pg_ctl could not do it (binaries gone, cluster wedged): end it by signal, but
    # only if the pid is still that postmaster. After a reboot or a long time the
    # file's pid may belong to any process, and we are root.
    if not _is_postmaster(pid, user.uid if user else os.getuid()):
        return []
    try:
        os.kill(pid, signal.SIGQUIT)
        for _ in range(50):
            os.kill(pid, 0)
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return []
    return []


def move_to_cgroup(pid: int, procs: str | Path) -> None:
    """Move process ``pid`` (all its threads) into the cgroup whose ``cgroup.procs`` is
    ``procs``: one write(2), so the kernel's refusal is raised here as OSError."""
    fd = os.open(procs, os.O_WRONLY)
    try:
        os.write(fd, str(pid).encode())
    finally:
        os.close(fd)


def _release_cgroup(res: dict) -> list[str]:
    """Remove a throttling cgroup: whatever is still in it (an orphaned tool, or the
    crashed run's children) goes back to ``home`` (the cgroup.procs it came from, else
    the parent's), then the empty directory is removed."""
    path = res["path"]
    homes = [res.get("home"), os.path.join(os.path.dirname(path), "cgroup.procs")]
    problem = ""
    for attempt in range(10):
        try:
            pids = [int(p) for p in Path(path, "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            return []  # never made, or already removed
        except OSError as exc:
            return [f"could not read {path}/cgroup.procs: {exc.strerror}"]
        for pid in pids:
            for home in filter(None, homes):
                try:
                    move_to_cgroup(pid, home)
                    break
                except ProcessLookupError:
                    break  # it has exited meanwhile
                except OSError as exc:
                    problem = f"could not move pid {pid} to {home}: {exc.strerror}"
        try:
            os.rmdir(path)
            return []
        except FileNotFoundError:
            return []
        except OSError as exc:
            problem = f"could not remove cgroup {path}: {exc.strerror}" + (
                f" (pids found in it: {', '.join(map(str, pids))})" if pids else "")
        time.sleep(0.1 * (attempt + 1))
    return [problem]


def _release_lock(res: dict) -> list[str]:
    from pgfsbench.machine_lock import release_recorded

    return release_recorded(res)


def _release_kernel_value(res: dict) -> list[str]:
    # sysctl and sysfs values: the restore logic lives beside the code that sets them
    from pgfsbench.provision.knobs import restore

    return restore(res)


RELEASERS = {
    "mount": _release_mount,
    "loop": _release_loop,
    "file": _release_file,
    "dir": _release_dir,
    "postgres": _release_postgres,
    "sysctl": _release_kernel_value,
    "sysfs": _release_kernel_value,
    "cgroup": _release_cgroup,
    "lock": _release_lock,
}
