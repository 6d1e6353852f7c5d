"""The bootstrap intervals kept beside the results (analysis/stats/ci_cache.py) are a cache and
never a source of truth: with or without the file, fresh or stale, readable or not, every
command shows the same numbers. Over the stored real `quick` campaign of the docs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from pgfsbench.analysis.stats import ci_cache, remembered
from pgfsbench.analysis.stats import medians as stats
from pgfsbench.analysis.table import comparison_table
from pgfsbench.formats.json import campaign_data
from pgfsbench.report.terminal import render_summary, render_table
from pgfsbench.store.read import load_campaign
from tests.unit.demo_campaign import unpack_demo


@pytest.fixture
def demo(tmp_path):
    return unpack_demo(tmp_path / "r")


@pytest.fixture(autouse=True)
def forget(monkeypatch):
    """Each test starts with nothing computed in this process."""
    monkeypatch.setattr(remembered, "values", {})


def everything(results: Path) -> str:
    """What show, show --full and export json print, from a freshly loaded campaign
    and an empty memory (only the file can carry intervals over)."""
    remembered.values.clear()
    campaign = load_campaign(results, series=False)
    out = []
    for render in (render_summary, render_table):
        console = Console(file=io.StringIO(), width=100, color_system=None)
        render(campaign, console)
        out.append(console.file.getvalue())
    out.append(json.dumps(campaign_data(campaign), sort_keys=True))
    return "\n".join(out)


def values_in(results: Path) -> dict:
    return json.loads((results / ci_cache.NAME).read_text())["values"]


def test_outputs_are_the_same_without_the_cache_with_it_and_after_deleting_it(demo, tmp_path):
    # Reference: computed with no cache at all (a source with no directory to keep it in).
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(demo / "results.db", plain / "results.db")
    first = everything(demo)  # computes, and writes the file
    assert (demo / ci_cache.NAME).is_file()
    stored = values_in(demo)
    assert len(stored) > 100  # every cell's CI of this campaign, and the unpaired ratios
    computed = dict(remembered.values)
    second = everything(demo)  # read back from the file
    assert second == first
    # every interval read back is the very one computed (JSON floats round-trip exactly)
    assert {k: remembered.values[k] for k in computed} == computed
    (demo / ci_cache.NAME).unlink()
    assert everything(demo) == first


def test_a_hit_needs_the_same_values_so_changed_data_is_computed_afresh(demo):
    x = np.array([10.0, 11.0, 12.5, 9.0, 10.2])
    before = stats.summarize(x)
    assert len(remembered.values) == 1
    # one value changed: another key, another interval, as computed without any cache
    y = x.copy()
    y[2] = 30.0
    changed = stats.summarize(y)
    assert len(remembered.values) == 2 and changed.ci_high != before.ci_high
    remembered.values.clear()
    assert stats.summarize(y) == changed
    # the order of the values is part of the key (it decides which run each resample picks)
    stats.summarize(x[::-1])
    assert len(remembered.values) == 2


def test_a_cache_entry_is_used_when_its_key_matches(demo):
    """The file is read: a (deliberately wrong) stored interval under the right key shows
    up, which proves that a fresh process takes its intervals from the file."""
    everything(demo)
    doc = json.loads((demo / ci_cache.NAME).read_text())
    key = next(k for k, v in doc["values"].items() if v is not None)
    doc["values"][key] = [-1.0, -2.0]
    (demo / ci_cache.NAME).write_text(json.dumps(doc))
    remembered.values.clear()
    with ci_cache.kept_in(demo):
        pass
    assert remembered.values[key] == (-1.0, -2.0)


def test_new_runs_make_the_stored_intervals_misses_and_the_file_is_rewritten(demo):
    import sqlite3

    first = everything(demo)
    old = set(values_in(demo))
    # A resumed campaign: one more round's value on one pgbench run changes its cells.
    with sqlite3.connect(demo / "results.db") as db:
        run, value = db.execute(
            "SELECT run_id, value FROM metrics JOIN runs ON runs.id = run_id "
            "WHERE name = 'pgbench.tps' AND repetition = 2 LIMIT 1"
        ).fetchone()
        db.execute(
            "UPDATE metrics SET value = ? WHERE run_id = ? AND name = 'pgbench.tps'",
            (value * 1.5, run),
        )
    changed = everything(demo)
    assert changed != first
    new = set(values_in(demo))
    assert new != old and not new <= old  # fresh intervals kept, under other keys
    # and what it shows is what a process with no cache at all shows
    (demo / ci_cache.NAME).unlink()
    assert everything(demo) == changed


@pytest.mark.parametrize(
    "content",
    ["", "{not json", '{"format": 1}', "[1, 2]", '{"format": 1, "code": "x", "intervals": {}}'],
)
def test_an_unreadable_or_foreign_file_is_ignored_and_replaced(demo, content):
    reference = everything(demo)
    (demo / ci_cache.NAME).write_text(content)
    assert everything(demo) == reference
    assert len(values_in(demo)) > 100  # rewritten with this code's intervals


def test_another_code_version_does_not_read_the_file(demo, monkeypatch):
    everything(demo)
    monkeypatch.setattr(remembered, "_code", b"another version!")
    remembered.values.clear()
    with ci_cache.kept_in(demo):
        pass
    assert remembered.values == {}


def test_a_read_only_results_directory_still_answers(demo):
    reference = everything(demo)
    (demo / ci_cache.NAME).unlink()
    demo.chmod(0o555)
    try:
        if (demo / "probe").exists() or _writable(demo):
            pytest.skip("running as root: a read-only directory is still writable")
        assert everything(demo) == reference
        assert not (demo / ci_cache.NAME).exists()
    finally:
        demo.chmod(0o755)


def _writable(directory: Path) -> bool:
    try:
        (directory / "probe").write_text("")
    except OSError:
        return False
    (directory / "probe").unlink()
    return True


def test_the_same_table_with_and_without_the_cache(demo):
    campaign = load_campaign(demo, series=False)
    table = comparison_table(campaign)
    cells = [(r.metric, t, c.ci, c.finding) for r in table.rows for t, c in r.cells.items()]
    remembered.values.clear()
    again = comparison_table(load_campaign(demo, series=False))
    assert [(r.metric, t, c.ci, c.finding) for r in again.rows for t, c in r.cells.items()] == cells


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 15, 16, 17, 31, 64, 65])
def test_the_counted_bootstrap_gives_the_very_medians_of_the_sorting_one(n):
    rng = np.random.default_rng(n)
    for x in (
        rng.normal(100, 10, n),
        np.round(rng.normal(5, 2, n)),  # ties
        rng.permutation(np.r_[np.zeros(n // 2), np.ones(n - n // 2)]),
    ):
        reference = stats._boot_medians(np.random.default_rng(stats._SEED), x)
        assert np.array_equal(stats._fresh_boot_medians(x), reference)


def test_the_design_reads_the_descriptive_measurements_the_campaign_kept(demo):
    """design_for takes the stored schedule's descriptive measurements instead of
    validating the whole plan: the same set where both exist, the kept one otherwise.
    (The campaign kept its set; `without` is a schedule from before it did.)"""
    from pgfsbench.analysis.stats.stored_design import descriptive_measurements, design_for

    campaign = load_campaign(demo, series=False)
    plan = campaign.plan
    assert "looks" in plan["repetitions"]  # planned looks: the path that reads the set
    found = descriptive_measurements(plan)
    assert found == {("pgbench-init", "")}
    design = dict(campaign.schedule["design"])
    assert design["descriptive"] == sorted(map(list, found))  # what the campaign kept
    without = {
        **campaign.schedule,
        "design": {k: v for k, v in design.items() if k != "descriptive"},
    }
    kept = {**campaign.schedule, "design": {**design, "descriptive": sorted(map(list, found))}}
    assert design_for(plan, kept) == design_for(plan, without)
    assert design_for(plan, kept).descriptive == found
    other = {**campaign.schedule, "design": {**design, "descriptive": [["pgbench", "clients=4"]]}}
    assert design_for(plan, other).descriptive == {("pgbench", "clients=4")}


@pytest.mark.parametrize("command", [["show"], ["show", "--full"], ["advise"]])
def test_a_second_read_imports_no_scipy(demo, command):
    """Importing scipy.special is ~0.25 s of a read command (remembered.py): the first
    read keeps every distribution value it computed, and the second, a fresh process,
    finds them all and never imports scipy."""
    import subprocess
    import sys

    argv = [sys.executable, "-X", "importtime", "-m", "pgfsbench", *command[:1], str(demo)]
    argv += command[1:]
    first = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert "scipy.special" in first.stderr  # nothing kept yet: computed, with scipy
    second = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert second.stdout == first.stdout
    assert [line for line in second.stderr.splitlines() if "scipy" in line] == []
    # np.median and np.unique import numpy.ma (~30 ms) on first use: the analysis
    # computes the same numbers without them (stats._median, arrays.distinct).
    assert [line for line in second.stderr.splitlines() if line.endswith(" numpy.ma")] == []
    # The workload kinds are read for their headline and params; their output parsers
    # (pgbench's, fio's, pg_test_fsync's) are imported only where a run parses output.
    parsers = ("_output", "pgfsbench.proc")
    assert [ln for ln in second.stderr.splitlines() if ln.endswith(parsers)] == []
