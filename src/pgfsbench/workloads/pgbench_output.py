"""Parse pgbench's outputs: ``-i`` timings, the run summary, per-transaction logs.

Formats are those of PostgreSQL 15 and 18, checked against captured outputs in
``tests/fixtures/pgbench_*``.
"""

from __future__ import annotations

import dataclasses
import gzip
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal, NamedTuple

from pgfsbench.metrics import Series
from pgfsbench.workloads.warmup import steady_state_start

# --------------------------------------------------------------------------
# pgbench -i
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class InitTimes:
    """``done in 0.40 s (drop tables 0.00 s, ...)``; phases keyed like ``client_side_generate``."""

    total_s: float
    phases: dict[str, float] = field(default_factory=dict)


_INIT_DONE_RE = re.compile(r"^done in (?P<total>\d+(?:\.\d+)?) s(?: \((?P<phases>[^)]*)\))?", re.M)
_INIT_PHASE_RE = re.compile(r"^(?P<name>.+?) (?P<secs>\d+(?:\.\d+)?) s$")


def _identifier(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.strip().lower()).strip("_")


def parse_init_output(text: str) -> InitTimes:
    """Parse pgbench ``-i`` output (it goes to stderr).

    Raises ``ValueError`` when the "done in" line is missing, i.e. the
    initialisation did not finish.
    """
    m = _INIT_DONE_RE.search(text)
    if m is None:
        raise ValueError(
            "no 'done in ... s' line in pgbench -i output: initialisation did not finish"
        )
    phases: dict[str, float] = {}
    for part in (m["phases"] or "").split(","):
        part = part.strip().rstrip(".")
        if not part:
            continue
        pm = _INIT_PHASE_RE.match(part)
        if pm is None:
            raise ValueError(f"unrecognised pgbench -i phase timing: {part!r}")
        phases[_identifier(pm["name"])] = float(pm["secs"])
    return InitTimes(total_s=float(m["total"]), phases=phases)


# --------------------------------------------------------------------------
# pgbench run summary (stdout)
# --------------------------------------------------------------------------


class StatementLatency(NamedTuple):
    """One ``-r`` line; ``failures`` is None for outputs without that column."""

    statement: str
    latency_ms: float
    failures: int | None


@dataclass(frozen=True)
class RunSummary:
    tps: float
    latency_avg_ms: float | None
    latency_stddev_ms: float | None  # printed only with -P, -R or -L
    transactions: int
    failed_transactions: int | None  # None when the version does not print it
    duration_s: float | None  # None for -t runs
    clients: int | None
    threads: int | None
    query_mode: str | None
    scaling_factor: int | None
    statements: list[StatementLatency] = field(default_factory=list)
    initial_connection_ms: float | None = None
    skipped_transactions: int | None = None
    retried_transactions: int | None = None
    total_retries: int | None = None
    latency_includes_failures: bool = False
    # "Run was aborted; the above results are incomplete." (only seen if the
    # caller passes stderr too)
    aborted: bool = False


_NUM = r"(\d+(?:\.\d+)?)"
_SUMMARY_RES: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.M)
    for name, pattern in {
        "latency_avg_ms": rf"^latency average = {_NUM} ms",
        "latency_stddev_ms": rf"^latency stddev = {_NUM} ms",
        "transactions": r"^number of transactions actually processed: (\d+)",
        "failed_transactions": r"^number of failed transactions: (\d+)",
        "skipped_transactions": r"^number of transactions skipped: (\d+)",
        "retried_transactions": r"^number of transactions retried: (\d+)",
        "total_retries": r"^total number of retries: (\d+)",
        "duration_s": rf"^duration: {_NUM} s",
        "clients": r"^number of clients: (\d+)",
        "threads": r"^number of threads: (\d+)",
        "query_mode": r"^query mode: (\S+)",
        "scaling_factor": r"^scaling factor: (\d+)",
        "initial_connection_ms": rf"^initial connection time = {_NUM} ms",
    }.items()
}
_INT_FIELDS = {
    "transactions",
    "failed_transactions",
    "skipped_transactions",
    "retried_transactions",
    "total_retries",
    "clients",
    "threads",
    "scaling_factor",
}
_TPS_RE = re.compile(rf"^tps = {_NUM}(?P<rest>.*)$", re.M)
# "statement latencies in milliseconds[ and failures | , failures and retries]:"
# (also indented with " - " when several scripts are used)
_STMT_HEADER_RE = re.compile(r"statement latencies in milliseconds(?P<cols>[^:]*):\s*$")


