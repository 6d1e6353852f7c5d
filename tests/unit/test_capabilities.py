"""What each filesystem offers PostgreSQL, per target: measured where the
campaign ran clone-db, fs-snapshot or compression, else the recipe's facts marked
"not measured"; in advise's text, conf and JSON and in the HTML report."""

from __future__ import annotations

import json
from pathlib import Path

from pgfsbench.analysis.advice.advise import advise
from pgfsbench.analysis.advice.capabilities import MEASURED, NOT_MEASURED, capabilities
from pgfsbench.filesystems.recipe import CLONE, COMPRESSION, SNAPSHOT
from pgfsbench.formats.advice import advice_conf, advice_json, advice_text
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign
from pgfsbench.workloads.clone_db import clone_metrics
from pgfsbench.workloads.compression import (
    btrfs_space,
    compression_metrics,
    parse_compsize,
    uncompressed_space,
)
from pgfsbench.workloads.fs_snapshot import snapshot_metrics

FIXTURES = Path(__file__).parent.parent / "fixtures"
MB = 2**20


def _target(store: Store, pos: int, name: str, fs: str, options: list[str], facts: dict) -> int:
    tid = store.add_target(name, pos, "loop", fs, {"size": "1G"})
    store.set_target(
        tid,
        "ok",
        provenance={
            "kind": "loop",
            "fs": fs,
            "effective_mount_options": options,
            "geometry": {"facts": facts},
        },
    )
    return tid


def _run(store: Store, tid: int, workload: str, metrics: list[Metric]) -> None:
    run = store.start_run(tid, workload, {}, repetition=1)
    store.add_result(run, tid, WorkloadResult(metrics))
    store.finish_run(run, "ok")


def build(results: Path) -> Path:
    store = Store.create(results)
    store.start_campaign("c-7", "fs-features", {"name": "fs-features"}, {}, "0.1.0")
    ext4 = _target(store, 0, "ext4", "ext4", ["rw", "relatime"], {})
    _run(
        store,
        ext4,
        "clone-db",
        clone_metrics(52 * MB, {"copy": 0.3, "clone": 0.3}, {"copy": 52 * MB, "clone": 52 * MB}),
    )
    _run(store, ext4, "fs-snapshot", snapshot_metrics(None, (1.3, 80 * MB), "not offered: x"))
    _run(store, ext4, "compression", compression_metrics(uncompressed_space(115 * MB, "ext4"), 1))
    btrfs = _target(store, 1, "btrfs-zstd", "btrfs", ["rw", "compress=zstd:3"], {})
    found = parse_compsize((FIXTURES / "compsize_b_pgdata_zstd.txt").read_text())
    assert found is not None
    space = btrfs_space(found, ["rw", "compress=zstd:3"])
    _run(store, btrfs, "compression", compression_metrics(space, 115 * MB))
    _target(store, 2, "xfs", "xfs", ["rw"], {"meta-data.reflink": 1})
    _target(store, 3, "zfs", "zfs", ["rw"], {"dataset.compression": "gzip"})
    skipped = store.add_target("gone", 4, "loop", "ext4", {})
    store.set_target(skipped, "skipped", reason="no room")
    store.end_campaign("ok")
    store.close()
    return results


def test_measured_where_the_campaign_ran_it_else_the_recipes_facts(tmp_path):
    found = {t.target: t for t in capabilities(load_campaign(build(tmp_path / "r")))}
    assert list(found) == ["ext4", "btrfs-zstd", "xfs", "zfs"]  # the skipped one has none
    ext4 = found["ext4"]
    clone = ext4.get(CLONE)
    assert clone is not None and clone.status == MEASURED and clone.offered is False
    assert clone.text.startswith("fell back to copy")
    snap = ext4.get(SNAPSHOT)
    assert snap is not None and (snap.offered, snap.status) == (False, MEASURED)
    packed = ext4.get(COMPRESSION)
    assert packed is not None and packed.offered is False and "ratio 1.00x" in packed.text

    btrfs = found["btrfs-zstd"]
    packed = btrfs.get(COMPRESSION)
    assert packed is not None and (packed.offered, packed.status) == (True, MEASURED)
    assert "ratio 2.31x" in packed.text
    clone = btrfs.get(CLONE)
    assert clone is not None and (clone.offered, clone.status) == (True, NOT_MEASURED)
    assert clone.workload == "clone-db" and clone.text == "btrfs shares extents (reflink)"

    xfs = found["xfs"]
    assert [(c.name, c.offered, c.status) for c in xfs.capabilities] == [
        (CLONE, True, NOT_MEASURED),
        (SNAPSHOT, False, NOT_MEASURED),
        (COMPRESSION, False, NOT_MEASURED),
    ]
    zfs = found["zfs"]
    gzip = zfs.get(COMPRESSION)
    assert gzip is not None and gzip.offered is True and "compression=gzip" in gzip.text
    unknown = zfs.get(CLONE)
    assert unknown is not None and unknown.offered is None
    # every capability carries its crash-safety and restore note
    assert all(c.note for t in found.values() for c in t.capabilities)
    assert "crash-consistent" in (found["xfs"].get(SNAPSHOT) or snap).note


