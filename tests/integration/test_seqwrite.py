"""seqwrite end to end: real dd and fio on real ext4 and xfs loop filesystems (the seqwrite study).

Every stored number is checked against the raw tool output kept beside it, and
the monitor's device series against the bytes the tools wrote.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from pathlib import Path

import pytest

from pgfsbench.metrics import SEQWRITE_SAMPLE_INTERVAL
from pgfsbench.report.chart_seqwrite import cpu_chart, throughput_chart
from pgfsbench.store.read import load_campaign
from tests.integration.conftest import command_artifact, export, ledgers, ran, run_plan
from tests.integration.plans import ext4, loop, plan_toml

SIZE = 64 * 2**20
PLAN = plan_toml(
    "seqwrite-tiny",
    [ext4("ext4"), loop("xfs", "xfs")],
    [{"type": "seqwrite", "size": "64M", "block_size": "4k", "tools": ["dd", "fio"]}],
)
TARGETS = ("ext4", "xfs")
# dd's C-locale summary, matched here independently of the parser under test.
DD_SUMMARY = re.compile(
    r"^(\d+) bytes \(.*\) copied, ([\d.e-]+) s, ([\d.]+) (k|M|G)B/s$", re.MULTILINE
)


@pytest.fixture(scope="module")
def seqwrite_run(tmp_path_factory, state_dir):
    return run_plan(tmp_path_factory.mktemp("seqwrite"), PLAN)


def _runs(results: Path) -> dict[str, int]:
    db = sqlite3.connect(results / "results.db")
    return dict(
        db.execute(
            "SELECT t.name, r.id FROM runs r JOIN targets t ON t.id = r.target_id"
            " WHERE r.workload = 'seqwrite'"
        )
    )


def _metrics(results: Path, run_id: int) -> dict[str, float | None]:
    db = sqlite3.connect(results / "results.db")
    return dict(db.execute("SELECT name, value FROM metrics WHERE run_id = ?", (run_id,)))


def _series(results: Path, run_id: int, name: str) -> list[tuple[float, float]]:
    db = sqlite3.connect(results / "results.db")
    return list(
        db.execute(
            "SELECT t, value FROM series WHERE run_id = ? AND name = ? ORDER BY t", (run_id, name)
        )
    )


def test_both_targets_measured_dd_and_fio(seqwrite_run):
    results, _ = seqwrite_run
    data = export(results)
    tools = ran(data, "seqwrite")  # the exact command lines, in the export
    assert tools["dd"][1:] == [
        "if=/dev/zero",
        tools["dd"][2],
        "bs=4096",
        "count=16384",
        "conv=fdatasync",
    ]
    assert {"--rw=write", "--bs=4096", "--end_fsync=1"} <= set(tools["fio"])
    assert sorted((r["target"], r["status"]) for r in data["runs"]) == [
        ("ext4", "ok"),
        ("xfs", "ok"),
    ], data["runs"]
    for target, run_id in _runs(results).items():
        m = _metrics(results, run_id)
        for tool in ("dd", "fio"):
            assert m[f"seqwrite.{tool}.mb_per_s"] > 0, (target, tool)
            assert m[f"seqwrite.{tool}.seconds"] > 0, (target, tool)
            split = [m[f"seqwrite.{tool}.cpu_{p}_pct"] for p in ("user", "system", "iowait")]
            assert all(0 <= v <= 100 for v in split), (target, tool, split)
            assert sum(split) <= 100.001
        # The same write, two tools, one after the other on a shared disk: a sanity band
        # against unit mistakes (the exact checks per tool are below), not a race.
        ratio = m["seqwrite.dd.mb_per_s"] / m["seqwrite.fio.mb_per_s"]
        assert 0.1 < ratio < 10, (target, m)


def test_dd_figure_is_bytes_over_seconds_of_the_kept_output(seqwrite_run):
    results, _ = seqwrite_run
    for target, run_id in _runs(results).items():
        argv, text = command_artifact(results, run_id, "seqwrite-dd")
        assert argv[1:] == ["if=/dev/zero", argv[2], "bs=4096", "count=16384", "conv=fdatasync"]
        assert argv[2].startswith("of=") and argv[2].endswith("/seqwrite.img")
        ((nbytes, seconds, rate, prefix),) = DD_SUMMARY.findall(text)
        assert int(nbytes) == SIZE
        m = _metrics(results, run_id)
        assert m["seqwrite.dd.seconds"] == pytest.approx(float(seconds))
        assert m["seqwrite.dd.mb_per_s"] == pytest.approx(SIZE / float(seconds) / 1e6)
        # dd's own CPU seconds (the seqwrite study's 'time dd'): one thread, so at most its wall time.
        cpu_s = m["seqwrite.dd.process_user_s"] + m["seqwrite.dd.process_system_s"]
        assert 0 < cpu_s <= float(seconds) + 0.1, target
        printed = float(rate) * {"k": 1e-3, "M": 1, "G": 1e3}[prefix]
        assert m["seqwrite.dd.mb_per_s_reported"] == pytest.approx(printed)
        assert m["seqwrite.dd.mb_per_s"] == pytest.approx(printed, rel=0.06), target  # rounding


def test_fio_figure_is_its_json_bandwidth(seqwrite_run):
    results, _ = seqwrite_run
    for run_id in _runs(results).values():
        argv, text = command_artifact(results, run_id, "seqwrite-fio")
        assert {
            "--rw=write",
            "--bs=4096",
            f"--size={SIZE}",
            "--end_fsync=1",
            "--output-format=json",
        } <= set(argv)
        stdout = text.split("# --- stdout ---\n", 1)[1].split("# --- stderr ---\n", 1)[0]
        (job,) = json.loads(stdout[stdout.index("{") :])["jobs"]
        assert job["error"] == 0 and job["write"]["io_bytes"] == SIZE
        m = _metrics(results, run_id)
        assert m["seqwrite.fio.mb_per_s"] == pytest.approx(job["write"]["bw_bytes"] / 1e6)


def test_the_monitor_saw_the_bytes_reach_the_device(seqwrite_run):
    results, _ = seqwrite_run
    for target, run_id in _runs(results).items():
        m = _metrics(results, run_id)
        start = 0.0  # dd's monitor starts at the run's start (after a quick syncfs)
        for tool in ("dd", "fio"):
            points = _series(results, run_id, f"seqwrite.{tool}.disk.target.write_mb_per_s")
            assert points, (target, tool)
            # Sampled SEQWRITE_SAMPLE_INTERVAL apart (at 1 s a write of a second or two got two
            # points); loose: a loaded machine skips ticks.
            seconds = m[f"seqwrite.{tool}.seconds"]
            assert len(points) >= 1 + int(seconds / SEQWRITE_SAMPLE_INTERVAL / 2), (
                target,
                tool,
                points,
            )
            # Each point is the rate over the interval ending at its t.
            written, previous = 0.0, start
            for t, mb_per_s in points:
                written += mb_per_s * 1e6 * (t - previous)
                previous = t
            # The first interval starts at the monitor's first sample, a little after
            # `start` (a sync runs in between), so this over-counts, by more when the
            # write itself was quick: a loose upper bound, the exact ratio is next.
            assert 0.8 * SIZE < written < 10 * SIZE, (target, tool, written / SIZE)
            # The exact figure, from the first and last diskstats of the window.
            assert 0.95 < m[f"seqwrite.{tool}.device_write_ratio"] < 3, (target, tool)
            for name in (
                "cpu.user_pct",
                "cpu.system_pct",
                "cpu.iowait_pct",
                "cpu.idle_pct",
                "mem.dirty_mb",
                "mem.writeback_mb",
            ):
                assert _series(results, run_id, f"seqwrite.{tool}.{name}"), (target, name)
            start = points[-1][0]  # fio's monitor starts where dd's stopped


def test_report_has_the_seqwrite_figures(seqwrite_run):
    results, _ = seqwrite_run
    html = (results / "report.html").read_text()
    assert 'id="seqwrite-chart"' in html and 'id="seqwrite-cpu-chart"' in html
    campaign = load_campaign(results)
    figure = cpu_chart(campaign)
    assert [t["meta"]["target"] for t in figure["data"]] == list(TARGETS)
    assert 'id="seqwrite-timeline-chart"' in html
    no_runs = dataclasses.replace(campaign, runs=[])
    assert throughput_chart(no_runs) is None and cpu_chart(no_runs) is None


def test_written_files_and_images_are_gone(seqwrite_run, state_dir):
    results, _ = seqwrite_run
    assert not list((results / "images").glob("*.img"))
    assert not list(results.rglob("seqwrite.img"))
    assert ledgers(state_dir) == []
