"""May this block device be formatted? (DESIGN §5)

Only when the plan names it, the command line repeats it (``--allow-format``),
and nothing on this machine uses it: not mounted, not the root filesystem, no
holders (LVM, RAID, dm-crypt), no partitions, not swap, not busy. A filesystem
or partition-table signature means it may hold data: refused unless the user
asked to wipe signatures, in which case they are returned to be wiped and
recorded.

Devices are compared by device number (major:minor), never by name: one disk
has many names (/dev/sdb, /dev/disk/by-id/..., a node made anywhere).
Every check here only reads; nothing is written to any device.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pgfsbench import proc
from pgfsbench.errors import UserError
from pgfsbench.provision.mountinfo import MountEntry, read_mounts, unescape

SYS_DEV_BLOCK = Path("/sys/dev/block")


def _block_rdev(path: str) -> int | None:
    """The device number of a block device node, or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_rdev if stat.S_ISBLK(st.st_mode) else None


def _mount_devs(mount: MountEntry) -> set[int]:
    # btrfs reports an anonymous device number in mountinfo; its source names the
    # real one. Only /dev paths are looked at: stat on other sources could hang (NFS).
    devs = {mount.dev}
    if mount.source.startswith("/dev/") and (rdev := _block_rdev(mount.source)) is not None:
        devs.add(rdev)
    return devs


def _majmin(dev: int) -> str:
    return f"{os.major(dev)}:{os.minor(dev)}"


def _sysfs_dev(node: Path) -> int | None:
    try:
        major, minor = node.joinpath("dev").read_text().strip().split(":")
        return os.makedev(int(major), int(minor))
    except (OSError, ValueError):
        return None


def _partitions(node: Path) -> list[Path]:
    try:
        return sorted(p for p in node.iterdir() if (p / "partition").is_file())
    except OSError:
        return []


def _holders(node: Path) -> list[Path]:
    try:
        return sorted(Path(os.path.realpath(h)) for h in (node / "holders").iterdir())
    except OSError:
        return []


def _family(node: Path) -> dict[int, str]:
    """The device, its partitions, and everything stacked on them (holders of holders):
    whatever is on any of these lives on this device."""
    found: dict[int, str] = {}
    todo = [node]
    while todo:
        current = todo.pop()
        dev = _sysfs_dev(current)
        if dev is None or dev in found:
            continue
        found[dev] = current.name
        todo += _partitions(current) + _holders(current)
    return found


def _root_devs() -> set[int]:
    devs = {os.stat("/").st_dev}
    for mount in read_mounts():
        if mount.mount_point == "/":
            devs |= _mount_devs(mount)
    return devs


def _swap_devs() -> dict[int, str]:
    try:
        lines = Path("/proc/swaps").read_text().splitlines()[1:]
    except OSError:
        return {}
    found = {}
    for line in lines:
        name = unescape(line.split()[0]) if line.split() else ""
        if (rdev := _block_rdev(name)) is not None:
            found[rdev] = name
    return found


def _loop_backings() -> dict[int, str]:
    """Block devices that back a loop device (the loop driver registers no holder)."""
    found = {}
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        try:
            path = backing.read_text().strip()
        except OSError:
            continue
        if path.startswith("/dev/") and (rdev := _block_rdev(path)) is not None:
            found[rdev] = backing.parent.parent.name
    return found


def _is_allowed(real: str, rdev: int, allowed: Iterable[str]) -> bool:
    for entry in allowed:
        if os.path.realpath(entry) == real or _block_rdev(entry) == rdev:
            return True
    return False


def signatures(device: str) -> list[str]:
    """Filesystem, RAID and partition-table signatures on ``device`` (read-only probe)."""
    wipefs = proc.which("wipefs")
    if wipefs is None:
        raise UserError(
            "wipefs is missing, so the device's signatures cannot be read: "
            "apt-get install util-linux"
        )
    result = proc.run([wipefs, "--no-act", "--json", device], check=False)
    if not result.ok:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        raise UserError(
            f"{device}: could not read its signatures ({tail[0]}): pgfsbench "
            "does not format what it cannot inspect; check that the device is "
            "readable and not in use"
        )
    return parse_wipefs_json(result.stdout)


def parse_wipefs_json(text: str) -> list[str]:
    """``wipefs --json`` output → ["ext4 at 0x438 (UUID ..., label '...')", ...]."""
    if not text.strip():  # some wipefs versions print nothing for a clean device
        return []
    found = []
    for sig in json.loads(text).get("signatures", []):
        details = [f"UUID {sig['uuid']}"] if sig.get("uuid") else []
        if sig.get("label"):
            details.append(f"label '{sig['label']}'")
        found.append(
            f"{sig.get('type', '?')} at {sig.get('offset', '?')}"
            + (f" ({', '.join(details)})" if details else "")
        )
    return found


@dataclass(frozen=True)
class CheckedDevice:
    """A device ``check_formattable`` allowed, resolved once and known by its number."""

    given: str  # as the plan names it (maybe a /dev/disk/by-id link)
    path: str  # the node the check resolved: nothing resolves the plan's name again
    rdev: int
    signatures: tuple[str, ...]  # found on it; only ever non-empty with wipe_signatures

    @property
    def shown(self) -> str:
        return self.given + (f" ({self.path})" if self.path != self.given else "")


