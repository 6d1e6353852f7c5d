"""A memory size for a target: its PostgreSQL server and page cache held to it.

A target's (or the plan's) ``memory = "1G"`` puts the PostgreSQL server in a fresh
memory cgroup with that limit for the target's visit, so that a modest pgbench scale
reads from the device as a larger database does on a real server (the XFS-vs-ext4 study's
database was larger than its machine's memory; ours fits in 24 GB many times over).

What is inside: the server (``pg_ctl start`` is started in the cgroup, so the
postmaster and every backend, their shared memory and the page cache they fault in
are charged to it). The pgbench client and the other tools stay outside: they touch
no data file, and on a real server the client's memory is not the server's.

The page cache is charged to the cgroup of the process that first reads a page, so
pages of the target still cached from before (provisioning, a previous visit's
cgroup, which hands its charges to its parent when removed) would be served from
memory without counting: the target's files are written back and dropped from the
page cache (``posix_fadvise(DONTNEED)``, this target only) before the server starts.

The cgroup is in the ledger before it is made (kind ``cgroup``, the same releaser as
the throttling cgroup, cgroups.py: whatever is left in it goes back home, then it is
removed).

Two mechanisms, cgroup v1 preferred when present:

- cgroup v1 ``memory``: ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes``
  where swap accounting exists, so swap does not stretch the limit); the cgroup is made
  under pgfsbench's own memory cgroup (v1 memory is hierarchical: a limit above ours
  still holds);
- cgroup v2 ``memory.max`` (and ``memory.swap.max = 0``), at the top of the unified
  hierarchy as the throttling cgroup is, with ``+memory`` enabled in the root's
  ``cgroup.subtree_control`` when it is not. A v2 throttle on the same target: the
  memory cgroup is made under the throttle's cgroup instead (``+memory`` enabled there
  too), so the server is held by both (a v2 process is in one cgroup: one at the top
  would take the server out of the throttle).

Only cgroup v1 was exercised on our CI machine; the v2 path is covered by unit tests
of the lines it writes, not by a real kernel.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger
from pgfsbench.provision import cgroups
from pgfsbench.provision.cgroups import locate_hierarchies, write
from pgfsbench.provision.mountinfo import parse_mountinfo
from pgfsbench.units import size_to_bytes

PROC_CGROUPS = Path("/proc/cgroups")

_FIX = "remove 'memory' from the plan, or run where it is possible"
_numbers = itertools.count()


@dataclass(frozen=True)
class MemoryHierarchy:
    version: int  # 1: the v1 memory hierarchy; 2: the unified hierarchy
    mount: Path
    home: Path  # this process's cgroup in it

    @property
    def mechanism(self) -> str:
        return "cgroup v1 memory" if self.version == 1 else "cgroup v2 memory.max"

    @property
    def parent(self) -> Path:
        """Where our cgroups are made (see the module's docstring)."""
        return self.home if self.version == 1 else self.mount


def find_memory_hierarchies(proc_cgroup: str, mountinfo: str) -> list[MemoryHierarchy]:
    """The v1 memory and the v2 hierarchy this process can see, v1 first."""
    return [
        MemoryHierarchy(*place) for place in locate_hierarchies(proc_cgroup, mountinfo, "memory")
    ]


def kernel_has_memory_controller(proc_cgroups: str, v2_controllers: str = "") -> bool:
    """Whether the kernel has the memory controller, enabled (``/proc/cgroups``'s row, or
    the unified hierarchy's ``cgroup.controllers``)."""
    for line in proc_cgroups.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0] == "memory":
            return fields[3] == "1"
    return "memory" in v2_controllers.split()


def writes_for(version: int, limit: int, swap_accounting: bool) -> dict[str, str]:
    """The cgroup files to write, in order, and what."""
    if version == 1:
        writes = {"memory.limit_in_bytes": str(limit)}
        if swap_accounting:  # memsw is memory + swap: equal, so no swap beyond the limit
            writes["memory.memsw.limit_in_bytes"] = str(limit)
        return writes
    writes = {"memory.max": str(limit)}
    if swap_accounting:
        writes["memory.swap.max"] = "0"
    return writes


def _usable(h: MemoryHierarchy) -> str | None:
    if h.version == 1:
        if not (h.home / "memory.limit_in_bytes").exists():
            return f"cannot find this process's own memory cgroup ({h.home})"
        if not os.access(h.home, os.W_OK):
            return f"{h.home} is not writable (read-only cgroup mount?)"
        return None
    if reason := cgroups.v2_lacks(h.mount, "memory"):
        return reason
    if not os.access(h.mount, os.W_OK):
        return f"{h.mount} is not writable (read-only cgroup mount?)"
    return None


def _hierarchy() -> MemoryHierarchy | str:
    """The hierarchy to limit memory in, or why there is none (one line)."""
    if reason := memory_controller_missing():
        return reason
    return cgroups.first_usable(
        "memory",
        "it creates a memory cgroup for the server",
        find_memory_hierarchies,
        _usable,
        lambda found, reasons: (
            reasons or ["no cgroup v1 memory hierarchy and no cgroup v2 hierarchy is mounted"]
        ),
        _FIX,
    )


def memory_controller_missing() -> str | None:
    """One line when this kernel has no memory controller (a plan check can say so on
    any machine, without root), else None."""
    try:
        table = PROC_CGROUPS.read_text()
    except OSError:
        table = ""
    v2 = ""
    with contextlib.suppress(OSError):
        for m in parse_mountinfo(cgroups.MOUNTINFO.read_text()):
            if m.fs_type == "cgroup2":
                v2 = (Path(m.mount_point) / "cgroup.controllers").read_text()
                break
    if kernel_has_memory_controller(table, v2):
        return None
    return (
        "memory is not possible here: this kernel has no memory cgroup controller "
        f"(none in /proc/cgroups, none in cgroup v2): {_FIX}"
    )


