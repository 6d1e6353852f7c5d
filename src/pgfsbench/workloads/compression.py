"""compression: the on-disk size of the data directory under the filesystem's
compression, logical bytes against physical bytes.

The data is what the workloads before it loaded (``pgbench-init`` comes first: put
``compression`` right after it to measure the freshly loaded tables, indexes and the
WAL of the load). Before measuring, a CHECKPOINT writes every dirty page to the files
and a sync writes them to the device, so the filesystem has compressed what it will.
Then, by filesystem (read from the mount the data directory is on), with the ratio
logical / physical bytes everywhere:

- btrfs: ``compsize -b PGDATA`` (root; it reads the extent tree): physical bytes are
  its TOTAL "Disk Usage", logical bytes its "Uncompressed". btrfs compresses only when
  mounted with ``compress=`` (or ``compress-force=``) and only copy-on-write files:
  with ``nodatacow`` (the mount option or ``chattr +C``) nothing is compressed. Without
  ``compress-force`` it gives up on a file whose first writes do not compress.
- ZFS: ``zfs get -Hp all DATASET`` on the target's dataset (on a loop or device target
  the data directory is all it holds; on a directory target, whatever else the dataset
  holds counts too): physical bytes are ``used``, logical bytes ``logicalused`` where
  this zfs has it, else the files' sizes (zfs-fuse has no ``logicalused``, and its
  ``compressratio`` counts data blocks alone: 7.27x on 115 MB of files in 57 MB). ZFS
  counts space at its transaction-group sync, so it is read again until it holds still.
- Anything else (ext4, xfs, f2fs without compression): no compression, said plainly:
  physical bytes are the blocks the files have allocated (``du``: st_blocks), logical
  bytes the same, the ratio 1.0.

``compression.files_mb`` (the files' sizes, what ``du --apparent-size`` says) is the
same data on every target, so it shows the targets held alike.

Crash safety and restore: compression is transparent to PostgreSQL (it reads back the
bytes it wrote; fsync means what it means uncompressed), and it changes nothing in the
crash-safety verdict. A backup (pg_basebackup, a file copy) reads the logical bytes: a
restore needs room for them where it lands, unless that filesystem compresses as well.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pgfsbench import proc
from pgfsbench.errors import CommandFailed, UserError
from pgfsbench.metrics import Artifact, Metric, WorkloadResult
from pgfsbench.workloads.basebackup import regular_files
from pgfsbench.workloads.kind import WorkloadBase, WorkloadKind

if TYPE_CHECKING:
    from pgfsbench.workloads.context import RunContext

MB = 2**20
# ZFS: how long to wait for its space figures to hold still (a transaction-group sync
# is every 5 s by default), and how often to read them.
ZFS_SETTLE_S = 40.0
ZFS_POLL_S = 1.0
ZFS_STILL_READS = 3  # equal reads in a row, after ZFS_MIN_WAIT_S
ZFS_MIN_WAIT_S = 6.0

TRANSPARENT = (
    "compression is transparent to PostgreSQL: it reads back the bytes it wrote and "
    "fsync means what it means uncompressed, so crash safety is unchanged; a backup or "
    "restore moves the logical bytes"
)


class CompressionWorkload(WorkloadBase):
    """Logical against physical bytes of the data directory under the filesystem's
    compression (btrfs compress=, ZFS compression=); none elsewhere."""

    type: Literal["compression"]


@dataclass(frozen=True)
class Space:
    """What one measurement found: bytes before and after compression, how."""

    logical: float
    physical: float
    ratio: float
    method: str  # how the figures were read
    compressed: bool  # the filesystem compresses this data (False: ratio 1.0 by definition)
    note: str  # btrfs/ZFS specifics a reader must know


# --- btrfs: compsize ------------------------------------------------------------------


@dataclass(frozen=True)
class Compsize:
    disk: int
    uncompressed: int
    referenced: int
    by_type: dict[str, tuple[int, int]]  # type (none, zstd, lzo, zlib) → (disk, uncompressed)


_COMPSIZE_ROW = re.compile(r"^(\S+)\s+(\d+)%\s+(\d+)\s+(\d+)\s+(\d+)\s*$")


def parse_compsize(text: str) -> Compsize | None:
    """``compsize -b`` (bytes) → its TOTAL row and one row per compression type; None
    when it found no files ("No files.", on stderr with exit 1) or printed no TOTAL."""
    total = None
    by_type = {}
    for line in text.splitlines():
        m = _COMPSIZE_ROW.match(line.strip())
        if not m:
            continue
        kind, disk, uncompressed, referenced = m.group(1), *map(int, m.group(3, 4, 5))
        if kind == "TOTAL":
            total = (disk, uncompressed, referenced)
        else:
            by_type[kind] = (disk, uncompressed)
    if total is None:
        return None
    return Compsize(*total, by_type=by_type)


def btrfs_compress_option(options: list[str]) -> str | None:
    """The compress= or compress-force= mount option in effect, None without one (or
    with compress=no)."""
    for opt in options:
        key, _, value = opt.partition("=")
        if key in ("compress", "compress-force") and value and value != "no":
            return opt
    return None


def btrfs_space(c: Compsize, options: list[str]) -> Space:
    compress = btrfs_compress_option(options)
    nodatacow = "nodatacow" in options
    if nodatacow:
        note = "nodatacow: btrfs compresses only copy-on-write files, so nothing is"
    elif compress is None:
        note = "mounted without compress=: btrfs stores the data uncompressed"
    else:
        note = (
            f"{compress}; btrfs compresses extents of up to 128 KiB, so reading one 8 kB "
            "page decompresses its whole extent, and without compress-force it stops "
            "compressing a file whose first writes did not shrink"
        )
    ratio = c.uncompressed / c.disk if c.disk > 0 else 1.0
    return Space(
        float(c.uncompressed),
        float(c.disk),
        ratio,
        "compsize: Uncompressed against Disk Usage",
        compress is not None and not nodatacow,
        note,
    )


# --- ZFS: zfs get ---------------------------------------------------------------------


def parse_zfs_space(text: str) -> dict[str, str]:
    """``zfs get -Hp all DATASET`` → {property: value} of the space properties."""
    wanted = {"used", "logicalused", "compressratio", "compression", "recordsize"}
    found = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 4 and parts[1] in wanted:
            found[parts[1]] = parts[2]
    return found


def zfs_ratio(text: str) -> float | None:
    """compressratio as zfs prints it: "1.85x", or "1.85" with -p on OpenZFS."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)x?\s*", text)
    return float(m.group(1)) if m else None


