"""ZFS: not mkfs + mount but a pool (``zpool create``) and a dataset (``zfs create``).

Everything pgfsbench knows about ZFS as text in and argv out: the pool and dataset
commands, the check of a plan's properties against the table the installed ``zfs``
and ``zpool`` print (``zfs get`` without arguments), and the parsers of ``zfs get``
and ``zpool get`` for the provenance. ``provision/zfs_pool.py`` runs them.

Tested with Debian's zfs-fuse (0.7, pool version 23: no lz4, no ``sync`` property);
the commands and their output are OpenZFS's too, and what a plan may set is read
from the installed tools, never assumed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from pgfsbench.filesystems.recipe import (
    COMPRESSION,
    SNAPSHOT,
    AtomicWrites,
    GeometryReader,
    Offer,
    Recipe,
    geometry_facts,
)
from pgfsbench.filesystems.textfacts import number

POOL_PREFIX = "pgfsb-"  # every pool pgfsbench makes; tests look for it
# A zfs-fuse daemon pgfsbench starts writes its pid here (beside the Debian service's
# /var/run/zfs-fuse.pid), so one we started is told apart from the system's.
DAEMON_PIDFILE = "/run/pgfsbench-zfs-fuse.pid"
DATASET = "pgdata"  # the one dataset PostgreSQL runs on, below the pool's root

# Set by pgfsbench itself: the dataset mounts on a private directory, the pool is
# never written to a cache file (so no daemon restart imports it again after a crash).
OWNED = {
    "zfs": {
        "mountpoint": "the dataset mounts on a private directory pgfsbench makes",
        "canmount": "the dataset must mount for PostgreSQL to run on it",
    },
    "zpool": {
        "cachefile": "pgfsbench makes pools with cachefile=none, so nothing imports "
        "them again after a crash",
        "altroot": "the dataset mounts on a private directory pgfsbench makes",
    },
}


def property_value(value: object) -> str:
    """A plan's value as zfs spells it: true/false are on/off."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


# --- commands ----------------------------------------------------------------------


def pool_name(campaign_id: str, target: str) -> str:
    """Unique per campaign and target; a ZFS name takes letters, digits and ``_-.:``."""
    return POOL_PREFIX + re.sub(r"[^A-Za-z0-9_.:-]", "-", f"{campaign_id}-{target}")


def _options(props: dict[str, object]) -> list[str]:
    return [arg for k, v in props.items() for arg in ("-o", f"{k}={property_value(v)}")]


def create_pool_argv(pool: str, devices: list[str], props: dict[str, object]) -> list[str]:
    """A plain stripe over ``devices``; the pool's own root dataset is never mounted.

    ``-f``: the devices are our own loop images or ones the safety check passed.
    """
    return [
        "zpool",
        "create",
        "-f",
        "-o",
        "cachefile=none",
        *_options(props),
        "-m",
        "none",
        pool,
        *devices,
    ]


def create_dataset_argv(pool: str, mount_point: str, props: dict[str, object]) -> list[str]:
    return [
        "zfs",
        "create",
        "-o",
        f"mountpoint={mount_point}",
        *_options(props),
        f"{pool}/{DATASET}",
    ]


def destroy_dataset_argv(dataset: str) -> list[str]:
    return ["zfs", "destroy", "-f", dataset]  # -f: unmount even if busy


def destroy_pool_argv(pool: str) -> list[str]:
    return ["zpool", "destroy", "-f", pool]


LIST_POOLS_ARGV = ["zpool", "list", "-H", "-o", "name"]
ZFS_PROPERTIES_ARGV = ["zfs", "get"]  # no arguments: the usage with the property table
ZPOOL_PROPERTIES_ARGV = ["zpool", "get"]


def parse_pool_list(text: str) -> list[str]:
    """``zpool list -H -o name`` → pool names ("no pools available" is none)."""
    return [line.strip() for line in text.splitlines() if line.strip() and " " not in line.strip()]


# --- what the installed zfs accepts ------------------------------------------------


@dataclass(frozen=True)
class PropertySpec:
    name: str
    editable: bool
    values: str  # as the tool prints it: "on | off | lzjb | gzip | gzip-[1-9] | zle"


_TABLE_ROW = re.compile(r"^\s+(\S+)\s+(YES|NO)\s+(?:(?:YES|NO)\s+)?(.*?)\s*$")


def parse_property_table(text: str) -> dict[str, PropertySpec]:
    """The usage of ``zfs get`` / ``zpool get`` → every property it lists.

    zfs prints ``PROPERTY EDIT INHERIT VALUES``, zpool ``PROPERTY EDIT VALUES``.
    """
    table: dict[str, PropertySpec] = {}
    for line in text.splitlines():
        m = _TABLE_ROW.match(line)
        if m:
            table[m.group(1)] = PropertySpec(m.group(1), m.group(2) == "YES", m.group(3))
    return table


