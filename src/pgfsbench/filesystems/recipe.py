"""What a filesystem recipe declares: everything pgfsbench knows about one filesystem.

A recipe only builds argv and reads text; running the commands belongs to
``provision/``. So the plan, the analysis and the report can read recipes without
importing anything that touches the machine. Every field without a default must be
given: a new filesystem has to say, for each piece, what it has or that it has none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from pgfsbench.filesystems.optionvalues import OptionValue


class GeometryReader(NamedTuple):
    """A read-only command that describes a made filesystem, and the parser of its output."""

    argv: list[str]
    parse: Callable[[str], dict]


@dataclass(frozen=True)
class LogSetup:
    """How mkfs and mount put the journal or log on a separate device."""

    before_mkfs: list[list[str]]  # run first (e.g. mke2fs -O journal_dev on the log device)
    mkfs_options: list[str]  # the plan's mkfs options plus the ones naming the log device
    mount_options: list[str]  # added to the plan's mount options


@dataclass(frozen=True)
class AtomicWrites:
    """Page writes that cannot tear on a crash, so full_page_writes=off stays safe."""

    how: str  # "btrfs copy-on-write"
    unless: frozenset[str]  # mount options that turn it off ("nodatacow")


@dataclass(frozen=True)
class StripeOptions:
    """mkfs's options for the stripe geometry of a RAID or striped volume under it."""

    # mkfs options → the stripe options among them ("stride=2"): the plan set its own
    given: Callable[[list[str]], list[str]]
    # (mkfs options, stripe bytes, data disks) → the options with the geometry added
    add: Callable[[list[str], int, int], list[str]]


# What a filesystem offers PostgreSQL beyond storing files (analysis/advice/capabilities.py):
# CREATE DATABASE with file_copy_method = clone, a snapshot of the running cluster, and
# transparent compression.
CLONE, SNAPSHOT, COMPRESSION = "reflink clone", "snapshot", "compression"
CAPABILITIES = (CLONE, SNAPSHOT, COMPRESSION)


@dataclass(frozen=True)
class Offer:
    """Whether the filesystem as made offers one capability, from its facts (mount
    options, geometry), not from a measurement."""

    offered: bool | None  # None: the facts recorded cannot tell
    how: str  # "XFS made with reflink=1 shares blocks", "ext4 cannot share blocks"


def no_snapshot_no_compression(name: str) -> dict[str, Offer]:
    """The offers of a filesystem that stores blocks as written (ext*, XFS): no
    snapshots, no compression."""
    return {
        SNAPSHOT: Offer(False, f"{name} has no snapshots"),
        COMPRESSION: Offer(False, f"{name} does not compress"),
    }


def _offers_nothing(provenance: dict) -> dict[str, Offer]:
    return {}


def mount_options(provenance: dict) -> list[str]:
    """The effective mount options a target's provenance recorded."""
    return [str(o) for o in provenance.get("effective_mount_options") or []]


def geometry_facts(provenance: dict) -> dict:
    """What the filesystem's own tools reported of it, from a target's provenance."""
    geometry = provenance.get("geometry")
    facts = geometry.get("facts") if isinstance(geometry, dict) else None
    return facts if isinstance(facts, dict) else {}


def _no_commands(devices: list[str]) -> list[list[str]]:
    return []


def _unchanged(options: list[str]) -> list[str]:
    return list(options)


