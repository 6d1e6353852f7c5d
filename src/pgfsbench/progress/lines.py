"""The words for a campaign's events, shared by the live and the plain views."""

from __future__ import annotations

import shlex

from pgfsbench.campaign import events as ev
from pgfsbench.render.values import format_value

QUIET, NORMAL, VERBOSE = 0, 1, 2


def measurement(workload: str, label: str) -> str:
    return f"{workload} {label}".strip()


def round_title(round_no: int, most: int) -> str:
    if round_no == 0:
        return "settling round"
    return f"round {round_no}" + (f" of {most}" if most > 1 else "")


def headline_text(h: ev.Headline) -> str:
    """'pgbench.tps 1,234 tps'."""
    unit = f" {h.unit}" if h.unit else ""
    return f"{h.metric} {format_value(h.value)}{unit}"


def run_line(e: ev.RunFinished) -> str:
    """One finished run: its headline figure, or why it has none."""
    what = f"{e.target}: {measurement(e.workload, e.label)}"
    if e.status == "ok":
        figure = headline_text(e.headline) if e.headline else "done"
        return f"{what}: {figure} ({e.seconds:.0f} s)"
    if e.status == "not run":
        return f"{what}: {e.error or 'not run'}"
    return f"{what}: {e.status}: {e.error or 'no error recorded'}"


def run_level(e: ev.RunFinished) -> str:
    return {"ok": "info", "not run": "warning"}.get(e.status, "error")


def command_line(argv: tuple[str, ...]) -> str:
    return f"$ {shlex.join(argv)}"


def started_text(e: ev.CampaignStarted, estimate: str) -> str:
    """What the campaign will do and for how long, in one line: '3 targets (ext4, xfs,
    btrfs): a settling round, then 3 to 12 rounds until every comparison is decided or
    9 min have passed; estimated 7:15 to 9:32'."""
    targets = (
        f"{len(e.targets)} target{'s' if len(e.targets) != 1 else ''} ({', '.join(e.targets)})"
    )
    if e.auto and e.min_rounds >= e.most_rounds:  # one planned look, at the end
        rounds = (
            f"{e.most_rounds} rounds or {e.max_minutes:g} min, whichever comes "
            "first, then every comparison decided at once"
        )
    elif e.auto:
        rounds = (
            f"{e.min_rounds} to {e.most_rounds} rounds until every comparison is "
            f"decided or {e.max_minutes:g} min have passed"
        )
    else:
        rounds = f"{e.most_rounds} round{'s' if e.most_rounds != 1 else ''}"
    settle = "a settling round, then " if e.first_round == 0 else ""
    if e.resumed_at:
        rounds = f"resumed at round {e.resumed_at} of {rounds}"
    return f"{targets}: {settle}{rounds}; {estimate}"


def waited_line(e: ev.Waited) -> str:
    """'ext4: waited 4 s for quiet before pgbench clients=4'."""
    how = "" if e.quiet else " (still busy: it ran anyway)"
    return (
        f"{e.target}: waited {e.seconds:.0f} s for quiet before "
        f"{measurement(e.workload, e.label)}{how}"
    )


def disturbed_line(e: ev.VisitDisturbed) -> str:
    """'round 7: ext4 again: 40% of the CPUs busy outside pgfsbench during 4 of its 10 s',
    or why a disturbed visit is kept (left out of the statistics)."""
    if len(e.runs) == 1:
        why = f"{e.runs[0].why} ({measurement(e.runs[0].workload, e.runs[0].label)})"
    else:
        why = "; ".join(f"{measurement(r.workload, r.label)}: {r.why}" for r in e.runs)
    if e.again:
        return f"round {e.round}: {e.target} again: {why}"
    if e.trimmed:
        return f"round {e.round}: {e.target} disturbed in part, counted from the rest: {why}"
    reason = (
        "the plan runs no visit again: [repetitions] redo = 0"
        if e.allowance_s <= 0
        else "disturbed each time it ran"
        if e.redo_open
        else f"the {e.allowance_s / 60:.1f} min allowed for visits run again, then the "
        "budget, are spent"
        if e.spent_s >= e.allowance_s and e.from_budget
        else f"the {e.allowance_s / 60:.1f} min allowed so far for visits run again are spent"
        if e.spent_s >= e.allowance_s
        else "disturbed each time it ran"
    )
    return f"round {e.round}: {e.target} disturbed, kept and left out of the statistics ({reason}): {why}"


def worth_telling(stopped) -> list:
    """The stops a person did not plan for: a fixed count reached is no news."""
    return [s for s in stopped if s.reason != "count"]


def stopped_line(s: ev.MeasurementStopped) -> str:
    return f"{measurement(s.workload, s.label)} stops: {s.text}"


def note_line(e: ev.Note) -> str:
    return e.text if e.level == "info" else f"{e.level}: {e.text}"