_ZFS_SIZE = re.compile(r"^\d+(\.\d+)?[BKMGTPEZ]?B?$", re.IGNORECASE)
_FACTORS = {c: 1024**i for i, c in enumerate("BKMGTPEZ")}


def _size_bytes(text: str) -> int | None:
    if not _ZFS_SIZE.match(text):
        return None
    m = re.match(r"^(\d+(?:\.\d+)?)([A-Za-z]?)", text)
    if m is None:  # _ZFS_SIZE matched: never
        return None
    return int(float(m.group(1)) * _FACTORS[(m.group(2) or "B").upper()])


def _pattern(alternative: str) -> re.Pattern | None:
    """``gzip-[1-9]`` → a regex; ``sha256[,verify]`` → optional ``,verify``."""
    out = ""
    for piece in re.split(r"(\[[^\]]*\])", alternative):
        if piece.startswith("[") and piece.endswith("]"):
            inner = piece[1:-1]
            if inner.startswith(","):
                out += f"(?:{re.escape(inner)})?"
            elif re.fullmatch(r"(\d+)-(\d+)", inner):
                low, high = map(int, inner.split("-"))
                out += "(?:" + "|".join(str(n) for n in range(low, high + 1)) + ")"
            else:
                return None  # a notation not understood: the tool judges it
        else:
            out += re.escape(piece)
    return re.compile(out + "$")


def _fits(alternative: str, value: str) -> bool | None:
    """Whether ``value`` is this alternative; None: it cannot be told from the text."""
    alt = alternative.strip()
    if alt == "<size>":
        return _size_bytes(value) is not None
    if m := re.fullmatch(r"<[^>]*?(\d+)-(\d+)(?:, or (\d+)=\w+)?>", alt):  # <ashift, 9-13, ...>
        allowed = set(range(int(m.group(1)), int(m.group(2)) + 1))
        allowed |= {int(m.group(3))} if m.group(3) else set()
        return value.isdigit() and int(value) in allowed
    if alt.startswith("<"):
        return None  # <path>, <version>, <sensitivity label>: free text
    if m := re.fullmatch(r"(\S+) to (\S+), power of 2", alt):
        low, high, got = _size_bytes(m.group(1)), _size_bytes(m.group(2)), _size_bytes(value)
        if low is None or high is None:
            return None
        return got is not None and low <= got <= high and got & (got - 1) == 0
    if " " in alt:
        return None  # "share(1M) options": free text
    pattern = _pattern(alt)
    if pattern is None:
        return None
    return bool(pattern.match(value))


def value_problem(spec: PropertySpec, value: str) -> str | None:
    """Why ``value`` is not one ``spec`` accepts, or None (also when the text cannot tell)."""
    verdicts = [_fits(a, value) for a in spec.values.split("|")]
    if any(v is not False for v in verdicts):
        return None
    return f'{spec.name} = "{value}": this {"{tool}"} accepts {spec.values}'


def property_problems(
    tool: str, asked: dict[str, object], table: dict[str, PropertySpec]
) -> list[str]:
    """What the installed ``tool`` (zfs or zpool) would refuse among the plan's properties."""
    problems = []
    for name, raw in asked.items():
        value = property_value(raw)
        if ":" in name:
            continue  # a user property: any name with a colon, any value
        spec = table.get(name)
        if spec is None:
            editable = sorted(
                n for n, s in table.items() if s.editable and "@" not in n and n not in OWNED[tool]
            )
            problems.append(
                f"this {tool} has no property '{name}' (it can set: {', '.join(editable)})"
            )
        elif not spec.editable:
            problems.append(f"{tool} property '{name}' is read-only ({spec.values})")
        elif why := value_problem(spec, value):
            problems.append(why.replace("{tool}", tool))
    return problems


# --- what was made (provenance) ----------------------------------------------------

# Counters, times, names and places: they differ between two targets made alike.
_VOLATILE = frozenset(
    {
        "creation",
        "used",
        "available",
        "referenced",
        "compressratio",
        "refcompressratio",
        "usedbysnapshots",
        "usedbydataset",
        "usedbychildren",
        "usedbyrefreservation",
        "mounted",
        "mountpoint",
        "name",
        "guid",
        "createtxg",
        "objsetid",
        "written",
        "logicalused",
        "logicalreferenced",
        "size",
        "capacity",
        "free",
        "allocated",
        "dedupratio",
        "altroot",
        "expandsize",
        "fragmentation",
        "freeing",
        "leaked",
        "load_guid",
        "checkpoint",
    }
)


def parse_zfs_get(text: str) -> dict:
    """``zfs get -H -p all DATASET`` → ``{"dataset.recordsize": 8192, ...,
    "dataset.set_locally": "atime compression ..."}``."""
    facts: dict = {}
    local = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != 4:
            continue
        _, prop, value, source = parts
        if source == "local":
            local.append(prop)
        if prop not in _VOLATILE:
            facts[f"dataset.{prop}"] = number(value)
    if facts:
        facts["dataset.set_locally"] = " ".join(sorted(local))
    return facts


