"""The advice (analysis/advice/advise.py) as text, as a postgresql.conf snippet, and as JSON.

``pgfsbench advise --format`` takes them (declarations.py declares them); the end of ``run``
prints the text; the HTML report renders the same Advice in its template.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap

from pgfsbench.analysis.advice.recommendation import (
    POSTGRES,
    Advice,
    Figure,
    Setting,
    stated_together,
)
from pgfsbench.render import capability_text as offers

WIDTH = 80  # what a terminal, a mail and a postgresql.conf reader all hold


def advice_text(a: Advice) -> str:
    if a.target is None:
        lines = _wrap(f"Recommendation: none ({a.chosen_by})", "", "  ")
    else:
        lines = _wrap(f"Recommendation: {a.target}: {a.chosen_by}", "", "  ")
        lines += _wrap(f"from campaign {a.campaign}", "  ", "  ")
    if a.warning:
        lines += _wrap(f"⚠ {a.warning}", "  ", "    ")
    if a.mkfs:
        lines += _command(a.mkfs, "  mkfs:  ", "         ")
    if a.fstab:  # one fstab line: it cannot be continued, so it is never wrapped
        lines.append(f"  fstab: {a.fstab}")
    for n in a.build_notes:
        lines += _wrap(f"({n})", "         ", "          ")
    for group in stated_together(a.settings):  # the same evidence: stated once
        s = group[0]
        values = [f"{g.name} = {g.value}" for g in group]
        lines += _items(f"{s.scope}: ", values, "  ", "      ")
        lines += _wrap(f"why: {s.why}", "      ", "        ")
        lines += _measured(s.figures, a.target, "      ")
        if s.note:
            lines += _wrap(f"note: {s.note}", "      ", "        ")
    lines += _left_out(a, "  ", "⚠ not recommended", "      ")
    lines += _capabilities(a, "", "  ", "      ")
    return "\n".join(lines) + "\n"


def advice_conf(a: Advice) -> str:
    """postgresql.conf lines, each after comments (on lines of their own) giving its
    evidence; the OS side and the unsafe targets as comments."""
    lines = [
        f"# pgfsbench advise: campaign {a.campaign}",
        *_wrap(f"target: {a.target or 'none'}: {a.chosen_by}", "# ", "#   "),
    ]
    if a.warning:
        lines += _wrap(f"WARNING: {a.warning}", "# ", "#   ")
    lines += _command(a.mkfs, "# mkfs:  ", "#        ") if a.mkfs else []
    lines += [f"# fstab: {a.fstab}"] if a.fstab else []
    for group in stated_together(a.settings):  # the same evidence: stated once
        s = group[0]
        evidence = _measured(s.figures, a.target, "#   ")
        evidence += _wrap(f"note: {s.note}", "#   ", "#     ") if s.note else []
        if s.scope == POSTGRES:
            names = ", ".join(g.name for g in group)
            lines += [
                *_wrap(f"{names}: {s.why}", "# ", "#   "),
                *evidence,
                *(f"{g.name} = {_conf_value(g.value)}" for g in group),
            ]
        else:  # not postgresql.conf's: sysctl.d or the block queue
            values = ", ".join(f"{g.name} = {g.value}" for g in group)
            lines += [
                *_wrap(f"{s.scope} (not postgresql.conf): {values}: {s.why}", "# ", "#   "),
                *evidence,
            ]
    lines += _left_out(a, "# ", "NOT RECOMMENDED", "#   ")
    lines += _capabilities(a, "# ", "#   ", "#       ")
    return "\n".join(lines) + "\n"


def _wrap(text: str, first: str, rest: str) -> list[str]:
    """``text`` in lines of at most WIDTH, words whole (a long path stays one word)."""
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]


def _command(command: str, first: str, rest: str) -> list[str]:
    """A shell command at WIDTH, continued with backslashes, so it still pastes whole."""
    lines = _wrap(command, first, rest)
    return [ln + " \\" for ln in lines[:-1]] + lines[-1:] if len(lines) > 1 else lines


def advice_json(a: Advice) -> str:
    return json.dumps(dataclasses.asdict(a), indent=2) + "\n"


def advice_schema() -> dict:
    """The JSON Schema of ``advice_json``: generated from the Advice dataclass it dumps."""
    from pgfsbench import __version__
    from pgfsbench.formats.json_schema import json_schema

    return json_schema(
        Advice,
        id=f"urn:pgfsbench:advise:{__version__}",
        title="pgfsbench advise --format json",
        description="What 'pgfsbench advise --format json' writes: the target to run, "
        "how to build it, the settings the measurements support with the figures each "
        "rests on, the settings left out and why, the targets not recommended with what "
        "they buy and risk, and what each filesystem offers PostgreSQL.",
    )


def _measured(figures: list[Figure], target: str | None, lead: str) -> list[str]:
    """'measured:', then each metric by its name (and id), its figure on the same line
    when only ``target`` has one, else a line per target under it."""
    if not figures:
        return []
    by_metric: dict[tuple[str, str, str], list[Figure]] = {}
    for f in figures:
        by_metric.setdefault((f.workload, f.label, f.metric), []).append(f)
    one, two = lead + "  ", lead + "    "
    lines = [f"{lead}measured:"]
    for same in by_metric.values():
        f = same[0]
        if len(same) == 1:
            who = "" if f.target == target else f"{f.target}: "
            lines += _items(f"{who}{f.what()}: ", [f.value_text()], one, two)
            continue
        lines += _wrap(f"{f.what()}:", one, two)
        for g in same:
            lines += _wrap(f"{g.target}: {g.value_text()}", two, two + "  ")
    return lines


def _items(head: str, items: list[str], first: str, rest: str) -> list[str]:
    """``head`` and the items, comma-separated, wrapped between items, never inside one."""
    glued = [i.replace(" ", "\xa0") for i in items]  # textwrap breaks at spaces only
    return [ln.replace("\xa0", " ") for ln in _wrap(head + ", ".join(glued), first, rest)]


def _conf_value(value: str | None) -> str:
    """Numbers bare; anything else single-quoted, as postgresql.conf reads it."""
    try:
        float(str(value))
        return str(value)
    except (TypeError, ValueError):
        return "'" + str(value).replace("'", "''") + "'"


def _left_out(a: Advice, lead: str, flag: str, sub: str) -> list[str]:
    """The settings not set for want of evidence, then the unsafe targets with what
    they would buy."""
    lines = [
        ln
        for names, why in _grouped(a.omitted)
        for ln in _wrap(f"not set: {names}: {why}", lead, sub)
    ]
    for u in a.unsafe:
        lines += _wrap(f"{flag}: {u.target} {u.phrase}: {u.warning}", lead, sub)
        lines += [ln for g in u.gains for ln in _wrap(f"what it buys: {g}", sub, sub + "  ")]
    return lines


def _capabilities(a: Advice, lead: str, item: str, sub: str) -> list[str]:
    """What each filesystem offers PostgreSQL: the targets that read the same together,
    a line for those nothing measured; then what would measure it and each note once."""
    if not a.capabilities:
        return []
    lines = [f"{lead}{offers.heading(a.capabilities)}:"]
    for g in offers.groups(a.capabilities):
        if g.short is not None:
            lines += _wrap(f"{g.who}: {g.short}", item, sub)
            continue
        lines.append(f"{item}{g.who}:")
        lines += [ln for d in g.details for ln in _wrap(d, sub, sub + "  ")]
    if hint := offers.hint(a.capabilities):
        lines += _wrap(f"({hint})", item, item + " ")
    for name, note in offers.notes(a.capabilities).items():
        lines += _wrap(f"({name}: {note})", item, item + " ")
    return lines


def _grouped(omitted: list[Setting]) -> list[tuple[str, str]]:
    """Settings left out for the same reason, on one line."""
    by_why: dict[str, list[str]] = {}
    for s in omitted:
        by_why.setdefault(s.why, []).append(s.name)
    return [(", ".join(names), why) for why, names in by_why.items()]
