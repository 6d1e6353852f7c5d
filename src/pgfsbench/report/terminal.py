"""The campaign in the terminal.

``render_summary`` leads with the answer and fits 80 columns: the verdict lines,
then each measurement's headline metric, one section per workload, with a row
per target (the targets grow down, not across, so no name or figure wraps).
``render_table`` is the full side-by-side table of every metric, on request.
The value formatting is ``render/values.py``, shared with the HTML report and
the output formats.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.rule import Rule
from rich.table import Table as RichTable
from rich.text import Text

from pgfsbench.analysis.caveats.durability import SAFE, durabilities, phrase
from pgfsbench.analysis.caveats.notes import fill_verdict_caveats, measurement_caveats
from pgfsbench.analysis.headline import metric_label
from pgfsbench.analysis.table import Cell, Row, Table, comparison_table
from pgfsbench.analysis.verdicts.answer import campaign_answer, glossary
from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
from pgfsbench.filesystems.mountcheck import changes_for, describe, problems
from pgfsbench.render.values import (
    BEST_MARK,
    cell_text,
    centre_name,
    direction_arrow,
    finding_text,
    format_value,
    row_scale,
    row_unit,
    spread_text,
    verdict_kind,
    verdict_mark,
)
from pgfsbench.render.verdict_text import print_glossary, print_verdicts
from pgfsbench.report import text_table
from pgfsbench.store.read import Campaign


@dataclass
class Notice:
    """Something a reader must know before trusting the numbers."""

    level: str  # "warning", "error" or "note"
    subject: str  # e.g. "target zfs" or "run 7 (btrfs, pgbench)"
    message: str


def notices(campaign: Campaign) -> list[Notice]:
    """Skipped or failed targets, mount options the kernel ignored or changed, failed runs,
    a resumed or unfinished campaign."""
    from pgfsbench.render.resumes import resumed_text

    out: list[Notice] = []
    if campaign.status != "ok":
        out.append(
            Notice(
                "warning", "campaign", f"status is {campaign.status!r}: results may be incomplete"
            )
        )
    classes = durabilities(campaign)
    for t in campaign.targets:
        d = classes.get(t.name)
        test = [d.crash_test.sentence()] if d is not None and d.crash_test else []
        if d is not None and d.worst != SAFE:
            out.append(
                Notice(
                    "warning",
                    f"target {t.name} {phrase(d.worst)}",
                    "\n".join([*test, *d.reasons]),
                )
            )
        elif test:
            out.append(Notice("note", f"target {t.name} {phrase(SAFE)}", test[0]))
        if bad := problems(changes_for(t.provenance, t.spec, t.fs)):
            out.append(
                Notice(
                    "warning",
                    f"target {t.name}: mount options",
                    "\n".join(describe(c) for c in bad),
                )
            )
        if t.status in ("skipped", "failed"):
            out.append(
                Notice(
                    "warning" if t.status == "skipped" else "error",
                    f"target {t.name} ({t.fs})",
                    f"{t.status}: {t.reason or 'no reason recorded'}",
                )
            )
    for resume in campaign.schedule.get("resumes", []):
        out.append(Notice("warning", "campaign resumed", resumed_text(resume)))
    for r in campaign.runs:
        if r.status not in ("ok", "running", "superseded", "redone"):
            out.append(
                Notice(
                    "error",
                    f"run {r.id} ({r.target}, {r.workload})",
                    f"{r.status}: {r.error or 'no error recorded'}",
                )
            )
    return out


def render_table(campaign: Campaign, console: Console) -> None:
    """Print the side-by-side table (report/text_table.py: a box where it fits the
    console, a line per target under each metric where it does not), then what was
    skipped or failed."""
    table = comparison_table(campaign)
    if not table.measured:
        console.print(Text("No metrics recorded.", style="yellow"))
    else:
        title = f"{campaign.plan_name} — {campaign.id}"
        heads = [name + (" (baseline)" if name == table.baseline else "") for name in table.targets]
        box_rows: list[text_table.Row] = []
        stack_rows: list[tuple[Text, list[tuple[Text, Text, Text]]]] = []
        group = None
        for row in table.rows:
            if (row.workload, row.label) != group:  # a section per measurement: mon.* rows
                if group is not None:  # belong to the workload above them
                    box_rows.append(text_table.SECTION)
                    stack_rows.append((Text(), []))
                group = (row.workload, row.label)
                heading = Text(f"{row.workload} {row.label}".strip(), style="bold underline")
                box_rows.append([heading])
                stack_rows.append((heading, []))
            scale = row_scale(row)
            parts = [
                _cell_parts(row.cells[t], scale, t == table.baseline, row.unit)
                for t in table.targets
            ]
            cells = [Text(" ").join(p for p in cell if p.plain) for cell in parts]
            # Text objects, not markup strings: names and errors may contain "[...]".
            metric = f"{row.metric} [{row.label}]" if row.label else row.metric
            unit, arrow = row_unit(row), direction_arrow(row.higher_is_better)
            box_rows.append([Text(metric), Text(unit), Text(arrow), *cells])
            stack_rows.append((Text(metric) + Text(f"  {unit} {arrow}", style="dim"), parts))
        columns = [
            text_table.Column("metric"),
            text_table.Column("unit", style="dim"),
            text_table.Column("", justify="center"),
            *(text_table.Column(h, justify="right") for h in heads),
        ]
        laid, need = text_table.box_table(title, columns, box_rows, console.width)
        if laid is None:
            note = f"a line per target: side by side takes {need} columns"
            laid = text_table.stacked(title, heads, stack_rows, note)
        console.print(laid, soft_wrap=True)
    _full_footer(campaign, table, console)


def _full_footer(campaign: Campaign, table: Table, console: Console) -> None:
    """Below the full table: why each cell stopped, the verdicts, caveats and notices."""
    if campaign.schedule.get("count") == "auto":
        for stop in campaign.schedule.get("stops", []):
            console.print(
                Text(
                    f"{stop['target']} {stop['workload']} {stop['label']}: {stop['text']}",
                    style="dim",
                )
            )
    lines = fill_verdict_caveats(verdict_lines(table, durabilities(campaign)), campaign)
    print_verdicts(lines, console)  # a caveat every verdict shares said once
    # Measurements without a verdict (one target) still say what their runs measured.
    covered = {(v.workload, v.label) for v in lines}
    for workload, label in dict.fromkeys((r.workload, r.label) for r in campaign.runs):
        if (workload, label) not in covered:
            for caveat in measurement_caveats(campaign, workload, label, devices=False):
                console.print(Text(f"{workload} {label}".strip() + f": ⓘ {caveat}", style="yellow"))
    for n in notices(campaign):
        style = "red" if n.level == "error" else "yellow"
        console.print(Text(f"{n.level}: {n.subject}: {n.message}", style=style))


def render_summary(
    campaign: Campaign, console: Console, full_hint: str = "", brief: bool = False
) -> None:
    """The answer first, readable at 80 columns: the verdict lines (caveats shared by
    every measurement said once), then each measurement's headline row, a section per
    workload, then what was skipped or failed. ``full_hint`` says how to get the rest;
    ``brief``: the verdict lines and their warnings alone (``--quiet``)."""
    table = comparison_table(campaign, headline_only=True)  # the summary shows no other row
    if brief:
        lines = verdict_lines(table, durabilities(campaign))
        if lines:
            console.print(Text("answer: ", style="bold") + Text(campaign_answer(lines)))
            _print_disturbed(campaign, campaign_answer(lines), console)
            print_glossary(glossary(table), console)
        for v in lines:
            console.print(Text(f"{v.title}: ", style="bold") + Text(v.text))
            if v.warning:
                console.print(Text(f"  ⚠ {v.warning}", style="red bold"))
        return
    console.print(
        Text(f"{campaign.plan_name} · {campaign.id} · {campaign.status}", style="bold")
        + Text(f" · {_shape(campaign, table)}")
    )
    if not table.rows:
        console.print(Text("No metrics recorded.", style="yellow"))
    lines = fill_verdict_caveats(verdict_lines(table, durabilities(campaign)), campaign)
    if lines:
        console.print(Text("answer: ", style="bold") + Text(campaign_answer(lines)))
        _print_disturbed(campaign, campaign_answer(lines), console)
        print_glossary(glossary(table), console)
        console.print(Rule("verdicts", align="left", style="dim"))
    print_verdicts(lines, console)
    stops = {
        (m["workload"], m["label"]): m["text"]  # 'auto' only: a fixed count is no news
        for m in campaign.schedule.get("measurements", [])
        if campaign.schedule.get("count") == "auto" and m.get("reason") != "count"
    }
    workload = None
    for row in (r for r in table.rows if r.headline):
        if row.workload != workload:
            workload = row.workload
            console.print(Rule(workload, align="left", style="dim"))
        for part in _headline_block(row, table, stops.get((row.workload, row.label))):
            console.print(part)
    for n in notices(campaign):
        style = "red" if n.level == "error" else "yellow"
        console.print(Text(f"{n.level}: {n.subject}: {n.message}", style=style))
    if full_hint:
        console.print(Text(full_hint, style="dim"))


def _print_disturbed(campaign: Campaign, answer: str, console: Console) -> None:
    """How many visits others' load disturbed, and whether the answer holds without them."""
    from pgfsbench.analysis.verdicts.disturbed import disturbed_visits

    if found := disturbed_visits(campaign, answer):
        console.print(Text("disturbed: ", style="bold yellow") + Text(found.text()))