def test_advise_shows_them_in_every_format(tmp_path):
    a = advise(load_campaign(build(tmp_path / "r")))
    text = advice_text(a)
    assert "What each filesystem offers PostgreSQL" in text
    assert "compression: yes (measured): ratio 2.31x" in text
    assert "reflink clone: no (measured): fell back to copy" in text
    conf = advice_conf(a)
    offered = conf[conf.index("# What each filesystem") :]
    assert all(line.startswith("#") for line in offered.splitlines())
    doc = json.loads(advice_json(a))
    by_target = {t["target"]: t for t in doc["capabilities"]}
    assert by_target["xfs"]["capabilities"][0] == {
        "name": CLONE,
        "offered": True,
        "status": NOT_MEASURED,
        "text": "XFS made with reflink=1 shares blocks",
        "note": by_target["xfs"]["capabilities"][0]["note"],
        "workload": "clone-db",
    }
    # a target nothing measured is one line, after those that have measurements
    assert "\n  xfs, not measured: reflink clone, no snapshot, no compression\n" in text
    assert "(the clone-db, fs-snapshot and compression workloads measure them;" in text


def test_the_report_has_a_capabilities_table(tmp_path):
    from pgfsbench.report.html import render_report

    html = render_report(load_campaign(build(tmp_path / "r")))
    section = html[html.index('<section id="capabilities">') :]
    section = section[: section.index("</section>")]
    assert section.count('data-capability="') == 4 * 3
    assert 'data-capability="compression" data-status="measured"' in section
    assert "ratio 2.31x" in section and "not measured" in section


def test_each_recipe_says_what_it_offers_from_the_targets_facts():
    from pgfsbench.filesystems.registry import recipe

    def offers(fs, options=(), facts=None):
        got = recipe(fs).offers(
            {"fs": fs, "effective_mount_options": list(options), "geometry": {"facts": facts or {}}}
        )
        return {name: o.offered for name, o in got.items()}

    assert offers("btrfs", ["compress=zstd:3"])[COMPRESSION] is True
    assert offers("btrfs", ["compress=zstd:3", "nodatacow"])[COMPRESSION] is False
    assert offers("btrfs", ["compress=no"])[COMPRESSION] is False
    assert offers("ext4") == {CLONE: False, SNAPSHOT: False, COMPRESSION: False}
    assert offers("xfs")[CLONE] is None  # reflink not recorded: not known
    assert offers("xfs", facts={"meta-data.reflink": 0})[CLONE] is False
    assert offers("zfs", facts={"dataset.compression": "off"})[COMPRESSION] is False
    assert offers("zfs")[COMPRESSION] is None and CLONE not in offers("zfs")
    assert recipe("f2fs").offers({}) == {}  # says nothing: each shown as not known


def _alike(results: Path) -> Path:
    """Three ext4 targets made alike and a btrfs one, nothing measured of what they offer."""
    store = Store.create(results)
    store.start_campaign("c-8", "alike", {"name": "alike"}, {}, "0.1.0")
    for pos, name in enumerate("abc"):
        _target(store, pos, name, "ext4", ["rw", "relatime"], {})
    _target(store, 3, "z", "btrfs", ["rw", "compress=zstd:3"], {})
    store.end_campaign("ok")
    store.close()
    return results


def test_targets_whose_lines_read_the_same_are_one_line(tmp_path):
    a = advise(load_campaign(_alike(tmp_path / "r")))
    text = advice_text(a)
    section = text[text.index("What each filesystem") :].splitlines()
    assert section[:5] == [
        "What each filesystem offers PostgreSQL (from its facts; not measured):",
        "  ext4 (a, b, c): no reflink clone, no snapshot, no compression",
        # the fact said where it says more than the filesystem's nature
        "  btrfs (z): reflink clone, snapshot, compression (mounted compress=zstd:3)",
        "  (the clone-db, fs-snapshot and compression workloads measure them;",
        "   examples/fs-features.toml runs them)",
    ]
    # each offered capability's note once, not per target
    assert sum(ln.startswith("  (snapshot: ") for ln in section) == 1
    conf = advice_conf(a)
    assert "#   ext4 (a, b, c): no reflink clone, no snapshot, no compression\n" in conf
    assert max(len(ln) for ln in (text + conf).splitlines()) <= 80
