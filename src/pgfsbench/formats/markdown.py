"""The Markdown format (GitHub-flavoured): a comparison as a table with its verdicts and
footer; a stored campaign as a document to paste in an issue, a pull request or a wiki:
what ran where, the verdicts and headline comparison, the targets with the PostgreSQL
durability and I/O settings they ran with and the commands that made them, then each
measurement's metrics (value, CI, n per target) with the commands of a round.

By default the document fits a GitHub comment (65,536 characters; the default demo's is
about 40% of that): what is long (the legend, every setting, every command) folds into
``<details>`` blocks, each round's values are left to ``--full`` (one
row per metric and round), and the host's identifiers (hostname, machine id, kernel
command line) to ``--host-ids``. No line holds a list of every round's values.

No Python reprs: nothing is an empty cell, flags are yes/no, numbers are grouped.
"""

from __future__ import annotations

import math
import re
import shlex
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from pgfsbench.compare.comparison import Comparison
from pgfsbench.formats.registry import COMPARISON, EXPORT, OutputFormat
from pgfsbench.render.verdict_text import shared_caveats

if TYPE_CHECKING:  # only for the annotations: analysis.table imports scipy, slow to load
    from pgfsbench.analysis.table import Row, Table
    from pgfsbench.analysis.verdicts.verdict_lines import VerdictLine
    from pgfsbench.store.read import Campaign, StoredRun, StoredTarget

# The host facts that say which machine it was: published only when asked (--host-ids).
HOST_IDENTIFIERS = ("hostname", "machine_id", "kernel_cmdline")
# The durability settings shown in the open; the rest of pgsettings.IO_SETTINGS fold.
KEY_SETTINGS = (
    "fsync",
    "synchronous_commit",
    "full_page_writes",
    "wal_sync_method",
    "wal_level",
    "data_checksums",
    "io_method",
)


def write_comparison(comparison: Comparison, out: TextIO) -> None:
    head = [f"> ⚠ **{w}**" for w in comparison.warnings]
    if head:
        out.write("\n".join(head) + "\n\n")
    out.write(comparison_markdown(comparison.table, comparison.rows, comparison.verdicts))
    if comparison.notes:
        out.write("\n".join(f"- ⓘ {n}" for n in comparison.notes) + "\n")


def write_campaign(
    campaign: Campaign, out: TextIO, full: bool = False, host_ids: bool = False
) -> None:
    out.write(campaign_markdown(campaign, full=full, host_ids=host_ids))


FORMAT = OutputFormat(
    "markdown",
    "md",
    "text/markdown",
    {EXPORT: write_campaign, COMPARISON: write_comparison},
    order=20,
    series=False,  # the summary and the tables: no per-second series
    options=("full", "host_ids"),
)


def comparison_markdown(
    table: Table, rows: list[Row], verdicts: list[VerdictLine], answer: bool = True
) -> str:
    """``answer``: lead with the one-line answer (a document that already did: False)."""
    # Here, not at the top: the CLI loads this module to list the formats in its help.
    from pgfsbench.analysis.verdicts.answer import campaign_answer, glossary
    from pgfsbench.compare.row_texts import diff_text, footer, value_text
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
    out += ["", *_details("How to read the figures", _sentences(footer(table))), ""]
    return "\n".join(out)


def _sentences(text: str) -> list[str]:
    """A paragraph a sentence a line, in italics: the legend runs to a thousand
    characters, and no line of the document is to be that long (a renderer joins them;
    a GitHub comment breaks the lines where they are)."""
    return [f"_{s}_" for s in re.split(r"(?<=[.)]) (?=[A-Z])", text.strip())]


