"""Filesystem geometry as the filesystem's own tools report it (read-only).

xfs_info, ``dumpe2fs -h`` and ``btrfs inspect-internal dump-super`` say what
mkfs really built (allocation groups, stripe alignment, journal, node size),
which can differ from what the plan asked. The raw text is kept beside the
parsed facts, and a failing tool gives an error entry, never an exception:
provenance must not fail a run.
"""

from __future__ import annotations

import re
import subprocess

from pgfsbench import proc

TIMEOUT_S = 30

# --- parsers (pure) ---------------------------------------------------------------


def _number(text: str) -> int | str:
    text = text.strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else text


_XFS_LINE = re.compile(r"^(\S+)?\s*=(.*)$")
_XFS_PAIR = re.compile(r"([a-z][\w-]*)=(\S+?)(?:,|\s|$)")


def parse_xfs_info(text: str) -> dict:
    """``xfs_info`` → ``{"meta-data.agcount": 4, "data.sunit": 2, "log.internal": True, ...}``.

    Keys are prefixed with their section because ``bsize``, ``sunit`` and
    ``sectsz`` appear in several. sunit/swidth are in filesystem blocks there
    (the mount options count 512-byte sectors): ``*_bytes`` says it plainly.
    """
    facts: dict = {}
    section = ""
    for line in text.splitlines():
        m = _XFS_LINE.match(line)
        if not m:
            continue
        section = m.group(1) or section
        rest = m.group(2)
        head = rest.split("  ")[0].strip()  # what follows "section=" before the pairs
        if m.group(1) and head and "=" not in head:
            if section == "log":
                # "internal log" (older xfsprogs: "internal") or the log device
                facts["log.internal"] = head.startswith("internal")
                if not facts["log.internal"]:
                    facts["log.device"] = head
            elif section == "naming" and head.startswith("version"):
                facts["naming.version"] = _number(head.split()[-1])
            elif section == "realtime" and head != "none":
                facts["realtime.device"] = head
        for key, value in _XFS_PAIR.findall(rest):
            facts[f"{section}.{key}"] = _number(value)
    for section in ("data", "log"):
        bsize = facts.get(f"{section}.bsize")
        for key in ("sunit", "swidth"):
            value = facts.get(f"{section}.{key}")
            if isinstance(value, int) and isinstance(bsize, int):
                facts[f"{section}.{key}_bytes"] = value * bsize
    return facts


# The settled properties of an ext2/3/4 filesystem; counters, times, UUIDs and
# checksums are left out so two targets built alike compare equal.
DUMPE2FS_KEYS = (
    "Filesystem revision #", "Filesystem features", "Filesystem flags",
    "Default mount options", "Mount options", "Errors behavior", "Inode count", "Block count",
    "Reserved block count", "First block", "Block size", "Fragment size",
    "Group descriptor size", "Reserved GDT blocks", "Blocks per group", "Inodes per group",
    "Inode blocks per group", "RAID stride", "RAID stripe width", "Flex block group size",
    "Inode size", "Required extra isize", "Desired extra isize", "Default directory hash",
    "Checksum type", "Journal backup", "Journal features", "Total journal size",
    "Total journal blocks", "Max transaction length", "Fast commit length",
    "Journal checksum type",
)
_STATE_FEATURES = {"needs_recovery"}  # set while mounted: state, not a choice made at mkfs


def _snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


def parse_dumpe2fs(text: str) -> dict:
    """``dumpe2fs -h`` → ``{"block_size": 4096, "raid_stride": 2, "journal": "internal"}``."""
    raw: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            raw.setdefault(key.strip(), value.strip())
    facts: dict = {}
    for key in DUMPE2FS_KEYS:
        if key in raw:
            value = raw[key]
            if key == "Filesystem features":
                value = " ".join(f for f in value.split() if f not in _STATE_FEATURES)
            facts[_snake(key)] = _number(value)
    if "filesystem_features" not in facts:
        return facts  # not a superblock dump (an error message)
    features = str(facts["filesystem_features"]).split()
    if "journal_dev" in features:
        facts["journal"] = "is an external journal device"
    elif "has_journal" not in features:
        facts["journal"] = "none"
    elif "Journal device" in raw:
        facts["journal"] = "external"
    else:
        facts["journal"] = "internal"
    return facts


