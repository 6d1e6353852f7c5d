"""Parsing dd's final summary line: bytes copied, seconds, and dd's own rate.

dd prints, on stderr, a summary whose words are translated and whose decimal
separator follows the locale:

    67108864 bytes (67 MB, 64 MiB) copied, 0.24424 s, 275 MB/s          (coreutils 8.24+)
    41943040000 bytes (42 GB) copied, 254.467 seconds, 165 MB/s         (older, the seqwrite study)
    67108864 Bytes (67 MB, 64 MiB) kopiert, 0,275782 s, 243 MB/s        (de_DE)
    1 byte copied, 0.000394712 s, 2.5 kB/s                              (no "(...)" below 1 kB)

So the pattern keys on the shape (integer, word, optional parenthesis, word,
comma, number, word, comma, rate) and never on the words themselves. The
rate dd prints is rounded to two or three digits: callers should compute MB/s
from ``bytes / seconds`` and keep dd's figure only for cross-checking.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_NUMBER = r"\d+(?:[.,]\d+)?(?:[eE][-+]?\d+)?"
_SUMMARY = re.compile(
    rf"^\s*(?P<bytes>\d+)\s*[^\d\s(,]+"  # 67108864 bytes / Bytes / octets / byte
    r"(?:\s*\((?P<human>[^)]*)\))?"  # (67 MB, 64 MiB), absent below 1 kB
    r"\s*[^\d,]*,\s*"  # copied, / kopiert, / copiés,
    rf"(?P<seconds>{_NUMBER})\s*[^\d\s,]+,\s*"  # 0.24424 s, / 254.467 seconds,
    rf"(?P<rate>{_NUMBER}|[Ii]nf(?:inity)?)\s*"  # 275 / 0,0 / Infinity (old dd, 0 s)
    r"(?P<unit>[kKMGTPEZY]?i?B)/s\s*$"
)
# dd prefixes its diagnostics with the name it was called by: "dd: " or "/usr/bin/dd: ".
_DIAGNOSTIC = re.compile(r"^\s*(?:\S*/)?dd:\s+(?P<message>.+?)\s*$")
_SCALE = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6, "z": 7, "y": 8}


@dataclass(frozen=True)
class DdSummary:
    bytes: int
    seconds: float
    reported_bytes_per_s: float  # dd's own rate, rounded (inf when dd printed Infinity)
    reported_rate: str  # as printed, e.g. "275 MB/s"
    warnings: tuple[str, ...] = ()

    @property
    def bytes_per_s(self) -> float:
        return self.bytes / self.seconds if self.seconds > 0 else math.inf

    @property
    def mb_per_s(self) -> float:
        """Decimal megabytes per second (10**6 B), the unit dd itself prints."""
        return self.bytes_per_s / 1e6


def _number(text: str) -> float:
    """'0,275782' (decimal comma locales) or '0.275782' → float."""
    if text.lower().startswith("inf"):
        return math.inf
    return float(text.replace(",", "."))


def _rate_bytes(value: float, unit: str) -> float:
    """'MB' → ×10**6 (SI, dd's default); 'MiB' → ×2**20."""
    prefix = unit[:-1].rstrip("i").lower()
    base = 1024 if "i" in unit[:-1] else 1000
    return value * base ** _SCALE[prefix]


def parse_dd_output(text: str) -> DdSummary:
    """The last summary line of dd's stderr; ValueError when dd failed or none is there.

    A run in which dd reported an error (no space, bad path, bad argument) is
    not a measurement, even though dd still prints a summary of what it wrote.
    """
    lines = re.split(r"[\r\n]+", text)  # status=progress separates updates with \r
    errors: list[str] = []
    warnings: list[str] = []
    found: re.Match[str] | None = None
    for line in lines:
        if diag := _DIAGNOSTIC.match(line):
            message = diag.group("message")
            # Only C-locale warnings are recognised; a translated one counts as an error.
            (warnings if message.lower().startswith("warning") else errors).append(message)
        elif match := _SUMMARY.match(line):
            found = match  # progress lines come first; the final summary is last
    if errors:
        raise ValueError("dd reported an error: " + " | ".join(errors))
    if found is None:
        tail = " | ".join(line.strip() for line in lines if line.strip())[-300:]
        raise ValueError(
            f"no dd summary line ('N bytes ... copied, S s, R MB/s') in: {tail or '(empty output)'}"
        )
    rate = _number(found.group("rate"))
    unit = found.group("unit")
    return DdSummary(
        bytes=int(found.group("bytes")),
        seconds=_number(found.group("seconds")),
        reported_bytes_per_s=_rate_bytes(rate, unit),
        reported_rate=f"{found.group('rate')} {unit}/s",
        warnings=tuple(warnings),
    )
