"""Parse ``pg_test_fsync`` stdout into per-method results and metrics.

The format is the one printed by PostgreSQL 15 and 18 (checked against
captured outputs in ``tests/fixtures/pg_test_fsync_pg*.txt``)::

    Compare file sync methods using one 8kB write:
    (in "wal_sync_method" preference order, except fdatasync is Linux's default)
            open_datasync                      6496.506 ops/sec     154 usecs/op
            fsync_writethrough                              n/a

A method the platform lacks prints ``n/a``; one whose open() with O_DIRECT
fails prints ``n/a*``.  Both become ``supported=False`` with no values:
unsupported is not zero.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pgfsbench.metrics import Metric

UNSUPPORTED_NOTE = "unsupported on this platform"


@dataclass(frozen=True)
class FsyncResult:
    section: str
    method: str
    ops_per_s: float | None
    usecs_per_op: float | None
    supported: bool


# Result lines are always indented (LABEL_FORMAT is "        %-30s"); the
# explanatory "(...)" lines and headers start at column 0.
_RESULT_RE = re.compile(
    r"^\s+(?P<label>\S.*?)\s+(?P<ops>\d+(?:\.\d+)?) ops/sec\s+(?P<us>\d+(?:\.\d+)?) usecs/op\s*$"
)
_UNSUPPORTED_RE = re.compile(r"^\s+(?P<label>\S.*?)\s+(?:n/a\*?|unsupported)\s*$")
_OPEN_SYNC_SIZE_RE = re.compile(r"^(?P<n>\d+)\s*\*\s*(?P<kb>\d+)kB open_sync writes?$")

# Header text → stable section key.  The block size comes from XLOG_BLCKSZ,
# so it is captured rather than assumed to be 8.
_SECTION_RES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Compare file sync methods using one (\d+)kB write:"), "one_{}k"),
    (re.compile(r"^Compare file sync methods using two (\d+)kB writes:"), "two_{}k"),
    (re.compile(r"^Compare open_sync with different write sizes:"), "open_sync_sizes"),
    (re.compile(r"^Test if fsync on non-write file descriptor is honored:"), "non_write_fd"),
    (re.compile(r"^Non-sync'ed (\d+)kB writes:"), "non_sync"),
)
_OTHER_HEADER_RE = re.compile(r"^[A-Z][^(]*:\s*$")


def _identifier(text: str) -> str:
    """``write, fsync, close`` → ``write_fsync_close``."""
    return re.sub(r"[^0-9a-z]+", "_", text.strip().lower()).strip("_")


def _section_for(line: str) -> str | None:
    for pattern, key in _SECTION_RES:
        m = pattern.match(line)
        if m:
            return key.format(*m.groups())
    # An unknown future section must not be attributed to the previous one.
    if _OTHER_HEADER_RE.match(line):
        return _identifier(line.rstrip().rstrip(":"))
    return None


def _method_name(section: str, label: str) -> str:
    if section == "open_sync_sizes":
        m = _OPEN_SYNC_SIZE_RE.match(label.strip())
        if m:
            # "1 * 16kB open_sync write" → "1x16kB" (kB kept as the tool spells it)
            return f"{m['n']}x{m['kb']}kB"
    return _identifier(label)


def parse_pg_test_fsync(text: str) -> list[FsyncResult]:
    """Return one ``FsyncResult`` per result line, in output order.

    Raises ``ValueError`` when the text has no result line at all (e.g. the
    tool died before the first test); the tool's own error line is quoted.
    """
    results: list[FsyncResult] = []
    section = ""
    for line in text.splitlines():
        new_section = _section_for(line)
        if new_section is not None:
            section = new_section
            continue
        m = _RESULT_RE.match(line) or _UNSUPPORTED_RE.match(line)
        if m:
            measured = m.re is _RESULT_RE  # else n/a: unsupported, no values
            results.append(
                FsyncResult(
                    section=section,
                    method=_method_name(section, m["label"]),
                    ops_per_s=float(m["ops"]) if measured else None,
                    usecs_per_op=float(m["us"]) if measured else None,
                    supported=measured,
                )
            )
    if not results:
        errors = [ln.strip() for ln in text.splitlines() if "error:" in ln]
        detail = f": {errors[0]}" if errors else ""
        raise ValueError(f"no pg_test_fsync result lines found{detail}")
    return results


def _metric_name(result: FsyncResult) -> str:
    section, method = result.section, result.method
    if m := re.fullmatch(r"one_(\d+)k", section):
        return f"fsync.{method}_{m[1]}k.ops_per_s"
    if m := re.fullmatch(r"two_(\d+)k", section):
        return f"fsync.{method}_2x{m[1]}k.ops_per_s"
    if section == "open_sync_sizes":
        return f"fsync.open_sync_{method}.ops_per_s"
    if section in ("non_write_fd", "non_sync"):
        return f"fsync.{method}.ops_per_s"
    return f"fsync.{section}.{method}.ops_per_s"


def fsync_metrics(
    results: Iterable[FsyncResult], sections: Iterable[str] | None = ("one_8k",)
) -> list[Metric]:
    """Metrics for the results in ``sections`` (all sections when None).

    Names: ``fsync.<method>_8k`` (one_8k), ``fsync.<method>_2x8k`` (two_8k),
    ``fsync.open_sync_<NxKkB>`` (open_sync_sizes), ``fsync.<method>``
    (non_write_fd, non_sync), each suffixed ``.ops_per_s``.
    """
    wanted = None if sections is None else set(sections)
    metrics: list[Metric] = []
    for r in results:
        if wanted is not None and r.section not in wanted:
            continue
        metrics.append(
            Metric(
                name=_metric_name(r),
                value=r.ops_per_s if r.supported else None,
                unit="ops/s",
                higher_is_better=True,
                note="" if r.supported else UNSUPPORTED_NOTE,
            )
        )
    return metrics