def _pick_tps(text: str) -> float:
    matches = list(_TPS_RE.finditer(text))
    if not matches:
        raise ValueError("no 'tps = ' line in pgbench output: the run did not produce a summary")
    # Before PG 14 two lines were printed; the one without connection time is
    # the comparable one (PG 15/18 print only that one).
    for m in matches:
        if "without initial connection" in m["rest"] or "excluding" in m["rest"]:
            return float(m[1])
    return float(matches[0][1])


def _statement_lines(lines: list[str], start: int, extra_cols: int) -> Iterator[StatementLatency]:
    line_re = re.compile(r"^\s+(\d+(?:\.\d+)?)" + r"\s+(\d+)" * extra_cols + r"\s+(\S.*)$")
    for line in lines[start:]:
        m = line_re.match(line)
        if m is None:
            return
        failures = int(m[2]) if extra_cols >= 1 else None
        yield StatementLatency(
            statement=m.groups()[-1].rstrip(), latency_ms=float(m[1]), failures=failures
        )


def parse_run_summary(text: str) -> RunSummary:
    """Parse the pgbench run summary (stdout; stderr may be appended).

    Raises ``ValueError`` when there is no tps line (connection failure,
    every client aborted before finishing a transaction, ...).
    """
    tps = _pick_tps(text)
    values: dict[str, object] = {}
    for name, pattern in _SUMMARY_RES.items():
        m = pattern.search(text)
        if m is None:
            values[name] = None
        elif name in _INT_FIELDS:
            values[name] = int(m[1])
        elif name == "query_mode":
            values[name] = m[1]
        else:
            values[name] = float(m[1])
    if values["transactions"] is None:
        raise ValueError(
            "pgbench output has a tps line but no 'number of transactions actually processed'"
        )

    lines = text.splitlines()
    statements: list[StatementLatency] = []
    for i, line in enumerate(lines):
        hm = _STMT_HEADER_RE.search(line)
        if hm:
            cols = hm["cols"]
            extra = 2 if "retries" in cols else 1 if "failures" in cols else 0
            statements.extend(_statement_lines(lines, i + 1, extra))

    avg_line = re.search(r"^latency average = .*$", text, re.M)
    return RunSummary(
        tps=tps,
        statements=statements,
        latency_includes_failures=bool(avg_line and "including failures" in avg_line[0]),
        aborted="Run was aborted" in text,
        **values,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------
# Per-transaction logs (pgbench -l)
# --------------------------------------------------------------------------


class LatencyHistogram:
    """Log-linear histogram of integer microsecond latencies.

    Values below 128 us get their own bucket (exact).  Above, each power of
    two is split into 64 equal buckets, so a bucket ``[low, low + w)`` has
    ``w <= low / 64``; reporting its midpoint is off by less than
    ``w / 2 <= low / 128``: relative error < 0.79 % (bound: 1/128).  The
    number of buckets is at most 64 per power of two (< 4,000 for 0..2^63 us),
    whatever the number of samples.
    """

    _SUB_BITS = 7  # 2^7 = 128 linear slots; the upper 64 are used above 128 us

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.total = 0
        self.min: int | None = None
        self.max: int | None = None

    @staticmethod
    def bucket(value_us: int) -> int:
        if value_us < 128:
            return value_us
        shift = value_us.bit_length() - 7
        return (shift << 7) | (value_us >> shift)

    @staticmethod
    def bucket_midpoint(key: int) -> float:
        shift, sub = key >> 7, key & 127
        low = sub << shift
        return low + ((1 << shift) - 1) / 2

    def add(self, value_us: int, count: int = 1) -> None:
        key = self.bucket(value_us)
        self.counts[key] = self.counts.get(key, 0) + count
        self.total += count
        self.min = value_us if self.min is None else min(self.min, value_us)
        self.max = value_us if self.max is None else max(self.max, value_us)

    def merge(self, other: LatencyHistogram) -> None:
        for key, n in other.counts.items():
            self.counts[key] = self.counts.get(key, 0) + n
        self.total += other.total
        for v in (other.min, other.max):
            if v is not None:
                self.min = v if self.min is None else min(self.min, v)
                self.max = v if self.max is None else max(self.max, v)

    def percentile(self, pct: float) -> float | None:
        """Nearest-rank percentile (smallest value with >= pct % of samples at or below it)."""
        if self.total == 0:
            return None
        assert self.min is not None and self.max is not None  # set by the first value
        rank = max(1, math.ceil(pct / 100 * self.total))
        seen = 0
        for key in sorted(self.counts):
            seen += self.counts[key]
            if seen >= rank:
                # The midpoint may lie outside the observed range in the edge buckets.
                return min(max(self.bucket_midpoint(key), self.min), self.max)
        return float(self.max)  # unreachable unless counts are inconsistent


@dataclass(frozen=True)
class TxLogSummary:
    """What the per-transaction logs say; latencies in ms, epochs in seconds.

    Counts are of *logged* transactions (all of them unless --sampling-rate).
    ``failed`` counts every non-numeric, non-``skipped`` time column:
    ``failed``, or ``serialization``/``deadlock``/``other`` with
    --failures-detailed.

    With a warm-up trim (``trimmed_s`` > 0) the counts and latency statistics
    leave out the transactions that completed in the first ``trimmed_s``
    seconds of the series (series times ``0 .. trimmed_s - 1``); the series,
    ``first_start_epoch``, ``last_end_epoch`` and ``malformed_lines`` still
    cover the whole run.
    """

    committed: int
    failed: int
    skipped: int
    latency_mean_ms: float | None
    latency_stddev_ms: float | None
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    latency_p99_ms: float | None
    latency_max_ms: float | None
    first_start_epoch: float | None
    last_end_epoch: float | None
    tps: Series
    latency_avg: Series
    files: int = 0
    malformed_lines: int = 0
    trimmed_s: float = 0.0  # whole seconds of the series left out of counts and latencies

    @property
    def series(self) -> list[Series]:
        return [self.tps, self.latency_avg]

    @property
    def trimmed_run_s(self) -> float:
        """Run time before the cut-off: from the earliest start to origin + ``trimmed_s``.

        The origin is the whole second of the earliest start, so this is
        ``trimmed_s`` minus the fraction of a second the run started after the
        origin (``trimmed_s - 1 < trimmed_run_s <= trimmed_s``): the time the
        left-out transactions stand for, e.g. to divide the kept ones by the
        rest of the run.  0 without a trim.
        """
        if not self.trimmed_s or self.first_start_epoch is None:
            return 0.0
        return max(
            0.0, math.floor(self.first_start_epoch) + self.trimmed_s - self.first_start_epoch
        )


@contextmanager
def _open_log(path: Path) -> Iterator[BinaryIO]:
    """Binary line reader; gzip is detected by magic number, not by name."""
    raw = open(path, "rb")
    try:
        if raw.read(2) == b"\x1f\x8b":
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as gz:
                yield gz  # type: ignore[misc]
        else:
            raw.seek(0)
            yield raw
    finally:
        raw.close()


class _Accumulator:
    """Streaming state: O(histogram buckets + seconds of run time + one group).

    Lines are grouped by their completion second while streaming (pgbench
    writes each thread's log in completion order, so a group is a run of
    consecutive lines).  Per line the hot loop only splits and appends two
    byte strings; parsing, counting and bucketing then happen once per
    *distinct* latency of the group via ``Counter`` (C code), which is what
    makes millions of lines affordable in pure Python.
    """

    GROUP_CAP = 16_384  # lines; bounds the group's memory at very high tps

    def __init__(self, cutoff_sec: int | None = None) -> None:
        # Groups completing in an epoch second < cutoff_sec are ignored
        # entirely (a warm-up trim; the caller keeps the series of an
        # untrimmed pass).  Checked once per group, not per line.
        self.cutoff_sec = cutoff_sec
        self.hist = LatencyHistogram()
        self.failed = self.skipped = self.malformed = 0
        self.sum_us = 0
        self.sum_sq_us = 0  # Python ints: exact, so the variance has no cancellation error
        self.first_start_us: int | None = None
        self.last_sec: int | None = None
        self._last_groups: list[list[bytes]] = []  # microsecond fields of lines in last_sec
        self.per_sec_count: dict[int, int] = {}
        self.per_sec_lat_us: dict[int, int] = {}

    @property
    def committed(self) -> int:
        return self.hist.total

    @property
    def last_end_us(self) -> int | None:
        if self.last_sec is None:
            return None
        return self.last_sec * 1_000_000 + max(int(u) for group in self._last_groups for u in group)

    def consume(self, fh: BinaryIO) -> None:
        group_sec: bytes | None = None
        toks: list[bytes] = []
        usecs: list[bytes] = []
        cap = self.GROUP_CAP
        for line in fh:
            parts = line.split()
            if len(parts) < 6:
                if parts:
                    self.malformed += 1
                continue
            if parts[4] != group_sec or len(toks) >= cap:
                if toks:
                    self._flush(group_sec, toks, usecs)  # type: ignore[arg-type]
                group_sec, toks, usecs = parts[4], [], []
            toks.append(parts[2])
            usecs.append(parts[5])
        if toks:
            self._flush(group_sec, toks, usecs)  # type: ignore[arg-type]

    def _flush(self, sec_b: bytes, toks: list[bytes], usecs: list[bytes]) -> None:
        """Fold lines that completed in the same second ``sec_b`` into the totals."""
        if not sec_b.isdigit():
            self.malformed += len(toks)
            return
        sec = int(sec_b)
        if self.cutoff_sec is not None and sec < self.cutoff_sec:
            return
        if not b"".join(usecs).isdigit():  # rare: drop the lines with a bad microsecond field
            good = [(t, u) for t, u in zip(toks, usecs) if u.isdigit()]
            self.malformed += len(toks) - len(good)
            if not good:
                return
            toks, usecs = [t for t, _ in good], [u for _, u in good]

        hist = self.hist
        committed = lat_sum = max_lat = bad = 0
        for tok, n in Counter(toks).items():
            if tok.isdigit():
                lat = int(tok)
                hist.add(lat, n)
                committed += n
                lat_sum += lat * n
                self.sum_sq_us += lat * lat * n
                if lat > max_lat:
                    max_lat = lat
            elif tok == b"skipped":
                self.skipped += n
            elif tok.isalpha():  # "failed", or the failure kind with --failures-detailed
                self.failed += n
            else:
                bad += n
        if bad:  # rare: keep malformed lines out of the start/end times too
            self.malformed += bad
            good = [(t, u) for t, u in zip(toks, usecs) if t.isdigit() or t.isalpha()]
            if not good:
                return
            toks, usecs = [t for t, _ in good], [u for _, u in good]
        self.sum_us += lat_sum
        if committed:
            self.per_sec_count[sec] = self.per_sec_count.get(sec, 0) + committed
            self.per_sec_lat_us[sec] = self.per_sec_lat_us.get(sec, 0) + lat_sum

        base = sec * 1_000_000
        # Every start in this group is >= base - max_lat; only look line by
        # line when that bound could beat the earliest start so far.
        if self.first_start_us is None or base - max_lat < self.first_start_us:
            for tok, usec in zip(toks, usecs):
                start = base + int(usec) - (int(tok) if tok.isdigit() else 0)
                if self.first_start_us is None or start < self.first_start_us:
                    self.first_start_us = start
        # Parsing every microsecond field just to find the last one costs ~20 %
        # of the run time: keep the latest second's groups, parse them at the end.
        if self.last_sec is None or sec > self.last_sec:
            self.last_sec, self._last_groups = sec, [usecs]
        elif sec == self.last_sec:
            self._last_groups.append(usecs)


def summarize_transaction_logs(
    paths: Iterable[Path], *, skip_before_s: float | Literal["auto"] = 0
) -> TxLogSummary:
    """Stream pgbench ``-l`` logs (one per thread; plain or gzip) into a summary.

    Line format (PG 15/18, non-aggregated)::

        client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]

    ``time`` is the latency in us, or ``skipped``/``failed`` (or the failure
    kind with --failures-detailed).  ``time_epoch``/``time_us`` is the
    completion time.  Files are read line by line; memory is bounded by the
    latency histogram (< 4,000 buckets) plus one entry per second of run
    time and one group of at most 16,384 lines, independent of the number of
    lines.

    Percentiles (nearest rank) come from ``LatencyHistogram``: within 1 %
    (precisely < 1/128 relative) of the exact value; mean, stddev
    (population) and max are exact.

    Series: ``pgbench.tps`` counts committed transactions by the absolute
    wall-clock second of their completion; point times are that second minus
    the whole second of the earliest start, and seconds without completions
    appear as 0 tps (a stall is a result).  ``pgbench.latency_avg`` has points
    only for seconds with completions.  Lines that do not parse are counted in
    ``malformed_lines`` (e.g. a last line cut short by a kill), not fatal.

    Warm-up trim: ``skip_before_s`` > 0 leaves out of the counts and every
    latency statistic the transactions *completing* before the first whole
    series second at least ``skip_before_s`` after the earliest start (the
    series' whole-second granularity; the origin is the whole second of the
    earliest start), so between ``skip_before_s`` and one second more of the
    run is left out.  ``"auto"`` picks the number of series seconds
    number with ``warmup.steady_state_start`` (MSER) on the tps series without
    its partial last second.  The series still cover the whole run, so a
    chart shows the warm-up; ``trimmed_s`` says how many seconds were left
    out.  The origin is only known once every line has been read, so a trim
    reads the logs twice (``paths`` is materialised); without one there is a
    single pass, as fast as before.
    """
    auto = skip_before_s == "auto"
    if not auto:
        if not isinstance(skip_before_s, (int, float)) or not skip_before_s >= 0:  # also NaN
            raise ValueError(
                f"skip_before_s must be a number of seconds >= 0 or 'auto', not {skip_before_s!r}"
            )
        if skip_before_s == 0:
            return _summarize(paths, cutoff_sec=None)
    paths = [Path(p) for p in paths]
    full = _summarize(paths, cutoff_sec=None)
    if full.first_start_epoch is None:
        return full  # no transactions: nothing to leave out
    origin = math.floor(full.first_start_epoch)
    if isinstance(skip_before_s, str):  # "auto": any other text was refused above
        # pgbench's last second is partial: MSER would take its dip for a trend.
        skip = steady_state_start([v for _, v in full.tps.points][:-1])
    else:
        # At least skip_before_s of the run: the run began part-way into series
        # second 0, so a cut at series second ceil(skip_before_s) could leave
        # out almost nothing of a 1 s warm-up.
        skip = math.ceil(full.first_start_epoch - origin + skip_before_s)
    if skip == 0:
        return full
    kept = _summarize(paths, cutoff_sec=origin + skip)
    # The kept pass's series, times and malformed count would cover only part
    # of the run: take those from the full pass.
    return dataclasses.replace(
        full,
        committed=kept.committed,
        failed=kept.failed,
        skipped=kept.skipped,
        latency_mean_ms=kept.latency_mean_ms,
        latency_stddev_ms=kept.latency_stddev_ms,
        latency_p50_ms=kept.latency_p50_ms,
        latency_p95_ms=kept.latency_p95_ms,
        latency_p99_ms=kept.latency_p99_ms,
        latency_max_ms=kept.latency_max_ms,
        trimmed_s=float(skip),
    )


def _summarize(paths: Iterable[Path], cutoff_sec: int | None) -> TxLogSummary:
    acc = _Accumulator(cutoff_sec)
    files = 0
    for path in paths:
        files += 1
        with _open_log(Path(path)) as fh:
            acc.consume(fh)
    return _finish(acc, files)


_MAX_SPAN_US = 366 * 86_400 * 1_000_000


def _finish(acc: _Accumulator, files: int) -> TxLogSummary:
    tps = Series(name="pgbench.tps", unit="tx/s")
    lat_avg = Series(name="pgbench.latency_avg", unit="ms")
    n = acc.committed
    mean = stddev = None
    if n:
        mean = acc.sum_us / n / 1000
        var_num = n * acc.sum_sq_us - acc.sum_us * acc.sum_us  # = n^2 * variance, exact
        stddev = math.sqrt(var_num) / n / 1000
    first = acc.first_start_us
    last = acc.last_end_us
    if first is not None and last is not None and last - first > _MAX_SPAN_US:
        # One bogus timestamp would otherwise make the series span decades.
        raise ValueError(
            f"transaction log timestamps span {(last - first) / 86_400e6:.0f} days: not one pgbench run"
        )
    if acc.per_sec_count and first is not None and last is not None:
        origin = first // 1_000_000
        for sec in range(origin, last // 1_000_000 + 1):
            count = acc.per_sec_count.get(sec, 0)
            tps.points.append((float(sec - origin), float(count)))
            if count:
                lat_avg.points.append((float(sec - origin), acc.per_sec_lat_us[sec] / count / 1000))

    def pct_ms(p: float) -> float | None:
        v = acc.hist.percentile(p)
        return None if v is None else v / 1000

    return TxLogSummary(
        committed=n,
        failed=acc.failed,
        skipped=acc.skipped,
        latency_mean_ms=mean,
        latency_stddev_ms=stddev,
        latency_p50_ms=pct_ms(50),
        latency_p95_ms=pct_ms(95),
        latency_p99_ms=pct_ms(99),
        latency_max_ms=None if acc.hist.max is None else acc.hist.max / 1000,
        first_start_epoch=None if first is None else first / 1_000_000,
        last_end_epoch=None if last is None else last / 1_000_000,
        tps=tps,
        latency_avg=lat_avg,
        files=files,
        malformed_lines=acc.malformed,
    )
