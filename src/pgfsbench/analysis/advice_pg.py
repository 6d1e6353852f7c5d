"""PostgreSQL settings derived from measurements, each with the rule and the figures.

A setting whose evidence was not measured is returned with value None and the reason,
so the advice says what to run to get it rather than guessing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

from pgfsbench.analysis.advice_model import POSTGRES, SYSCTL, Figure, Setting, figure, num, rows_of
from pgfsbench.analysis.labels import metric_label
from pgfsbench.analysis.sequential import EQUIVALENT, HIGHER
from pgfsbench.analysis.table import Row, Table
from pgfsbench.store.read import StoredTarget

# wal_sync_method values that are crash-safe on Linux when the filesystem honours flushes
# (fsync_writethrough exists only on macOS and Windows).
SAFE_SYNC_METHODS = ("open_datasync", "fdatasync", "fsync", "open_sync")
SYNC_METRIC = re.compile(r"^fsync\.([a-z_]+)_8k\.ops_per_s$")
DEPTH_METRIC = re.compile(r"^iodepth\.qd(\d+)\.iops$")
KNEE = 0.9  # share of the best IOPS that counts as having stopped scaling
MAX_IO_CONCURRENCY = 1000  # PostgreSQL's limit
PAGE_COST_RANGE = (1.1, 4.0)
# PostgreSQL 18's asynchronous I/O settings and their defaults: advise keeps these unless
# a verdict between targets differing only in one of them says otherwise (pg18_io).
PG18_IO_DEFAULTS = {
    "io_method": "worker",
    "io_workers": "3",
    "effective_io_concurrency": "16",
    "io_combine_limit": "128kB",
}
PG18_IO_SETTINGS = tuple(PG18_IO_DEFAULTS)
CHECKPOINT_TIMEOUT_S = 900
DIRTY_BACKGROUND_BYTES = 102_400_000  # seed 000's fix for ext4's tps = 0 phases


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
        key=lambda fm: fm[0].median,
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
    best_depth, best = max(curve, key=lambda df: df[1].median)
    knee, at = next((d, f) for d, f in curve if f.median >= KNEE * best.median)
    value = str(min(knee, MAX_IO_CONCURRENCY))
    why = (
        f"the smallest queue depth whose 8 kB random-read IOPS reach {KNEE:.0%} of the "
        f"best measured ({num(best.median)} IO/s at depth {best_depth}): depth {knee} "
        f"gives {num(at.median)} IO/s"
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
    if rand is None or seq is None or seq.median <= 0:
        return Setting(
            POSTGRES,
            name,
            None,
            f"no io-depth run on {target} (random vs sequential 8 kB read cost)",
        )
    per_run = cells.get("readcost.rand_seq_ratio")
    ratio = per_run.median if per_run else rand.median / seq.median
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


def pg18_io(
    table: Table, targets: list[StoredTarget], target: str, measured: Sequence[Setting] = ()
) -> list[Setting]:
    """io_method, io_workers, effective_io_concurrency, io_combine_limit: PostgreSQL 18's
    default for each, unless a verdict between targets that differ in nothing but that one
    setting shows another value better.

    For each setting, the group is the targets like ``target`` (the same filesystem,
    options and other settings; PostgreSQL 18's I/O settings aside) whose other I/O
    settings are at their defaults (unset is the default): one setting varied at a time
    around the defaults, in a one-at-a-time plan or a full matrix alike, whichever of
    them is ``target``. The reference is the member that runs every default. Another
    value is recommended when, on the headline
    measurements every member has, its target was decided better than the reference on
    one at least and worse on none (the pair decisions of the table: significance beyond
    the noise margin); of several, the one better on most. Otherwise the default stays,
    saying why (nothing compared, only inconclusive or equivalent pairs, or a trade-off).
    ``measured``: what other evidence gave for a setting when no target varies it (the
    io-depth knee for effective_io_concurrency), used instead of the bare default.
    """
    fallback = {s.name: s for s in measured}
    by_name = {t.name: t for t in targets}
    mine = by_name.get(target)
    major = _major((mine.provenance or {}).get("postgres_version")) if mine else 18
    out = []
    for name in PG18_IO_SETTINGS:
        default = PG18_IO_DEFAULTS[name]
        if major < 18:
            out.append(
                fallback.get(name)
                or Setting(
                    POSTGRES,
                    name,
                    None,
                    f"{target} ran PostgreSQL {major}: these defaults are PostgreSQL 18's "
                    "(before 18 there is no asynchronous I/O)",
                )
            )
            continue
        group = [] if mine is None else _io_group(table, targets, mine, name)
        if len(group) < 2:
            out.append(
                fallback[name]
                if name in fallback and fallback[name].value is not None
                else Setting(
                    POSTGRES,
                    name,
                    default,
                    f"PostgreSQL 18's default, kept: no target like {target} varies {name} "
                    "alone, so nothing measured compares another value",
                )
            )
            continue
        out.append(_compare_io(table, group, name, default))
    return out


def _io_group(
    table: Table, targets: list[StoredTarget], mine: StoredTarget, name: str
) -> list[StoredTarget]:
    """The targets like ``mine`` but for PostgreSQL 18's I/O settings, with every one of
    those but ``name`` at its default, in plan order."""
    like = _without(mine.spec, *PG18_IO_SETTINGS)
    return [
        t
        for t in targets
        if t.name in table.targets
        and _without(t.spec, *PG18_IO_SETTINGS) == like
        and all(_is_default(t, other) for other in PG18_IO_SETTINGS if other != name)
    ]


def _compare_io(table: Table, group: list[StoredTarget], name: str, default: str) -> Setting:
    values = ", ".join(f"{t.name}: {_value(t, name)}" for t in group)
    ref = next((t for t in group if _is_default(t, name)), None)
    if ref is None:
        return Setting(
            POSTGRES,
            name,
            default,
            f"PostgreSQL 18's default, kept: none of the targets varying {name} ({values}) "
            "runs every I/O setting at its default, so nothing measured compares against it",
        )
    heads = [
        r
        for r in table.rows
        if r.headline
        and r.higher_is_better is not None
        and all(r.cells[t.name].value is not None for t in group)
    ]
    if not heads:
        return Setting(
            POSTGRES,
            name,
            default,
            f"PostgreSQL 18's default, kept: the targets differing only in {name} "
            f"({values}) share no measured headline metric",
        )
    better: dict[str, list[str]] = {}
    worse: dict[str, list[str]] = {}
    same, open_ = [], []
    for t in (t for t in group if t is not ref):
        for r in heads:
            j = table.pair(r, ref.name, t.name)
            what = f"{metric_words(r)} ({t.name})"
            if j is None or not j.decided:
                open_.append(what)
            elif j.outcome == EQUIVALENT:
                same.append(what)
            elif (j.outcome == HIGHER) == r.higher_is_better:
                better.setdefault(t.name, []).append(metric_words(r))
            else:
                worse.setdefault(t.name, []).append(metric_words(r))
    figures = [f for r in heads for t in group if (f := figure(r, t.name))]
    winners = [t for t in group if t.name in better and t.name not in worse]
    if winners:
        best = max(winners, key=lambda t: len(better[t.name]))  # ties: plan order
        return Setting(
            POSTGRES,
            name,
            _value(best, name),
            f"{best.name} ({name} = {_value(best, name)}) was decided better than "
            f"{ref.name} (PostgreSQL 18's default, {default}) on "
            f"{', '.join(better[best.name])} and worse on none of the {len(heads)} "
            f"headline measurement{'s' if len(heads) != 1 else ''} they share",
            figures,
            _clamp_note(best) if name == "io_combine_limit" else "",
        )
    said = []
    if better:
        said.append(
            "better on some and worse on others: "
            + "; ".join(
                f"{t}: better on {', '.join(better[t])}, worse on {', '.join(worse[t])}"
                for t in better
            )
        )
    if only_worse := {t: v for t, v in worse.items() if t not in better}:
        said.append("worse on " + "; ".join(f"{', '.join(v)} ({t})" for t, v in only_worse.items()))
    if same:
        said.append("equivalent on " + ", ".join(same))
    if open_:
        said.append("not told apart on " + ", ".join(open_))
    return Setting(
        POSTGRES,
        name,
        default,
        f"PostgreSQL 18's default, kept: no other value was decided better than "
        f"{ref.name}'s ({values}): " + "; ".join(said),
        figures,
    )


def _clamp_note(t: StoredTarget) -> str:
    ran = ((t.spec.get("postgres") or {}).get("settings") or {}).get("io_max_combine_limit")
    return (
        "the server clamps io_combine_limit to io_max_combine_limit (set at server start, "
        f"default 128kB): {t.name} ran with io_max_combine_limit = {ran or '128kB'}; "
        "above 128kB set it too"
    )


def metric_words(r: Row) -> str:
    """'cold sequential scan time [seq]': the metric's name for a reader, and the
    measurement's label (sweep value, tag)."""
    return metric_label(r.metric) + (f" [{r.label}]" if r.label else "")


def _major(version: object) -> int:
    """'18.6' → 18; unknown counts as 18, the version pgfsbench brings."""
    head = str(version or "18").split(".")[0]
    return int(head) if head.isdigit() else 18


def _value(t: StoredTarget, name: str) -> str:
    asked = (t.spec.get("postgres") or {}).get("settings") or {}
    return str(asked.get(name, PG18_IO_DEFAULTS[name]))


def _is_default(t: StoredTarget, name: str) -> bool:
    """Unset, or written with PostgreSQL 18's default (``io_method = "worker"``)."""
    return _value(t, name).lower() == PG18_IO_DEFAULTS[name].lower()


def _without(spec: dict, *names: str) -> str:
    """The target's spec but its name and the settings ``names``."""
    rest = {k: v for k, v in spec.items() if k != "name"}
    pg = dict(rest.get("postgres") or {})
    pg["settings"] = {k: v for k, v in (pg.get("settings") or {}).items() if k not in names}
    rest["postgres"] = pg
    return json.dumps(rest, sort_keys=True)


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
    seen = [f for f in stalls if f.median > 0]
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
                "to flush (seed 000's fix for ext4's tps = 0 phases)",
                seen,
                "vm.dirty_bytes is left as it is: raising it (seed 000: "
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
    need = tps.median * per_tx.median * CHECKPOINT_TIMEOUT_S * 2
    gb = max(1, math.ceil(need / 2**30))
    return Setting(
        POSTGRES,
        "max_wal_size",
        f"{gb}GB",
        f"two checkpoint_timeouts of WAL at the measured rate: {num(tps.median)} "
        f"tx/s × {num(per_tx.median)} B/tx × {CHECKPOINT_TIMEOUT_S} s × 2 = "
        f"{need / 2**30:.1f} GB, rounded up to whole GB (at least 1GB)",
        [*seen, tps, per_tx],
    )
