"""ZFS targets: the zfs-fuse daemon, a pool on the target's devices, a dataset on a
private mount point. What the commands are is ``filesystems/zfs.py``'s; running
them, and undoing them, is here.

Without a ZFS kernel module, ``zpool`` and ``zfs`` talk to the zfs-fuse daemon. A
campaign starts it when it is not running (in the ledger first, so ``cleanup`` stops
it after a crash) and stops it at the end; a daemon someone else started is left
alone. Pools are made with ``cachefile=none``: a daemon that dies takes them with it,
and no later start imports them again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.filesystems import zfs
from pgfsbench.ledger import Ledger, releaser
from pgfsbench.paths import own_dir
from pgfsbench.plan.model import Target
from pgfsbench.provision.mountinfo import MountEntry
from pgfsbench.provision.mounting import on_private_mount, release_busy, unmount_recorded
from pgfsbench.provision.target import Provisioning

DAEMON = "zfs-fuse"
PIDFILE = Path(zfs.DAEMON_PIDFILE)
TIMEOUT_S = 60
START_WAIT_S = 15
STOP_WAIT_S = 30  # zfs-fuse waits up to 10 s for its worker threads when told to stop


def _run(argv: list[str], timeout: float = TIMEOUT_S) -> proc.CommandResult:
    return proc.run([proc.which(argv[0]) or argv[0], *argv[1:]], check=False, timeout=timeout)


def responds() -> bool:
    """Whether ``zpool`` works now (a kernel module, or a running zfs-fuse daemon)."""
    if proc.which("zpool") is None:
        return False
    return _run(zfs.LIST_POOLS_ARGV).ok


def kernel_module() -> bool:
    with contextlib.suppress(OSError):
        return "zfs" in Path("/proc/filesystems").read_text().split()
    return False


def unavailable_reason() -> str | None:
    """Why no ZFS target can be made here (with the fix), or None."""
    for tool in ("zpool", "zfs"):
        if proc.which(tool) is None:
            return f"{tool} is missing: apt-get install zfs-fuse (or OpenZFS's zfsutils-linux)"
    if kernel_module() or responds():
        return None
    if not Path("/dev/fuse").exists():
        return "no ZFS kernel module, and zfs-fuse needs /dev/fuse: modprobe fuse"
    if proc.which(DAEMON) is None:
        return "no ZFS kernel module and no zfs-fuse daemon: apt-get install zfs-fuse"
    return None


def daemon_pids() -> list[int]:
    """Every zfs-fuse process on the machine, whoever started it."""
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError):
            if comm.read_text().strip() == DAEMON:
                pids.append(int(comm.parent.name))
    return sorted(pids)


def _is_daemon(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == DAEMON
    except OSError:
        return False


def _start_daemon() -> tuple[int, proc.CommandResult]:
    """Start zfs-fuse (it reads /etc/zfs/zfsrc) and wait until zpool answers."""
    PIDFILE.unlink(missing_ok=True)
    result = _run([DAEMON, "--pidfile", str(PIDFILE)])
    deadline = time.monotonic() + START_WAIT_S
    while result.ok and not responds() and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        pid = int(PIDFILE.read_text().strip())
    except (OSError, ValueError):
        pid = None
    if not result.ok or pid is None or not responds():
        if pid is not None:
            _stop(pid)
        detail = (result.stderr or result.stdout).strip() or f"exit code {result.exit_code}"
        raise UserError(
            f"the zfs-fuse daemon did not start ({detail}); 'pgfsbench doctor' "
            "says what is missing (zfs-fuse needs /dev/fuse and root)"
        )
    return pid, result


def _stop(pid: int) -> bool:
    """SIGTERM (it unmounts and exports what it holds), SIGKILL if it hangs."""
    for sig, wait in ((signal.SIGTERM, STOP_WAIT_S), (signal.SIGKILL, 5)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while _is_daemon(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not _is_daemon(pid):
            PIDFILE.unlink(missing_ok=True)
            return True
    return False


def ensure_daemon(ledger: Ledger, commands: list) -> None:
    """zpool answers from here on, for the rest of the campaign."""
    if responds():
        return  # a kernel module, someone's daemon, or the one this campaign started
    if kernel_module():
        raise UserError(
            "the ZFS kernel module is loaded but zpool does not answer: check 'zpool list'"
        )
    # In the ledger before it exists; not on a target's undo stack: it serves every
    # ZFS target of the campaign and is stopped by the campaign's final release.
    res = ledger.add("zfs-daemon", pidfile=str(PIDFILE))
    pid, result = _start_daemon()
    commands.append(result)
    res["pid"] = pid
    ledger.save()


@contextlib.contextmanager
def answering() -> Iterator[None]:
    """zpool and zfs answer inside (to read what they support): a daemon that was not
    running is started for the duration and stopped after (nothing else is made)."""
    if responds() or kernel_module():
        yield
        return
    pid, _ = _start_daemon()
    try:
        yield
    finally:
        # A campaign that began meanwhile (its checks run before the machine lock)
        # may have made a pool on it, taking it for running: not ours to stop then.
        if not pools():
            _stop(pid)


def property_tables() -> dict[str, dict[str, zfs.PropertySpec]]:
    """What the installed zfs and zpool can set, from their own usage text."""
    tables = {}
    for tool, argv in (("zfs", zfs.ZFS_PROPERTIES_ARGV), ("zpool", zfs.ZPOOL_PROPERTIES_ARGV)):
        result = _run(argv)
        tables[tool] = zfs.parse_property_table(result.stdout + result.stderr)
        if not tables[tool]:
            raise UserError(f"'{tool} get' listed no properties: {result.stderr.strip()}")
    return tables


CACHE_ENV = "PGFSBENCH_CACHE_DIR"


def cache_dir() -> Path:
    """Where what the installed tools say of themselves is kept."""
    return own_dir(CACHE_ENV, "/var/cache/pgfsbench", "XDG_CACHE_HOME", ".cache")


def _tables_cache() -> Path | None:
    """The cache file of these zfs and zpool binaries (another build: another file)."""
    marks = []
    for tool in ("zfs", "zpool"):
        found = proc.which(tool)
        try:
            st = os.stat(found) if found else None
        except OSError:
            st = None
        if st is None or found is None:
            return None
        marks.append(f"{os.path.realpath(found)}:{st.st_size}:{st.st_mtime_ns}")
    key = hashlib.sha1("|".join(marks).encode()).hexdigest()[:16]
    return cache_dir() / f"zfs-properties-{key}.json"


def cached_property_tables() -> dict[str, dict[str, zfs.PropertySpec]] | None:
    path = _tables_cache()
    try:
        data = json.loads(path.read_text()) if path else None
        return (
            {
                tool: {name: zfs.PropertySpec(**spec) for name, spec in table.items()}
                for tool, table in data.items()
            }
            if data
            else None
        )
    except (OSError, ValueError, TypeError, AttributeError):
        return None  # absent or unreadable: asked again


def keep_property_tables(tables: dict[str, dict[str, zfs.PropertySpec]]) -> None:
    path = _tables_cache()
    if path is None:
        return
    data = {
        tool: {name: dataclasses.asdict(spec) for name, spec in table.items()}
        for tool, table in tables.items()
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        partial.write_text(json.dumps(data, indent=1))
        partial.replace(path)
    except OSError:
        pass  # a cache: without it the next check starts the daemon again


def plan_problems(targets: list[Target]) -> list[str]:
    """The zfs and zpool properties of ZFS targets that the installed tools refuse.

    Reading them needs zpool to answer: under zfs-fuse, a daemon started for 6-8 s
    (a side effect in a check), so the tables are kept per zfs and zpool binary."""
    asking = [t for t in targets if t.fs == "zfs" and (t.zfs or t.zpool)]
    if not asking:
        return []
    tables = cached_property_tables()
    if tables is None:
        with answering():
            tables = property_tables()
        keep_property_tables(tables)
    return [
        f"target '{t.name}': {problem}"
        for t in asking
        for tool, props in (("zfs", t.zfs), ("zpool", t.zpool))
        for problem in zfs.property_problems(tool, dict(props), tables[tool])
    ]


# --- the target -------------------------------------------------------------------


def make_pool(
    spec: Target, devices: list[str], p: Provisioning, owner: proc.RunAs
) -> tuple[Path, MountEntry, list[str]]:
    """A pool on ``devices`` and its dataset on a new private directory; returns
    (workdir, mount read back, notes). Each is in the ledger before it exists, and
    undone by the undo stack: the dataset, then the pool."""
    ensure_daemon(p.ledger, p.commands)
    pool = zfs.pool_name(p.ledger.path.stem, spec.name)
    p.hold("zfs-pool", pool=pool)
    p.commands.append(proc.run(_tool(zfs.create_pool_argv(pool, devices, dict(spec.zpool)))))
    dataset = f"{pool}/{zfs.DATASET}"

    def create_dataset(mount_point: str) -> str:
        p.hold("zfs-dataset", dataset=dataset, path=mount_point)
        p.commands.append(
            proc.run(_tool(zfs.create_dataset_argv(pool, mount_point, dict(spec.zfs))))
        )
        return "zfs create"

    workdir, mount = on_private_mount(spec.name, "zfs", create_dataset, owner)
    notes = [
        f"ZFS pool {pool} on {', '.join(devices)}, dataset {dataset}",
        "ZFS by "
        + ("the kernel module" if kernel_module() else "zfs-fuse (user space, through FUSE)"),
    ]
    return workdir, mount, notes


def _tool(argv: list[str]) -> list[str]:
    return [proc.which(argv[0]) or argv[0], *argv[1:]]


def pools() -> list[str]:
    """Every imported pool (none when zpool is missing or gets no answer)."""
    if proc.which("zpool") is None:
        return []
    result = _run(zfs.LIST_POOLS_ARGV)
    return zfs.parse_pool_list(result.stdout) if result.ok else []


@releaser("zfs-dataset")
def destroy_dataset(res: dict) -> list[str]:
    dataset, path = res["dataset"], res["path"]
    # Gone when never made or destroyed; busy: a tool orphaned by a killed run holds
    # files on our own dataset.
    if responds() and not release_busy(
        lambda: not _run(["zfs", "list", "-H", "-o", "name", dataset]).ok,
        lambda: _run(zfs.destroy_dataset_argv(dataset)).ok,
        attempts=6,
        path=path,
    ):
        return [f"could not destroy ZFS dataset {dataset}: still busy"]
    # Gone with its daemon, or destroyed: a dead FUSE mount may remain, and the directory.
    return unmount_recorded({"path": path})


@releaser("zfs-pool")
def destroy_pool(res: dict) -> list[str]:
    pool = res["pool"]
    if not responds():
        return []  # no daemon: with cachefile=none the pool is imported nowhere
    if release_busy(
        lambda: pool not in pools(), lambda: _run(zfs.destroy_pool_argv(pool)).ok, attempts=5
    ):
        return []
    return [f"could not destroy ZFS pool {pool}: 'zpool destroy -f {pool}' keeps failing"]


@releaser("zfs-daemon")
def stop_daemon(res: dict) -> list[str]:
    pid = res.get("pid")
    if pid is None:  # crashed between starting it and recording its pid
        with contextlib.suppress(OSError, ValueError):
            pid = int(Path(res["pidfile"]).read_text().strip())
    if pid is None or not _is_daemon(pid):
        return []
    ours = [p for p in pools() if p.startswith(zfs.POOL_PREFIX)]
    if ours:  # their releasers failed: stopping now would only hide them
        return [
            f"zfs-fuse (pid {pid}) left running: pgfsbench's pools {', '.join(ours)} "
            "are still imported"
        ]
    if pools():
        return []  # someone's pools use it now: theirs to stop
    if not _stop(pid):
        return [f"could not stop zfs-fuse (pid {pid})"]
    return []