def zfs_space(props: dict[str, str], files_bytes: int) -> Space:
    """``files_bytes``: what the data directory's files hold, the logical bytes where
    this zfs has no ``logicalused``."""
    if "used" not in props or not props["used"].isdigit():
        raise ValueError(f"zfs get printed no used bytes: {props}")
    used = int(props["used"])
    algorithm = props.get("compression", "off")
    zfs_says = props.get("compressratio", "?")
    if props.get("logicalused", "").isdigit():
        logical, how = float(props["logicalused"]), "zfs get: logicalused against used"
    else:
        # used × compressratio overstates it: zfs-fuse's compressratio counts data
        # blocks only (seen: 7.27x on 115 MB of files in 57 MB used)
        logical = float(files_bytes)
        how = (
            "the files' sizes against zfs get used (this zfs has no logicalused; "
            f"its compressratio, of data blocks alone, says {zfs_says})"
        )
    note = (
        f"compression={algorithm}; ZFS compresses each record (recordsize "
        f"{props.get('recordsize', '?')}) on its own and stores it in whole sectors, so "
        "small records save less"
        if algorithm != "off"
        else "compression=off: ZFS stores the data uncompressed"
    )
    ratio = logical / used if used > 0 else 1.0
    return Space(logical, float(used), ratio, how, algorithm != "off", note)


# --- no compression: allocated blocks ---------------------------------------------------


def tree_sizes(root: Path) -> tuple[int, int]:
    """(apparent bytes, allocated bytes) of the regular files under ``root``, each inode
    once (symlinks not followed)."""
    apparent = allocated = 0
    seen: set[int] = set()
    for st in regular_files(root):
        if st.st_ino not in seen:
            seen.add(st.st_ino)
            apparent += st.st_size
            allocated += st.st_blocks * 512
    return apparent, allocated


def uncompressed_space(allocated: int, fstype: str) -> Space:
    return Space(
        float(allocated),
        float(allocated),
        1.0,
        "allocated blocks (du, st_blocks)",
        False,
        f"{fstype} does not compress: every block is stored as written, ratio 1.0",
    )


