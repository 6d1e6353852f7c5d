"""io-depth's metrics, against fio 3.33 JSON captured from the workload itself.

The fixtures are a real run's artifacts (``fio-iodepth-<point>.json``) on an ext4 loop
image, 32 MB file, 1 s per point:

    fio --name=qd<N> --filename=.../iodepth.fio --rw=randread --bs=8192 --size=33554432
        --direct=1 --ioengine=libaio --iodepth=<N> --time_based --runtime=1
        --output-format=json                          > fio_iodepth_qd{1,4,16}.json
    (--name=seq_8k --rw=read / --name=rand_8k --rw=randread, --ioengine=psync
     --iodepth=1                                      > fio_iodepth_{seq,rand}_8k.json)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pgfsbench.analysis.headline import headline_metric
from pgfsbench.workloads.io_depth import IoDepthWorkload, iodepth_metrics, point_argv, points

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
POINTS = ("qd1", "qd4", "qd16", "seq_8k", "rand_8k")


def outputs() -> dict[str, str]:
    return {p: (FIXTURES / f"fio_iodepth_{p}.json").read_text() for p in POINTS}


def raw(point: str) -> dict:
    return json.loads(outputs()[point])["jobs"][0]


def test_every_point_gives_its_metrics_in_fios_units() -> None:
    m = {x.name: x for x in iodepth_metrics(outputs())}
    for qd in ("qd1", "qd4", "qd16"):
        read = raw(qd)["read"]
        assert m[f"iodepth.{qd}.iops"].value == pytest.approx(read["iops"])
        assert m[f"iodepth.{qd}.iops"].higher_is_better is True
        assert m[f"iodepth.{qd}.lat_mean_us"].value == pytest.approx(read["clat_ns"]["mean"] / 1000)
        assert m[f"iodepth.{qd}.lat_p99_us"].value == pytest.approx(
            read["clat_ns"]["percentile"]["99.000000"] / 1000
        )
    # Deeper queues give more IOPS on this device: the curve the advisor reads.
    assert m["iodepth.qd16.iops"].value > m["iodepth.qd4.iops"].value > m["iodepth.qd1.iops"].value
    seq = raw("seq_8k")["read"]["lat_ns"]["mean"] / 1000
    rand = raw("rand_8k")["read"]["lat_ns"]["mean"] / 1000
    assert m["readcost.seq_8k_us"].value == pytest.approx(seq)
    assert m["readcost.rand_8k_us"].value == pytest.approx(rand)
    assert m["readcost.rand_seq_ratio"].value == pytest.approx(rand / seq)
    assert m["readcost.rand_seq_ratio"].higher_is_better is None  # a property, not a score


def test_a_point_without_reads_or_a_failed_job_is_an_error() -> None:
    broken = outputs()
    data = json.loads(broken["qd4"])
    data["jobs"][0]["read"]["total_ios"] = 0
    broken["qd4"] = json.dumps(data)
    with pytest.raises(ValueError, match="no reads in the io-depth point qd4"):
        iodepth_metrics(broken)
    failed = outputs()
    failed["seq_8k"] = (FIXTURES / "fio_job_error_eacces_exit1.json").read_text()
    with pytest.raises(ValueError, match="failed with error 13"):
        iodepth_metrics(failed)


def test_the_points_and_their_command_lines() -> None:
    p = IoDepthWorkload(type="io-depth", depths=[16, 1, 4, 4], size="32M", seconds=1)
    assert p.depths == [1, 4, 16]  # sorted, once each
    assert [name for name, _, _ in points(p)] == list(POINTS)
    argv = point_argv("fio", "/t/f", "qd16", "randread", 16, p)
    assert {
        "--direct=1",
        "--ioengine=libaio",
        "--iodepth=16",
        "--bs=8192",
        "--rw=randread",
        "--runtime=1",
    } <= set(argv)
    assert "--ioengine=psync" in point_argv("fio", "/t/f", "seq_8k", "read", 1, p)
    with pytest.raises(ValueError, match="between 1 and 1024"):
        IoDepthWorkload(type="io-depth", depths=[0, 2])


def test_the_headline_is_the_deepest_point() -> None:
    params = IoDepthWorkload(type="io-depth", depths=[1, 8]).model_dump(mode="json")
    assert headline_metric("io-depth", params) == "iodepth.qd8.iops"