def campaign_markdown(campaign: Campaign, full: bool = False, host_ids: bool = False) -> str:
    """``full``: each round's values too; ``host_ids``: the host's identifiers too."""
    from pgfsbench.analysis.caveats.durability import durabilities
    from pgfsbench.analysis.caveats.notes import fill_verdict_caveats
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts.answer import campaign_answer
    from pgfsbench.analysis.verdicts.disturbed import disturbed_visits
    from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
    from pgfsbench.compare.row_texts import select_rows

    c = campaign
    durability = durabilities(c)
    table = comparison_table(campaign)
    lines = fill_verdict_caveats(verdict_lines(table, durability), campaign)
    out = [f"# pgfsbench: {c.plan_name} (campaign {c.id})", ""]
    if lines:  # the answer first
        out += [f"**Answer:** {campaign_answer(lines)}", ""]
        if found := disturbed_visits(campaign, campaign_answer(lines)):
            out += [f"**Disturbed:** {found.text()}", ""]
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
    shown = {k: v for k, v in c.host.items() if v not in (None, "", {})}
    hidden = [] if host_ids else [k for k in HOST_IDENTIFIERS if k in shown]
    out += [_tr(f"host {k}", _plain(v)) for k, v in shown.items() if k not in hidden]
    if hidden:
        out.append(
            _tr("host identifiers", f"left out ({', '.join(hidden)}): --host-ids shows them")
        )
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
        safety = (
            f"{d.level}"
            + (f": {'; '.join(d.reasons)}" if d.reasons else "")
            + (f"; {d.crash_test.sentence()}" if d.crash_test else "")
            if d
            else ""
        )
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
    out += _settings(c.targets)
    out += _target_commands(c.targets)
    out += _offers(c)
    out += [
        "",
        "## Measurements",
        "",
        "Each cell: a target's value over the counted rounds, as `compare --metric '*'` "
        "shows it (how to read it: under the headline comparison); a settling round "
        "(`r0`) runs first and is never counted; n/a: unsupported here."
        + ("" if full else " Each round's values: `export --format markdown --full`."),
        "",
    ]
    if not c.runs:
        out += ["No run was recorded.", ""]
    by_measurement: dict[tuple[str, str], list[Row]] = {}
    for row in table.rows:
        by_measurement.setdefault((row.workload, row.label), []).append(row)
    for (workload, label), runs in _measurements(c.runs).items():
        out += _measurement(
            workload,
            label,
            runs,
            [t.name for t in c.targets],
            by_measurement.get((workload, label), []),
            full,
        )
    return "\n".join(out) + "\n"


def _details(summary: str, body: list[str]) -> list[str]:
    """``body`` folded under ``summary`` (GitHub renders Markdown inside once a blank
    line follows the summary)."""
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]


def _settings(targets: list[StoredTarget]) -> list[str]:
    """The PostgreSQL durability and I/O settings each target's server ran with, the key
    ones in the open, the rest folded. A campaign recorded before they were all kept says
    which it did not record (at the server's default)."""
    from pgfsbench.formats.target_provenance import postgres_of

    servers = {t.name: pg for t in targets if (pg := postgres_of(t.provenance or {}))}
    if not servers:
        return []
    names: dict[str, None] = {}  # in pgsettings.IO_SETTINGS' order
    for pg in servers.values():
        names.update(dict.fromkeys(pg["io_settings"]))

    def table(settings: list[str], version: bool = False) -> list[str]:
        rows = [_row(["setting", *servers]), "|---|" + "---|" * len(servers)]
        if version:
            rows.append(_row(["version", *(pg["version"] for pg in servers.values())]))
        for name in settings:
            cells = [
                _setting(pg["io_settings"][name]) if name in pg["io_settings"] else "n/a"
                for pg in servers.values()
            ]
            rows.append(_row([f"`{name}`", *cells]))
        return rows

    older = [n for n, pg in servers.items() if not pg["io_settings_recorded"]]
    note = (
        f" {', '.join(older)}: recorded before pgfsbench kept them all; 'default, not "
        "recorded' is a setting at the server's default whose value was not recorded."
        if older
        else ""
    )
    rest = [n for n in names if n not in KEY_SETTINGS]
    out = [
        "",
        "### PostgreSQL",
        "",
        "The durability and I/O settings each target's server ran with, defaults included "
        f"(n/a: not in its version).{note}",
        "",
        *table([n for n in KEY_SETTINGS if n in names], version=True),
    ]
    if rest:
        out += ["", *_details(f"{len(rest)} more durability and I/O settings", table(rest))]
    return out


def _setting(value: str | None) -> str:
    """A setting's value as the server shows it, '' for empty (n/a: its version has none)."""
    if value is None:
        return "default, not recorded"
    return value if value else "''"


