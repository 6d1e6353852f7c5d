"""The Markdown format (GitHub-flavoured): a comparison as a table with its verdicts and
footer; a stored campaign as a document to paste in an issue or a wiki: what ran where,
the verdicts and headline comparison, the targets, then every measurement's metrics with
each round's value per target (``r3 1,234``), and the runs that failed.

No Python reprs: nothing is an empty cell, flags are yes/no, numbers are grouped.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from pgfsbench.render.comparison import Comparison
from pgfsbench.render.formats import COMPARISON, EXPORT, OutputFormat
from pgfsbench.render.verdict_text import shared_caveats

if TYPE_CHECKING:  # only for the annotations: analysis.table imports scipy, slow to load
    from pgfsbench.analysis.table import Row, Table
    from pgfsbench.analysis.verdicts import VerdictLine
    from pgfsbench.store.read import Campaign, StoredRun


def write_comparison(comparison: Comparison, out: TextIO) -> None:
    head = [f"> ⚠ **{w}**" for w in comparison.warnings]
    if head:
        out.write("\n".join(head) + "\n\n")
    out.write(comparison_markdown(comparison.table, comparison.rows, comparison.verdicts))
    if comparison.notes:
        out.write("\n".join(f"- ⓘ {n}" for n in comparison.notes) + "\n")


def write_campaign(campaign: Campaign, out: TextIO) -> None:
    out.write(campaign_markdown(campaign))


FORMAT = OutputFormat(
    "markdown",
    "md",
    "text/markdown",
    {EXPORT: write_campaign, COMPARISON: write_comparison},
    order=20,
    series=False,  # the summary and the tables: no per-second series
)


def comparison_markdown(
    table: Table, rows: list[Row], verdicts: list[VerdictLine], answer: bool = True
) -> str:
    """``answer``: lead with the one-line answer (a document that already did: False)."""
    # Here, not at the top: the CLI loads this module to list the formats in its help.
    from pgfsbench.analysis.answer import campaign_answer, glossary
    from pgfsbench.render.compare import diff_text, footer, value_text
    from pgfsbench.render.values import row_scale, row_unit

    lead = [f"**Answer:** {campaign_answer(verdicts)}", ""] if answer and verdicts else []
    lead += [f"_{term}_" for term in glossary(table)] + ([""] if verdicts else [])
    head = ["measurement", "metric", "unit"]
    for t in table.targets:
        head.append(t + (" (baseline)" if t == table.baseline else ""))
        if t != table.baseline:
            head.append(f"{t} vs base")
    out = [*lead, "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        scale = row_scale(row)
        cols = [f"{row.workload} {row.label}".strip(), f"`{row.metric}`", row_unit(row)]
        for t in table.targets:
            cols.append(value_text(row.cells[t], scale, row.unit))
            if t != table.baseline:
                cols.append(" ".join(diff_text(row.cells[t])).strip())
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |")
    if verdicts:
        out += ["", "**Verdicts**", ""]
        shared = shared_caveats(verdicts)
        for v in verdicts:
            warning = f" ⚠ **{v.warning}**" if v.warning else ""
            out.append(f"- **{v.title}**: {v.text}{warning}")
            out += [f"  - ⓘ {caveat}" for caveat in v.caveats if caveat not in shared]
        out += [f"- ⓘ every measurement: {caveat}" for caveat in shared]
    out += ["", f"_{footer(table)}_", ""]
    return "\n".join(out)


def campaign_markdown(campaign: Campaign) -> str:
    from pgfsbench.analysis.answer import campaign_answer
    from pgfsbench.analysis.caveats import fill_verdict_caveats
    from pgfsbench.analysis.durability import durabilities
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts import verdict_lines
    from pgfsbench.render.compare import select_rows

    c = campaign
    durability = durabilities(c)
    table = comparison_table(campaign)
    lines = fill_verdict_caveats(verdict_lines(table, durability), campaign)
    out = [f"# pgfsbench: {c.plan_name} (campaign {c.id})", ""]
    if lines:  # the answer first
        out += [f"**Answer:** {campaign_answer(lines)}", ""]
    out += [
        "| | |",
        "|---|---|",
        _tr("status", c.status),
        _tr("started", _time(c.started)),
        _tr("ended", _time(c.ended) + _took(c.started, c.ended)),
        _tr("pgfsbench", c.version),
    ]
    from pgfsbench.render.resumes import resumed_text

    out += [_tr("resumed", resumed_text(r)) for r in c.schedule.get("resumes", [])]
    out += [_tr(f"host {k}", _plain(v)) for k, v in c.host.items() if v not in (None, "", {})]
    rows = select_rows(table, None)
    out += [
        "",
        "## Verdicts and headline comparison",
        "",
        comparison_markdown(table, rows, lines, answer=False).rstrip("\n")
        if rows
        else "No measurement has a value: nothing to compare.",
    ]
    out += [
        "",
        "## Targets",
        "",
        "| target | kind | fs | status | mount options | crash safety | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in c.targets:
        d = durability[t.name]
        safety = f"{d.level}" + (f": {'; '.join(d.reasons)}" if d.reasons else "") if d else ""
        out.append(
            _row(
                [
                    t.name,
                    t.kind,
                    t.fs,
                    t.status,
                    ", ".join(t.provenance.get("effective_mount_options") or []),
                    safety,
                    t.reason or "",
                ]
            )
        )
    out += _offers(c)
    out += [
        "",
        "## Measurements",
        "",
        "Each cell: the value of every counted round (`r3 1,234`); a settling round "
        "(`r0`) runs first and is never counted; n/a: unsupported here.",
        "",
    ]
    if not c.runs:
        out += ["No run was recorded.", ""]
    for (workload, label), runs in _measurements(c.runs).items():
        out += _measurement(workload, label, runs, [t.name for t in c.targets])
    return "\n".join(out) + "\n"


def _offers(campaign: Campaign) -> list[str]:
    """What each filesystem offers PostgreSQL, as ``advise`` says it: a bullet per group
    of targets that read the same, what would measure it, each offered one's note."""
    from pgfsbench.analysis.capabilities import capabilities
    from pgfsbench.render import capabilities as offers

    found = capabilities(campaign)
    if not found:
        return []
    basis = (
        "Measured where the campaign ran it, else from each filesystem's facts."
        if offers.measured_any(found)
        else "From each filesystem's facts (its mount options and geometry); not measured."
    )
    out = ["", f"## {offers.TITLE}", "", basis, ""]
    for g in offers.groups(found):
        out.append(f"- **{g.who}**: {g.short if g.short is not None else '; '.join(g.details)}")
    if hint := offers.hint(found):
        out += ["", f"_{hint[0].upper()}{hint[1:]}._"]
    notes = offers.notes(found)
    if notes:
        out += ["", *(f"- {name}: {note}" for name, note in notes.items())]
    return out