def memory_support() -> str | None:
    """None when a memory size can be applied here, else a one-line reason."""
    return cgroups.support(_hierarchy())


def drop_cached(directory: Path) -> int:
    """Write back and drop the page cache of every file under ``directory`` (this
    target's files only); returns how many files."""
    count = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                fd = os.open(os.path.join(root, name), os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            except OSError:
                pass
            finally:
                os.close(fd)
    return count


def usage(record: dict) -> None:
    """Add the cgroup's peak usage and how often it hit the limit to ``record`` (cheap:
    a few small files; left out where the kernel has none): ``peak_bytes``, and
    ``failcnt`` and ``memsw_failcnt`` (v1) or ``max_events`` (v2). Each visit has its
    own cgroup; ``merge_usage`` folds a later one's into the stored record."""
    path = Path(record["cgroup"])
    # v1 with swap accounting charges memory + swap first: at equal limits that is the
    # counter that reaches its limit, so its failcnt is the one that counts
    files = (
        {
            "peak_bytes": "memory.max_usage_in_bytes",
            "failcnt": "memory.failcnt",
            "memsw_failcnt": "memory.memsw.failcnt",
        }
        if record["version"] == 1
        else {"peak_bytes": "memory.peak"}
    )
    for key, name in files.items():
        with contextlib.suppress(OSError, ValueError):
            record[key] = int((path / name).read_text().split()[0])
    if record["version"] == 2:
        with contextlib.suppress(OSError, ValueError):
            events = dict(
                line.split() for line in (path / "memory.events").read_text().splitlines()
            )
            record["max_events"] = int(events["max"])


# what ``usage`` adds that a later visit's cgroup counts again: summed over visits
REFUSALS = ("failcnt", "memsw_failcnt", "max_events")


def merge_usage(into: dict, visit: dict) -> bool:
    """Fold a later visit's usage into the first visit's record (the stored one): the
    highest peak, every refusal summed, ``visits`` counted. False when there is nothing
    to fold (no limit, or no usage read)."""
    if not into or not visit or "peak_bytes" not in visit:
        return False
    into["visits"] = into.get("visits", 1) + 1
    into["peak_bytes"] = max(into.get("peak_bytes", 0), visit["peak_bytes"])
    for key in REFUSALS:
        if key in visit:
            into[key] = into.get(key, 0) + visit[key]
    return True


@contextlib.contextmanager
def memory_limited(
    limit: str | None, workdir: Path, ledger: Ledger, throttle: dict | None = None
) -> Iterator[dict]:
    """A memory cgroup of ``limit`` for the visit; yields its provenance record
    ``{"mechanism", "version", "limit", "limit_bytes", "cgroup", "procs", "written",
    "effective", "dropped_files", "release_problems"}`` (``peak_bytes`` and ``failcnt``
    are added by ``usage`` when the server stops). ``limit`` None yields ``{}``.

    ``throttle``: the visit's throttle record (throttle.py), if any. With cgroup v2 for
    both, the memory cgroup is made under the throttle's cgroup (beside the leaf
    pgfsbench is in) so the server stays under its ``io.max`` (cgroups.py); the record
    says so in ``shared_with``.

    The caller starts the server in it (``procs``). Raises UserError when it is not
    possible here or the kernel refuses the limit.
    """
    if limit is None:
        yield {}
        return
    found = _hierarchy()
    if isinstance(found, str):
        raise UserError(found)
    limit_bytes = size_to_bytes(limit)
    throttle = throttle or {}
    shared = found.version == 2 and throttle.get("version") == 2
    parent = Path(throttle["cgroup"]) if shared else found.parent
    path = parent / f"pgfsbench-mem-{os.getpid()}-{next(_numbers)}"
    # swap accounting: v1 has memsw files only with it; v2's memory.swap.max is written
    # where the new cgroup has it
    swap = (found.home / "memory.memsw.limit_in_bytes").exists() if found.version == 1 else True
    writes = writes_for(found.version, limit_bytes, swap)
    record: dict = {
        "mechanism": found.mechanism,
        "version": found.version,
        "limit": limit,
        "limit_bytes": limit_bytes,
        "cgroup": str(path),
        "procs": str(path / "cgroup.procs"),
        "written": writes,
        "effective": {},
        "release_problems": [],
    }
    if found.version == 2:
        # the root's subtree first: the throttle's cgroup can pass on only what it has
        enabled = [cgroups.enable_controller(found.mount, "memory", "memory", _FIX)]
        if shared:
            enabled.append(cgroups.enable_controller(parent, "memory", "memory", _FIX))
            record["shared_with"] = f"the throttle's cgroup {parent} (its io.max holds the server)"
        if done := [e for e in enabled if e]:
            record["enabled"] = "; ".join(done)
    res = ledger.add("cgroup", path=str(path), home=str(found.home / "cgroup.procs"))
    try:
        try:
            os.mkdir(path)
        except OSError as exc:
            raise UserError(f"memory: cannot create cgroup {path}: {exc.strerror}: {_FIX}") from exc
        for name, value in writes.items():
            if not (path / name).exists():  # swap accounting off in this cgroup
                continue
            try:
                write(path / name, value)
            except OSError as exc:
                raise UserError(
                    f"memory: the kernel refused {value} in {path / name}: {exc.strerror}: {_FIX}"
                ) from exc
        record["effective"] = {
            name: (path / name).read_text().strip() for name in writes if (path / name).exists()
        }
        record["dropped_files"] = drop_cached(workdir)
        yield record
    finally:
        record["release_problems"] += ledger.release(res)
