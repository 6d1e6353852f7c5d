"""PostgreSQL settings derived from measurements, each with the rule and the figures.

A setting whose evidence was not measured is returned with value None and the reason,
so the advice says what to run to get it rather than guessing.
"""

from __future__ import annotations

import math
import re

from pgfsbench.analysis.advice.recommendation import (
    POSTGRES,
    SYSCTL,
    Figure,
    Setting,
    figure,
    num,
    rows_of,
)
from pgfsbench.analysis.table import Table

# wal_sync_method values that are crash-safe on Linux when the filesystem honours flushes
# (fsync_writethrough exists only on macOS and Windows).
SAFE_SYNC_METHODS = ("open_datasync", "fdatasync", "fsync", "open_sync")
SYNC_METRIC = re.compile(r"^fsync\.([a-z_]+)_8k\.ops_per_s$")
DEPTH_METRIC = re.compile(r"^iodepth\.qd(\d+)\.iops$")
KNEE = 0.9  # share of the best IOPS that counts as having stopped scaling
MAX_IO_CONCURRENCY = 1000  # PostgreSQL's limit
PAGE_COST_RANGE = (1.1, 4.0)
CHECKPOINT_TIMEOUT_S = 900
DIRTY_BACKGROUND_BYTES = 102_400_000  # the XFS-vs-ext4 study's fix for ext4's tps = 0 phases


def wal_sync_method(table: Table, target: str, unsafe: str) -> Setting:
    """``unsafe``: why no sync method is crash-safe on the target (it does not honour
    flushes, or PostgreSQL does not ask for them), or "" when they are."""
    rows = [r for r in rows_of(table, "fsync") if SYNC_METRIC.match(r.metric)]
    measured = [
        (f, m[1])
        for r in rows
        if (f := figure(r, target)) is not None and (m := SYNC_METRIC.match(f.metric))
    ]
    name = "wal_sync_method"
    if not measured:
        return Setting(
            POSTGRES,
            name,
            None,
            f"no pg_test_fsync result on {target} (the "
            "seed-fsync plan measures it); keep Linux's default, fdatasync",
        )
    if unsafe:
        return Setting(
            POSTGRES,
            name,
            None,
            f"{target} is not crash-safe ({unsafe}): no sync method is safe on it",
            [f for f, _ in measured],
        )
    candidates = sorted(
        ((f, m) for f, m in measured if m in SAFE_SYNC_METHODS),
        key=lambda fm: fm[0].centre,
        reverse=True,
    )
    if not candidates:
        return Setting(
            POSTGRES,
            name,
            None,
            "pg_test_fsync measured none of " + ", ".join(SAFE_SYNC_METHODS),
            [f for f, _ in measured],
        )
    (best, method), others = candidates[0], candidates[1:]
    setting = Setting(
        POSTGRES,
        name,
        method,
        "the fastest crash-safe method pg_test_fsync measured (one 8 kB write, "
        "median ops/s; fsync_writethrough does not exist on Linux)",
        [best, *(f for f, _ in others)],
    )
    close = [m for f, m in others if _overlap(best, f)]
    if close:
        # Said first: a lead within the noise is no reason to change the default.
        basis = "CIs overlap" if best.ci else "one run: no CI"
        if "fdatasync" in close:
            setting.value = "fdatasync"
            setting.why = (
                f"lead not established: {method} is fastest by median, but "
                f"{', '.join(close)} are within its CI ({basis}); keep Linux's "
                "default, fdatasync"
            )
        else:
            setting.why = f"lead not established over {', '.join(close)} ({basis}): " + setting.why
    if setting.value is not None and setting.value.startswith("open_"):
        setting.note = "; ".join(
            filter(
                None,
                [
                    setting.note,
                    (
                        "pg_test_fsync opens the open_* methods with O_DIRECT; PostgreSQL 16+ does so "
                        "for WAL only with debug_io_direct = wal, so the server's figure may differ"
                    ),
                ],
            )
        )
    return setting


def _overlap(a: Figure, b: Figure) -> bool:
    if a.ci is None or b.ci is None:
        return True  # one run each: nothing says they differ
    return a.ci[0] <= b.ci[1] and b.ci[0] <= a.ci[1]


def io_concurrency(table: Table, target: str) -> list[Setting]:
    curve = sorted(
        (
            (int(m[1]), f)
            for r in rows_of(table, "io-depth")
            if (m := DEPTH_METRIC.match(r.metric)) and (f := figure(r, target))
        ),
        key=lambda df: df[0],
    )
    names = ("effective_io_concurrency", "maintenance_io_concurrency")
    if len(curve) < 2:
        why = (
            f"no io-depth run on {target}"
            if not curve
            else "the io-depth run measured one queue depth: no curve to find the knee on"
        )
        return [Setting(POSTGRES, n, None, why) for n in names]
    best_depth, best = max(curve, key=lambda df: df[1].centre)
    knee, at = next((d, f) for d, f in curve if f.centre >= KNEE * best.centre)
    value = str(min(knee, MAX_IO_CONCURRENCY))
    why = (
        f"the smallest queue depth whose 8 kB random-read IOPS reach {KNEE:.0%} of the "
        f"best measured ({num(best.centre)} IO/s at depth {best_depth}): depth {knee} "
        f"gives {num(at.centre)} IO/s"
    )
    note = (
        "IOPS were still growing at the deepest depth measured: the knee may be deeper; "
        "add larger depths"
        if knee == curve[-1][0]
        else ""
    )
    figures = [f for _, f in curve]
    return [Setting(POSTGRES, n, value, why, figures, note) for n in names]


