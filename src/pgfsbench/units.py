"""Sizes as people write them in plans: '8k', '512M', '2G', '1.5GiB'."""

from __future__ import annotations

import re

SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)
_FACTORS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _bytes(match: re.Match, bare_unit: str) -> int:
    number, unit = float(match.group(1)), match.group(2).upper() or bare_unit
    return int(number * _FACTORS[unit])


def size_to_bytes(text: str | int) -> int:
    """'8k', '512M', '2G', '1.5GiB' → bytes (binary units; a bare number is MB)."""
    if isinstance(text, int):
        return text * 2**20
    match = SIZE_RE.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a size (examples: 8k, 512M, 2G)")
    return _bytes(match, "M")


def size_to_mb(text: str | int) -> int:
    return size_to_bytes(text) // 2**20


def option_size_to_bytes(text: str) -> int | None:
    """A size as mount options write it ('256k', '262144') → bytes; None if not a size.

    Unlike a plan size a bare number is bytes here: the kernel lists logbsize=262144
    and logbsize=256k for the same thing, and commit=5 must stay 5. A fraction of a
    byte is not a size.
    """
    match = SIZE_RE.match(text)
    if not match:
        return None
    exact = float(match.group(1)) * _FACTORS[match.group(2).upper()]
    return int(exact) if exact.is_integer() else None  # commit=5.5 is not 5 bytes


def bytes_text(n: float) -> str:
    """A byte count as a person writes it: '256 GiB', '4 KiB', '512 B' (binary units,
    three significant digits)."""
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= factor:
            return f"{n / factor:.3g} {unit}"
    return f"{n:g} B"


# A fact's key ending tells its unit: size_bytes, memory_mb, read_ahead_kb.
_UNIT_SUFFIXES = {"_bytes": 1, "_mb": 2**20, "_mib": 2**20, "_kb": 2**10, "_kib": 2**10}


def fact_quantity(key: str, value: object) -> tuple[str, str] | None:
    """(the key without its unit, the value in human units) for a number whose key names
    a byte unit or microseconds (``asked_us``: "0 µs"); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    for suffix, factor in _UNIT_SUFFIXES.items():
        if key.lower().endswith(suffix):
            return key[: -len(suffix)], bytes_text(value * factor)
    if key.lower().endswith("_us"):
        return key[:-3], f"{value:,g} µs"
    return None


# PostgreSQL's memory units (postgresql.conf is case-sensitive: kB, MB, GB, TB).
_PG_UNITS = {"B": 1, "kB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}
_PG_MEMORY_RE = re.compile(r"^\s*(\d+)\s*(B|kB|MB|GB|TB)?\s*$")


def pg_memory_bytes(value: object, block: int = 8192) -> int | None:
    """A PostgreSQL memory setting's value in bytes: ``"256MB"``, ``"1GB"``, or a bare
    number of ``block``-byte units (shared_buffers counts 8 kB buffers); None when it is
    not one (the server judges it before anything runs)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value * block
    match = _PG_MEMORY_RE.match(str(value))
    if not match:
        return None
    unit = match.group(2)
    return int(match.group(1)) * (_PG_UNITS[unit] if unit else block)
