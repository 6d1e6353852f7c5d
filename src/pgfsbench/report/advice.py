"""The advice (analysis/advice.py) as text, as a postgresql.conf snippet, and as JSON.

``pgfsbench advise --format`` takes them (formats.py declares them); the end of ``run``
prints the text; the HTML report renders the same Advice in its template.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap

from pgfsbench.analysis.advice_model import POSTGRES, Advice, Setting
from pgfsbench.analysis.capabilities import offered_notes, unmeasured_workloads

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
    for s in a.settings:
        lines.append(f"  {s.scope}: {s.name} = {s.value}")
        lines += _wrap(f"why: {s.why}", "      ", "        ")
        if s.figures:
            lines.append("      measured:")
            for f in s.figures:
                lines += _wrap(_figure(f, a.target), "        ", "          ")
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
    for s in a.settings:
        evidence = (
            (
                ["#   measured:"]
                + [
                    ln
                    for f in s.figures
                    for ln in _wrap(_figure(f, a.target), "#     ", "#       ")
                ]
            )
            if s.figures
            else []
        )
        evidence += _wrap(f"note: {s.note}", "#   ", "#     ") if s.note else []
        if s.scope == POSTGRES:
            lines += [
                *_wrap(f"{s.name}: {s.why}", "# ", "#   "),
                *evidence,
                f"{s.name} = {_conf_value(s.value)}",
            ]
        else:  # not postgresql.conf's: sysctl.d or the block queue
            lines += [
                *_wrap(
                    f"{s.scope} (not postgresql.conf): {s.name} = {s.value}: {s.why}", "# ", "#   "
                ),
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


def _figure(f, target: str | None) -> str:
    where = f"{f.workload} {f.label}".strip()
    who = "" if f.target == target else f"{f.target}: "
    return f"{who}{f.text()}" + (f" in {where}" if f.label else "")


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
        lines += _wrap(f"{flag}: {u.target} is {u.level.upper()}: {u.warning}", lead, sub)
        lines += [ln for g in u.gains for ln in _wrap(f"measured: {g}", sub, sub + "  ")]
    return lines


def _capabilities(a: Advice, lead: str, item: str, sub: str) -> list[str]:
    """Per target, what its filesystem offers PostgreSQL, then each capability's note once."""
    if not a.capabilities:
        return []
    lines = [f"{lead}What each filesystem offers PostgreSQL (measured, or from its facts):"]
    for t in a.capabilities:
        lines.append(f"{item}{t.target} ({t.fs or 'directory'}):")
        for c in t.capabilities:
            lines += _wrap(f"{c.name}: {c.summary()}", sub, sub + "  ")
    if workloads := unmeasured_workloads(a.capabilities):
        lines += _wrap(
            f"(not measured: the {', '.join(workloads)} workload(s) measure it; "
            "examples/fs-features.toml runs them)",
            item,
            item + " ",
        )
    for name, note in offered_notes(a.capabilities).items():
        lines += _wrap(f"({name}: {note})", item, item + " ")
    return lines


def _grouped(omitted: list[Setting]) -> list[tuple[str, str]]:
    """Settings left out for the same reason, on one line."""
    by_why: dict[str, list[str]] = {}
    for s in omitted:
        by_why.setdefault(s.why, []).append(s.name)
    return [(", ".join(names), why) for why, names in by_why.items()]
