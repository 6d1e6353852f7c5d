"""cold-scan: EXPLAIN parsing and the plan check on outputs captured from the embedded
PostgreSQL 18 (a cold seq scan, a cold bitmap heap scan, a warm seq scan of a 24 MB table
with shared_buffers 8 MB), device reads from real /proc/diskstats, the metrics, the
page-cache drop on real files, the estimate and the bound check's uncached reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from pgfsbench.analysis.caveats.bound import CACHED, bound_metrics, classify
from pgfsbench.errors import UserError
from pgfsbench.metrics import Metric
from pgfsbench.plan.load import parse_plan
from pgfsbench.workloads import registry
from pgfsbench.workloads.cold_scan import (
    ColdScanWorkload,
    ScanResult,
    check_plan,
    device_read_bytes,
    drop_from_page_cache,
    parse_scan,
    relation_files,
    scan_metrics,
)
from pgfsbench.workloads.kind import MB

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def params(**fields) -> ColdScanWorkload:
    return ColdScanWorkload.model_validate({"type": "cold-scan", **fields})


# --- parsing --------------------------------------------------------------------------


def test_a_cold_seq_scan_read_the_whole_table_from_outside_shared_buffers():
    ms, nodes, read, hit = parse_scan(fixture("explain_cold_seq_pg18.txt"))
    assert ms == pytest.approx(87.766)
    assert nodes == ("Aggregate", "Seq Scan")
    assert read * 8192 / MB == pytest.approx(23.98, abs=0.01)  # the 24 MB table
    check_plan("seq", nodes)


def test_a_cold_bitmap_scan_read_a_third_of_the_heap_and_the_index():
    # captured at bitmap_fraction = 0.01 (the default is now 0.001)
    ms, nodes, read, hit = parse_scan(fixture("explain_cold_bitmap_pg18.txt"))
    assert ms == pytest.approx(55.792)
    assert nodes == ("Aggregate", "Bitmap Heap Scan", "Bitmap Index Scan")
    assert (read, hit) == (997, 3)  # 994 heap blocks + 3 index blocks
    check_plan("bitmap", nodes)


def test_the_warm_control_hit_nothing_in_shared_buffers_but_read_from_the_os_cache():
    # a table larger than shared_buffers: the seq scan's ring buffer keeps none of it
    _, _, read, _ = parse_scan(fixture("explain_warm_seq_pg18.txt"))
    assert read > 3000


def test_a_plan_other_than_the_forced_one_is_refused():
    _, seq, _, _ = parse_scan(fixture("explain_cold_seq_pg18.txt"))
    with pytest.raises(ValueError, match="Bitmap Heap Scan.*Aggregate > Seq Scan"):
        check_plan("bitmap", seq)
    # a parallel plan (parallel-scan's capture, 2 workers) is not one backend's I/O
    _, parallel, _, _ = parse_scan(fixture("explain_workers_2_pg18.txt").split("]\n[")[0] + "]")
    with pytest.raises(ValueError, match="no Gather"):
        check_plan("seq", parallel)


def test_an_error_output_is_no_result():
    # psql printed nothing on stdout (the error went to stderr; the run fails before this)
    with pytest.raises(ValueError, match="got 0"):
        parse_scan("")


def test_device_reads_from_real_diskstats():
    a = fixture("proc_diskstats_a.txt")
    assert device_read_bytes(a, ["loop0"]) == 40569 * 512
    assert device_read_bytes(a, ["loop0", "loop1"]) == (40569 + 18134) * 512
    assert device_read_bytes(a, ["loop99"]) is None  # gone: unknown, never 0
    assert device_read_bytes(a, []) is None  # a dir target: no device
    b = fixture("proc_diskstats_b.txt")
    assert device_read_bytes(b, ["vda"]) - device_read_bytes(a, ["vda"]) == 32 * 512


# --- metrics --------------------------------------------------------------------------


def scan(ms: float, blocks: int, device: int | None) -> ScanResult:
    return ScanResult(ms, ("Aggregate", "Seq Scan"), blocks, 0, device)


def test_metrics_are_medians_of_the_cold_scans_with_units_and_directions():
    cold = [scan(1000, 12800, 100 * MB), scan(2000, 12800, 110 * MB), scan(4000, 12800, 90 * MB)]
    m = {x.name: x for x in scan_metrics("seq", cold, scan(100, 12800, 0))}
    assert (m["cold_scan.seq.s"].value, m["cold_scan.seq.s"].unit) == (2.0, "s")
    assert m["cold_scan.seq.s"].higher_is_better is False
    assert m["cold_scan.seq.mb_per_s"].value == pytest.approx(50.0)  # 100 MB in 2 s
    assert m["cold_scan.seq.mb_per_s"].higher_is_better is True
    assert m["cold_scan.seq.read_mb"].value == pytest.approx(100.0)
    assert m["cold_scan.seq.device_read_mb"].value == pytest.approx(100.0)
    assert m["cold_scan.seq.warm_device_read_mb"].value == 0
    for name in ("read_mb", "device_read_mb", "warm_s", "warm_device_read_mb"):
        assert m[f"cold_scan.seq.{name}"].higher_is_better is None  # informational


def test_no_device_counters_leave_the_device_figures_out():
    names = {x.name for x in scan_metrics("bitmap", [scan(10, 1, None)], scan(1, 1, None))}
    assert "cold_scan.bitmap.device_read_mb" not in names
    assert "cold_scan.bitmap.warm_device_read_mb" not in names
    assert "cold_scan.bitmap.s" in names


# --- the page cache -------------------------------------------------------------------


def cached_pages(path: Path) -> int:
    """Pages of ``path`` in the page cache (mincore through mmap)."""
    import ctypes
    import mmap

    size = path.stat().st_size
    # a private mapping (writable for ctypes, never written): mincore says which of the
    # file's pages are resident without touching them
    with open(path, "rb") as f, mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY) as m:
        libc = ctypes.CDLL(None, use_errno=True)
        pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        vec = (ctypes.c_ubyte * pages)()
        start = ctypes.c_char.from_buffer(m)
        try:
            rc = libc.mincore(ctypes.c_void_p(ctypes.addressof(start)), ctypes.c_size_t(size), vec)
            assert rc == 0, os.strerror(ctypes.get_errno())
        finally:
            del start
        return sum(v & 1 for v in vec)


def test_dropping_a_written_file_from_the_page_cache(tmp_path):
    files = [tmp_path / "16384", tmp_path / "16384.1"]
    for f in files:
        f.write_bytes(os.urandom(1 << 20))  # dirty: written, not yet flushed
    import mmap

    assert all(cached_pages(f) == (1 << 20) // mmap.PAGESIZE for f in files)
    assert drop_from_page_cache(files) == 2
    # what is left is at most a page or two the filesystem's own tools touched
    assert all(cached_pages(f) <= 2 for f in files), [cached_pages(f) for f in files]


def test_a_relations_files_are_its_segments_and_forks_only(tmp_path):
    db = tmp_path / "base" / "5"
    db.mkdir(parents=True)
    names = ["16384", "16384.1", "16384_fsm", "16384_vm", "163840", "16385", "16384x"]
    for n in names:
        (db / n).touch()
    space = tmp_path / "space"  # a tablespace: pg_relation_filepath is absolute there
    space.mkdir()
    (space / "17000").touch()
    found = relation_files(tmp_path, ["base/5/16384", str(space / "17000")])
    assert [f.name for f in found] == ["16384", "16384.1", "16384_fsm", "16384_vm", "17000"]


# --- the declaration --------------------------------------------------------------------


def test_params_defaults_and_limits():
    p = params()
    assert (p.table_mb, p.scans, p.bitmap_fraction, p.repeats) == (256, ["seq", "bitmap"], 0.001, 3)
    assert params(scans=["bitmap", "seq", "bitmap"]).scans == ["bitmap", "seq"]
    for bad in ({"scans": []}, {"scans": ["index"]}, {"bitmap_fraction": 0}, {"table_mb": 1}):
        with pytest.raises(ValidationError):
            params(**bad)


PLAN = """
name = "t"
[postgres.settings]
shared_buffers = "64MB"
[[targets]]
name = "a"
fs = "ext4"
size = "1G"
[[targets]]
name = "b"
fs = "ext4"
size = "1G"
postgres.settings.shared_buffers = "{b}"
[[workloads]]
type = "cold-scan"
table_mb = 96
"""


def test_a_table_not_larger_than_shared_buffers_is_refused_by_the_plan():
    assert parse_plan(PLAN.format(b="32MB"), "t")  # 96 MB over 64 and 32
    with pytest.raises(UserError, match="target 'b'.*table_mb = 96 is not larger than "):
        parse_plan(PLAN.format(b="96MB"), "t")
    # PostgreSQL's default is 128MB; a value the server must judge is left to it
    assert params(table_mb=64).server_problem({}) is not None
    assert params(table_mb=64).server_problem({"shared_buffers": "lots"}) is None


def test_the_headlines_read_as_words():
    from pgfsbench.analysis.headline import metric_label

    assert metric_label("cold_scan.seq.s") == "cold sequential scan time"
    assert metric_label("cold_scan.bitmap.s") == "cold bitmap heap scan time"


def test_the_headline_is_the_first_scan_and_the_estimate_grows_with_the_table():
    kind = registry.kind("cold-scan")
    assert kind.headline(params(), []) == "cold_scan.seq.s"
    assert kind.headline(params(scans=["bitmap"]), []) == "cold_scan.bitmap.s"
    small, big = params(table_mb=64), params(table_mb=1024)
    assert 0 < kind.seconds(small) < kind.seconds(big)
    assert kind.disk_bytes(big, 0) > 1024 * MB
    # a sparse bitmap scan reads a few percent of the table: cheaper than the seq scan
    seq, bitmap = params(scans=["seq"]), params(scans=["bitmap"])
    assert kind.seconds(bitmap) < kind.seconds(seq)
    assert kind.seconds(params(scans=["bitmap"], bitmap_fraction=0.5)) == kind.seconds(
        params(scans=["bitmap"], bitmap_fraction=0.1)
    )  # every page either way


def test_a_cold_run_is_not_cached_and_one_served_from_memory_is():
    p = params(repeats=2).model_dump(mode="json")
    metrics = [
        Metric("cold_scan.seq.read_mb", 100.0, "MB", None),
        Metric("cold_scan.bitmap.read_mb", 30.0, "MB", None),
        Metric("mon.disk.target.read_bytes", 2 * 130.0 * MB, "B", None),
    ]
    v = {m.name: m.value for m in bound_metrics("cold-scan", p, metrics, {})}
    assert v["bound.device_read_frac"] == pytest.approx(1.0)
    assert CACHED not in classify(v).classes
    metrics[-1] = Metric("mon.disk.target.read_bytes", 1.0 * MB, "B", None)
    v = {m.name: m.value for m in bound_metrics("cold-scan", p, metrics, {})}
    assert CACHED in classify(v).classes


def test_a_server_without_pg_buffercache_is_refused_in_one_line():
    from types import SimpleNamespace

    from pgfsbench.workloads.cold_scan import run

    asked: list[str] = []

    def sql(query: str) -> str:
        asked.append(query)
        return ""  # pg_available_extensions has no pg_buffercache (no contrib)

    ctx = SimpleNamespace(require_free=lambda *a: None, cluster=SimpleNamespace(sql=sql))
    with pytest.raises(UserError, match="needs the pg_buffercache extension"):
        run(ctx, params())  # type: ignore[arg-type]  # what run() touches before refusing
    assert len(asked) == 1  # nothing loaded