def check_formattable(device: str, allowed: Iterable[str], wipe_signatures: bool) -> CheckedDevice:
    """Raise UserError unless ``device`` may be formatted; the checked device, with the
    signatures on it (the caller wipes and records them).

    The checks that need no access to the device come first: the root filesystem's
    device is refused before anything so much as opens it.
    """
    real = os.path.realpath(device)
    if not os.path.exists(real):
        raise UserError(
            f"device {device} does not exist: fix the 'device' path in the plan "
            "(ls -l /dev/disk/by-id lists stable names)"
        )
    rdev = _block_rdev(real)
    if rdev is None:
        raise UserError(
            f"{device} is not a block device: a device target needs a disk or "
            "partition (for an image file use a loop target: drop 'device' "
            "and set 'size')"
        )
    if not _is_allowed(real, rdev, allowed):
        raise UserError(
            f"{device} is not allowed to be formatted: formatting erases "
            "everything on it. If that is what you want, repeat it on the "
            f"command line: --allow-format {device}"
        )
    node = SYS_DEV_BLOCK / _majmin(rdev)
    if not node.exists():
        raise UserError(
            f"{device} ({_majmin(rdev)}) is not known to the kernel (no {node}): "
            "check that the device is present and name it by a current path"
        )
    node = Path(os.path.realpath(node))
    family = _family(node)
    family.setdefault(rdev, node.name)
    shown = f"{device}" + (f" ({real})" if real != device else "")

    root = _root_devs()
    if on_root := sorted(name for dev, name in family.items() if dev in root):
        raise UserError(
            f"{shown} is or holds the root filesystem (/ is on {on_root[0]}): "
            "pgfsbench never formats it; name a spare disk in the plan"
        )
    mounted = [
        (family[d], m.mount_point)
        for m in read_mounts()
        for d in sorted(_mount_devs(m) & family.keys())
    ]
    if mounted:
        where = ", ".join(f"{name} on {mp}" for name, mp in mounted)
        raise UserError(
            f"{shown} is mounted ({where}): unmount it (umount "
            f"{mounted[0][1]}) if its data is not needed, or name another "
            "device in the plan"
        )
    if swap := [name for dev, name in _swap_devs().items() if dev in family]:
        raise UserError(
            f"{shown} is in use as swap ({', '.join(swap)}): swapoff it if it "
            "is not needed, or name another device in the plan"
        )
    if loops := [loop for dev, loop in _loop_backings().items() if dev in family]:
        raise UserError(
            f"{shown} backs loop device {', '.join(loops)}: detach it (losetup -d "
            f"/dev/{loops[0]}) if it is not needed, or name another device in "
            "the plan"
        )
    holders = [(part.name, h.name) for part in [node, *_partitions(node)] for h in _holders(part)]
    if holders:
        held = ", ".join(f"{part} by {h}" for part, h in holders)
        raise UserError(
            f"{shown} is in use ({held}: LVM, RAID, dm-crypt or similar, see "
            f"lsblk {real}): release it first if its data is not needed "
            "(vgremove, mdadm --stop, cryptsetup close, dmsetup remove), or "
            "name another device in the plan"
        )
    if parts := [p.name for p in _partitions(node)]:
        raise UserError(
            f"{shown} has partitions ({', '.join(parts)}): name one partition "
            f"as the device instead, or delete them (sfdisk --delete {real}) if "
            "their data is not needed"
        )
    if (node / "ro").is_file() and (node / "ro").read_text().strip() == "1":
        raise UserError(
            f"{shown} is read-only: make it writable (blockdev --setrw) or name "
            "another device in the plan"
        )
    if (node / "size").is_file() and (node / "size").read_text().strip() == "0":
        raise UserError(
            f"{shown} has no storage (size 0; an unattached loop device?): name "
            "a device with storage in the plan"
        )
    _refuse_busy(real, shown)

    found = signatures(real)
    if found and not wipe_signatures:
        raise UserError(
            f"{shown} carries signatures ({'; '.join(found)}): it may hold "
            "data. If it is not needed, add --wipe-signatures to erase them "
            f"before mkfs (or run wipefs --all {real} yourself), or name "
            "another device in the plan"
        )
    return CheckedDevice(device, real, rdev, tuple(found))


@contextlib.contextmanager
def opened_for_formatting(device: CheckedDevice) -> Iterator[int]:
    """A descriptor on the very device that was checked, for the formatting tools to
    open as /proc/self/fd/N (pass it to them).

    Between the check and mkfs the node's path could be made to name another device
    (a renamed node, a swapped mount of /dev): the descriptor is opened without
    following links and its device number compared with the checked one, and the
    tools then open the device through it, not through any path.
    """
    try:
        fd = os.open(device.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError as exc:
        raise UserError(
            f"{device.shown} cannot be opened any more ({exc.strerror}) "
            "since it was checked: refusing to format it"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISBLK(st.st_mode) or st.st_rdev != device.rdev:
            now = _majmin(st.st_rdev) if stat.S_ISBLK(st.st_mode) else "not a block device"
            raise UserError(
                f"{device.shown} changed since it was checked: it is now {now}, "
                f"it was {_majmin(device.rdev)}; refusing to format it"
            )
        yield fd
    finally:
        os.close(fd)


def _refuse_busy(real: str, shown: str) -> None:
    # The kernel refuses an exclusive open of a device that is mounted (in any mount
    # namespace), a RAID/btrfs member or claimed by a program: what the checks above
    # cannot see from here. Read-only, closed at once.
    try:
        fd = os.open(real, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise UserError(
                f"{shown} cannot be opened ({exc.strerror}): run as root and "
                "check that the device is present"
            ) from None
        raise UserError(
            f"{shown} is busy (the kernel refuses exclusive access: mounted in "
            "another namespace, part of a RAID or btrfs volume, or held by a "
            f"program; see lsblk {real} and fuser -v {real}): release it, or "
            "name another device in the plan"
        ) from None
    os.close(fd)