def _shape(campaign: Campaign, table: Table) -> str:
    """'3 targets, 9 rounds, 81 runs'."""
    rounds = campaign.schedule.get("rounds") or max(
        (r.repetition for r in campaign.runs), default=0
    )
    parts = [f"{len(table.targets)} target{'s' if len(table.targets) != 1 else ''}"]
    if rounds > 1:
        parts.append(f"{rounds} rounds")
    parts.append(f"{len(campaign.runs)} run{'s' if len(campaign.runs) != 1 else ''}")
    return ", ".join(parts)


def _headline_block(row: Row, table: Table, stop: str | None) -> list:
    """One headline row: its measurement, metric and direction, why it stopped, and a
    small table with a line per target (its centre, that centre's CI and n, and its
    finding against the baseline: the ratio, its interval at the decision's level and
    the outcome, as the verdict line says it)."""
    label = f"{row.label} · " if row.label else ""
    directions: dict[bool | None, str] = {True: "higher is better", False: "lower is better"}
    direction = directions.get(row.higher_is_better, "no direction")
    unit = row_unit(row)  # the same human unit as the report: 2.47 ms, not 2,470 µs
    human = metric_label(row.metric, row.workload)
    title = Text(f"{label}{human}", style="bold") + Text(
        (f" · {row.metric}" if human != row.metric else "")
        + (f" ({unit}, {direction})" if unit else f" ({direction})"),
        style="dim",
    )
    rt = RichTable(box=None, padding=(0, 1), show_edge=False, pad_edge=False)
    rt.add_column("  target", no_wrap=True)
    rt.add_column(centre_name(row), justify="right", no_wrap=True)
    rt.add_column("95% CI, n", no_wrap=True, style="dim")
    rt.add_column(f"vs {table.baseline}" if table.baseline else "", no_wrap=True)
    scale = row_scale(row)
    for name in table.targets:
        cell = row.cells[name]
        if cell.status != "ok":
            value = Text(cell_text(cell), style="dim")
        else:
            value = Text(
                format_value(cell.value, scale, row.unit), style="bold green" if cell.best else ""
            )
            if cell.best:
                value.append(f" {BEST_MARK}", style="bold green")
        versus = Text()
        if name == table.baseline:
            versus.append("baseline", style="dim")
        elif (f := cell.finding) is not None and (text := finding_text(cell)):
            versus.append(text, style="cyan")
            if kind := verdict_kind(cell):
                versus.append(f" {kind}", style=_VERDICT_STYLE.get(f.outcome, ""))
            if f.early:
                versus.append(f" (rounds 1–{f.through})", style="dim")
        rt.add_row(Text(f"  {name}"), value, spread_text(cell), versus)
    return [title] + ([Text(f"  {stop}", style="dim")] if stop else []) + [rt]


_VERDICT_STYLE = {"better": "bold green", "worse": "bold red", "equivalent": "bold"}


def _cell_parts(
    cell: Cell, scale: float | None, is_baseline: bool, unit: str | None = None
) -> tuple[Text, Text, Text]:
    """A cell in ``human_unit(unit, scale)``: its value (with ★), its spread and n, and
    its ratio to the baseline with the verdict mark; a part it lacks is empty."""
    if cell.status != "ok":
        return Text(cell_text(cell), style="dim"), Text(), Text()
    value = Text(format_value(cell.value, scale, unit), style="bold green" if cell.best else "")
    if cell.best:
        value.append(f" {BEST_MARK}", style="bold green")
    spread = Text(spread_text(cell) or "", style="dim")
    versus = Text()
    if not is_baseline and (text := finding_text(cell)):
        versus.append(text, style="cyan")
        if mark := verdict_mark(cell):
            versus.append(f" {mark}", style="bold")
    return value, spread, versus
