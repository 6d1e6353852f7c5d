"""`pgfsbench plan check` and `pgfsbench plans` for a person: what ``describe`` found, in
words and plan-file values (``true``, ``dd, fio``), never Python reprs, readable at 80
columns. Every piece of text from the plan goes in as ``Text``, never as markup."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from pgfsbench.plan.model import Plan


def value_text(value) -> str:
    """A plan value as a plan file writes it: true/false, lists joined, tables as k=v."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(value_text(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={value_text(v)}" for k, v in value.items())
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def params_text(params: dict) -> str:
    """'clients=4 duration=8 tools=dd,fio': what a run sets, leaving out what it leaves
    unset (None, '', an empty list)."""
    return " ".join(
        f"{k}={value_text(v).replace(', ', ',')}"
        for k, v in params.items()
        if v is not None and v != "" and v != [] and v != {}
    )


def budget_text(plan: Plan, info: dict) -> str:
    """What a plan may take: its rounds and time cap, and the estimated duration."""
    reps = plan.repetitions
    low, high = info["estimated_seconds"] / 60, info["estimated_seconds_max"] / 60
    if reps.count == "auto":
        looks = reps.look_rounds()
        rounds = (
            f"until decided (looks after round{'s' if len(looks) > 1 else ''} "
            f"{_rounds(looks)}), at most "
            f"{reps.max} rounds or {reps.max_minutes:g} min"
            + (" (+1 settling round)" if info["budget"]["settling_round"] else "")
        )
    else:
        rounds = f"{reps.count} round{'s' if reps.count != 1 else ''}"
    return f"{rounds}; estimated {minutes_text(low, high)} on 2 cores"


def minutes_text(low: float, high: float) -> str:
    """'7 to 10 min', or 'about 2 min' where the two round to the same."""
    if round(low) == round(high):
        return f"about {max(1, round(high))} min"
    return f"{low:.0f} to {high:.0f} min"


def _rounds(rounds: list[int]) -> str:
    """6, 9 and 12."""
    words = [str(r) for r in rounds]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_plan_check(info: dict, console: Console) -> None:
    """The checked plan: repetitions and budget, each target's settings, the runs on
    each target, disk and time. Problems are the caller's to print (on stderr)."""
    reps, budget = info["repetitions"], info["budget"]
    auto = reps["count"] == "auto"
    console.print(
        Text("plan ")
        + Text(info["name"], style="bold")
        + Text(
            f" is valid: {_plural(len(info['targets']), 'target')}, "
            f"{_plural(info['total_runs'], 'run')}"
            + (" at most (repetitions are 'auto')" if auto else "")
        )
    )
    order = f"{reps['order']} order"
    fresh = "a fresh target each round" if reps["fresh"] else "targets reused"
    settle = (
        "; a settling round first (run on every target, not counted)"
        if budget["settling_round"]
        else ""
    )
    console.print(Text(f"repetitions: {value_text(reps['count'])} ({order}, {fresh}){settle}"))
    if auto:
        console.print(
            Text(
                f"auto: comparisons tested after round{'s' if len(budget['looks']) > 1 else ''} "
                f"{_rounds(budget['looks'])} (or the last round the time budget allows), every "
                f"target in every round until all are decided; budget: "
                f"{budget['most_rounds']} rounds or {budget['max_minutes']:g} min"
            )
        )
    settings = [value_text(t.get("postgres_settings") or {}) for t in info["targets"]]
    shared = settings[0] if settings and len(set(settings)) == 1 else None
    if shared:
        console.print(_settings({"PostgreSQL settings": shared}, indent=0))
    console.print(Text("\ntargets", style="bold"))
    for t in info["targets"]:
        _target(t, console, with_postgres=shared is None)
    console.print(Text("\nruns on each target", style="bold"))
    runs = Table(box=None, show_edge=False, pad_edge=False, padding=(0, 1))
    runs.add_column("  workload", no_wrap=True)
    runs.add_column("params", overflow="fold")
    runs.add_column("times", no_wrap=True)
    runs.add_column("≈ s each", justify="right", no_wrap=True)
    for r in info["runs_per_target"]:
        times = f"{r['repetitions']}" + (" + 1 settling" if r["settling"] else "")
        runs.add_row(
            Text(f"  {r['workload']}"),
            Text(params_text(r["params"])),
            Text(times),
            Text(f"{r['estimated_seconds']:.0f}"),
        )
    console.print(runs)
    shortest, longest = info["estimated_seconds"] / 60, info["estimated_seconds_max"] / 60
    duration = (
        f"{shortest:.0f} min"
        if longest == shortest
        else f"{shortest:.0f} min (all decided at the first look) to {longest:.0f} min "
        "(the budget spent)"
    )
    console.print(
        Text(
            f"\nhost disk for loop images: {info['host_disk_bytes'] / 2**30:.1f} GiB (sparse: "
            f"only what is written is used); estimated duration: {duration}"
        )
    )
    for note in info["notes"]:
        console.print(Text(f"note: {note}"))


def _target(t: dict, console: Console, with_postgres: bool) -> None:
    """One target: a heading line (kind, where, what its workloads need), then one line
    per setting it has."""
    where = t["where"]
    fs = f"{t['fs']} on " if t["fs"] else ""
    console.print(
        Text(f"  {t['name']}", style="bold")
        + Text(f": {fs}{where}; writes up to {t['workload_peak_bytes'] / 2**20:,.0f} MB")
    )
    settings = {
        "mkfs": " ".join(t["mkfs"]),
        "mount": t["mount"],
        "pool properties": value_text(t.get("zpool") or {}),  # ZFS: no mkfs or mount
        "dataset properties": value_text(t.get("zfs") or {}),
        "external log": t["log_size"] or "",
        "sysctls": value_text(t["sysctls"]),
        "queue": value_text(t["queue"]),
        "throttle": value_text(t["throttle"]),
        "memory": t.get("memory") or "",
        "direct I/O": "" if t.get("direct_io") in (None, True) else value_text(t["direct_io"]),
        "pg_bin": t.get("pg_bin") or "",
        "data checksums": ""
        if t.get("data_checksums") is None
        else ("on" if t["data_checksums"] else "off"),
        "PostgreSQL": value_text(t.get("postgres_settings") or {}) if with_postgres else "",
    }
    console.print(_settings(settings, indent=4))


def _settings(settings: dict[str, str], indent: int) -> Table:
    """'key: value' lines, a long value wrapping under itself, not under the key."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(overflow="fold")
    for key, value in settings.items():
        if value:
            grid.add_row(Text(" " * indent + f"{key}:"), Text(value))
    return grid
