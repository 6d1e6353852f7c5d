"""The HTML report: one self-contained file next to the results it describes.

Everything (CSS, charts and the charting library) is inline and nothing is
fetched, so the file can be mailed, archived or opened on an air-gapped box and
look the same.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import tempfile
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from pgfsbench.analysis.advice.advise import advise
from pgfsbench.analysis.advice.capabilities import offered_notes, unmeasured_workloads
from pgfsbench.analysis.advice.recommendation import stated_together
from pgfsbench.analysis.caveats.bound import legend as bound_legend
from pgfsbench.analysis.caveats.diff import provenance_diff
from pgfsbench.analysis.caveats.disturbance import disturbed_runs
from pgfsbench.analysis.caveats.disturbance import legend as disturbance_legend
from pgfsbench.analysis.caveats.durability import durabilities
from pgfsbench.analysis.caveats.notes import fill_verdict_caveats, run_bound, target_caveats
from pgfsbench.analysis.stats.ci_cache import kept_in
from pgfsbench.analysis.table import Row, Table, comparison_table
from pgfsbench.analysis.verdicts.answer import campaign_answer, glossary
from pgfsbench.analysis.verdicts.disturbed import disturbed_visits
from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
from pgfsbench.compare.row_texts import footer as compare_footer
from pgfsbench.compare.row_texts import looks_text
from pgfsbench.filesystems.mountcheck import changes_for, describe
from pgfsbench.render.values import (
    BEST_MARK,
    cell_text,
    direction_arrow,
    direction_title,
    format_quantity,
    format_ratio,
    format_value,
    row_scale,
    row_unit,
    spread_text,
)
from pgfsbench.report import charts
from pgfsbench.report.figures import render_figures
from pgfsbench.report.plotly_js import CHARTS_INIT_JS, plotly_js
from pgfsbench.report.terminal import notices
from pgfsbench.store.read import Campaign, StoredArtifact, load_campaign
from pgfsbench.units import fact_quantity

REPORT_NAME = "report.html"


def write_report(
    results_dir: Path,
    campaign: Campaign | None = None,
    output: Path | None = None,
    history: list | None = None,
) -> Path:
    """Render ``results_dir/report.html`` (or ``output``) from the stored results;
    returns its path. ``campaign``, when given, is results_dir already loaded;
    ``history``, the ``compare.series.Series`` it ends (a section of their own).

    A full or read-only filesystem raises OSError and leaves any earlier report as it was.
    """
    campaign = campaign or load_campaign(results_dir)
    with kept_in(results_dir):  # what the report computed, kept for the read commands
        html = render_report(campaign, history or [])
    out = output or results_dir / REPORT_NAME
    # Temp file in the same directory, then rename: a reader never sees half a report.
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".report-", suffix=".html.tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(html)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the report is meant to be shared
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def render_report(campaign: Campaign, history: list | None = None) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pgfsbench.report", "templates"),
        autoescape=True,  # every string here came from a tool's output or a plan file
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        cell=cell_text,
        ratio=format_ratio,
        arrow=direction_arrow,
        spread=spread_text,
        cell_value=format_value,
        direction_title=direction_title,
        when=_when,
        duration=_duration,
        argv=_argv,
        params=_params,
        href=_href,
        basename=lambda p: Path(p).name,
        describe=describe,
        fact=_fact,
        fact_name=_fact_name,
        quantity=_quantity,
        memory_limit=_memory_limit,
    )
    env.globals.update(
        row_scale=row_scale,
        row_unit=row_unit,
        looks_text=looks_text,
        unmeasured_workloads=unmeasured_workloads,
        offered_notes=offered_notes,
        stated_together=stated_together,
    )
    shared = comparison_table(campaign)
    # Keep each workload's rows together (a metric only a later run has is appended
    # last), in the order workloads first ran, so the template can group them.
    # A sorted copy: the table is shared with the charts.
    first = {w: i for i, w in reversed(list(enumerate(r.workload for r in shared.rows)))}
    table = dataclasses.replace(shared, rows=sorted(shared.rows, key=lambda r: first[r.workload]))
    figures = render_figures(campaign)
    history_figures = []
    if history:
        from pgfsbench.compare.row_texts import point_texts
        from pgfsbench.report.chart_history import history_charts

        history_figures = history_charts(history)
    verdicts = fill_verdict_caveats(verdict_lines(table, durabilities(campaign)), campaign)
    return env.get_template("report.html.j2").render(
        c=campaign,
        advice=advise(campaign),
        table=table,
        groups=table_groups(table),
        headline_rows={(r.workload, r.label, r.metric): r for r in table.rows if r.headline},
        notices=notices(campaign),
        colors=charts.target_colors(campaign),
        best_mark=BEST_MARK,
        outcome_text=OUTCOME_TEXT,
        # charts.Chart objects: id, title, caption, html (the div and its JSON spec).
        figures=figures,
        # This campaign after its predecessors of the plan in a store (report --store).
        history=[(s, point_texts(s)) for s in history or []],
        history_figures=history_figures,
        # The library and the init script, once in <head>; none without a chart.
        plotly_js=Markup(plotly_js()) if figures or history_figures else "",
        charts_init_js=Markup(CHARTS_INIT_JS) if figures or history_figures else "",
        host=_host_items(campaign.host),
        fs_of={t.name: t.fs for t in campaign.targets},
        durability=durabilities(campaign),
        verdicts=verdicts,
        answer=campaign_answer(verdicts),
        disturbed=disturbed_visits(campaign, campaign_answer(verdicts)) if verdicts else None,
        glossary=glossary(shared),
        bounds={r.id: run_bound(r) for r in campaign.runs},
        left_out=disturbed_runs(campaign.runs),
        disturbance_legend=disturbance_legend(),
        bound_legend=bound_legend(),
        target_caveats={t.name: target_caveats(t) for t in campaign.targets},
        schedule=campaign.schedule,
        footer=compare_footer(table),
        diff=provenance_diff(campaign.targets),
        diff_targets=[t.name for t in campaign.targets if t.provenance],
        diff_groups=DIFF_GROUPS,
        option_changes={t.name: changes_for(t.provenance, t.spec, t.fs) for t in campaign.targets},
    )


# Rows that are not the workload's own result, each under its own header after the
# workloads' rows: metric prefix -> header.
SIDE_GROUPS = {
    "eff.": "cost per unit of work",
    "mon.": "monitors",
    "bound.": "what limited the run",
}


@dataclasses.dataclass
class RowGroup:
    title: str  # "pgbench · clients=8", "monitors · pgbench"
    kind: str  # "workload", or the prefix's group ("mon", "bound", "eff")
    rows: list[Row]


def table_groups(table: Table) -> list[RowGroup]:
    """The comparison rows in groups with a header each: every workload's own metrics
    first (in the order the rows come), then its cost, monitor and limit rows, each
    group labelled with the measurement it was taken during."""
    groups: dict[tuple[str, str, str], RowGroup] = {}
    for row in table.rows:
        prefix = next((p for p in SIDE_GROUPS if row.metric.startswith(p)), "")
        where = f"{row.workload} · {row.label}" if row.label else row.workload
        title = f"{SIDE_GROUPS[prefix]} · {where}" if prefix else where
        key = (prefix, row.workload, row.label)
        group = groups.setdefault(key, RowGroup(title, prefix.rstrip(".") or "workload", []))
        group.rows.append(row)
    order = ["", *SIDE_GROUPS]
    # dicts keep insertion order, and sorted() is stable: workloads keep theirs
    return [g for _, g in sorted(groups.items(), key=lambda kv: order.index(kv[0][0]))]


DIFF_GROUPS = {  # titles of the row groups in "What differs between these targets"
    "plan": "plan (asked)",
    "mount": "effective mount options (read back from the kernel)",
    "geometry": "filesystem geometry",
    "device": "device",
    "backing_device": "disk under the loop image",
    "sysctl": "sysctls (read back)",
    "postgres": "PostgreSQL",
}


def _host_items(host: dict) -> list[tuple[str, str]]:
    """Flatten the host dict (nested dicts become dotted keys) for a two-column list;
    sizes in human units under a key without the unit (memory 23.5 GiB, not memory_mb)."""
    items: list[tuple[str, str]] = []
    for key, value in host.items():
        if isinstance(value, dict):
            items += [(f"{key}.{k}", v) for k, v in _host_items(value)]
        elif isinstance(value, (list, tuple)):
            items.append((str(key), _fact(value)))
        else:
            items.append((str(key), "" if value is None else _fact(value, key)))
    return items


def _fact_name(key: object) -> str:
    """A fact's key for a reader: its unit, said by the value, left out."""
    text = str(key)
    named = fact_quantity(text, 0)
    return (named[0] if named else text).replace("_", " ")