def _nothing(_: dict) -> list[str]:
    return []


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """Everything pgfsbench knows about one filesystem: how it is made, mounted,
    described, how safe it is and what it offers PostgreSQL. A filesystem module
    declares ``RECIPES``, a tuple of them, named by an entry point of the
    ``pgfsbench.filesystems`` group. Every field without a default must be given.
    """

    fs: str
    """The plan's fs value and mount -t type."""

    # --- making it (provision/loop.py, provision/device.py) ---
    mkfs_tool: str
    """The mkfs program, a bare name found on the PATH (``mkfs.xfs``)."""

    force_flags: tuple[str, ...]
    """mkfs's flags to overwrite without asking: the target was checked first."""

    apt_package: str
    """Where mkfs_tool and the geometry tools come from."""

    min_size_mb: int
    """Below this mkfs refuses (or the result is useless)."""

    dry_run_flag: str | None = None
    """mkfs's flag to work out the filesystem and write nothing (xfs -N, mke2fs -n): run
    on a sparse file of the target's size, it judges the options before anything is made
    (provision/mkfs_check.py). None: mkfs has no such run."""

    mkfs_defaults: Callable[[list[str]], list[str]] = _unchanged
    """Options the recipe adds to the plan's own mkfs options (ext*: no lazy init)."""

    log_device: Callable[[list[str], str, int], LogSetup] | None
    """(mkfs options, log device, log bytes) → LogSetup; None: no external log."""

    device_option_keys: frozenset[str]
    """Option keys that name a device ("logdev="): mkfs would write to it too (an
    external log or journal; mkfs.btrfs formats every device it is given), and mount
    would use it. A plan may not give them (plan/fsoptions.py)."""

    spans_devices: bool = False
    """One filesystem over several devices by itself (btrfs -d/-m profiles): mkfs gets
    every member. Otherwise several members need a volume (md, LVM) under it."""

    before_mount: Callable[[list[str]], list[list[str]]] = _no_commands
    """(every device mkfs was given) → commands to run before mounting (btrfs: make the
    kernel know all the members by their real paths)."""

    stripe: StripeOptions | None = None
    """How mkfs is told the stripe under it (ext stride, xfs sunit); None: it takes
    none."""

    mkfs_problems: Callable[[list[str], int], list[str]] | None = None
    """(mkfs options, member count) → what is wrong with them (btrfs profiles that need
    more devices than the target has); checked by the plan."""

    # --- mounting it (plan/model.py, filesystems/mountcheck.py) ---
    mount_options: frozenset[str]
    """Option names beyond the generic VFS ones."""

    kernel_defaults: frozenset[str] | None
    """Options the kernel does not list when they hold because they are its default
    (with values as the kernel means them: "commit=5"). None: not known yet, so an
    option any recipe has as a default counts as one."""

    implied_by: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Not listed, but implied by an option that is: asked → the options that include
    it."""

    mount_option_values: dict[str, OptionValue] = field(default_factory=dict)
    """What an option's value may be (data → ordered, journal or writeback), as the
    kernel driver parses it; an option not here is held only to the characters values
    are written in (filesystems/optionvalues.py)."""

    # --- describing it (provision/geometry.py) ---
    geometry: Callable[[str | None, str | None], list[GeometryReader]] | None
    """(device, mount point) → the readers to run, the first one the main; None: no
    tool."""

    # --- durability (analysis/caveats/durability.py) ---
    atomic_writes: AtomicWrites | None
    """How its page writes cannot tear on a crash (so ``full_page_writes=off`` stays
    safe); None: they can."""

    durability_notes: dict[str, str]
    """Mount option in effect → what a reader must know."""

    # --- what it offers PostgreSQL (analysis/advice/capabilities.py) ---
    offers: Callable[[dict], dict[str, Offer]] = _offers_nothing
    """(target provenance) → {CLONE/SNAPSHOT/COMPRESSION: Offer}: what the filesystem as
    made offers, for the targets whose campaign did not measure it; a capability left
    out is not known."""

    # --- availability (provision/filesystems.py, doctor) ---
    kernel_driver: str = ""
    """The name in /proc/filesystems when not fs (ext2 → ext4)."""

    untested: bool = False
    """Written but never run on a machine whose kernel has the filesystem: the report
    and doctor say so until someone runs it."""

    # --- a filesystem that is not mkfs + mount (ZFS: pool + dataset) ---
    pooled: bool = False
    """Made by provision/zfs_pool.py instead of mkfs_argv + mount_argv."""

    not_crash_safe: Callable[[dict], list[str]] = _nothing
    """(geometry facts) → why the filesystem as made is not crash-safe (zfs
    sync=disabled)."""

    caveats: Callable[[dict], list[str]] = _nothing
    """(target provenance) → what a reader must know before believing its numbers."""

    daemon_pidfiles: tuple[str, ...] = ()
    """Pid files of a user-space daemon that does the filesystem's work (zfs-fuse): its
    CPU is counted with PostgreSQL's (monitor/proctree.py), not as others' load."""

    mount_types: frozenset[str] = frozenset()
    """Types the kernel may list for its mounts; empty: just fs (zfs-fuse: fuse.zfs)."""

    recreate: (
        Callable[[list[list[str]], dict[str, str], str], tuple[list[str], list[str]]] | None
    ) = None
    """(argvs that made it, device → placeholder, mount point) → (the commands a reader
    runs to make it again, notes), for the advice; None: mkfs + an fstab line."""

    @property
    def driver(self) -> str:
        """Its name in /proc/filesystems."""
        return self.kernel_driver or self.fs

    def mkfs_argv(
        self,
        device: str,
        options: list[str],
        more_devices: Sequence[str] = (),
        *,
        dry_run: bool = False,
    ) -> list[str]:
        """The mkfs command; its tool is a bare name for provision to find on the PATH.
        ``more_devices``: the other members of a filesystem that spans devices;
        ``dry_run``: with ``dry_run_flag``, what mkfs would make, nothing written."""
        if more_devices and not self.spans_devices:
            raise ValueError(f"{self.fs} is made on one device")
        if dry_run and self.dry_run_flag is None:
            raise ValueError(f"mkfs for {self.fs} has no dry run")
        dry = [self.dry_run_flag] if dry_run and self.dry_run_flag is not None else []
        return [
            self.mkfs_tool,
            *self.force_flags,
            *dry,
            *self.mkfs_defaults(list(options)),
            device,
            *more_devices,
        ]

    def mount_argv(self, device: str, mount_point: str, options: str) -> list[str]:
        """The mount command for ``device`` at ``mount_point`` with ``options``."""
        return ["mount", "-t", self.fs, *(["-o", options] if options else []), device, mount_point]
