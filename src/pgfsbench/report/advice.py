"""The advice (analysis/advice.py) as text, as a postgresql.conf snippet, and as JSON.

``pgfsbench advise --format`` takes the names in FORMATS; the end of ``run`` prints the
text; the HTML report renders the same Advice in its template.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

from pgfsbench.analysis.advice_model import POSTGRES, Advice, Setting


def advice_text(a: Advice) -> str:
    if a.target is None:
        lines = [f"Recommendation: none ({a.chosen_by})"]
    else:
        lines = [f"Recommendation: {a.target} ({a.chosen_by}; campaign {a.campaign})"]
    if a.warning:
        lines.append(f"  ⚠ {a.warning}")
    if a.mkfs:
        lines.append(f"  mkfs:  {a.mkfs}")
    if a.fstab:
        lines.append(f"  fstab: {a.fstab}")
    lines += [f"         ({n})" for n in a.build_notes]
    for s in a.settings:
        lines.append(f"  {s.scope}: {s.name} = {s.value}")
        lines.append(f"      why: {s.why}")
        if s.figures:
            lines.append("      measured: " + "; ".join(_figure(f, a.target) for f in s.figures))
        if s.note:
            lines.append(f"      note: {s.note}")
    lines += _left_out(a, "  ", "⚠ not recommended", "      ")
    return "\n".join(lines) + "\n"


def advice_conf(a: Advice) -> str:
    """postgresql.conf lines, each after a comment giving its evidence; the OS side and
    the unsafe targets as comments."""
    lines = [f"# pgfsbench advise: campaign {a.campaign}",
             f"# target: {a.target or 'none'} ({a.chosen_by})"]
    if a.warning:
        lines.append(f"# WARNING: {a.warning}")
    lines += [f"# mkfs:  {a.mkfs}"] if a.mkfs else []
    lines += [f"# fstab: {a.fstab}"] if a.fstab else []
    for s in a.settings:
        evidence = [f"#   measured: {'; '.join(_figure(f, a.target) for f in s.figures)}"
                    ] if s.figures else []
        evidence += [f"#   note: {s.note}"] if s.note else []
        if s.scope == POSTGRES:
            lines += [f"# {s.name}: {s.why}", *evidence, f"{s.name} = {_conf_value(s.value)}"]
        else:  # not postgresql.conf's: sysctl.d or the block queue
            lines += [f"# {s.scope} (not postgresql.conf): {s.name} = {s.value}: {s.why}",
                      *evidence]
    lines += _left_out(a, "# ", "NOT RECOMMENDED", "#   ")
    return "\n".join(lines) + "\n"


def advice_json(a: Advice) -> str:
    return json.dumps(dataclasses.asdict(a), indent=2) + "\n"


FORMATS: dict[str, Callable[[Advice], str]] = {
    "text": advice_text, "conf": advice_conf, "json": advice_json}


def _figure(f, target: str | None) -> str:
    where = f"{f.workload} {f.label}".strip()
    who = "" if f.target == target else f"{f.target}: "
    return f"{who}{f.text()}" + (f" in {where}" if f.label else "")


def _conf_value(value: str | None) -> str:
    """Numbers bare; anything else single-quoted, as postgresql.conf reads it."""
    try:
        float(value)
        return str(value)
    except (TypeError, ValueError):
        return "'" + str(value).replace("'", "''") + "'"


def _left_out(a: Advice, lead: str, flag: str, sub: str) -> list[str]:
    """The settings not set for want of evidence, then the unsafe targets with what
    they would buy."""
    lines = [f"{lead}not set: {names}: {why}" for names, why in _grouped(a.omitted)]
    for u in a.unsafe:
        lines.append(f"{lead}{flag}: {u.target} is {u.level.upper()}: {u.warning}")
        lines += [f"{sub}measured: {g}" for g in u.gains]
    return lines


def _grouped(omitted: list[Setting]) -> list[tuple[str, str]]:
    """Settings left out for the same reason, on one line."""
    by_why: dict[str, list[str]] = {}
    for s in omitted:
        by_why.setdefault(s.why, []).append(s.name)
    return [(", ".join(names), why) for why, names in by_why.items()]