def _target_commands(targets: list[StoredTarget]) -> list[str]:
    """How each target was made and its server started, as commands to run again."""
    from pgfsbench.formats.target_provenance import postgres_of

    body = []
    for t in targets:
        p = t.provenance or {}
        made = [c["argv"] for c in p.get("commands") or [] if isinstance(c, dict)]
        pg = postgres_of(p)
        started = pg["commands"] if pg else []
        if made or started:
            body += [f"**{t.name}**", "", *_commands([*made, *started]), ""]
    if not body:
        return []
    return ["", *_details("The commands that made each target and started its server", body)]


def _commands(argvs: list[list[str]]) -> list[str]:
    """Commands as a shell would take them, one a line, in a code block."""
    return ["```", *(shlex.join(str(a) for a in argv) for argv in argvs), "```"]


def _offers(campaign: Campaign) -> list[str]:
    """What each filesystem offers PostgreSQL, as ``advise`` says it: a bullet per group
    of targets that read the same, what would measure it, each offered one's note."""
    from pgfsbench.analysis.advice.capabilities import capabilities
    from pgfsbench.render import capability_text as offers

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


def _measurement(
    workload: str,
    label: str,
    runs: list[StoredRun],
    targets: list[str],
    rows: list[Row],
    full: bool,
) -> list[str]:
    """A measurement: its parameters, each metric's value per target (the comparison
    table's cells), the commands of one round, each round's values (``full``), the runs
    that failed."""
    from pgfsbench.compare.row_texts import value_text
    from pgfsbench.render.values import row_scale, row_unit

    targets = [t for t in targets if any(r.target == t for r in runs)]
    params = ", ".join(
        f"{k}={_plain(v)}" for k, v in runs[0].params.items() if v not in (None, "") and k != "type"
    )
    out = [f"### {workload} {label}".rstrip(), ""]
    if params:
        out += [f"Parameters: {params}", ""]
    rows = [r for r in rows if any(r.cells[t].status != "missing" for t in targets)]
    if rows:
        out += [
            _row(["metric", "unit", "better", *targets]),
            "|---|---|---|" + "---|" * len(targets),
        ]
        for row in rows:
            scale = row_scale(row)
            out.append(
                _row(
                    [f"`{row.metric}`", row_unit(row), _better(row.higher_is_better)]
                    + [value_text(row.cells[t], scale, row.unit) for t in targets]
                )
            )
        out.append("")
    out += _run_commands(runs, targets)
    if full:
        out += _rounds(runs, targets)
    failed = [r for r in runs if r.status != "ok"]
    if failed:
        out += [
            f"- {r.target} round {r.repetition}: {r.status}" + (f": {r.error}" if r.error else "")
            for r in failed
        ] + [""]
    return out


def _run_commands(runs: list[StoredRun], targets: list[str]) -> list[str]:
    """The commands each target's run of the first counted round ran (the other rounds
    differ in their paths; the JSON export has every run's)."""
    body = []
    for t in targets:
        mine = [r for r in runs if r.target == t and any(a.command for a in r.artifacts)]
        counted = [r for r in mine if r.repetition > 0] or mine
        if counted:
            r = counted[0]
            body += [
                f"**{t}**, round {r.repetition}",
                "",
                *_commands([list(a.command or ()) for a in r.artifacts if a.command]),
                "",
            ]
    if not body:
        return []
    return [*_details("The commands a round ran", body[:-1]), ""]


def _rounds(runs: list[StoredRun], targets: list[str]) -> list[str]:
    """Each round's value of every metric per target, a row per metric and round."""
    values: dict[str, dict[int, dict[str, str]]] = {}  # metric → round → target → text
    for r in runs:
        if r.status in ("superseded", "redone"):  # run again: not a value
            continue
        for m in r.metrics:
            values.setdefault(m.name, {}).setdefault(r.repetition, {})[r.target] = _number(m.value)
    if not values:
        return []
    body = [_row(["metric", "round", *targets]), "|---|---|" + "---|" * len(targets)]
    for name, rounds in values.items():
        for i, (round_no, cells) in enumerate(sorted(rounds.items())):
            body.append(
                _row(
                    [f"`{name}`" if i == 0 else "", f"r{round_no}"]
                    + [cells.get(t, "") for t in targets]
                )
            )
    return [*_details("Each round's values", body), ""]


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