# --- the metrics --------------------------------------------------------------------------


def compression_metrics(space: Space, files_bytes: int) -> list[Metric]:
    how = f"{space.method}; {space.note}; {TRANSPARENT}"
    return [
        Metric(
            "compression.ratio",
            space.ratio,
            "x",
            True,
            f"logical / physical bytes of the data directory ({how})",
        ),
        Metric(
            "compression.logical_mb",
            space.logical / MB,
            "MB",
            None,
            "informational: the data directory's bytes before compression",
        ),
        Metric(
            "compression.physical_mb",
            space.physical / MB,
            "MB",
            None,
            "informational: the data directory's bytes on the device after compression",
        ),
        Metric(
            "compression.compressed",
            float(space.compressed),
            "",
            None,
            "informational: 1 when the filesystem compresses this data; " + space.note,
        ),
        Metric(
            "compression.files_mb",
            files_bytes / MB,
            "MB",
            None,
            "informational: the files' sizes (du --apparent-size), the same data on every target",
        ),
    ]


# --- running it -----------------------------------------------------------------------------


def _mount(path: Path, mounts_text: str) -> tuple[str, str, str, list[str]] | None:
    """(source, mount point, fs type, options) of the mount holding ``path``."""
    from pgfsbench.workloads.fs_snapshot import mount_of

    found = mount_of(path, mounts_text)
    if found is None:
        return None
    options: list[str] = []
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[1].replace("\\040", " ") == found[1]:
            options = fields[3].split(",")
    return (*found, options)


def _root_tool(ctx: RunContext, argv: list[str], stem: str) -> proc.CommandResult:
    """Run a tool as root (compsize and zfs read what only root may), keep its output."""
    result = proc.run([proc.which(argv[0]) or argv[0], *argv[1:]], check=False)
    path = proc.save(result, ctx.artifacts_dir, stem)
    ctx.kept.append(Artifact("command", path, result.argv, result.exit_code))
    return result


def _btrfs(ctx: RunContext, options: list[str]) -> Space:
    if proc.which("compsize") is None:
        raise UserError(
            "compression on btrfs reads the extents with compsize, which is missing: "
            "apt-get install btrfs-compsize"
        )
    result = _root_tool(ctx, ["compsize", "-b", str(ctx.cluster.pgdata)], "compsize")
    found = parse_compsize(result.stdout) if result.ok else None
    if found is None:
        raise CommandFailed(result)
    return btrfs_space(found, options)


def _zfs(ctx: RunContext, dataset: str, files_bytes: int) -> Space:
    started, last, still = time.monotonic(), None, 0
    while True:
        result = _root_tool(ctx, ["zfs", "get", "-Hp", "all", dataset], "zfs-get")
        if not result.ok:
            raise CommandFailed(result)
        props = parse_zfs_space(result.stdout)
        still = still + 1 if props.get("used") == last else 0
        last = props.get("used")
        waited = time.monotonic() - started
        if (waited >= ZFS_MIN_WAIT_S and still >= ZFS_STILL_READS - 1) or waited > ZFS_SETTLE_S:
            return zfs_space(props, files_bytes)
        time.sleep(ZFS_POLL_S)


def run(ctx: RunContext, params: CompressionWorkload) -> WorkloadResult:
    ctx.cluster.sql("CHECKPOINT")
    os.sync()
    mount = _mount(ctx.target.workdir, Path("/proc/self/mounts").read_text())
    files_bytes, allocated = tree_sizes(ctx.cluster.pgdata)
    fstype = mount[2] if mount else "unknown"
    if mount and fstype == "btrfs":
        space = _btrfs(ctx, mount[3])
    elif mount and fstype in ("zfs", "fuse.zfs"):
        space = _zfs(ctx, mount[0], files_bytes)
    else:
        space = uncompressed_space(allocated, fstype)
    return WorkloadResult(metrics=compression_metrics(space, files_bytes))


KIND = WorkloadKind(
    params=CompressionWorkload,
    run=run,
    order=67,
    headline="compression.ratio",
    # a checkpoint and a walk (about 1 s); ZFS waits at least 6 s for its sync: the
    # estimate is the ZFS case, so a budget holds
    labels={"compression.ratio": "compression ratio (logical / physical bytes)"},
    seconds=lambda p: 8,
    disk_bytes=lambda p, tables: 0,
    needs="pgbench-init",
)
