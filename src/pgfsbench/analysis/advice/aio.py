"""PostgreSQL 18's asynchronous I/O settings (io_method, io_workers,
effective_io_concurrency, io_combine_limit): each kept at its default unless a verdict
between targets that differ in that setting alone says another value is better.

Settings that nothing in the campaign varied get one reason between them, the same
``why`` and figures, so an output states it once (advice_model.stated_together).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pgfsbench.analysis.advice.recommendation import POSTGRES, Figure, Setting, figure
from pgfsbench.analysis.findings import BETTER, EQUIVALENT
from pgfsbench.analysis.headline import metric_label
from pgfsbench.analysis.table import Row, Table
from pgfsbench.store.read import StoredTarget

# PostgreSQL 18's asynchronous I/O settings and their defaults: advise keeps these unless
# a verdict between targets differing only in one of them says otherwise (pg18_io).
PG18_IO_DEFAULTS = {
    "io_method": "worker",
    "io_workers": "3",
    "effective_io_concurrency": "16",
    "io_combine_limit": "128kB",
}
PG18_IO_SETTINGS = tuple(PG18_IO_DEFAULTS)


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

    The settings kept with nothing to choose between (no target like ``target`` varies
    them alone, or those that do all ran the default) come last, sharing one ``why`` and
    its figures: the outputs state them together (advice_model.stated_together).
    """
    fallback = {s.name: s for s in measured}
    by_name = {t.name: t for t in targets}
    mine = by_name.get(target)
    major = _major((mine.provenance or {}).get("postgres_version")) if mine else 18
    out, kept = [], []
    twins: list[StoredTarget] = []  # targets like ``target``, all at the kept defaults
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
        if len(group) < 2 and name in fallback and fallback[name].value is not None:
            out.append(fallback[name])
        elif len(group) < 2 or all(_is_default(t, name) for t in group):
            kept.append(name)
            twins = group if len(group) > len(twins) else twins
        else:
            out.append(_compare_io(table, group, name, default))
    ran = [t for t in targets if t.name in table.targets]
    every = [n for n in kept if all(_is_default(t, n) for t in ran)]
    alone = [n for n in kept if n not in every]
    for names, how in ((every, "every target ran"), (alone, f"no target like {target} varies")):
        if names:
            out += _kept(table, names, how, twins)
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


def _kept(table: Table, names: list[str], how: str, twins: list[StoredTarget]) -> list[Setting]:
    """``names`` at PostgreSQL 18's defaults, one reason between them: nothing measured
    compares another value; where several targets ran them alike, how those compared."""
    them = names[0] if len(names) == 1 else "them"
    defaults = "default" if len(names) == 1 else "defaults"
    alone = " alone" if how.startswith("no target") else ""
    why = (
        f"PostgreSQL 18's {defaults}, kept: {how} {them}{alone}, so nothing measured "
        "compares another value"
    )
    figures: list[Figure] = []
    if len(twins) > 1:
        ref, others = twins[0], [t.name for t in twins[1:]]
        heads = _heads(table, twins)
        figures = [f for r in heads for t in twins if (f := figure(r, t.name))]
        if heads:
            said = _said(*_judge(table, ref, twins, heads), everyone=others)
            who = " and ".join([", ".join(others[:-1]), others[-1]] if len(others) > 1 else others)
            why += f"; {who} against {ref.name}, at the same values: {said}"
    return [Setting(POSTGRES, n, PG18_IO_DEFAULTS[n], why, figures, default=True) for n in names]


def _heads(table: Table, group: list[StoredTarget]) -> list[Row]:
    """The headline rows with a direction that every target of ``group`` has a value in."""
    return [
        r
        for r in table.rows
        if r.headline
        and r.higher_is_better is not None
        and all(r.cells[t.name].value is not None for t in group)
    ]


# Per target, the measurements it was decided better, or worse, on; per measurement, the
# targets shown equivalent to the reference, or not told apart from it.
_Judged = tuple[
    dict[str, list[str]], dict[str, list[str]], dict[str, list[str]], dict[str, list[str]]
]


def _judge(table: Table, ref: StoredTarget, group: list[StoredTarget], heads: list[Row]) -> _Judged:
    better: dict[str, list[str]] = {}
    worse: dict[str, list[str]] = {}
    same: dict[str, list[str]] = {}
    open_: dict[str, list[str]] = {}
    for t in (t for t in group if t is not ref):
        for r in heads:
            j = table.pair(r, ref.name, t.name)
            if j is None or not j.decided:
                open_.setdefault(metric_words(r), []).append(t.name)
            elif j.outcome == EQUIVALENT:
                same.setdefault(metric_words(r), []).append(t.name)
            elif j.outcome == BETTER:
                better.setdefault(t.name, []).append(metric_words(r))
            else:
                worse.setdefault(t.name, []).append(metric_words(r))
    return better, worse, same, open_


def _said(
    better: dict[str, list[str]],
    worse: dict[str, list[str]],
    same: dict[str, list[str]],
    open_: dict[str, list[str]],
    everyone: list[str] | None = None,
) -> str:
    """What the pairs against the reference showed, each measurement named once with the
    targets it holds for ('not told apart on fsync p99 latency, TPC-B tps (b, c)');
    without the targets where they are ``everyone``."""
    said = []
    if traded := [t for t in better if t in worse]:
        said.append(
            "better on some and worse on others: "
            + "; ".join(
                f"{t}: better on {', '.join(better[t])}, worse on {', '.join(worse[t])}"
                for t in traded
            )
        )
    if only_better := {t: v for t, v in better.items() if t not in worse}:
        said.append(
            "better on " + "; ".join(f"{', '.join(v)} ({t})" for t, v in only_better.items())
        )
    if only_worse := {t: v for t, v in worse.items() if t not in better}:
        said.append("worse on " + "; ".join(f"{', '.join(v)} ({t})" for t, v in only_worse.items()))
    if same:
        said.append("equivalent on " + _on(same, everyone))
    if open_:
        said.append("not told apart on " + _on(open_, everyone))
    return "; ".join(said)


def _on(found: dict[str, list[str]], everyone: list[str] | None) -> str:
    """'X, Y (b, c); Z (b)': measurements sharing their targets named together."""
    by_targets: dict[tuple[str, ...], list[str]] = {}
    for what, names in found.items():
        by_targets.setdefault(tuple(names), []).append(what)
    if everyone is not None and list(by_targets) == [tuple(everyone)]:
        return ", ".join(found)
    return "; ".join(f"{', '.join(ws)} ({', '.join(ts)})" for ts, ws in by_targets.items())


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
            default=True,
        )
    heads = _heads(table, group)
    if not heads:
        return Setting(
            POSTGRES,
            name,
            default,
            f"PostgreSQL 18's default, kept: the targets differing only in {name} "
            f"({values}) share no measured headline metric",
            default=True,
        )
    better, worse, same, open_ = _judge(table, ref, group, heads)
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
    return Setting(
        POSTGRES,
        name,
        default,
        f"PostgreSQL 18's default, kept: no other value was decided better than "
        f"{ref.name}'s ({values}): " + _said(better, worse, same, open_),
        figures,
        default=True,
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
    return metric_label(r.metric, r.workload) + (f" [{r.label}]" if r.label else "")


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