def random_page_cost(table: Table, target: str) -> Setting:
    cells = {
        r.metric: f
        for r in rows_of(table, "io-depth", "readcost.")
        if (f := figure(r, target)) is not None
    }
    rand, seq = cells.get("readcost.rand_8k_us"), cells.get("readcost.seq_8k_us")
    name = "random_page_cost"
    if rand is None or seq is None or seq.centre <= 0:
        return Setting(
            POSTGRES,
            name,
            None,
            f"no io-depth run on {target} (random vs sequential 8 kB read cost)",
        )
    per_run = cells.get("readcost.rand_seq_ratio")
    ratio = per_run.centre if per_run else rand.centre / seq.centre
    low, high = PAGE_COST_RANGE
    value = min(max(ratio, low), high)
    why = (
        f"uncached (O_DIRECT) 8 kB random read time over sequential read time: "
        f"{ratio:.2f}, with seq_page_cost = 1"
    )
    note = ""
    if value != ratio:
        note = (
            f"clamped to {low}..{high}: below {low} the planner would take random reads "
            "for as cheap as sequential ones, which kernel readahead never lets them be; "
            f"above {high} (PostgreSQL's default, for spinning disks) the uncached figure "
            "overstates a database whose reads mostly hit a cache"
        )
    return Setting(
        POSTGRES,
        name,
        f"{value:.1f}",
        why,
        [f for f in (per_run, rand, seq) if f is not None],
        note,
    )


def stall_settings(table: Table, target: str, ran_with: dict[str, object]) -> list[Setting]:
    """Checkpoint and writeback settings, only when the target's tps stalled."""
    names = [
        (POSTGRES, "checkpoint_timeout"),
        (POSTGRES, "checkpoint_completion_target"),
        (POSTGRES, "max_wal_size"),
        (SYSCTL, "vm.dirty_background_bytes"),
    ]
    rows = [r for r in table.rows if r.metric == "stall.seconds"]
    stalls = [f for r in rows if (f := figure(r, target)) is not None]
    if not stalls:
        return [
            Setting(s, n, None, f"no pgbench run on {target}: stalls not measured")
            for s, n in names
        ]
    seen = [f for f in stalls if f.centre > 0]
    if not seen:
        return [
            Setting(
                s,
                n,
                None,
                f"no tps stall seen on {target} (stall.seconds = 0 in every pgbench measurement)",
                stalls,
            )
            for s, n in names
        ]
    why = (
        "tps stalled (seconds below half the median tps): spread checkpoint writes "
        "over a longer interval"
    )
    out = [
        Setting(POSTGRES, "checkpoint_timeout", f"{CHECKPOINT_TIMEOUT_S // 60}min", why, seen),
        Setting(POSTGRES, "checkpoint_completion_target", "0.9", why, seen),
        _max_wal_size(table, target, seen),
    ]
    before = ran_with.get("vm.dirty_background_bytes")
    if isinstance(before, int) and 0 < before <= DIRTY_BACKGROUND_BYTES:
        out.append(
            Setting(
                SYSCTL,
                "vm.dirty_background_bytes",
                None,
                f"{target} already ran with vm.dirty_background_bytes = {before} and still stalled",
                seen,
            )
        )
    else:
        out.append(
            Setting(
                SYSCTL,
                "vm.dirty_background_bytes",
                str(DIRTY_BACKGROUND_BYTES),
                "tps stalled: start background writeback at 100 MB of dirty pages "
                "so backends and the checkpointer's fsync do not find gigabytes "
                "to flush (the XFS-vs-ext4 study's fix for ext4's tps = 0 phases)",
                seen,
                "vm.dirty_bytes is left as it is: raising it (the XFS-vs-ext4 study: "
                "vm.dirty_ratio = 80) is a variant to measure, not derived here",
            )
        )
    return out


def _max_wal_size(table: Table, target: str, seen: list[Figure]) -> Setting:
    """Two checkpoint_timeouts of WAL at the measured rate, so checkpoints are timed,
    not forced by WAL volume."""
    rate = None
    for f in seen:
        found = {
            r.metric: g
            for r in table.rows
            if (r.workload, r.label) == (f.workload, f.label)
            and r.metric in ("pgbench.tps", "eff.wal_bytes_per_tx")
            and (g := figure(r, target)) is not None
        }
        if len(found) == 2:
            rate = (found["pgbench.tps"], found["eff.wal_bytes_per_tx"])
            break
    if rate is None:
        return Setting(
            POSTGRES,
            "max_wal_size",
            None,
            "no WAL rate measured with the stall (eff.wal_bytes_per_tx and pgbench.tps)",
            seen,
        )
    tps, per_tx = rate
    need = tps.centre * per_tx.centre * CHECKPOINT_TIMEOUT_S * 2
    gb = max(1, math.ceil(need / 2**30))
    return Setting(
        POSTGRES,
        "max_wal_size",
        f"{gb}GB",
        f"two checkpoint_timeouts of WAL at the measured rate: {num(tps.centre)} "
        f"tx/s × {num(per_tx.centre)} B/tx × {CHECKPOINT_TIMEOUT_S} s × 2 = "
        f"{need / 2**30:.1f} GB, rounded up to whole GB (at least 1GB)",
        [*seen, tps, per_tx],
    )
