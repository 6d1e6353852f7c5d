"""HTML report, charts and terminal table, from a results directory written by Store."""

from __future__ import annotations

import json
import re
from pathlib import Path

from markupsafe import escape
from rich.console import Console

from pgfsbench.metrics import Artifact, Metric, Series, WorkloadResult
from pgfsbench.render.values import direction_arrow, direction_title, format_value
from pgfsbench.report.charts import fsync_chart, target_colors, tps_chart
from pgfsbench.report.html import write_report
from pgfsbench.report.plotly_js import plotly_js
from pgfsbench.report.terminal import render_table
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

SKIP_REASON = "zfs is not available: modprobe zfs exited 1 (module not found)"
RUN_ERROR = (
    'pgbench exited 2: connection to server on socket "/tmp/pg/.s.PGSQL.5432" failed: <no response>'
)
FSYNC = {  # ops/s of one 8 kB write; fsync_writethrough is unsupported on Linux
    "ext4": {"open_datasync": 1500.0, "fdatasync": 1450.0, "fsync": 1400.0, "open_sync": 1380.0},
    "xfs": {"open_datasync": 1620.0, "fdatasync": 1600.0, "fsync": 1580.0, "open_sync": 1500.0},
    "btrfs": {"open_datasync": 700.0, "fdatasync": 690.0, "fsync": 650.0, "open_sync": 640.0},
}
INIT_S = {"ext4": 35.5, "xfs": 40.0, "btrfs": 52.0}  # lower is better: ext4 wins
TPS = {"ext4": 1000.0, "xfs": 1190.0}  # higher is better: xfs wins, ×1.19; btrfs fails


def _provenance(name: str, fs: str) -> dict:
    opts = ["rw", "relatime", "attr2", "inode64"] if fs == "xfs" else ["rw", "relatime"]
    return {
        "kind": "loop",
        "fs": fs,
        "device": f"/dev/loop{len(name)}",
        "workdir": f"/var/tmp/pgfsbench/{name}/mnt/pgfsbench",
        "mounted_fs_type": fs,
        "mount_point": f"/var/tmp/pgfsbench/{name}/mnt",
        "effective_mount_options": opts,
        "commands": [
            {
                "argv": [f"mkfs.{fs}", "-f" if fs != "ext4" else "-F", f"/dev/loop{len(name)}"],
                "exit_code": 0,
                "stdout": f"{fs} created, 524288 blocks",
                "stderr": "",
            },
            {
                "argv": [
                    "mount",
                    "-t",
                    fs,
                    "-o",
                    "noatime",
                    f"/dev/loop{len(name)}",
                    f"/var/tmp/pgfsbench/{name}/mnt",
                ],
                "exit_code": 0,
                "stdout": "",
                "stderr": "",
            },
        ],
        "notes": [f"{fs} on a 2 GiB loop image"],
    }


def _artifact(results: Path, run_id: int, name: str, text: str, argv: tuple[str, ...]) -> Artifact:
    path = results / "runs" / str(run_id) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return Artifact("stdout", path, argv, 0)


def build_results(results: Path, *, sweep: bool = False) -> Path:
    """ext4/xfs/btrfs ok, zfs skipped; fsync, pgbench-init, pgbench (btrfs's fails)."""
    store = Store.create(results)
    store.start_campaign(
        "20250101T120000-ab12",
        "filesystems",
        {"name": "filesystems"},
        {
            "kernel": "6.8.0-45-generic",
            "cpu": "AMD EPYC 7302P (16 cores)",
            "memory": "64 GiB",
            "pg_version": "17.2",
        },
        "0.1.0",
    )
    ids = {}
    for pos, (name, fs) in enumerate(
        [("ext4", "ext4"), ("xfs", "xfs"), ("btrfs", "btrfs"), ("zfs", "zfs")]
    ):
        ids[name] = store.add_target(name, pos, "loop" if fs != "zfs" else "dir", fs, {})
    for name in FSYNC:
        store.set_target(ids[name], "ok", provenance=_provenance(name, name))
    store.set_target(ids["zfs"], "skipped", reason=SKIP_REASON)
    for name, methods in FSYNC.items():
        run = store.start_run(ids[name], "fsync", {"secs_per_test": 2})
        metrics = [Metric(f"fsync.{m}_8k.ops_per_s", v, "ops/s", True) for m, v in methods.items()]
        metrics.insert(3, Metric("fsync.fsync_writethrough_8k.ops_per_s", None, "ops/s", True))
        store.add_result(
            run,
            ids[name],
            WorkloadResult(
                metrics,
                [],
                [_artifact(results, run, "pg_test_fsync.out", "...", ("pg_test_fsync", "-s", "2"))],
            ),
        )
        store.finish_run(run, "ok")

        run = store.start_run(ids[name], "pgbench-init", {"scale": 10})
        store.add_result(
            run,
            ids[name],
            WorkloadResult(
                [
                    Metric("pgbench_init.elapsed_s", INIT_S[name], "s", False),
                    Metric("pgbench_init.vacuum_s", INIT_S[name] / 10, "s", False),
                ]
            ),
        )
        store.finish_run(run, "ok")

        for clients in (1, 8) if sweep else (8,):
            run = store.start_run(
                ids[name],
                "pgbench",
                {"clients": clients, "duration_s": 5},
                label=f"clients={clients}",
            )
            if name == "btrfs":
                store.finish_run(run, "failed", RUN_ERROR)
                continue
            tps = TPS[name] * clients / 8
            points = [(float(t), tps + (t % 3 - 1) * 20.0) for t in range(1, 6)]
            store.add_result(
                run,
                ids[name],
                WorkloadResult(
                    [
                        Metric("pgbench.tps", tps, "tx/s", True),
                        Metric("pgbench.latency_avg_ms", 8000.0 / tps, "ms", False),
                    ],
                    [Series("pgbench.tps", "tx/s", points)],
                    [_artifact(results, run, "pgbench.out", "tps = ...", ("pgbench", "-T", "5"))],
                ),
            )
            store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return results