def _fact(value: object, key: object = "") -> str:
    """A provenance fact for a reader: yes/no, lists joined, nested facts as
    "key: value" pairs, sizes in human units where the key names a byte unit, never a
    Python or JSON repr ("None", "{}", "['dd']")."""
    if (human := fact_quantity(str(key), value)) is not None:
        return human[1]
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "—"
    if isinstance(value, dict):
        return "; ".join(f"{_fact_name(k)}: {_fact(v, k)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple, set)):
        return ", ".join(_fact(v) for v in value) or "none"
    if isinstance(value, float):
        return format_value(value)
    return str(value)


def _memory_limit(record: dict) -> str:
    """A target's memory cgroup in one line: "128M (cgroup v1 memory); peak 128 MiB; 0
    charges refused at the limit" (the highest peak and every refusal over the visits)."""
    parts = [f"{record.get('limit')} ({record.get('mechanism', 'cgroup')})"]
    if isinstance(peak := record.get("peak_bytes"), int):
        parts.append(f"peak {_fact(peak, 'peak_bytes')}")
    counts = [record.get(k) for k in ("failcnt", "memsw_failcnt", "max_events")]
    if counts := [c for c in counts if isinstance(c, int)]:
        hits = sum(counts)
        parts.append(f"{hits:,} charges refused at the limit")
    if record.get("shared_with"):
        parts.append(f"made in {record['shared_with']}")
    return "; ".join(parts)


def _quantity(value: float | None, unit: str, scale: float | None = None) -> str:
    return format_quantity(value, unit, scale)


OUTCOME_TEXT = {"single run": "no verdict: one run each"}  # what a verdict card leads with


def _when(ts: float | None) -> str:
    if ts is None:
        return "—"
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S %z")


def _duration(span: tuple[float | None, float | None]) -> str:
    start, end = span
    if start is None or end is None:
        return "—"
    s = max(0.0, end - start)
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(round(s), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def _argv(argv: list[str] | None) -> str:
    return shlex.join(str(a) for a in argv) if argv else ""


def _params(params: dict) -> str:
    return " ".join(f"{k}={_param(v)}" for k, v in params.items() if _param(v) != "")


def _param(value: object) -> str:
    """A parameter as a plan file would write it: dd, not ['dd']; 8k, not '8k'."""
    if isinstance(value, (list, tuple)):
        return ",".join(_param(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ",".join(f"{k}:{_param(v)}" for k, v in value.items())
    return "" if value is None else str(value)


def _href(artifact: StoredArtifact) -> str | None:
    """A relative link into the results directory; absolute paths are not linked."""
    if Path(artifact.path).is_absolute() or artifact.path.startswith(".."):
        return None
    return quote(artifact.path)
