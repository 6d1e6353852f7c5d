"""The advice, from campaigns stored with the real Store: the target it picks, the settings
it derives and the figures behind them, what it refuses to recommend, and its CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pgfsbench.analysis.advice import advise as advice_mod
from pgfsbench.analysis.advice.advise import advise
from pgfsbench.analysis.advice.recommendation import POSTGRES, Figure, Setting, stated_together
from pgfsbench.cli import app
from pgfsbench.errors import UserError
from pgfsbench.formats.advice import advice_conf, advice_json, advice_text
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

REPS = 5
FSYNC = {  # method → ops/s; fsync_writethrough is n/a on Linux
    "ext4": {"open_datasync": 1100, "fdatasync": 1000, "fsync": 950, "open_sync": 900},
    "xfs": {"open_datasync": 1500, "fdatasync": 2000, "fsync": 2300, "open_sync": 1400},
    "ext4-nobarrier": {"open_datasync": 9000, "fdatasync": 9000, "fsync": 8800, "open_sync": 8500},
}
IOPS = {  # queue depth → IO/s
    "ext4": {1: 900, 2: 1500, 4: 2000, 8: 2100, 16: 2150},
    "xfs": {1: 1000, 2: 1900, 4: 3500, 8: 3800, 16: 3900},
    "ext4-nobarrier": {1: 900, 2: 1500, 4: 2000, 8: 2100, 16: 2150},
}
for _table in (FSYNC, IOPS):
    _table["ext4-async"] = {k: v * 3 for k, v in _table["ext4"].items()}
    _table["xfs-async"] = dict(_table["xfs"])
FSYNC["xfs-twin"] = {k: v * 1.014 for k, v in FSYNC["xfs"].items()}  # jitter unlike both
IOPS["xfs-twin"] = IOPS["xfs"]
FSYNC["ext4-close"] = {"open_datasync": 990, "fdatasync": 1000, "fsync": 700, "open_sync": 1003}
IOPS["ext4-close"] = IOPS["ext4"]
READCOST = {
    "ext4": (90.0, 100.0),
    "xfs": (200.0, 100.0),
    "ext4-nobarrier": (90.0, 100.0),
    "ext4-async": (90.0, 100.0),
    "xfs-async": (200.0, 100.0),
    "ext4-close": (90.0, 100.0),
    "xfs-twin": (200.0, 100.0),
}  # µs: random, sequential
MKFS = {
    "ext4": ["/usr/sbin/mkfs.ext4", "-F", "-E", "stride=2", "/dev/loop7"],
    "xfs": ["/usr/sbin/mkfs.xfs", "-f", "-l", "logdev=/dev/loop8,size=64m", "/dev/loop7"],
    "ext4-nobarrier": ["/usr/sbin/mkfs.ext4", "-F", "/dev/loop7"],
}
MOUNT = {
    "ext4": ["rw", "noatime"],
    "xfs": ["rw", "noatime", "logdev=/dev/loop8"],
    "ext4-nobarrier": ["rw", "noatime", "nobarrier"],
}


def _jitter(value: float, rep: int) -> float:
    # The same drift for every target in a repetition, and a little of each value's own:
    # a ratio identical in every round carries no spread to judge by (paired.py).
    own = 0 if rep == 3 else 0.0005 * ((rep + int(value)) % 3 - 1)  # the median stays
    return value * (1 + 0.004 * (rep - 3)) * (1 + own)


def _provenance(name: str, fs: str, settings: dict | None = None) -> dict:
    return {
        "kind": "loop",
        "fs": fs,
        "device": "/dev/loop7",
        "log_device": "/dev/loop8" if fs == "xfs" else None,
        "mounted_fs_type": fs,
        "effective_mount_options": MOUNT.get(name, ["rw"]),
        "commands": [
            {"argv": ["losetup", "--find"], "exit_code": 0},
            {"argv": MKFS.get(name, [f"/sbin/mkfs.{fs}", "/dev/loop7"]), "exit_code": 0},
        ],
        "os_settings": {
            "sysctls": {"vm.dirty_ratio": {"before": 20, "asked": 10, "during": 10}},
            "queue": {},
        },
        "postgres_version": "18.1",
        "postgres_settings": settings or {},
    }


def build(
    results: Path,
    workloads=("fsync", "io-depth"),
    targets=("ext4", "xfs", "ext4-nobarrier"),
    extra=None,
    verdicts: dict | None = None,
) -> Path:
    store = Store.create(results)
    plan = {"name": "advice", **({"verdicts": verdicts} if verdicts else {})}
    store.start_campaign("c-adv", "advice", plan, {}, "0.1.0")
    for pos, name in enumerate(targets):
        fs = "xfs" if name == "xfs" else "ext4"
        tid = store.add_target(name, pos, "loop", fs, {"name": name, "fs": fs})
        settings = {"synchronous_commit": "off"} if name.endswith("-async") else {}
        store.set_target(tid, "ok", provenance=_provenance(name, fs, settings))
        for rep in range(1, REPS + 1):
            if "fsync" in workloads:
                run = store.start_run(tid, "fsync", {"seconds": 1}, repetition=rep)
                store.add_result(
                    run,
                    tid,
                    WorkloadResult(
                        [
                            *(
                                Metric(f"fsync.{m}_8k.ops_per_s", _jitter(v, rep), "ops/s", True)
                                for m, v in FSYNC[name].items()
                            ),
                            Metric("fsync.fsync_writethrough_8k.ops_per_s", None, "ops/s", True),
                        ]
                    ),
                )
                store.finish_run(run, "ok")
            if "io-depth" in workloads:
                run = store.start_run(
                    tid,
                    "io-depth",
                    {"depths": [1, 2, 4, 8, 16], "size": "32M", "seconds": 1},
                    repetition=rep,
                )
                rand, seq = READCOST[name]
                store.add_result(
                    run,
                    tid,
                    WorkloadResult(
                        [
                            *(
                                Metric(f"iodepth.qd{d}.iops", _jitter(v, rep), "IO/s", True)
                                for d, v in IOPS[name].items()
                            ),
                            Metric("readcost.rand_8k_us", rand, "µs", False),
                            Metric("readcost.seq_8k_us", seq, "µs", False),
                            Metric("readcost.rand_seq_ratio", rand / seq, "×", None),
                        ]
                    ),
                )
                store.finish_run(run, "ok")
    if extra:
        extra(store)
    store.end_campaign("ok")
    store.close()
    return results


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    return load_campaign(build(tmp_path_factory.mktemp("advice") / "r"))


def by_name(advice, name: str):
    return next(s for s in advice.settings + advice.omitted if s.name == name)


def test_the_safe_target_with_most_verdicts_and_its_fastest_safe_sync_method(campaign):
    a = advise(campaign)
    # ext4-nobarrier wins fsync but is not crash-safe; xfs wins io-depth.
    # Ranked among the crash-safe targets alone: xfs ahead of ext4 on both (the unsafe
    # nobarrier, fastest on fsync, takes no place from it).
    assert a.target == "xfs" and a.chosen_by == (
        "decided ahead of the other crash-safe targets on pg_test_fsync fdatasync ops/s and "
        "IOPS at queue depth 16; behind it: ext4 ×0.500 pg_test_fsync fdatasync ops/s "
        "[×0.499, ×0.501]; ext4 −44.89% IOPS at queue depth 16 [−44.92%, −44.87%]"
    )
    assert "nobarrier" not in a.chosen_by  # the unsafe have their own section
    s = by_name(a, "wal_sync_method")
    # fsync, not the headline fdatasync: the fastest of the safe methods measured.
    assert s.value == "fsync"
    best = s.figures[0]
    assert best.metric == "fsync.fsync_8k.ops_per_s" and best.n == REPS
    assert best.centre == pytest.approx(2300, rel=1e-3) and best.ci[0] <= 2300 <= best.ci[1]
    assert "fsync_writethrough" not in {f.metric.split(".")[1] for f in s.figures}


def test_mkfs_and_fstab_come_from_what_ran_with_devices_as_placeholders(campaign):
    a = advise(campaign)
    assert a.mkfs == "mkfs.xfs -l logdev=LOGDEVICE,size=64m DEVICE"  # -f left out
    assert a.fstab == "DEVICE  /var/lib/postgresql  xfs  rw,noatime,logdev=LOGDEVICE  0 0"
    assert any("-f" in n for n in a.build_notes)
    assert (
        advice_mod._placed(
            "logdev=/dev/loop10", {"/dev/loop1": "DEVICE", "/dev/loop10": "LOGDEVICE"}
        )
        == "logdev=LOGDEVICE"
    )
    assert [(s.scope, s.name, s.value) for s in a.settings if s.scope == "sysctl"] == [
        ("sysctl", "vm.dirty_ratio", "10")
    ]


def test_io_concurrency_is_the_knee_and_random_page_cost_the_ratio(campaign):
    a = advise(campaign)
    eio = by_name(a, "effective_io_concurrency")
    # 90% of xfs's best 3,900 IO/s is 3,510: depth 4 (3,500) falls short, depth 8 reaches it.
    assert eio.value == "8" and by_name(a, "maintenance_io_concurrency").value == "8"
    assert "90%" in eio.why and len(eio.figures) == 5
    assert by_name(a, "random_page_cost").value == "2.0"
    clamped = by_name(advise(campaign, "ext4"), "random_page_cost")
    assert clamped.value == "1.1" and "clamped to 1.1..4.0" in clamped.note


def test_an_unsafe_target_is_never_recommended_but_shown_with_what_it_buys(campaign):
    a = advise(campaign)
    [u] = a.unsafe
    assert u.target == "ext4-nobarrier" and u.level == "not crash-safe"
    assert "nobarrier" in u.warning
    gain = next(g for g in u.gains if "fsync.fdatasync_8k.ops_per_s" in g)
    assert "ext4-nobarrier ×4.502 [" in gain and gain.endswith("better against xfs")
    for text in (advice_text(a), advice_conf(a)):
        assert "ext4-nobarrier is not crash-safe" in text
    assert "nobarrier" not in advice_conf(a).split("NOT RECOMMENDED")[0]


def test_a_named_unsafe_target_gets_no_sync_method_and_a_safe_fstab(campaign):
    a = advise(campaign, "ext4-nobarrier")
    assert a.warning.startswith("ext4-nobarrier is not crash-safe: mount option nobarrier")
    assert "not a recommendation" in a.warning
    s = by_name(a, "wal_sync_method")
    assert s.value is None and "not crash-safe" in s.why
    assert "nobarrier" not in a.fstab and any("nobarrier" in n for n in a.build_notes)
    assert a.unsafe[0].gains  # measured against the safe choice, xfs
    assert "wal_sync_method" not in advice_conf(a).split("# not set")[0]


def test_synchronous_commit_off_is_shown_not_recommended(tmp_path):
    a = advise(load_campaign(build(tmp_path / "r", targets=("ext4", "ext4-async"))))
    assert a.target == "ext4"
    [u] = a.unsafe
    assert (u.target, u.level) == ("ext4-async", "may lose recent commits")
    assert "synchronous_commit=off" in u.warning and any("ext4-async ×3.0" in g for g in u.gains)
    named = advise(load_campaign(tmp_path / "r"), "ext4-async")
    assert named.warning.startswith("ext4-async may lose its most recent commits on a crash")
    # Its WAL is still flushed, later: the sync method still applies.
    assert by_name(named, "wal_sync_method").value == "open_datasync"
    assert "synchronous_commit" not in advice_conf(named).split("# not set")[0].split("WARNING")[0]


def test_missing_evidence_is_omitted_with_the_reason(tmp_path):
    a = advise(load_campaign(build(tmp_path / "r", workloads=("fsync",), targets=("ext4", "xfs"))))
    assert a.target == "xfs"
    for name in ("maintenance_io_concurrency", "random_page_cost"):
        s = by_name(a, name)
        assert s.value is None and s.why.startswith("no io-depth run on xfs")
    assert by_name(a, "checkpoint_timeout").why == "no pgbench run on xfs: stalls not measured"
    # PostgreSQL 18's I/O settings: nothing measured says otherwise, so its defaults
    for name, default in (("io_method", "worker"), ("effective_io_concurrency", "16")):
        s = by_name(a, name)
        assert s.value == default
        assert s.why.startswith("PostgreSQL 18's defaults, kept: every target ran them")
    conf = advice_conf(a)
    assert "# not set: maintenance_io_concurrency" in conf
    assert "\neffective_io_concurrency = 16\n" in conf


def _pgbench(stall: float):
    def add(store: Store) -> None:
        tid = store.conn.execute("SELECT id FROM targets WHERE name = 'xfs'").fetchone()[0]
        for rep in range(1, REPS + 1):
            run = store.start_run(tid, "pgbench", {"clients": 8}, repetition=rep)
            store.add_result(
                run,
                tid,
                WorkloadResult(
                    [
                        Metric("pgbench.tps", 1000.0 + rep, "tx/s", True),
                        Metric("eff.wal_bytes_per_tx", 1000.0, "B", False),
                        Metric("stall.seconds", stall * rep, "s", False),
                    ]
                ),
            )
            store.finish_run(run, "ok")

    return add


def test_stalls_bring_checkpoint_and_writeback_settings(tmp_path):
    a = advise(
        load_campaign(build(tmp_path / "r", targets=("ext4", "xfs"), extra=_pgbench(3.0))), "xfs"
    )
    assert by_name(a, "checkpoint_timeout").value == "15min"
    assert by_name(a, "checkpoint_completion_target").value == "0.9"
    # 1,003 tx/s × 1,000 B/tx × 900 s × 2 = 1.7 GB → 2GB
    wal = by_name(a, "max_wal_size")
    assert wal.value == "2GB" and "tx/s" in wal.why
    dirty = by_name(a, "vm.dirty_background_bytes")
    assert dirty.value == "102400000" and dirty.scope == "sysctl"
    assert "stall.seconds" in dirty.figures[0].metric
    assert "checkpoint_timeout = '15min'" in advice_conf(a)
    calm = advise(
        load_campaign(build(tmp_path / "c", targets=("ext4", "xfs"), extra=_pgbench(0.0))), "xfs"
    )
    assert "no tps stall seen" in by_name(calm, "max_wal_size").why


def _io_campaign(results: Path, targets: dict[str, tuple[dict, float]]) -> Path:
    """Targets differing in PostgreSQL 18 I/O settings, each with its cold bitmap scan
    time (s, lower is better) over REPS interleaved rounds."""
    store = Store.create(results)
    store.start_campaign("c-io", "io", {"name": "io"}, {}, "0.1.0")
    for pos, (name, (settings, seconds)) in enumerate(targets.items()):
        spec = {
            "name": name,
            "fs": "ext4",
            "postgres": {"settings": {**settings, "shared_buffers": "16MB"}},
        }
        tid = store.add_target(name, pos, "loop", "ext4", spec)
        store.set_target(tid, "ok", provenance=_provenance(name, "ext4"))
        for rep in range(1, REPS + 1):
            run = store.start_run(
                tid, "cold-scan", {"scans": ["bitmap"], "table_mb": 256}, repetition=rep
            )
            value = _jitter(seconds, rep)
            store.add_result(
                run, tid, WorkloadResult([Metric("cold_scan.bitmap.s", value, "s", False)])
            )
            store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return results


def test_io_method_another_value_only_when_decided_better_than_the_default(tmp_path):
    results = _io_campaign(
        tmp_path / "r",
        {
            "worker": ({}, 10.0),  # PostgreSQL 18's default, unset
            "sync": ({"io_method": "sync"}, 12.0),
            "uring": ({"io_method": "io_uring"}, 8.0),
        },
    )
    a = advise(load_campaign(results), "sync")
    s = by_name(a, "io_method")
    assert s.value == "io_uring"
    assert s.why.startswith("uring (io_method = io_uring) was decided better than worker")
    assert "on cold bitmap heap scan time and worse on none" in s.why and len(s.figures) == 3
    assert by_name(a, "io_workers").value == "3"  # PostgreSQL 18's default, kept
    assert "every target ran them" in by_name(a, "io_workers").why
    # a default kept is flagged (the report counts it apart), a value decided better is not
    assert by_name(a, "io_workers").default and not s.default
    from pgfsbench.report.html import render_report

    shown = advise(load_campaign(results)).settings  # the report's own pick
    n, kept = len(shown), sum(x.default for x in shown)
    assert 0 < kept < n
    html = render_report(load_campaign(results))
    assert f"{n} settings recommended, {kept} of them defaults kept, with the" in html


def test_effective_io_concurrency_keeps_16_when_no_value_beats_it(tmp_path):
    results = _io_campaign(
        tmp_path / "r",
        {
            "eic16": ({"effective_io_concurrency": 16}, 10.0),
            "eic1": ({"effective_io_concurrency": 1}, 14.0),  # decided worse
            "eic64": ({"effective_io_concurrency": 64}, 10.0),  # the same
        },
    )
    a = advise(load_campaign(results), "eic16")
    s = by_name(a, "effective_io_concurrency")
    assert s.value == "16" and s.default
    assert s.why.startswith("PostgreSQL 18's default, kept: no other value was decided better")
    assert "worse on cold bitmap heap scan time (eic1)" in s.why
    assert "(eic64)" in s.why  # equivalent, or not told apart: either way no reason to move
    assert by_name(a, "io_combine_limit").value == "128kB"
    # a faster value is taken
    faster = _io_campaign(
        tmp_path / "f",
        {
            # the default written out (examples/pg18-io-method.toml's {fs}-worker) is the
            # same as unset: eic64 differs from it in effective_io_concurrency alone
            "worker": ({"io_method": "worker"}, 10.0),
            "eic64": ({"effective_io_concurrency": 64}, 6.0),
        },
    )
    assert (
        by_name(advise(load_campaign(faster), "worker"), "effective_io_concurrency").value == "64"
    )


def test_no_default_among_the_compared_values_keeps_the_default(tmp_path):
    results = _io_campaign(
        tmp_path / "r",
        {"sync": ({"io_method": "sync"}, 12.0), "uring": ({"io_method": "io_uring"}, 8.0)},
    )
    s = by_name(advise(load_campaign(results), "sync"), "io_method")
    assert s.value == "worker" and "none of the targets varying io_method" in s.why


def test_unknown_target_is_a_user_error(campaign):
    with pytest.raises(UserError, match="no target 'nope'.*targets: ext4, xfs"):
        advise(campaign, "nope")


def test_json_holds_the_figures(campaign):
    data = json.loads(advice_json(advise(campaign)))
    s = next(s for s in data["settings"] if s["name"] == "wal_sync_method")
    assert s["value"] == "fsync" and s["figures"][0]["n"] == REPS
    assert len(s["figures"][0]["ci"]) == 2


def test_cli_errors_are_one_line_and_exit_2(campaign, tmp_path):
    results = str(campaign.results_dir)
    for args, words in [
        ([str(tmp_path / "none")], "holds no results"),
        ([results, "--target", "nope"], "no target 'nope'"),
        ([results, "--format", "xml"], "unknown advice format 'xml'"),
    ]:
        result = CliRunner().invoke(app, ["advise", *args])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert len(result.stderr.strip().splitlines()) == 1 and words in result.stderr
    ok = CliRunner().invoke(app, ["advise", results, "--format", "conf"])
    assert ok.exit_code == 0 and "wal_sync_method = 'fsync'" in ok.stdout


def test_the_report_shows_the_advice_first(campaign):
    from pgfsbench.report.html import render_report

    html = render_report(campaign)
    advice = html.index('<section id="advice">')
    assert advice < html.index('<section id="verdicts">')
    section = html[advice : html.index("</section>", advice)]
    assert "<code>wal_sync_method = fsync</code>" in section
    assert "not recommended: ext4-nobarrier is not crash-safe" in section


def test_every_target_async_commit_gets_a_recommendation_with_that_window(tmp_path):
    # The XFS-vs-ext4 study's configuration: synchronous_commit = off everywhere. Losing the last
    # commits is not a torn page: the advice names a target and states the window.
    a = advise(load_campaign(build(tmp_path / "r", targets=("ext4-async", "xfs-async"))))
    assert a.target == "ext4-async"
    assert a.chosen_by.startswith("decided ahead of the other candidate targets on ")
    assert "synchronous_commit=off" in a.chosen_by


def test_a_sync_method_lead_within_the_noise_keeps_the_default_and_says_so_first(tmp_path):
    a = advise(load_campaign(build(tmp_path / "r", targets=("ext4-close",))))
    s = by_name(a, "wal_sync_method")
    assert s.value == "fdatasync" and s.why.startswith("lead not established: open_sync")
    assert "O_DIRECT" not in s.note  # that caveat is about open_* methods


def test_tied_leaders_are_named_with_the_margin_they_were_shown_within(tmp_path):
    # xfs-twin runs 1.4% faster than xfs in every round: inside a ±10% equivalence margin
    # (the default plan's), both lead, and the advice says how close they were shown to be.
    a = advise(
        load_campaign(
            build(
                tmp_path / "r",
                workloads=("fsync",),
                targets=("xfs", "xfs-twin", "ext4"),
                verdicts={"noise": 0.03, "equivalence": 0.10},
            )
        )
    )
    assert a.target == "xfs", a.chosen_by
    assert a.chosen_by.startswith(
        "tied with xfs-twin: equivalent within ±10% on pg_test_fsync fdatasync ops/s "
        "(+1.4%..+1.5%); kept as the plan's baseline"
    ), a.chosen_by
    assert "behind it: ext4 ×0.50" in a.chosen_by
    # without an equivalence margin the noise margin is the one named
    b = advise(
        load_campaign(
            build(
                tmp_path / "r3",
                workloads=("fsync",),
                targets=("xfs", "xfs-twin", "ext4"),
                verdicts={"noise": 0.03},
            )
        )
    )
    assert b.chosen_by.startswith(
        "tied with xfs-twin: equivalent within ±3% on pg_test_fsync fdatasync ops/s"
    ), b.chosen_by


def test_io_combine_limit_is_recommended_as_written_with_its_unit(tmp_path):
    results = _io_campaign(
        tmp_path / "r",
        {
            "icl128": ({"io_combine_limit": "128kB"}, 10.0),  # the default, written out
            "icl512": ({"io_combine_limit": "512kB", "io_max_combine_limit": "1MB"}, 6.0),
        },
    )
    # io_max_combine_limit differs too: not a target differing in io_combine_limit alone
    s = by_name(advise(load_campaign(results), "icl128"), "io_combine_limit")
    assert s.value == "128kB" and "no target like icl128 varies io_combine_limit alone" in s.why
    results = _io_campaign(
        tmp_path / "s",
        {
            "icl128": ({"io_combine_limit": "128kB"}, 10.0),
            "icl512": ({"io_combine_limit": "512kB"}, 6.0),
        },
    )
    s = by_name(advise(load_campaign(results), "icl128"), "io_combine_limit")
    assert s.value == "512kB" and "io_max_combine_limit = 128kB" in s.note


def test_one_setting_at_a_time_around_the_defaults_whichever_target_is_picked(tmp_path):
    # examples/pg18-io-method.toml's shape: each target varies one setting from worker's
    results = _io_campaign(
        tmp_path / "r",
        {
            "worker": ({"io_method": "worker"}, 10.0),
            "sync": ({"io_method": "sync"}, 12.0),
            "eic64": ({"effective_io_concurrency": 64}, 6.0),
        },
    )
    a = advise(load_campaign(results), "eic64")
    assert by_name(a, "effective_io_concurrency").value == "64"
    method = by_name(a, "io_method")  # worker against sync, though eic64 is the one picked
    assert method.value == "worker" and "worse on cold bitmap heap scan time (sync)" in method.why


KEPT = ("io_method", "io_workers", "effective_io_concurrency", "io_combine_limit")


def test_settings_no_target_varied_are_stated_once_together(tmp_path):
    # three targets alike, each at PostgreSQL 18's defaults (the shape of a campaign that
    # repeats one filesystem): nothing to choose between, said once, with its evidence
    results = _io_campaign(tmp_path / "r", {"a": ({}, 10.0), "b": ({}, 10.1), "c": ({}, 9.9)})
    a = advise(load_campaign(results), "a")
    kept = [by_name(a, n) for n in KEPT]
    assert [s.value for s in kept] == ["worker", "3", "16", "128kB"]
    assert len({s.why for s in kept}) == 1 and all(s.figures == kept[0].figures for s in kept)
    assert kept[0].why.startswith(
        "PostgreSQL 18's defaults, kept: every target ran them, so nothing measured compares "
        "another value; b and c against a, at the same values: "
    )
    assert [f.target for f in kept[0].figures] == ["a", "b", "c"]
    assert [[s.name for s in g] for g in stated_together(a.settings)] == [
        ["vm.dirty_ratio"],
        list(KEPT),
    ]
    text = advice_text(a)
    assert text.count("why: PostgreSQL 18's defaults") == 1
    assert (
        "  postgresql.conf: io_method = worker, io_workers = 3,\n"
        "      effective_io_concurrency = 16, io_combine_limit = 128kB\n"
    ) in text
    # the evidence once: each metric by its name and id, a line per target under it
    assert "        cold bitmap heap scan time (cold_scan.bitmap.s):\n          a: 10 s [" in text
    assert text.count("cold_scan.bitmap.s") == 1
    conf = advice_conf(a)
    assert conf.count("# io_method, io_workers, effective_io_concurrency, io_combine_limit:") == 1
    assert [ln for ln in conf.splitlines() if not ln.startswith("#")] == [
        "io_method = 'worker'",
        "io_workers = 3",
        "effective_io_concurrency = 16",
        "io_combine_limit = '128kB'",
    ]
    assert max(len(ln) for ln in (text + conf).splitlines()) <= 80


def test_a_setting_the_targets_varied_keeps_its_own_block(tmp_path):
    results = _io_campaign(
        tmp_path / "r",
        {
            "worker": ({"io_method": "worker"}, 10.0),
            "sync": ({"io_method": "sync"}, 12.0),
            "eic64": ({"effective_io_concurrency": 64}, 6.0),
        },
    )
    a = advise(load_campaign(results), "worker")
    groups = [[s.name for s in g] for g in stated_together(a.settings) if g[0].scope == POSTGRES]
    # the two decided, each with its own why and figures; the two nothing varied, together
    assert groups == [
        ["io_method"],
        ["effective_io_concurrency"],
        ["io_workers", "io_combine_limit"],
    ]
    assert by_name(a, "io_method").why != by_name(a, "effective_io_concurrency").why
    text = advice_text(a)
    assert "  postgresql.conf: io_method = worker\n      why: PostgreSQL 18's default, kept" in text
    assert "  postgresql.conf: effective_io_concurrency = 64\n      why: eic64 " in text
    assert "  postgresql.conf: io_workers = 3, io_combine_limit = 128kB\n" in text
    assert text.count("      why: ") == 4  # and vm.dirty_ratio's
    conf = [ln for ln in advice_conf(a).splitlines() if not ln.startswith("#")]
    assert conf == [
        "io_method = 'worker'",
        "effective_io_concurrency = 64",
        "io_workers = 3",
        "io_combine_limit = '128kB'",
    ]


def test_kept_because_nothing_varied_and_kept_because_nothing_varied_it_alone_apart(tmp_path):
    results = _io_campaign(
        tmp_path / "r",
        {
            "icl128": ({"io_combine_limit": "128kB"}, 10.0),
            "icl512": ({"io_combine_limit": "512kB", "io_max_combine_limit": "1MB"}, 6.0),
        },
    )
    a = advise(load_campaign(results), "icl128")
    groups = [[s.name for s in g] for g in stated_together(a.settings) if g[0].scope == POSTGRES]
    assert groups == [["io_method", "io_workers", "effective_io_concurrency"], ["io_combine_limit"]]
    assert "every target ran them" in by_name(a, "io_method").why


def test_stated_together_joins_the_settings_resting_on_the_same_evidence():
    def s(name, why="w", scope=POSTGRES, note=""):
        return Setting(scope, name, "1", why, [], note)

    settings = [s("a"), s("b"), s("c", "x"), s("d"), s("e", scope="sysctl"), s("f", note="n")]
    assert [[x.name for x in g] for g in stated_together(settings)] == [
        ["a", "b", "d"],  # d after c, but on a's evidence: with a, where a is
        ["c"],
        ["e"],
        ["f"],
    ]


def test_a_figure_leads_with_the_metrics_name_and_the_id_beside_it():
    tps = Figure("a", "pgbench", "clients=4", "pgbench.tps", "tx/s", 5584.0, (5345.0, 5675.0), 16)
    assert tps.text() == "TPC-B tps [clients=4] (pgbench.tps): 5,584 tx/s [5,345, 5,675] (n=16)"
    seq = Figure("a", "io-depth", "", "readcost.seq_8k_us", "µs", 100.0, None, 5)
    assert seq.text() == "readcost.seq_8k_us: 100 µs (n=5)"  # no name: the id alone
    ratio = Figure("a", "io-depth", "", "readcost.rand_seq_ratio", "", 0.9, None, 1)
    assert ratio.value_text() == "0.9 (n=1)"


def test_the_report_says_defaults_kept_are_not_recommendations(tmp_path):
    """The demo campaign compares filesystems at PostgreSQL 18's defaults: its report's
    advice panel says its settings were kept at their defaults, not "recommended"."""
    from pgfsbench.report.html import render_report
    from tests.unit.demo_campaign import unpack_demo

    campaign = load_campaign(unpack_demo(tmp_path / "r"))
    settings = advise(campaign).settings
    assert settings and all(s.default for s in settings)
    html = render_report(campaign)
    n = len(settings)
    assert f"{n} settings kept at their defaults (nothing measured did better)" in html
    assert "settings recommended" not in html


def test_the_advice_json_follows_its_schema(campaign) -> None:
    import jsonschema

    from pgfsbench.formats.advice import advice_schema

    doc = json.loads(advice_json(advise(campaign)))
    jsonschema.validate(doc, advice_schema())
    assert doc["unsafe"][0]["gains"]  # what it buys, in the document the schema checks
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**doc, "target": 3}, advice_schema())