def parse_zpool_get(text: str) -> dict:
    """``zpool get all POOL`` (zfs-fuse's has no -H) → ``{"pool.ashift": 12, ...}``.

    Columns are padded but a long value pushes the rest right: split on blanks, the
    name first, then the property, the source last, the value between.
    """
    facts: dict = {}
    for line in text.splitlines()[1:] if text.startswith("NAME") else []:
        words = line.split()
        if len(words) < 4:
            continue
        prop, value = words[1], " ".join(words[2:-1])
        if prop not in _VOLATILE:
            facts[f"pool.{prop}"] = number(value)
    return facts


def geometry(device: str | None, mount_point: str | None) -> list[GeometryReader]:
    """``device`` is what is mounted: the dataset, ``pool/pgdata``."""
    if not device or "/" not in device or device.startswith("/"):
        return []
    pool = device.split("/", 1)[0]
    return [
        GeometryReader(["zfs", "get", "-H", "-p", "all", device], parse_zfs_get),
        GeometryReader(["zpool", "get", "all", pool], parse_zpool_get),
    ]


def recreate(
    argvs: list[list[str]], places: dict[str, str], mount_point: str
) -> tuple[list[str], list[str]]:
    """The zpool and zfs create commands as they ran, for a reader's own machine: devices
    as placeholders, the pool named tank, mounted where the data directory goes."""
    out, pool = [], None
    for argv in argvs:
        tool, verb = Path(argv[0]).name if argv else "", argv[1:2]
        if (tool, verb) == ("zpool", ["create"]):
            pool = next(a for a in reversed(argv) if a not in places and a != "none")
            kept = [a for a in argv[2:] if a != "-f"]
            kept = [a for i, a in enumerate(kept) if a != "-o" or kept[i + 1] != "cachefile=none"]
            kept = [a for a in kept if a != "cachefile=none"]
            out.append(
                shlex.join(
                    ["zpool", "create", *(places.get(a, "tank" if a == pool else a) for a in kept)]
                )
            )
        elif (tool, verb) == ("zfs", ["create"]) and pool:
            args = [
                f"mountpoint={mount_point}" if a.startswith("mountpoint=") else a for a in argv[2:]
            ]
            out.append(shlex.join(["zfs", "create", *(a.replace(pool, "tank", 1) for a in args)]))
    notes = (
        [
            "-f (overwrite without asking) and cachefile=none (pgfsbench's own, so a crash "
            "leaves no pool to import) left out",
            "ZFS mounts the dataset itself (mountpoint): no fstab line",
        ]
        if out
        else []
    )
    return out, notes


def not_crash_safe(facts: dict) -> list[str]:
    """Dataset properties that lose committed data on a crash."""
    if str(facts.get("dataset.sync", "")).lower() == "disabled":
        return [
            "ZFS sync=disabled: fsync returns before the data is on disk, so a crash "
            "loses commits PostgreSQL reported as durable (the pool itself stays "
            "consistent)"
        ]
    return []


def caveats(provenance: dict) -> list[str]:
    if str(provenance.get("mounted_fs_type") or "").startswith("fuse"):
        return [
            "ZFS in user space (zfs-fuse, through FUSE): every read and write crosses "
            "to a daemon and back, so its speed does not represent kernel ZFS (OpenZFS); "
            "compare its properties here, its numbers on a machine with the kernel "
            "module"
        ]
    return []


def offers(provenance: dict) -> dict[str, Offer]:
    """ZFS snapshots datasets and compresses by its compression property; block cloning
    (OpenZFS 2.2) is not in zfs-fuse, so a clone is left as not known."""
    compression = str(geometry_facts(provenance).get("dataset.compression", "") or "")
    return {
        SNAPSHOT: Offer(True, "ZFS snapshots the dataset holding the data directory"),
        COMPRESSION: (
            Offer(None, "ZFS compresses by its compression property (not recorded)")
            if not compression
            else Offer(False, "compression=off")
            if compression == "off"
            else Offer(True, f"compression={compression}")
        ),
    }


RECIPES = (
    Recipe(
        fs="zfs",
        mkfs_tool="zpool",
        force_flags=("-f",),
        apt_package="zfs-fuse",
        min_size_mb=64,  # zpool refuses a smaller device
        device_option_keys=frozenset(),
        log_device=None,
        mount_options=frozenset(),  # properties (zfs = {...}), not mount options
        kernel_defaults=frozenset(),
        geometry=geometry,
        atomic_writes=AtomicWrites(
            "ZFS copy-on-write (a record is never overwritten in place)", unless=frozenset()
        ),
        durability_notes={},
        spans_devices=True,  # a plain stripe over every member
        pooled=True,
        not_crash_safe=not_crash_safe,
        caveats=caveats,
        mount_types=frozenset({"zfs", "fuse.zfs"}),
        recreate=recreate,
        offers=offers,
        daemon_pidfiles=(DAEMON_PIDFILE, "/var/run/zfs-fuse.pid"),
    ),
)  # ours; Debian's service