def _row(page: str, metric: str) -> str:
    m = re.search(rf'<tr data-metric="{re.escape(metric)}"[^>]*>(.*?)</tr>', page, re.S)
    assert m, f"no row for {metric}"
    return m.group(1)


def _best_targets(row: str) -> list[str]:
    return re.findall(r'<td class="num ok best" data-target="([^"]+)">', row)


def test_report_is_written_with_table_marks_and_ratios(tmp_path: Path) -> None:
    out = write_report(build_results(tmp_path / "res"))
    assert out == tmp_path / "res" / "report.html" and out.is_file()
    assert not list(out.parent.glob("*.tmp"))  # the temp file was renamed, not left
    page = out.read_text()
    for name in ("ext4", "xfs", "btrfs", "zfs"):
        assert f'id="target-{name}"' in page
    assert "pgfsbench: filesystems" in page and "6.8.0-45-generic" in page

    tps = _row(page, "pgbench.tps")
    assert _best_targets(tps) == [] and "★" not in tps  # one run each: nothing decided
    assert "+19%" in tps
    assert 'data-target="btrfs">failed' in tps
    init = _row(page, "pgbench_init.elapsed_s")
    assert _best_targets(init) == []
    assert "+13%" in init and "+46%" in init and "↓" in init
    assert "35.50" in init and "52.00" in init  # seconds stay seconds above 1 s
    wt = _row(page, "fsync.fsync_writethrough_8k.ops_per_s")
    assert wt.count(">n/a") == 3 and "★" not in wt


def test_report_shows_notices_and_escapes_them(tmp_path: Path) -> None:
    page = write_report(build_results(tmp_path / "res")).read_text()
    assert SKIP_REASON in page
    assert escape(RUN_ERROR) in page
    assert "<no response>" not in page  # tool output is escaped, never markup


def _outside_scripts(page: str) -> str:
    """The page without the inlined plotly.js and the chart specs (checked on their own)."""
    return re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)


def test_report_is_self_contained(tmp_path: Path) -> None:
    page = write_report(build_results(tmp_path / "res")).read_text()
    # tps, fsync and the verdicts chart, each a div with its spec beside it.
    assert re.findall(r'<div class="chart" data-chart="([a-z-]+)"', page) == [
        "verdicts",
        "tps",
        "fsync",
    ]
    assert page.count(plotly_js()) == 1  # the library, inlined once, from the package
    scripts = re.findall(r"<script\b([^>]*)>", page)
    assert all(attrs == "" or 'type="application/json"' in attrs for attrs in scripts)
    rest = _outside_scripts(page)
    for m in re.finditer(r"https?://", rest):
        assert re.search(r'xmlns(:\w+)?="$', rest[max(0, m.start() - 20) : m.start()]), rest[
            m.start() - 40 : m.start() + 60
        ]
    assert "<link" not in rest and "@import" not in rest
    assert not re.search(r'\bsrc="', rest)  # no script, image or frame fetched
    for href in re.findall(r'href="([^"]*)"', rest):
        assert href.startswith(("#", "runs/")), href
    assert (tmp_path / "res" / "runs").is_dir() and 'href="runs/' in page
    ids = re.findall(r'\bid="([^"]+)"', rest)
    assert len(ids) == len(set(ids))


def _specs(page: str) -> dict[str, dict]:
    return {
        m.group(1): json.loads(m.group(2))
        for m in re.finditer(
            r'<script type="application/json" class="chart-spec" id="([a-z-]+)-spec">(.*?)</script>',
            page,
            re.S,
        )
    }


