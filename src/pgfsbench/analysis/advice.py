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

from pgfsbench.analysis import advice_pg, advice_pg18
from pgfsbench.analysis.advice_model import (
    QUEUE,
    SYSCTL,
    Advice,
    Setting,
    Unsafe,
    metric_what,
    ratio_text,
)
from pgfsbench.analysis.answer import decided_change
from pgfsbench.analysis.capabilities import capabilities
from pgfsbench.analysis.durability import MAY_LOSE_COMMITS, SAFE, UNSAFE, Durability, durabilities
from pgfsbench.analysis.labels import metric_label
from pgfsbench.analysis.sequential import EQUIVALENT
from pgfsbench.analysis.table import Table, comparison_table
from pgfsbench.analysis.verdicts import verdict_lines
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
            f"{picked} is {_level(d).upper()}"
            + (f": {d.reasons[0]}" if d and d.reasons else "")
            + "; this is not a recommendation to run it"
        )
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
    io_depth = advice_pg.io_concurrency(table, picked)
    settings = [
        *ran_with,
        advice_pg.wal_sync_method(table, picked, unsafe),
        *(s for s in io_depth if s.name != "effective_io_concurrency"),
        advice_pg.random_page_cost(table, picked),
        *advice_pg18.pg18_io(table, campaign.targets, picked, io_depth),
        *advice_pg.stall_settings(table, picked, _sysctls_during(stored)),
    ]
    advice.settings = [s for s in settings if s.value is not None]
    advice.omitted = [s for s in settings if s.value is None]
    best_safe = picked if is_safe else _choose(table, durability, safe)[0]
    advice.unsafe = _unsafe(table, durability, best_safe)
    return advice


def _level(d: Durability | None) -> str:
    return d.level if d else "unknown"


def _choose(table: Table, durability: dict, safe: list[str]) -> tuple[str | None, str]:
    """The target the tiers favour, and why, in words that lead with whether its lead is
    established: the crash-safe target in the top tier of the most decided measurements
    (tied ones named, with what the rest cost); where no target is crash-safe but some
    may only lose recent commits (synchronous_commit=off), among those, with that window
    stated; where nothing was told apart, the baseline, said to rest on no evidence."""
    # Each line with its tiers: (line, tiers).
    lines = [(v, tiers) for v in verdict_lines(table, durability) if (tiers := v.tiers) is not None]
    pool, window = safe, ""
    if not pool:
        pool = [t for t in table.targets if _level(durability.get(t)) == MAY_LOSE_COMMITS]
        if not pool:
            return None, "no crash-safe target has results"
        window = (
            " (every target may lose its last commits on a crash: "
            "synchronous_commit=off; the database stays consistent)"
        )
    decided = [(v, tiers) for v, tiers in lines if tiers.decided_any]
    tops = {t: [(v, tiers) for v, tiers in decided if t in tiers.tiers[0]] for t in pool}
    best = max((len(v) for v in tops.values()), default=0)
    if not decided or best == 0:
        fallback = table.baseline if table.baseline in pool else pool[0]
        what = (
            "no measurement told the targets apart"
            if not decided
            else "no such target is in the top tier of any measurement"
        )
        return fallback, f"not established: {what}; {fallback} is shown as the baseline{window}"
    leaders = [t for t in table.targets if t in pool and len(tops[t]) == best]
    picked = leaders[0]  # ties: plan order, said so (a reader asks why this one)
    on = " and ".join(metric_label(v.metric) for v, _ in tops[picked])
    why = (
        f"in the top tier on {on}"
        if best == len(decided)
        else f"in the top tier on {on} ({best} of {len(decided)} decided measurements)"
    )
    if len(leaders) > 1:
        tie = _tie(table, [v for v, _ in tops[picked]], leaders)
        why = f"tied with {', '.join(leaders[1:])} ({tie}; first in the plan): " + why
    # What the crash-safe rest would cost (the unsafe ones have their own section).
    losers = [
        f"{t} {_cost(table, v, picked, t)}"
        for v, tiers in tops[picked]
        for tier in tiers.tiers[1:]
        for t in tier
        if t in pool
    ]
    return picked, why + (f"; behind it: {'; '.join(losers)}" if losers else "") + window


def _tie(table: Table, lines: list, leaders: list[str]) -> str:
    """'equivalent within ±10%' where every pair of the tied leaders was shown
    equivalent on every measurement they lead; else 'not told apart'."""
    rows = [
        r
        for r in table.rows
        if r.headline
        and any((r.workload, r.label, r.metric) == (v.workload, v.label, v.metric) for v in lines)
    ]
    shown = all(
        (j := table.pair(r, a, b)) is not None and j.outcome == EQUIVALENT
        for r in rows
        for i, a in enumerate(leaders)
        for b in leaders[i + 1 :]
    )
    return f"equivalent within ±{table.equivalence * 100:g}%" if shown else "not told apart"


def _cost(table: Table, line, picked: str, target: str) -> str:
    """'−47% TPC-B tps [−56%, −36%]': what a lower tier's target costs against ``picked``."""
    row = next(
        r
        for r in table.rows
        if r.headline
        and (r.workload, r.label, r.metric) == (line.workload, line.label, line.metric)
    )
    j = table.pair(row, picked, target)
    if j is None:
        return f"below on {metric_label(line.metric)}"
    return decided_change(j, metric_label(line.metric))


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
    """Each target that is not crash-safe, with what it would buy over ``best``."""
    out = []
    for name in table.targets:
        d = durability.get(name)
        if d is None or d.level == SAFE:
            continue
        u = Unsafe(name, d.level, "; ".join(d.reasons))
        if best is not None:
            for row in table.rows:
                if not row.headline or row.higher_is_better is None:
                    continue
                ratio = ratio_text(row.cells[best], row.cells[name])
                if ratio:
                    word = "higher" if row.higher_is_better else "lower"
                    what = metric_what(row.metric, row.label)
                    u.gains.append(f"{what}: {ratio} of {best}'s ({word} is better)")
        out.append(u)
    return out