_BTRFS_KEYS = ("csum_type", "csum_size", "sectorsize", "nodesize", "stripesize",
               "num_devices", "total_bytes", "compat_flags", "compat_ro_flags",
               "incompat_flags")


def parse_btrfs_super(text: str) -> dict:
    """``dump-super`` → ``{"nodesize": 4096, "csum_type": "crc32c", "incompat_flags": "..."}``.

    Flag words come on the lines after their hex value, inside ``( ... | ... )``.
    """
    facts: dict = {}
    last: str | None = None
    for line in text.splitlines():
        if line.startswith(("\t", " ")) and last in ("compat_flags", "compat_ro_flags",
                                                     "incompat_flags"):
            words = re.findall(r"[A-Z][A-Z0-9_]+", line)
            if words:
                facts[last] = " ".join(filter(None, [str(facts[last]), *words]))
            continue
        parts = line.split("\t")
        key, value = parts[0].strip(), " ".join(p for p in parts[1:] if p).strip()
        last = key
        if key not in _BTRFS_KEYS:
            continue
        if key == "csum_type":  # "0 (crc32c)"
            m = re.search(r"\((\w+)\)", value)
            facts[key] = m.group(1) if m else value
        elif key.endswith("flags"):
            facts[key] = ""  # the hex value says nothing a reader can use; words follow
        else:
            facts[key] = _number(value)
    return facts


def parse_btrfs_df(text: str) -> dict:
    """``btrfs filesystem df`` → ``{"profile.data": "single", "profile.metadata": "DUP"}``."""
    facts: dict = {}
    for line in text.splitlines():
        m = re.match(r"^([\w+]+),\s*([\w-]+):", line.strip())
        if m and m.group(1) != "GlobalReserve":
            facts[f"profile.{m.group(1).lower()}"] = m.group(2)
    return facts


# --- running the tools -------------------------------------------------------------


def _run(argv: list[str]) -> tuple[str, str | None]:
    """(stdout, error or None); a missing tool, a timeout or a non-zero exit is an error."""
    tool = proc.which(argv[0])
    if tool is None:
        return "", f"{argv[0]} not found: install its package to record this geometry"
    try:
        result = proc.run([tool, *argv[1:]], check=False, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", f"{argv[0]} could not run: {exc}"
    if not result.ok:
        lines = [ln.strip() for ln in (result.stderr or result.stdout).splitlines() if ln.strip()]
        raw = result.stdout + (("\n" if result.stdout else "") + result.stderr
                               if result.stderr else "")
        return raw, f"{argv[0]} exited {result.exit_code}: " + " / ".join(lines[-3:])
    return result.stdout, None


def _entry(argv: list[str], parse) -> dict:
    text, error = _run(argv)
    entry: dict = {"tool": argv, "facts": {} if error else parse(text), "raw": text}
    if error:
        entry["error"] = error
    return entry


def filesystem_geometry(fs: str, device: str | None, mount_point: str | None = None) -> dict:
    """``{"tool": argv, "facts": {...}, "raw": text}`` (+ ``"error"``, + ``"extra"``)."""
    try:
        if fs == "xfs" and (mount_point or device):
            return _entry(["xfs_info", str(mount_point or device)], parse_xfs_info)
        if fs in ("ext2", "ext3", "ext4") and device:
            return _entry(["dumpe2fs", "-h", str(device)], parse_dumpe2fs)
        if fs == "btrfs" and device:
            entry = _entry(["btrfs", "inspect-internal", "dump-super", str(device)],
                           parse_btrfs_super)
            if mount_point:  # the chunk profiles live in the trees, not the superblock
                df = _entry(["btrfs", "filesystem", "df", str(mount_point)], parse_btrfs_df)
                entry["facts"].update(df.pop("facts"))
                entry["extra"] = [df]
            return entry
        return {"tool": None, "facts": {}, "raw": "",
                "error": f"no geometry tool for {fs}" + ("" if device else " without a device")}
    except Exception as exc:  # a parser bug must not cost the run its results
        return {"tool": None, "facts": {}, "raw": "", "error": f"geometry failed: {exc!r}"}