def test_charts(tmp_path: Path) -> None:
    campaign = load_campaign(build_results(tmp_path / "res", sweep=True))
    tps, fsync = tps_chart(campaign), fsync_chart(campaign)
    assert tps == tps_chart(campaign)  # deterministic: reports diff cleanly
    names = [t["name"] for t in tps["data"]]
    assert names == ["ext4 clients=1", "ext4 clients=8", "xfs clients=1", "xfs clients=8"]
    assert not any(t["meta"]["target"] == "btrfs" for t in tps["data"])  # its runs failed
    na = {t["meta"]["target"]: t["text"][t["x"].index("fsync_writethrough")] for t in fsync["data"]}
    assert na == {"ext4": "n/a", "xfs": "n/a", "btrfs": "n/a"}  # unsupported on all three
    colors = target_colors(campaign)
    for trace in tps["data"]:
        assert trace["line"]["color"] == colors[trace["meta"]["target"]]
    for trace in fsync["data"]:
        assert trace["marker"]["color"] == colors[trace["meta"]["target"]]
    # The page carries the same specs, and says which targets each chart draws.
    page = write_report(tmp_path / "res").read_text()
    specs = _specs(page)
    assert specs["tps-chart"] == tps and specs["fsync-chart"] == fsync
    targets = dict(re.findall(r'id="([a-z-]+)" data-targets="([^"]*)"', page))
    assert targets["fsync-chart"] == escape(json.dumps(["ext4", "xfs", "btrfs"]))
    assert targets["tps-chart"] == escape(json.dumps(["ext4", "xfs"]))


def test_charts_and_report_without_runs(tmp_path: Path) -> None:
    store = Store.create(tmp_path / "res")
    store.start_campaign("c1", "smoke", {}, {}, "0.1.0")
    store.close()
    campaign = load_campaign(tmp_path / "res")
    assert tps_chart(campaign) is None and fsync_chart(campaign) is None
    page = write_report(tmp_path / "res").read_text()
    assert "<script" not in page  # no chart: no 4.8 MB library either
    assert 'class="chart"' not in page and "No metrics were recorded" in page


def test_terminal_table(tmp_path: Path) -> None:
    console = Console(record=True, width=200)
    render_table(load_campaign(build_results(tmp_path / "res")), console)
    text = console.export_text()
    lines = {ln.split("│")[1].strip(): ln for ln in text.splitlines() if ln.count("│") > 3}
    assert "1,190 +19%" in lines["pgbench.tps [clients=8]"]  # one run each: no ★
    assert "★" not in text
    assert "1,000.00" not in text and "1,000" in lines["pgbench.tps [clients=8]"]
    assert "35.50" in lines["pgbench_init.elapsed_s"]
    assert "52.00 +46%" in lines["pgbench_init.elapsed_s"]
    assert lines["fsync.fsync_writethrough_8k.ops_per_s"].count("n/a") == 3
    assert "failed" in lines["pgbench.tps [clients=8]"]
    assert SKIP_REASON in text and "<no response>" in text


def test_format_value() -> None:
    assert [format_value(v) for v in (12345.6, 123.45, 1.234, 0.01234, 0.0, None)] == [
        "12,346",
        "123.5",
        "1.23",
        "0.0123",
        "0",
        "n/a",
    ]


def test_informational_metrics_have_no_arrow(tmp_path: Path) -> None:
    assert [direction_arrow(d) for d in (True, False, None)] == ["↑", "↓", "·"]
    assert direction_title(None) == "no direction: informational"
    store = Store.create(tmp_path / "res")
    store.start_campaign("c1", "sizes", {}, {}, "0.1.0")
    for pos, name in enumerate(("ext4", "xfs")):
        tid = store.add_target(name, pos, "loop", name, {})
        store.set_target(tid, "ok")
        run = store.start_run(tid, "pgbench-init", {"scale": 10})
        store.add_result(
            run,
            tid,
            WorkloadResult(
                [
                    Metric("pgbench_init.elapsed_s", 30.0 + pos, "s", False),
                    Metric("pgbench_init.db_size_mb", 150.0 + pos, "MB", None),
                ]
            ),
        )
        store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    page = write_report(tmp_path / "res").read_text()
    size = _row(page, "pgbench_init.db_size_mb")
    assert '<td class="dir" title="no direction: informational">·</td>' in size
    assert "↑" not in size and "↓" not in size and "★" not in size  # nothing to win
    assert '<td class="dir" title="lower is better">↓</td>' in _row(page, "pgbench_init.elapsed_s")
    console = Console(record=True, width=200)
    render_table(load_campaign(tmp_path / "res"), console)
    lines = {
        ln.split("│")[1].strip(): ln
        for ln in console.export_text().splitlines()
        if ln.count("│") > 3
    }
    assert lines["pgbench_init.db_size_mb"].split("│")[3].strip() == "·"


def test_the_comparison_table_is_computed_once_per_campaign_and_settings(tmp_path: Path) -> None:
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.report.html import render_report

    campaign = load_campaign(build_results(tmp_path / "r"))
    table = comparison_table(campaign)
    table.rows.insert(0, table.rows.pop())  # a pgbench row first: not grouped by workload
    order = [(r.workload, r.metric) for r in table.rows]
    render_report(campaign)  # groups rows by workload: on a copy, not the shared table
    assert comparison_table(campaign) is table
    assert [(r.workload, r.metric) for r in table.rows] == order
    other = comparison_table(campaign, baseline="xfs")
    assert other is not table and other.baseline == "xfs" and table.baseline == "ext4"
    # another load of the same directory is another campaign: nothing stale is shared
    assert comparison_table(load_campaign(tmp_path / "r")) is not table
