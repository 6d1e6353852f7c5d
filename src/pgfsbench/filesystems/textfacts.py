"""Small helpers for the parsers of the filesystems' own tools."""

from __future__ import annotations

import re


def number(text: str) -> int | str:
    text = text.strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def snake(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")
