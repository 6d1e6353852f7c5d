"""fio JSON parsing and the fio workloads' metrics, against outputs captured from fio 3.33.

The fixtures were captured on this project's machines (ext4 on virtio) with
the command lines the workloads use, at tiny sizes:

    fio --name=fsync-latency --filename=D/fsync_latency.fio --rw=write --bs=8192
        --size=4194304 --overwrite=1 --fdatasync=1 --ioengine=sync --time_based
        --runtime=1 --output-format=json                      > fio_fsync_latency_8k.json
    fio --name=layout --filename=D/fileio.fio --rw=read --bs=1048576 --size=16777216
        --create_only=1 --output-format=json                  > fio_layout_create_only.json
    fio --name=randread_8k --filename=D/fileio.fio --rw=randread --bs=8192 --size=16777216
        --direct=1 --ioengine=psync --iodepth=1 --time_based --runtime=1
        --output-format=json                                  > fio_randread_8k_direct.json
    (the same with --name=write_1m --rw=write --bs=1048576    > fio_write_1m_direct.json,
     with --ioengine=libaio --iodepth=4                       > fio_randread_8k_libaio_qd4.json,
     with --ioengine=psync --iodepth=4: a note before the JSON > fio_note_before_json.json)
    fio ... --rw=sideways                       (exit 1)      > fio_error_bad_rw_exit1.std{out,err}.txt
    fio ... --ioengine=nosuch                   (exit 1)      > fio_error_bad_engine_exit1.std{out,err}.txt
    fio ... --no-such-option=1                  (exit 1)      > fio_error_unknown_option_exit1.std{out,err}.txt
    as nobody: fio --name=perm ... --rw=write on a root-owned read-only file
                                                (exit 1)      > fio_job_error_eacces_exit1.json
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.workloads.fileio import Cell, FileioWorkload, block_label, cell_metrics, cells
from pgfsbench.workloads.fio_output import failure_reason, parse_fio_json
from pgfsbench.workloads.fsync_latency import fsync_latency_metrics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def metrics_by_name(metrics) -> dict[str, float]:
    return {m.name: m.value for m in metrics}


# --- the fdatasync job ----------------------------------------------------------


def test_fsync_latency_job_has_sync_latency_distribution():
    out = parse_fio_json(fixture("fio_fsync_latency_8k.json"))
    assert out.version == "fio-3.33"
    assert out.preamble == ""
    job = out.job("fsync-latency")
    assert job.error == 0
    assert job.runtime_ms == 1000
    assert job.read.total_ios == 0
    w = job.write
    assert (w.total_ios, w.io_bytes, w.runtime_ms) == (4921, 40312832, 1001)
    assert w.iops == pytest.approx(4916.083916)
    assert w.bw_bytes == 40272559
    assert w.clat.percentiles_ns[50.0] == 8384
    assert w.clat.max_ns == 14661916
    s = job.sync
    assert s is not None
    assert (s.n, s.min_ns, s.max_ns) == (4921, 83428, 18690145)
    assert s.mean_ns == pytest.approx(184990.785613)
    assert s.percentile_us(50) == pytest.approx(150.528)
    assert s.percentile_us(90) == pytest.approx(197.632)
    assert s.percentile_us(99) == pytest.approx(288.768)
    assert s.percentile_us(99.9) == pytest.approx(16187.392)
    assert s.percentile_us(99.99) == pytest.approx(18743.296)  # a bucket: above the exact max
    assert sorted(s.percentiles_ns)[:3] == [1.0, 5.0, 10.0]


def test_fsync_latency_metrics():
    m = fsync_latency_metrics(fixture("fio_fsync_latency_8k.json"))
    values = metrics_by_name(m)
    assert values == pytest.approx(
        {
            "fsync_latency.sync_p50_us": 150.528,
            "fsync_latency.sync_p90_us": 197.632,
            "fsync_latency.sync_p99_us": 288.768,
            "fsync_latency.sync_p99_9_us": 16187.392,
            "fsync_latency.sync_max_us": 18690.145,
            "fsync_latency.sync_mean_us": 184.990785613,
            "fsync_latency.syncs_per_s": 4921 / 1.001,
        }
    )
    # one fdatasync per write: the sync rate is fio's write iops
    assert values["fsync_latency.syncs_per_s"] == pytest.approx(4916.083916)
    directions = {x.name: x.higher_is_better for x in m}
    assert directions.pop("fsync_latency.syncs_per_s") is True
    assert not any(directions.values())  # latencies: lower is better
    assert {x.unit for x in m if x.name.endswith("_us")} == {"µs"}


def test_a_job_without_syncs_has_no_sync_section():
    job = parse_fio_json(fixture("fio_randread_8k_direct.json")).jobs[0]
    assert job.sync is None  # fio prints "sync" with N = 0
    with pytest.raises(ValueError, match="no fdatasync"):
        fsync_latency_metrics(
            fixture("fio_randread_8k_direct.json").replace('"randread_8k"', '"fsync-latency"')
        )


# --- O_DIRECT jobs ----------------------------------------------------------------


def test_randread_direct():
    job = parse_fio_json(fixture("fio_randread_8k_direct.json")).job("randread_8k")
    r = job.direction("randread")
    assert r is job.read
    assert job.write.total_ios == 0
    assert (r.total_ios, r.io_bytes, r.runtime_ms) == (12557, 102866944, 1001)
    assert r.iops == pytest.approx(12544.455544)
    assert r.bw_bytes == 102764179
    assert (r.clat.n, r.clat.min_ns, r.clat.max_ns) == (12557, 25649, 24320795)
    assert r.clat.mean_ns == pytest.approx(78581.205383)
    assert r.clat.percentiles_ns[50.0] == 48896
    assert r.clat.percentiles_ns[90.0] == 99840
    assert r.clat.percentiles_ns[99.0] == 179200
    assert r.clat.percentiles_ns[99.9] == 3096576
    assert r.lat.mean_ns == pytest.approx(78698.134666)  # slat + clat


def test_sequential_write_direct():
    job = parse_fio_json(fixture("fio_write_1m_direct.json")).job("write_1m")
    w = job.direction("write")
    assert w is job.write
    assert job.read.total_ios == 0
    assert (w.total_ios, w.runtime_ms) == (586, 1003)
    assert w.iops == pytest.approx(584.247258)
    assert w.bw_bytes == 612627653
    assert w.clat.percentile_us(50) == pytest.approx(667.648)
    assert w.clat.percentile_us(99) == pytest.approx(6193.152)


def test_libaio_queue_depth():
    r = parse_fio_json(fixture("fio_randread_8k_libaio_qd4.json")).job("randread_8k").read
    assert r.iops == pytest.approx(29651.530109)
    assert r.bw_bytes == 242905334
    assert r.clat.percentiles_ns[99.0] == 228352
    assert r.lat.mean_ns == pytest.approx(134162.858941)


def test_cell_metrics_names_units_and_values():
    m = cell_metrics(Cell("randread", 8192), fixture("fio_randread_8k_direct.json"))
    assert metrics_by_name(m) == pytest.approx(
        {
            "fileio.randread_8k.iops": 12544.455544,
            "fileio.randread_8k.mb_per_s": 102.764179,
            "fileio.randread_8k.lat_p50_us": 48.896,
            "fileio.randread_8k.lat_p99_us": 179.2,
        }
    )
    assert {x.name: x.higher_is_better for x in m} == {
        "fileio.randread_8k.iops": True,
        "fileio.randread_8k.mb_per_s": True,
        "fileio.randread_8k.lat_p50_us": False,
        "fileio.randread_8k.lat_p99_us": False,
    }
    assert m[1].unit == "MB/s (10^6 B/s)"

    w = metrics_by_name(cell_metrics(Cell("write", 2**20), fixture("fio_write_1m_direct.json")))
    assert w["fileio.write_1m.mb_per_s"] == pytest.approx(612.627653)
    assert w["fileio.write_1m.iops"] == pytest.approx(584.247258)


def test_cell_metrics_refuse_a_cell_without_io():
    # the layout job ran with create_only=1: no I/O was measured
    with pytest.raises(ValueError, match="no I/O"):
        cell_metrics(
            Cell("read", 2**20),
            fixture("fio_layout_create_only.json").replace('"layout"', '"read_1m"'),
        )


def test_matrix_cells_and_stable_names():
    params = FileioWorkload(
        type="fileio", patterns=["randread", "write"], block_sizes=["8k", "1M", "8K", "1536"]
    )
    assert [c.name for c in cells(params)] == [
        "randread_8k",
        "randread_1m",
        "randread_1536m",
        "write_8k",
        "write_1m",
        "write_1536m",
    ]
    assert [block_label(n) for n in (512, 1536, 4096, 2**20, 3 * 2**30)] == [
        "512b",
        "1536b",
        "4k",
        "1m",
        "3g",
    ]


# --- text around the JSON, and errors -------------------------------------------


def test_note_before_json_is_kept_as_preamble():
    out = parse_fio_json(fixture("fio_note_before_json.json"))
    assert out.preamble == (
        "note: both iodepth >= 1 and synchronous I/O engine are selected, "
        "queue depth will be capped at 1"
    )
    r = out.job("randread_8k").read
    assert r.iops == pytest.approx(10716.283716)
    assert r.clat.percentiles_ns[50.0] == 66048


def test_text_after_json_is_ignored():
    text = fixture("fio_randread_8k_direct.json") + "\n# --- stderr ---\n"
    assert parse_fio_json(text).job("randread_8k").read.bw_bytes == 102764179


def test_failed_job_is_an_error_naming_the_cause():
    with pytest.raises(ValueError) as err:
        parse_fio_json(fixture("fio_job_error_eacces_exit1.json"))
    message = str(err.value)
    assert "fio job 'perm' failed with error 13 (Permission denied)" in message
    assert "func=open(" in message  # fio's own line from before the JSON


@pytest.mark.parametrize(
    "name, says",
    [
        ("fio_error_bad_rw_exit1", "valid values: read"),
        ("fio_error_bad_engine_exit1", "func=dlopen"),
    ],
)
def test_error_output_is_not_json(name, says):
    with pytest.raises(ValueError, match="fio printed no JSON output") as err:
        parse_fio_json(fixture(f"{name}.stdout.txt"))
    assert says in str(err.value)
    # what fio said on stderr, for the record
    assert fixture(f"{name}.stderr.txt").startswith("fio: ")


def test_empty_and_broken_output():
    with pytest.raises(ValueError, match="output was empty"):
        parse_fio_json("")
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_fio_json(fixture("fio_randread_8k_direct.json")[:2000])
    with pytest.raises(ValueError, match="no 'jobs' list"):
        parse_fio_json('{"fio version": "fio-3.33"}')
    with pytest.raises(ValueError, match="odd field"):
        parse_fio_json('{"jobs": [{"jobname": "x"}]}')
    with pytest.raises(ValueError, match="no job 'other'"):
        parse_fio_json(fixture("fio_randread_8k_direct.json")).job("other")
    with pytest.raises(ValueError, match=r"no 12.5th percentile \(it has: 1, 5, 10"):
        parse_fio_json(fixture("fio_randread_8k_direct.json")).jobs[0].read.clat.percentile_us(12.5)


@pytest.mark.parametrize(
    "name, reason",
    [
        (
            "fio_error_bad_rw_exit1",
            "fio: failed parsing rw=sideways | fio printed no JSON output: "
            "valid values: read       Sequential read",
        ),
        (
            "fio_error_bad_engine_exit1",
            "fio: engine nosuch not loadable | fio: failed to load engine"
            " | fio printed no JSON output: fio: file:ioengines.c:134, "
            "func=dlopen, error=nosuch",
        ),
    ],
)
def test_failure_reason_in_fios_words(name, reason):
    said = failure_reason(fixture(f"{name}.stdout.txt"), fixture(f"{name}.stderr.txt"))
    assert said.startswith(reason)


def test_failure_reason_of_a_failed_job_comes_from_stdout():
    # fio 3.33 put the error before the JSON on stdout; stderr was empty
    said = failure_reason(fixture("fio_job_error_eacces_exit1.json"), "")
    assert said.startswith(
        "fio job 'perm' failed with error 13 (Permission denied): fio: "
        "pid=16364, err=13/file:filesetup.c:805, func=open("
    )


def test_failure_reason_dedupes_and_never_is_empty():
    stdout = fixture("fio_error_unknown_option_exit1.stdout.txt")
    stderr = fixture("fio_error_unknown_option_exit1.stderr.txt")
    assert stdout == "" and stderr.count("unrecognized option") == 2  # fio says it twice
    assert failure_reason(stdout, stderr) == "fio: unrecognized option '--no-such-option=1'"
    assert failure_reason("", "") == "fio gave no reason"


def test_a_warmup_becomes_fio_ramp_time_and_is_left_out_of_the_stats():
    from pgfsbench.workloads.fileio import cell_argv
    from pgfsbench.workloads.fsync_latency import FsyncLatencyWorkload, fio_argv

    lat = FsyncLatencyWorkload(type="fsync-latency", seconds=5, warmup=2)
    assert "--ramp_time=2" in fio_argv("fio", "/x", lat)
    assert not any(
        a.startswith("--ramp_time")
        for a in fio_argv("fio", "/x", FsyncLatencyWorkload(type="fsync-latency"))
    )
    io = FileioWorkload(type="fileio", warmup=1, patterns=["read"], block_sizes=["8k"])
    assert "--ramp_time=1" in cell_argv("fio", "/x", cells(io)[0], io)
