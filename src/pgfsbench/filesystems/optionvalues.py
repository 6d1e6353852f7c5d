"""What a mount option's value may be, as each filesystem's kernel driver parses it.

A recipe maps option names to one of these (``data`` → one of ordered, journal,
writeback); the plan judges every value when it loads (``mountoptions.py``), so a
value the kernel would refuse after the images were made is refused before anything
is. Every value, typed or not, is also held to the characters mount options are
written in: none takes a space, a quote or a shell character.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pgfsbench.units import option_size_to_bytes

# Letters, digits and the punctuation option values use: a path (subvol=/a/b), a level
# (compress=zstd:3), a sign (compress=zstd:-1), a size (256k), a name (remount-ro).
VALUE_CHARS = re.compile(r"[A-Za-z0-9._:/+@-]+")


@dataclass(frozen=True)
class OptionValue:
    what: str  # said when a value is refused: "a whole number of seconds"
    accepts: Callable[[str], bool]


def _int(text: str) -> int | None:
    return int(text) if re.fullmatch(r"-?[0-9]+", text) else None


def integer(lo: int | None = 0, hi: int | None = None, what: str = "a whole number") -> OptionValue:
    def accepts(text: str) -> bool:
        n = _int(text)
        return n is not None and (lo is None or n >= lo) and (hi is None or n <= hi)

    bounds = (
        f" from {lo} to {hi}"
        if hi is not None
        else f" of at least {lo}"
        if lo not in (None, 0)
        else ""
    )
    return OptionValue(what + bounds, accepts)


def one_of(*words: str) -> OptionValue:
    return OptionValue("one of " + ", ".join(words), lambda text: text in words)


def words(sep: str, *allowed: str) -> OptionValue:
    """Several of ``allowed`` joined by ``sep`` (btrfs rescue=usebackuproot:nologreplay)."""
    return OptionValue(
        f"one or more of {', '.join(allowed)} joined by '{sep}'",
        lambda text: all(w in allowed for w in text.split(sep)),
    )


def size(choices: tuple[int, ...] = ()) -> OptionValue:
    """Bytes, or with a k, m or g suffix; ``choices``: only these byte counts."""

    def accepts(text: str) -> bool:
        n = option_size_to_bytes(text)
        return n is not None and (not choices or n in choices)

    what = (
        "one of " + ", ".join(f"{c // 1024}k" for c in choices)
        if choices
        else "a size in bytes or with a k, m or g suffix"
    )
    return OptionValue(what, accepts)


def level(*names: str, leveled: tuple[str, ...] = ()) -> OptionValue:
    """A name, or name:level where the name takes one (compress=zstd:3); the level's
    range is the driver's to clamp."""

    def accepts(text: str) -> bool:
        name, sep, lvl = text.partition(":")
        return name in names and (not sep or (name in leveled and _int(lvl) is not None))

    with_level = ", ".join(f"{n}:N" for n in leveled)
    return OptionValue(
        f"one of {', '.join(names)}" + (f" (or {with_level})" if leveled else ""), accepts
    )


def power_of_two_or_zero(hi: int) -> OptionValue:
    def accepts(text: str) -> bool:
        n = _int(text)
        return n is not None and 0 <= n <= hi and n & (n - 1) == 0

    return OptionValue(f"0 or a power of two up to {hi}", accepts)
