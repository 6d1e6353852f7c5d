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

from pgfsbench.analysis.advice import advise
from pgfsbench.analysis.bound import legend as bound_legend
from pgfsbench.analysis.caveats import fill_verdict_caveats, run_bound, target_caveats
from pgfsbench.analysis.diff import provenance_diff
from pgfsbench.analysis.table import comparison_table
from pgfsbench.analysis.verdicts import verdict_lines
from pgfsbench.report.compare import footer as compare_footer
from pgfsbench.filesystems.mountcheck import changes_for, describe
from pgfsbench.report import charts
from pgfsbench.report.figures import render_figures
from pgfsbench.report.plotly_js import CHARTS_INIT_JS, plotly_js
from pgfsbench.report.terminal import (BEST_MARK, cell_text, direction_arrow, direction_title,
                                       durabilities, format_ratio, format_value, notices,
                                       row_scale, spread_text)
from pgfsbench.store.read import Campaign, StoredArtifact, load_campaign

REPORT_NAME = "report.html"


def write_report(results_dir: Path, campaign: Campaign | None = None,
                 output: Path | None = None) -> Path:
    """Render ``results_dir/report.html`` (or ``output``) from the stored results;
    returns its path. ``campaign``, when given, is results_dir already loaded.

    A full or read-only filesystem raises OSError and leaves any earlier report as it was.
    """
    campaign = campaign or load_campaign(results_dir)
    html = render_report(campaign)
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


def render_report(campaign: Campaign) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pgfsbench.report", "templates"),
        autoescape=True,  # every string here came from a tool's output or a plan file
        trim_blocks=True, lstrip_blocks=True)
    env.filters.update(cell=cell_text, ratio=format_ratio, arrow=direction_arrow,
                       spread=spread_text, cell_value=format_value,
                       direction_title=direction_title,
                       when=_when, duration=_duration, argv=_argv, params=_params,
                       href=_href, basename=lambda p: Path(p).name, describe=describe,
                       fact=_fact)
    env.globals["row_scale"] = row_scale
    shared = comparison_table(campaign)
    # Keep each workload's rows together (a metric only a later run has is appended
    # last), in the order workloads first ran, so the template can group them.
    # A sorted copy: the table is shared with the charts.
    first = {w: i for i, w in reversed(list(enumerate(r.workload for r in shared.rows)))}
    table = dataclasses.replace(shared, rows=sorted(shared.rows, key=lambda r: first[r.workload]))
    figures = render_figures(campaign)
    return env.get_template("report.html.j2").render(
        c=campaign,
        advice=advise(campaign),
        table=table,
        notices=notices(campaign),
        colors=charts.target_colors(campaign),
        best_mark=BEST_MARK,
        # charts.Chart objects: id, title, caption, html (the div and its JSON spec).
        figures=figures,
        # The library and the init script, once in <head>; none without a chart.
        plotly_js=Markup(plotly_js()) if figures else "",
        charts_init_js=Markup(CHARTS_INIT_JS) if figures else "",
        host=_host_items(campaign.host),
        fs_of={t.name: t.fs for t in campaign.targets},
        durability=durabilities(campaign),
        verdicts=fill_verdict_caveats(verdict_lines(table, durabilities(campaign)), campaign),
        bounds={r.id: run_bound(r) for r in campaign.runs},
        bound_legend=bound_legend(),
        target_caveats={t.name: target_caveats(t) for t in campaign.targets},
        schedule=campaign.schedule,
        footer=compare_footer(table),
        diff=provenance_diff(campaign.targets),
        diff_targets=[t.name for t in campaign.targets if t.provenance],
        diff_groups=DIFF_GROUPS,
        option_changes={t.name: changes_for(t.provenance, t.spec, t.fs)
                        for t in campaign.targets},
    )


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
    """Flatten the host dict (nested dicts become dotted keys) for a two-column list."""
    items: list[tuple[str, str]] = []
    for key, value in host.items():
        if isinstance(value, dict):
            items += [(f"{key}.{k}", v) for k, v in _host_items(value)]
        elif isinstance(value, (list, tuple)):
            items.append((str(key), ", ".join(str(v) for v in value)))
        else:
            items.append((str(key), "" if value is None else str(value)))
    return items


def _fact(value: object) -> str:
    """A provenance fact for a reader: yes/no, lists joined."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return "—" if value is None else str(value)


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
    return " ".join(f"{k}={v}" for k, v in params.items())


def _href(artifact: StoredArtifact) -> str | None:
    """A relative link into the results directory; absolute paths are not linked."""
    if Path(artifact.path).is_absolute() or artifact.path.startswith(".."):
        return None
    return quote(artifact.path)
