"""A recommendation to apply: the target to use, how to build it, and the settings the
measurements support, each with the figures and CIs it rests on.

A pure function of a stored campaign. It never recommends what is not crash-safe: a
faster unsafe target (nobarrier, fsync=off, synchronous_commit=off, full_page_writes=off)
is shown with what it would buy and its warning, and unsafe mount options are left out
of the fstab line.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pgfsbench.analysis.advice import aio, pg_settings
from pgfsbench.analysis.advice.capabilities import capabilities
from pgfsbench.analysis.advice.recommendation import (
    QUEUE,
    SYSCTL,
    Advice,
    Setting,
    Unsafe,
    metric_what,
)
from pgfsbench.analysis.caveats.durability import (
    MAY_LOSE_COMMITS,
    SAFE,
    UNSAFE,
    Durability,
    durabilities,
    stated,
)
from pgfsbench.analysis.findings import BETTER, EQUIVALENT, WORSE
from pgfsbench.analysis.headline import metric_label
from pgfsbench.analysis.table import Row, Table, comparison_table
from pgfsbench.analysis.verdicts.answer import figure, relation_of
from pgfsbench.analysis.verdicts.tiers import rank
from pgfsbench.errors import UserError
from pgfsbench.filesystems.registry import find as find_recipe
from pgfsbench.store.read import Campaign, StoredTarget

UNSAFE_MOUNT_OPTIONS = ("nobarrier", "barrier=0")
DEVICE, LOG_DEVICE, MOUNT_POINT = "DEVICE", "LOGDEVICE", "/var/lib/postgresql"


def advise(campaign: Campaign, target: str | None = None) -> Advice:
    """The advice for ``target`` (a target name), or for the one the results favour."""
    table = comparison_table(campaign)
    durability = durabilities(campaign)
    safe = [t for t in table.targets if _level(durability.get(t)) == SAFE]
    picked, chosen_by = _choose(table, durability, safe)
    best_safe = picked
    if target is not None:
        if target not in table.targets:
            raise UserError(
                f"no target '{target}' with results in {campaign.results_dir} "
                f"(targets: {', '.join(table.targets) or 'none'})"
            )
        picked, chosen_by = target, "named with --target"
    source = f"{campaign.id} ({campaign.plan_name})"
    offered = capabilities(campaign)
    if picked is None:
        return Advice(
            None,
            chosen_by,
            source,
            unsafe=_unsafe(table, durability, None),
            capabilities=offered,
        )
    stored = next(t for t in campaign.targets if t.name == picked)
    d = durability.get(picked)
    is_safe = _level(d) == SAFE
    advice = Advice(picked, chosen_by, source, capabilities=offered)
    if not is_safe:
        advice.warning = (
            stated(picked, d) if d is not None else f"{picked}: it was never mounted"
        ) + "; this is not a recommendation to run it"
    advice.mkfs, advice.fstab, advice.build_notes = _build(stored)
    # synchronous_commit=off still flushes, later: only a class below that voids every method.
    unsafe = (
        ("; ".join(d.reasons) if d else "it was never mounted")
        if _level(d) in (UNSAFE, "unknown")
        else ""
    )
    ran_with = _os_settings(stored)
    # effective_io_concurrency: a verdict between targets that vary it, else the io-depth
    # knee, else PostgreSQL 18's default (pg18_io); maintenance_io_concurrency: the knee.
    io_depth = pg_settings.io_concurrency(table, picked)
    settings = [
        *ran_with,
        pg_settings.wal_sync_method(table, picked, unsafe),
        *(s for s in io_depth if s.name != "effective_io_concurrency"),
        pg_settings.random_page_cost(table, picked),
        *aio.pg18_io(table, campaign.targets, picked, io_depth),
        *pg_settings.stall_settings(table, picked, _sysctls_during(stored)),
    ]
    advice.settings = [s for s in settings if s.value is not None]
    advice.omitted = [s for s in settings if s.value is None]
    advice.unsafe = _unsafe(table, durability, picked if is_safe else best_safe)
    return advice


def _level(d: Durability | None) -> str:
    return d.level if d else "unknown"


def _tested_rows(table: Table) -> list[Row]:
    """The headline rows a verdict decides (a direction, not described)."""
    described = table.design.descriptive if table.design is not None else frozenset()
    return [
        r
        for r in table.rows
        if r.headline
        and r.higher_is_better is not None
        and (r.workload, r.label) not in described
        and any(k[:2] == (r.workload, r.label) for k in table.pairs)
    ]


def _choose(table: Table, durability: dict, safe: list[str]) -> tuple[str | None, str]:
    """The target to run, and why, in words that lead with whether its lead is
    established. The crash-safe targets are ranked among themselves, from the same pair
    decisions every output shows (an unsafe target, however fast, takes no place from
    them: it gets its own line); where none is crash-safe but some may only lose recent
    commits (synchronous_commit=off), among those, with that window stated.

    A target behind another on some measurement and ahead of it on none is out. Of those
    left, one alone is the pick; several mean a trade-off (decided both ways, said with
    both figures) or a tie (not told apart): the plan's baseline is kept where it is one
    of them (nothing measured says a change is better), else the one in the top tier of
    the most measurements; the rule that picked is always said."""
    pool, window, kind = safe, "", "crash-safe"
    if not pool:
        pool = [t for t in table.targets if _level(durability.get(t)) == MAY_LOSE_COMMITS]
        if not pool:
            return None, "no crash-safe target has results"
        window = (
            " (every candidate may lose its most recent commits on a crash: "
            "synchronous_commit=off; the database stays consistent)"
        )
        kind = "candidate"
    rows = _tested_rows(table)
    present = {r.metric + r.label: [t for t in pool if r.cells[t].value is not None] for r in rows}
    pool = [t for t in pool if any(t in p for p in present.values())] or pool

    def beats(a: str, b: str) -> list[Row]:
        return [r for r in rows if (f := table.pair(r, a, b)) is not None and f.outcome == WORSE]

    candidates = [
        t for t in pool if not any(beats(u, t) and not beats(t, u) for u in pool if u != t)
    ]
    behind = _behind(table, rows, pool, candidates)
    if len(candidates) == 1:
        picked = candidates[0]
        won = [r for r in rows if any(r in beats(picked, o) for o in pool if o != picked)]
        if not won:
            return picked, f"the only {kind} target with results{window}"
        on = " and ".join(dict.fromkeys(metric_label(r.metric, r.workload) for r in won))
        why = f"decided ahead of the other {kind} targets on {on}"
        return picked, why + _listed(behind(picked)) + window
    tops = {t: sum(t in _pool_top(table, r, pool) for r in rows) for t in candidates}
    if table.baseline in candidates:
        picked = table.baseline
        rule = "kept as the plan's baseline: nothing measured says another is better overall"
    else:
        best = max(tops.values())
        picked = next(t for t in candidates if tops[t] == best)
        rule = (
            f"in the top tier of the most measurements ({best} of {len(rows)})"
            if list(tops.values()).count(best) == 1
            else "first in the plan of those: nothing measured puts one ahead"
        )
    others = [t for t in candidates if t != picked]
    trades = {o: _tradeoff(table, rows, picked, o) for o in others}
    parts = [f"a trade-off with {o}: {t}" for o, t in trades.items() if t]
    parts += [f"tied with {_tie_text(table, rows, picked, o)}" for o, t in trades.items() if not t]
    if not any(beats(a, b) for a in pool for b in pool if a != b):
        lead = f"not established: no measurement told the {kind} targets apart"
        return picked, f"{lead} ({'; '.join(parts)}); {rule}{window}"
    return picked, f"{'; '.join(parts)}; {rule}" + _listed(behind(picked)) + window


def _pool_top(table: Table, row: Row, pool: list[str]) -> list[str]:
    """The top tier of ``row`` among the pool alone."""
    values = {t: v for t in pool if (v := row.cells[t].value) is not None}
    order = sorted(values, key=lambda t: values[t], reverse=bool(row.higher_is_better))
    if not order:
        return []
    return rank(order, relation_of(table, row)).tiers[0]


def _behind(table: Table, rows: list[Row], pool: list[str], candidates: list[str]):
    """What each crash-safe target the pick beat costs against it, decided."""

    def behind(picked: str) -> list[str]:
        out = []
        for t in pool:
            if t == picked or t in candidates:
                continue
            for r in rows:
                f = table.pair(r, picked, t)
                if f is not None and f.outcome == WORSE:
                    out.append(f"{t} {f.change(metric_label(r.metric, r.workload))}")
        return out

    return behind


def _listed(items: list[str]) -> str:
    return f"; behind it: {'; '.join(items)}" if items else ""


def _tradeoff(table: Table, rows: list[Row], a: str, b: str) -> str:
    """'ext4: fsync p99 latency −52% [−60%, −41%] against xfs; xfs: IOPS +45% [...] against
    ext4' where each was decided ahead of the other on some measurement; '' otherwise."""
    ahead_a = [
        (r, f) for r in rows if (f := table.pair(r, b, a)) is not None and f.outcome == BETTER
    ]
    ahead_b = [
        (r, f) for r in rows if (f := table.pair(r, a, b)) is not None and f.outcome == BETTER
    ]
    if not ahead_a or not ahead_b:
        return ""

    def side(who: str, wins: list, other: str) -> str:
        return f"{who}: " + ", ".join(
            f"{f.change(metric_label(r.metric, r.workload))} against {other}" for r, f in wins
        )

    return f"{side(a, ahead_a, b)}; {side(b, ahead_b, a)}"


