"""OS knobs: sysctls and block queue settings applied while a target runs.

Each old value goes into the ledger *before* the new one is written, so normal
exit and ``pgfsbench cleanup`` after a crash restore through the same
releasers. What the kernel actually did (it may round, clamp or refuse) is
read back and yielded as the provenance record.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.errors import UserError
from pgfsbench.ledger import Ledger, releaser
from pgfsbench.plan.model import SYSCTL_NAME, SettingValue

PROC_SYS = Path("/proc/sys")
SYS_BLOCK = Path("/sys/class/block")

# Writing one of a pair zeroes the other (the kernel keeps a limit either in
# bytes or as a ratio), and a *_bytes sysctl refuses 0: a pair is restored by
# writing back whichever member was non-zero, last.
LINKED_SYSCTLS = {
    "vm.dirty_bytes": "vm.dirty_ratio",
    "vm.dirty_ratio": "vm.dirty_bytes",
    "vm.dirty_background_bytes": "vm.dirty_background_ratio",
    "vm.dirty_background_ratio": "vm.dirty_background_bytes",
}

# Switching the I/O scheduler resets these to the new scheduler's defaults, so
# they are recorded (and restored after the scheduler) whenever it changes.
# (nr_requests also outlives a loop device's detach: a leak reaches its next user.)
RESET_BY_SCHEDULER = ("nr_requests",)


@dataclass
class Knob:
    kind: str  # "sysctl" or "sysfs": the ledger resource kind that restores it
    key: str  # the name the plan uses (vm.dirty_ratio, read_ahead_kb)
    path: Path
    asked: str | None  # None: not asked for, recorded because an asked knob changes it
    before: str = ""
    linked: str | None = None  # the other member of a linked sysctl pair
    restored_by: str | None = None  # was 0: restoring this linked partner zeroes it again
    zeroes: str | None = None  # restoring this zeroes the linked partner

    def resource(self) -> dict:
        info: dict = {"path": str(self.path), "old": self.before}
        if self.kind == "sysctl":
            info = {"name": self.key, **info}
            info.update(
                {k: v for k, v in (("restored_by", self.restored_by), ("zeroes", self.zeroes)) if v}
            )
        return info


# --- reading and writing kernel files ---------------------------------------------


def normalize(text: str) -> str:
    """A kernel file's value as one comparable string: whitespace collapsed, and for a
    choice file (``none [mq-deadline] kyber``) the bracketed, selected entry."""
    words = text.split()
    chosen = [w[1:-1] for w in words if w.startswith("[") and w.endswith("]")]
    return chosen[0] if chosen else " ".join(words)


def choices(text: str) -> list[str]:
    """The entries of a choice file, brackets removed."""
    return [w.strip("[]") for w in text.split()]


def read_value(path: Path) -> str:
    return normalize(path.read_text())


def write_value(path: Path, value: str) -> None:
    # One write(2) on an unbuffered fd: a buffered file reports the kernel's
    # EINVAL only at close, where it is easily lost. (O_TRUNC as a shell's echo
    # does: the kernel ignores it, a plain file in a test needs it.)
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def as_text(value: SettingValue) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return " ".join(str(value).split())


# --- resolving what the plan names --------------------------------------------------


def _listing(directory: Path, writable_only: bool) -> list[str]:
    if not directory.is_dir():
        return []
    names = []
    for entry in sorted(directory.iterdir()):
        if writable_only and (not entry.is_file() or not entry.stat().st_mode & 0o200):
            continue
        names.append(entry.name)
    return names


def _unknown(what: str, name: str, where: Path, known: list[str], prefix: str = "") -> UserError:
    """``name`` is not in ``where``: say so, suggest near misses and list what exists."""
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" (did you mean {', '.join(prefix + c for c in close)}?)" if close else ""
    shown = ", ".join(known) if known else "nothing"
    return UserError(f"{what} does not exist on this kernel{hint}; {where} has: {shown}")


def _read_only(what: str, path: Path) -> UserError | None:
    if path.stat().st_mode & 0o222:
        return None
    return UserError(f"{what} is read-only ({path}): remove it from the plan")


def sysctl_path(name: str, proc_sys: Path = PROC_SYS) -> Path:
    return proc_sys / name.replace(".", "/")


def _sysctl_knobs(sysctls: dict[str, SettingValue], proc_sys: Path) -> list[Knob]:
    both = [n for n in sysctls if LINKED_SYSCTLS.get(n) in sysctls]
    if both:
        raise UserError(
            f"sysctls: set either {both[0]} or {LINKED_SYSCTLS[both[0]]}, not both "
            "(the kernel zeroes one when the other is written)"
        )
    knobs: list[Knob] = []
    for name, value in sysctls.items():
        if not SYSCTL_NAME.fullmatch(name):  # never a path out of /proc/sys
            raise UserError(f"sysctls: '{name}' is not a sysctl name (like vm.dirty_ratio)")
        path = sysctl_path(name, proc_sys)
        if not path.is_file():
            parent = path.parent
            while not parent.is_dir() and parent != proc_sys:
                parent = parent.parent
            depth = len(parent.relative_to(proc_sys).parts)
            prefix = "".join(part + "." for part in name.split(".")[:depth])
            raise _unknown(
                f"sysctl '{name}'",
                name.split(".")[depth],
                parent,
                _listing(parent, writable_only=False),
                prefix,
            )
        if error := _read_only(f"sysctl '{name}'", path):
            raise error
        partner = LINKED_SYSCTLS.get(name)
        if partner and sysctl_path(partner, proc_sys).is_file():
            knobs.append(Knob("sysctl", partner, sysctl_path(partner, proc_sys), None, linked=name))
            knobs.append(Knob("sysctl", name, path, as_text(value), linked=partner))
        else:
            knobs.append(Knob("sysctl", name, path, as_text(value)))
    return knobs


def queue_dir(device: str, sys_block: Path = SYS_BLOCK) -> Path:
    """The queue directory of ``device`` (a partition's is its disk's)."""
    name = os.path.basename(os.path.realpath(device))
    node = sys_block / name
    if not node.exists():
        raise UserError(f"queue settings: {device} is not a block device known to {sys_block}")
    if (node / "partition").exists():
        node = node.resolve().parent
    return node / "queue"


def _queue_knobs(queue: dict[str, SettingValue], device: str | None, sys_block: Path) -> list[Knob]:
    if not queue:
        return []
    if device is None:
        raise UserError(
            f"queue settings ({', '.join(queue)}) need a block device; this target "
            "has none (a dir target): remove them or use a loop or device target"
        )
    qdir = queue_dir(device, sys_block)
    writable = _listing(qdir, writable_only=True)
    present = _listing(qdir, writable_only=False)
    knobs: list[Knob] = []
    if "scheduler" in queue:
        # recorded first, so restored after the scheduler, even when also asked for:
        # restoring the scheduler would otherwise undo their restore
        knobs += [
            Knob("sysfs", key, qdir / key, None) for key in RESET_BY_SCHEDULER if key in writable
        ]
    # the scheduler first: switching it resets other queue settings
    for key in sorted(queue, key=lambda k: k != "scheduler"):
        if key not in present:  # a listed name: never a path out of the queue directory
            raise _unknown(f"queue setting '{key}' of {device}", key, qdir, writable)
        if error := _read_only(f"queue setting '{key}' of {device}", qdir / key):
            raise error
        knobs.append(Knob("sysfs", key, qdir / key, as_text(queue[key])))
    return knobs


# --- judging values before anything is written ---------------------------------------

# Ranges the kernel refuses values outside of, where the file's type (an integer) says
# too little (mm/page-writeback.c, mm/util.c, mm/vmscan.c; block/blk-sysfs.c). Only
# refusals: nr_requests below 4 is raised to 4, rq_affinity 3 is taken, so are they here.
PAGE = os.sysconf("SC_PAGE_SIZE")
SYSCTL_RANGES: dict[str, tuple[int, int | None]] = {
    "vm.dirty_ratio": (0, 100),
    "vm.dirty_background_ratio": (0, 100),
    "vm.dirty_bytes": (2 * PAGE, None),
    "vm.dirty_background_bytes": (1, None),
    "vm.dirty_expire_centisecs": (0, None),
    "vm.dirtytime_expire_seconds": (0, None),
    "vm.swappiness": (0, 200),
    "vm.overcommit_memory": (0, 2),
    "vm.vfs_cache_pressure": (0, None),
}
QUEUE_RANGES: dict[str, tuple[int, int | None]] = {
    "read_ahead_kb": (0, None),
    "nr_requests": (0, None),
    "max_sectors_kb": (PAGE // 1024, None),
}
# Files that hold a choice without brackets: what they accept.
QUEUE_CHOICES = {"write_cache": ("write back", "write through")}
_INTEGER = re.compile(r"-?[0-9]+")


def _integers(
    what: str, asked: str, current: str, bounds: tuple[int, int | None] | None
) -> str | None:
    fields, given = current.split(), asked.split()
    if len(given) != len(fields) or not all(_INTEGER.fullmatch(g) for g in given):
        kind = "a whole number" if len(fields) == 1 else f"{len(fields)} whole numbers"
        return f"{what} = '{asked}': the kernel takes {kind} there (it holds '{current}')"
    if bounds is not None and len(given) == 1:
        lo, hi = bounds
        if int(given[0]) < lo or (hi is not None and int(given[0]) > hi):
            span = f"from {lo} to {hi}" if hi is not None else f"of at least {lo}"
            return f"{what} = {asked}: the kernel takes a whole number {span}"
    return None


def value_problem(knob: Knob) -> str | None:
    """Why the kernel would refuse ``knob.asked``, judged by the type of what its file
    holds now (integers, a [choice] list) and the known ranges; None when it looks
    right or the file cannot be read (the write says then)."""
    if knob.asked is None:
        return None
    try:
        text = knob.path.read_text()
    except OSError:
        return None
    current = normalize(text)
    if knob.kind == "sysctl":
        what = f"sysctl {knob.key}"
        if current and all(_INTEGER.fullmatch(f) for f in current.split()):
            return _integers(what, knob.asked, current, SYSCTL_RANGES.get(knob.key))
        return None
    what = f"queue setting {knob.key}"
    offered = choices(text) if "[" in text else list(QUEUE_CHOICES.get(knob.key, ()))
    if offered:
        if knob.asked not in offered:
            return f"{what} = '{knob.asked}': this device offers {', '.join(offered)}"
        return None
    if _INTEGER.fullmatch(current):
        return _integers(what, knob.asked, current, QUEUE_RANGES.get(knob.key))
    return None


def standin_device(sys_block: Path = SYS_BLOCK) -> str | None:
    """A loop device whose queue stands for a loop target's, which is not made yet (every
    loop device has the same settings and schedulers); None when there is none."""
    loops = sorted(p.name for p in sys_block.glob("loop[0-9]*") if (p / "queue").is_dir())
    return f"/dev/{loops[0]}" if loops else None


def check_knobs(
    sysctls: dict[str, SettingValue],
    queue: dict[str, SettingValue],
    device: str | None,
    *,
    proc_sys: Path = PROC_SYS,
    sys_block: Path = SYS_BLOCK,
) -> None:
    """Judge sysctls and queue settings against this kernel before anything is made or
    written: names that exist and are writable, values the files take (UserError, one
    line naming the key). ``device``: the target's own, a stand-in loop device, or None
    to leave the queue settings to the run."""
    knobs = _sysctl_knobs(sysctls, proc_sys)
    if queue and device is not None:
        knobs += _queue_knobs(queue, device, sys_block)
    for knob in knobs:
        if problem := value_problem(knob):
            raise UserError(problem)


# --- applying and restoring ---------------------------------------------------------


def _restore_order(knobs: list[Knob]) -> list[Knob]:
    """Ledger order (released in reverse). Of a linked sysctl pair the member that was
    non-zero goes first, so it is restored last and its write zeroes the other back."""
    ordered = list(knobs)
    for i, knob in enumerate(ordered):
        if knob.linked is None or knob.asked is None:
            continue
        partner = ordered[i - 1]  # _sysctl_knobs puts the partner just before
        if knob.before != "0" and partner.before == "0":
            ordered[i - 1], ordered[i] = knob, partner
        first, second = ordered[i - 1], ordered[i]
        if first.before != "0" and second.before == "0":
            first.zeroes, second.restored_by = second.key, first.key
    return ordered


@releaser("sysctl", "sysfs")
def restore(res: dict) -> list[str]:
    """Put a recorded kernel value back (a sysctl, or a block queue setting in sysfs);
    returns problems, empty when it is back."""
    path = Path(res["path"]) if res.get("path") else sysctl_path(res["name"])
    what = res.get("name") or str(path)
    if not path.exists() or res.get("restored_by"):
        return []  # gone with its device; or zeroed back when its partner is restored
    try:
        if read_value(path) != res["old"]:
            write_value(path, res["old"])
        now = read_value(path)
    except OSError as exc:
        return [f"could not restore {what} to {res['old']}: {exc.strerror}"]
    problems = [] if now == res["old"] else [f"{what} is {now} after restoring {res['old']}"]
    if res.get("zeroes"):
        partner = path.parent / res["zeroes"].rsplit(".", 1)[-1]
        if partner.exists() and read_value(partner) != "0":
            problems.append(
                f"{res['zeroes']} is {read_value(partner)} after restoring {what}, expected 0"
            )
    return problems


def _apply(knob: Knob) -> None:
    assert knob.asked is not None  # only asked knobs are written (the caller checks)
    try:
        write_value(knob.path, knob.asked)
    except OSError as exc:
        what = f"sysctl {knob.key}" if knob.kind == "sysctl" else f"queue setting {knob.path}"
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise UserError(
                f"cannot set {what}: {exc.strerror}; run as root on a host whose "
                f"{knob.path.parent} is writable, or remove it from the plan"
            ) from exc
        extra = ""
        if knob.key == "scheduler":
            extra = f" (this kernel offers: {', '.join(choices(knob.path.read_text()))})"
        raise UserError(f"the kernel refused {what} = {knob.asked}: {exc.strerror}{extra}") from exc


@contextlib.contextmanager
def os_knobs(
    sysctls: dict[str, SettingValue],
    queue: dict[str, SettingValue],
    device: str | None,
    ledger: Ledger,
    *,
    proc_sys: Path = PROC_SYS,
    sys_block: Path = SYS_BLOCK,
) -> Iterator[dict]:
    """Apply ``sysctls`` and ``queue`` (settings of ``device``'s block queue) for the
    duration of the block, then restore them.

    Yields the provenance record ``{"sysctls": {name: {"before", "asked", "during"}},
    "queue": {key: {...}}, "device": device, "restore_problems": [...]}``. An entry whose
    ``asked`` is None was not asked for but is changed by one that was (the partner of a
    linked sysctl, a queue setting the scheduler resets). ``restore_problems`` is filled
    on exit.
    """
    knobs = _sysctl_knobs(sysctls, proc_sys) + _queue_knobs(queue, device, sys_block)
    # Judged again on the target's own device, before the first write: nothing half set.
    for knob in knobs:
        if problem := value_problem(knob):
            raise UserError(problem)
    for knob in knobs:
        knob.before = read_value(knob.path)
    record: dict = {"sysctls": {}, "queue": {}, "device": device, "restore_problems": []}

    def release(resource: dict) -> None:
        record["restore_problems"] += ledger.release(resource)

    with contextlib.ExitStack() as undo:
        for knob in _restore_order(knobs):
            undo.callback(release, ledger.add(knob.kind, **knob.resource()))
        for knob in knobs:
            if knob.asked is not None:
                _apply(knob)
        # read back only now: a later write can change an earlier one
        for knob in knobs:
            section = record["sysctls" if knob.kind == "sysctl" else "queue"]
            section[knob.key] = {
                "before": knob.before,
                "asked": knob.asked,
                "during": read_value(knob.path),
            }
        yield record