def _measurements(runs: list[StoredRun]) -> dict[tuple[str, str], list[StoredRun]]:
    """Runs by measurement (workload, label), in the order first run, rounds in order."""
    out: dict[tuple[str, str], list[StoredRun]] = {}
    for r in sorted(runs, key=lambda r: r.id):
        out.setdefault((r.workload, r.label), []).append(r)
    for group in out.values():
        group.sort(key=lambda r: (r.repetition, r.id))
    return out


def _measurement(workload: str, label: str, runs: list[StoredRun], targets: list[str]) -> list[str]:
    targets = [t for t in targets if any(r.target == t for r in runs)]
    params = ", ".join(
        f"{k}={_plain(v)}" for k, v in runs[0].params.items() if v not in (None, "") and k != "type"
    )
    out = [f"### {workload} {label}".rstrip(), ""]
    if params:
        out += [f"Parameters: {params}", ""]
    metrics: dict[str, tuple[str, bool | None]] = {}  # name → unit, direction
    values: dict[tuple[str, str], list[str]] = {}  # (metric, target) → "r1 123"
    for r in runs:
        if r.status == "superseded":  # run again on resume: listed below, not a value
            continue
        for m in r.metrics:
            metrics.setdefault(m.name, (m.unit, m.higher_is_better))
            values.setdefault((m.name, r.target), []).append(f"r{r.repetition} {_number(m.value)}")
    if metrics:
        out += [
            "| metric | unit | better | " + " | ".join(targets) + " |",
            "|---|---|---|" + "---|" * len(targets),
        ]
        for name, (unit, higher) in metrics.items():
            out.append(
                _row(
                    [f"`{name}`", unit, _better(higher)]
                    + [" · ".join(values.get((name, t), [])) for t in targets]
                )
            )
        out.append("")
    failed = [r for r in runs if r.status != "ok"]
    if failed:
        out += [
            f"- {r.target} round {r.repetition}: {r.status}" + (f": {r.error}" if r.error else "")
            for r in failed
        ] + [""]
    return out


def _tr(key: str, value: str) -> str:
    return _row([key, value])


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def _better(higher_is_better: bool | None) -> str:
    return "" if higher_is_better is None else "higher" if higher_is_better else "lower"


def _number(value: float | None) -> str:
    """Grouped, six significant digits: 12,345.7 / 0.000123; n/a for nothing."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.6g}"


def _plain(value: Any) -> str:
    """A free-form value (a parameter, a host fact) without Python reprs."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items() if v not in (None, ""))
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(v) for v in value)
    return "" if value is None else str(value)


def _time(epoch: float | None) -> str:
    if epoch is None:
        return "not ended"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _took(started: float | None, ended: float | None) -> str:
    if started is None or ended is None:
        return ""
    minutes, seconds = divmod(round(ended - started), 60)
    return f" (took {minutes} min {seconds} s)" if minutes else f" (took {seconds} s)"
