"""Sizes as people write them in plans: '8k', '512M', '2G', '1.5GiB'."""

from __future__ import annotations

import re

SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)


def size_to_bytes(text: str | int) -> int:
    """'8k', '512M', '2G', '1.5GiB' → bytes (binary units; a bare number is MB)."""
    if isinstance(text, int):
        return text * 2**20
    match = SIZE_RE.match(text)
    if not match:
        raise ValueError(f"'{text}' is not a size (examples: 8k, 512M, 2G)")
    number, unit = float(match.group(1)), match.group(2).upper() or "M"
    return int(number * {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[unit])


def size_to_mb(text: str | int) -> int:
    return size_to_bytes(text) // 2**20