def _tie_text(table: Table, rows: list[Row], a: str, b: str) -> str:
    """'xfs-twin: equivalent within ±10% on pg_test_fsync fdatasync ops/s (+1.4%..+1.5%)',
    'xfs: not told apart on TPC-B tps (−18%..+75%)': b against a on each measurement,
    none decided apart."""
    said: dict[str, list[str]] = {}
    for r in rows:
        f = table.pair(r, a, b)
        if f is not None and f.ratio is not None:
            words = f.outcome_words() if f.outcome == EQUIVALENT else "not told apart"
            said.setdefault(words, []).append(f"{metric_label(r.metric, r.workload)} ({f.span()})")
    text = "; ".join(f"{words} on {', '.join(on)}" for words, on in said.items())
    return f"{b}: {text}" if text else b


def _build(t: StoredTarget) -> tuple[str | None, str | None, list[str]]:
    """The mkfs command and the fstab line, from what really ran and what the kernel
    applied; devices become placeholders."""
    prov = t.provenance or {}
    if t.kind == "dir":
        return (
            None,
            None,
            [
                f"{t.name} is a directory on an existing mount: pgfsbench did "
                "not make its filesystem"
            ],
        )
    if "effective_mount_options" not in prov:
        return None, None, [f"{t.name} was never mounted: no provenance to build from"]
    places = {
        p: name
        for p, name in ((prov.get("device"), DEVICE), (prov.get("log_device"), LOG_DEVICE))
        if p
    }
    # the other members of a filesystem over several devices (btrfs raid0 over three)
    for i, member in enumerate(prov.get("devices") or [], start=1):
        places.setdefault(member, f"{DEVICE}{i}")
    notes: list[str] = []
    mkfs = None
    recipe = find_recipe(t.fs)
    if recipe is not None and recipe.recreate is not None:  # ZFS: zpool + zfs create
        made, notes = recipe.recreate(
            [[str(a) for a in c.get("argv") or []] for c in prov.get("commands") or []],
            places,
            MOUNT_POINT,
        )
        return (
            "; ".join(made) or None,
            None,
            [*notes, f"{DEVICE}: your device(s); {MOUNT_POINT}: where the data directory goes"],
        )
    for c in prov.get("commands") or []:
        argv = [str(a) for a in c.get("argv") or []]
        if argv and Path(argv[0]).name.startswith("mkfs"):
            force = set(recipe.force_flags) if recipe else set()
            dropped = [a for a in argv[1:] if a in force]
            argv = [Path(argv[0]).name, *(_placed(a, places) for a in argv[1:] if a not in force)]
            mkfs = shlex.join(argv)
            if dropped:
                notes.append(f"{' '.join(dropped)} (overwrite without asking) left out of mkfs")
    options = list(prov.get("effective_mount_options") or [])
    unsafe = [o for o in options if o in UNSAFE_MOUNT_OPTIONS]
    kept = [_placed(o, places) for o in options if o not in unsafe]
    if unsafe:
        notes.append(f"{', '.join(unsafe)} left out of fstab: not crash-safe")
    fs_type = prov.get("mounted_fs_type") or t.fs
    passno = "2" if fs_type in ("ext2", "ext3", "ext4") else "0"
    fstab = f"{DEVICE}  {MOUNT_POINT}  {fs_type}  {','.join(kept) or 'defaults'}  0 {passno}"
    notes.append(
        f"{DEVICE}{', ' + LOG_DEVICE if LOG_DEVICE in places.values() else ''}: "
        f"your device(s); {MOUNT_POINT}: where the data directory goes; mount "
        "options as the kernel applied them"
    )
    return mkfs, fstab, notes


