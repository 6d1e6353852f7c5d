"""The terminal summary leads with the answer and reads at 80 columns; the full table on
request. Over a stored real campaign: the default `quick` plan as `make demo` ran it
(ext4, xfs, btrfs, 15 rounds), its per-second series and artifacts left out to keep the
fixture small (the summary reads neither)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from pgfsbench.analysis.table import comparison_table
from pgfsbench.report.terminal import render_summary, render_table
from pgfsbench.store.read import load_campaign
from tests.unit.demo_campaign import unpack_demo


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return unpack_demo(tmp_path_factory.mktemp("demo") / "r")


def shown(render, campaign, width=80, **kwargs) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    render(campaign, console, **kwargs)
    return [ln.rstrip() for ln in console.file.getvalue().splitlines()]


def test_the_summary_reads_at_80_columns_and_leads_with_the_verdicts(demo):
    campaign = load_campaign(demo)
    lines = shown(render_summary, campaign, full_hint="every metric: show --full")
    full = shown(render_table, campaign)
    assert max(len(ln) for ln in lines) <= 80
    # bounded: the answer, not a firehose (the full table is over 350 lines here)
    assert len(lines) <= 70 and len(full) > 350
    assert lines[0].startswith(
        "quick · 20261206-023200-4c53cd · ok · 3 targets, 16 rounds, 105 runs"
    )
    # the verdicts first, then a section per workload, each headed
    verdicts = lines.index(next(ln for ln in lines if ln.startswith("verdicts ─")))
    sections = [ln.split(" ─")[0] for ln in lines if ln.endswith("──") and " ─" in ln]
    assert sections == ["verdicts", "fsync-latency", "pgbench", "pgbench-init"]
    first_section = lines.index(next(ln for ln in lines if ln.startswith("fsync-latency ─")))
    # the answer first, in one line of words: what was decided (here on both measurements)
    assert lines[1] == "answer: fsync p99 latency: xfs, ext4 > btrfs; TPC-B tps: xfs ≈ ext4 > btrfs"
    # then the terms it uses, once: the intervals' level in words, a round, a tier
    assert lines[2].startswith("  […]: 99.2% CIs: 95% for the 6 comparisons together")
    # a measurement with a decided pair is never filed under "inconclusive"; every
    # target quoted against the baseline, as the table below quotes it
    for decided in (
        "fsync-latency: xfs, ext4 > btrfs: against ext4, xfs −2.5% fsync p99 latency",
        "pgbench clients=4: xfs ≈ ext4 > btrfs: against ext4, xfs +2.2% TPC-B tps [+0.1%,",
    ):
        assert any(ln.startswith(decided) for ln in lines[verdicts:first_section]), decided
    # every headline metric whole on one line; no monitor row in the summary
    table = comparison_table(campaign)
    for row in (r for r in table.rows if r.headline):
        assert any(row.metric in ln for ln in lines), row.metric
    assert not [ln for ln in lines if "mon." in ln or "bound." in ln]
    # a line per target under each headline, with its geometric mean, its CI, n and its
    # finding against the baseline (the verdict line's figure)
    assert "  btrfs       1,737  ±3% n=16   −48% [−50%, −46%] worse" in lines
    assert "  ext4        3,328  ±1% n=16   baseline" in lines
    # in the report's human units: fdatasync p99 in ms, not 3,460 µs
    assert "fsync p99 latency · fsync_latency.sync_p99_us (ms, lower is better)" in lines
    assert "  ext4         0.31  ±4% n=16   baseline" in lines
    # why an 'auto' measurement stopped, under its heading
    assert "  max rounds: 16 reached, 1 of 3 comparisons undecided" in lines
    # a caveat every measurement shares is said once, not once per verdict
    assert sum("on a virtual disk (virtio)" in ln for ln in lines) == 1
    assert lines[-1] == "every metric: show --full"


def test_the_brief_summary_is_the_verdicts_alone(demo):
    lines = shown(render_summary, load_campaign(demo), brief=True)
    titles = [
        ln.split(":")[0]
        for ln in lines
        if not ln.startswith(" ")
        and ": " in ln
        and ln.split(":")[0] in ("fsync-latency", "pgbench clients=4", "pgbench-init")
    ]
    assert titles == ["fsync-latency", "pgbench clients=4", "pgbench-init"]
    assert len(lines) < 25 and not [ln for ln in lines if "─" in ln or "ⓘ" in ln]


def test_the_full_table_states_a_caveat_every_verdict_shares_once(demo):
    lines = shown(render_table, load_campaign(demo), width=200)
    virtio = [ln for ln in lines if "on a virtual disk (virtio)" in ln]
    assert len(virtio) == 1 and virtio[0].startswith("ⓘ every measurement: ")


def test_the_full_table_heads_each_measurement(demo):
    lines = shown(render_table, load_campaign(demo), width=200)
    heads = [
        ln.split("│")[1].strip()
        for ln in lines
        if ln.count("│") > 3 and ln.split("│")[2].strip() == "" and ln.split("│")[1].strip()
    ]
    # mon.* rows follow the measurement they belong to, under its heading
    assert heads == ["fsync-latency", "pgbench clients=4", "pgbench-init"]
    rows = [ln.split("│")[1].strip() for ln in lines if ln.count("│") > 3]
    assert rows.count("mon.cpu.busy_s") == 2  # fsync-latency, pgbench-init
    assert rows.index("mon.cpu.busy_s") > rows.index("fsync-latency")


def test_compare_at_80_columns_breaks_no_word_and_states_shared_caveats_once(demo):
    from typer.testing import CliRunner

    from pgfsbench.cli import app

    out = CliRunner().invoke(app, ["compare", str(demo)], env={"COLUMNS": "80"}).output
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80
    assert lines[0].startswith("answer: ")
    # every metric id whole on one line (a grid at 80 columns broke them mid-way)
    for metric in ("fsync_latency.sync_p99_us", "pgbench.tps", "pgbench_init.elapsed_s"):
        assert any(metric in ln for ln in lines), metric
    assert "measureme" not in out.replace("measurement", "")
    assert sum("on a virtual disk (virtio)" in ln for ln in lines) == 1
    # wide enough, the side-by-side grid
    wide = CliRunner().invoke(app, ["compare", str(demo)], env={"COLUMNS": "200"}).output
    assert "btrfs vs base" in wide


@pytest.mark.parametrize("width", [80, 50])
def test_list_wraps_under_its_own_indent(demo, width):
    """A campaign's lines wrap between words, each continuation under the line's indent:
    the host's machine id or a long path never starts a line at column 0."""
    from typer.testing import CliRunner

    from pgfsbench.cli import app

    out = CliRunner().invoke(app, ["list", str(demo)], env={"COLUMNS": str(width)}).output
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= width
    assert lines[-1] == "1 campaign"
    heads = [ln for ln in lines[:-1] if not ln.startswith(" ")]
    assert heads == [lines[0]] and lines[0].startswith("20261206-")
    assert "on vm (3d1219c7)" in " ".join(ln.strip() for ln in lines)  # the fixture's host


@pytest.mark.parametrize("fmt", ["text", "conf"])
def test_advise_holds_at_80_columns_with_comments_on_their_own_lines(demo, fmt):
    from typer.testing import CliRunner

    from pgfsbench.cli import app

    out = (
        CliRunner()
        .invoke(app, ["advise", str(demo), "--format", fmt], env={"COLUMNS": "80"})
        .output
    )
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80, max(lines, key=len)
    if fmt == "conf":  # a setting is alone on its line; everything else is a comment
        # the kept defaults are written out too (the campaign ran PostgreSQL 18); no
        # wal_sync_method: the quick plan runs no pg_test_fsync (a "# not set" comment)
        assert [ln for ln in lines if not ln.startswith("#")] == [
            "io_method = 'worker'",
            "io_workers = 3",
            "effective_io_concurrency = 16",
            "io_combine_limit = '128kB'",
        ]
    else:  # the defaults no target varied on one line, with one why; targets grouped
        assert "  postgresql.conf: io_method = worker, io_workers = 3," in lines
        # the one why: the quick plan sets no wal_sync_method (no pg_test_fsync run)
        assert sum(ln.startswith("      why: ") for ln in lines) == 1
        assert "  ext4: no reflink clone, no snapshot, no compression" in lines
