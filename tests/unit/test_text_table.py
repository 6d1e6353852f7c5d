"""The full table laid out by hand (report/text_table.py): where it fits, the box rich's
own Table draws, character for character; where it does not, a line per target under
each metric, no line longer than the console and no name broken."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from pgfsbench.analysis.table import comparison_table
from pgfsbench.report import text_table
from pgfsbench.report.terminal import render_table
from pgfsbench.report.text_table import SECTION, Column
from pgfsbench.store.read import load_campaign
from tests.unit.demo_campaign import unpack_demo
from tests.unit.test_terminal_summary import shown

COLUMNS = [
    Column("metric"),
    Column("unit", style="dim"),
    Column("", justify="center"),
    Column("ext4 (baseline)", justify="right"),
    Column("xfs", justify="right"),
]
ROWS = [
    [Text("fsync-latency", style="bold underline")],
    [
        Text("fsync_latency.sync_p99_us"),
        Text("µs"),
        Text("↓"),
        Text("72.7 ±4% n=10"),
        Text("69.6 ★ ±5% n=10 ×0.98 ?"),
    ],
    [Text("pgbench.tps [clients=4]"), Text("tx/s"), Text("↑"), Text("n/a"), Text("1")],
    SECTION,
    [Text("pgbench-init", style="bold underline")],
    [Text("odd"), Text(""), Text("·"), Text("12"), Text("3,456.7 ±120% n=3 ×285.67 −")],
]


def _plain(renderable, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable, soft_wrap=isinstance(renderable, Text))
    return console.file.getvalue()


def _rich(title: str) -> RichTable:
    rt = RichTable(title=title, title_justify="left")
    for c in COLUMNS:
        rt.add_column(c.header, justify=c.justify, style=c.style or None)  # type: ignore[arg-type]
    for row in ROWS:
        if row is SECTION:
            rt.add_section()
        else:
            rt.add_row(*row)
    return rt


def test_where_it_fits_the_box_is_riches_own_line_for_line():
    for title in ("quick — 20261126-194137-026e0d", "t"):
        laid, _ = text_table.box_table(title, COLUMNS, ROWS, 200)
        assert laid is not None
        assert _plain(laid, 200) == _plain(_rich(title), 200)


def test_where_it_does_not_fit_there_is_no_box():
    laid, width = text_table.box_table("t", COLUMNS, ROWS, 200)
    assert laid is not None and width == max(len(ln) for ln in laid.plain.splitlines())
    assert text_table.box_table("t", COLUMNS, ROWS, width)[0] is not None
    assert text_table.box_table("t", COLUMNS, ROWS, width - 1) == (None, width)


def test_show_full_at_80_columns_puts_a_line_per_target_under_each_metric(tmp_path):
    campaign = load_campaign(unpack_demo(tmp_path / "r"))
    table = comparison_table(campaign)
    lines = shown(render_table, campaign, width=80)
    assert max(len(ln) for ln in lines) <= 80
    assert not [ln for ln in lines if "│" in ln or "┃" in ln]  # no box squeezed in
    names = [ln.split("  ")[0] for ln in lines]
    for row in table.rows:  # every metric whole at the start of its line, then its targets
        metric = f"{row.metric} [{row.label}]" if row.label else row.metric
        at = names.index(metric)
        heads = [ln.split()[0] for ln in lines[at + 1 : at + 1 + len(table.targets)]]
        assert heads == table.targets, metric
    # figures line up: the value column ends at one place within a metric
    at = names.index("fsync_latency.sync_max_us")  # 3.67, 3.18, 20.92 ms
    block = lines[at + 1 : at + 4]
    assert len({len(ln.split(" ±")[0].split()[-1]) for ln in block}) == 2  # two widths
    assert len({ln.index(" ±") for ln in block}) == 1, block
    # the second line says how wide the box would be; at that width, the box
    need = int(lines[1].removeprefix("a line per target: side by side takes ").split()[0])
    wide = shown(render_table, campaign, width=need)
    assert sum("│" in ln for ln in wide) > len(table.rows)
    assert max(len(ln) for ln in wide) == need
    assert "│" not in "".join(shown(render_table, campaign, width=need - 1))