def _placed(arg: str, places: dict[str, str]) -> str:
    # Longest first: /dev/loop1 must not eat the start of /dev/loop10.
    for path, name in sorted(places.items(), key=lambda pn: -len(pn[0])):
        arg = arg.replace(path, name)
    return arg


def _os_settings(t: StoredTarget) -> list[Setting]:
    """The sysctls and queue settings the target ran with: part of what was measured."""
    record = (t.provenance or {}).get("os_settings") or {}
    out = []
    for scope, key in ((SYSCTL, "sysctls"), (QUEUE, "queue")):
        for name, v in (record.get(key) or {}).items():
            if isinstance(v, dict) and v.get("asked") is not None:
                during = v.get("during")
                out.append(
                    Setting(
                        scope,
                        name,
                        str(v["asked"] if during is None else during),
                        f"{t.name} ran with it (read back while it ran)",
                    )
                )
    return out


def _sysctls_during(t: StoredTarget) -> dict[str, object]:
    prov = t.provenance or {}
    during = {
        k: v.get("during")
        for k, v in ((prov.get("os_settings") or {}).get("sysctls") or {}).items()
        if isinstance(v, dict)
    }
    return {**(prov.get("sysctls") or {}), **during}


def _unsafe(table: Table, durability: dict, best: str | None) -> list[Unsafe]:
    """Each target that is not crash-safe, with what it buys over ``best`` on every
    tested measurement (its finding against ``best``: decided or not) and what it risks."""
    out = []
    for name in table.targets:
        d = durability.get(name)
        if d is None or d.level == SAFE:
            continue
        u = Unsafe(name, d.level, "; ".join(d.reasons))
        if best is not None and best != name:
            for row in _tested_rows(table):
                f = table.pair(row, best, name)
                if f is not None and f.ratio is not None:
                    what = metric_what(row.metric, row.label, row.workload)
                    u.gains.append(f"{what}: {figure(f)} against {best}")
        out.append(u)
    return out
