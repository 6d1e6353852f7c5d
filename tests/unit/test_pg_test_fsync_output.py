"""pg_test_fsync parsing, checked against outputs captured from PG 15 and PG 18."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgfsbench.workloads.pg_test_fsync_output import (
    UNSUPPORTED_NOTE,
    FsyncResult,
    fsync_metrics,
    parse_pg_test_fsync,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# (section, method) → (ops/s, usecs/op) or None for "n/a", copied from the
# captured files.
EXPECTED = {
    "pg15": {
        ("one_8k", "open_datasync"): (6363.796, 157),
        ("one_8k", "fdatasync"): (6260.731, 160),
        ("one_8k", "fsync"): (5873.712, 170),
        ("one_8k", "fsync_writethrough"): None,
        ("one_8k", "open_sync"): (6195.814, 161),
        ("two_8k", "open_datasync"): (3187.735, 314),
        ("two_8k", "fdatasync"): (5629.353, 178),
        ("two_8k", "fsync"): (5936.668, 168),
        ("two_8k", "fsync_writethrough"): None,
        ("two_8k", "open_sync"): (3335.126, 300),
        ("open_sync_sizes", "1x16kB"): (5339.514, 187),
        ("open_sync_sizes", "2x8kB"): (2835.560, 353),
        ("open_sync_sizes", "4x4kB"): (1797.215, 556),
        ("open_sync_sizes", "8x2kB"): (896.420, 1116),
        ("open_sync_sizes", "16x1kB"): (459.583, 2176),
        ("non_write_fd", "write_fsync_close"): (5878.471, 170),
        ("non_write_fd", "write_close_fsync"): (5635.403, 177),
        ("non_sync", "write"): (490246.195, 2),
    },
    "pg18": {
        ("one_8k", "open_datasync"): (6496.506, 154),
        ("one_8k", "fdatasync"): (6709.222, 149),
        ("one_8k", "fsync"): (6743.555, 148),
        ("one_8k", "fsync_writethrough"): None,
        ("one_8k", "open_sync"): (6201.795, 161),
        ("two_8k", "open_datasync"): (3145.547, 318),
        ("two_8k", "fdatasync"): (6049.540, 165),
        ("two_8k", "fsync"): (5789.722, 173),
        ("two_8k", "fsync_writethrough"): None,
        ("two_8k", "open_sync"): (3219.478, 311),
        ("open_sync_sizes", "1x16kB"): (4826.759, 207),
        ("open_sync_sizes", "2x8kB"): (3248.130, 308),
        ("open_sync_sizes", "4x4kB"): (1844.873, 542),
        ("open_sync_sizes", "8x2kB"): (858.681, 1165),
        ("open_sync_sizes", "16x1kB"): (471.616, 2120),
        ("non_write_fd", "write_fsync_close"): (5779.792, 173),
        ("non_write_fd", "write_close_fsync"): (5494.407, 182),
        ("non_sync", "write"): (563398.478, 2),
    },
}


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_parses_every_result_line(version: str) -> None:
    results = parse_pg_test_fsync(fixture(f"pg_test_fsync_{version}.txt"))
    got = {(r.section, r.method): r for r in results}
    # Same keys, same order as printed, nothing extra.
    assert list(got) == list(EXPECTED[version])
    assert len(results) == len(EXPECTED[version])
    for key, expected in EXPECTED[version].items():
        r = got[key]
        if expected is None:
            assert r == FsyncResult(key[0], key[1], None, None, False)
        else:
            assert r.supported
            assert r.ops_per_s == pytest.approx(expected[0], abs=1e-9)
            assert r.usecs_per_op == expected[1]


@pytest.mark.parametrize("version", ["pg15", "pg18"])
def test_error_output_raises(version: str) -> None:
    text = fixture(f"pg_test_fsync_error_exit1_{version}.txt")
    with pytest.raises(ValueError, match="could not open output file"):
        parse_pg_test_fsync(text)


def test_empty_text_raises() -> None:
    with pytest.raises(ValueError, match="no pg_test_fsync result lines"):
        parse_pg_test_fsync("")


def test_direct_io_unsupported_marker() -> None:
    # open() with O_DIRECT failing prints "n/a*" (NA_FORMAT is "%21s\n") and a
    # footnote; derive such an output from the real PG 15 capture.
    text = fixture("pg_test_fsync_pg15.txt")
    line = "        open_datasync                      6363.796 ops/sec     157 usecs/op"
    assert line in text
    na_line = "        " + "open_datasync".ljust(30) + "n/a*".rjust(21)
    text = text.replace(line, na_line) + (
        "\n* This file system and its mount options do not support direct I/O,\n"
        "  e.g. ext4 in journaled mode.\n"
    )
    results = {(r.section, r.method): r for r in parse_pg_test_fsync(text)}
    assert results[("one_8k", "open_datasync")] == FsyncResult(
        "one_8k", "open_datasync", None, None, False
    )
    # The two-write section is untouched.
    assert results[("two_8k", "open_datasync")].ops_per_s == 3187.735


def test_metrics_default_section_pg18() -> None:
    metrics = fsync_metrics(parse_pg_test_fsync(fixture("pg_test_fsync_pg18.txt")))
    by_name = {m.name: m for m in metrics}
    assert list(by_name) == [
        "fsync.open_datasync_8k.ops_per_s",
        "fsync.fdatasync_8k.ops_per_s",
        "fsync.fsync_8k.ops_per_s",
        "fsync.fsync_writethrough_8k.ops_per_s",
        "fsync.open_sync_8k.ops_per_s",
    ]
    fd = by_name["fsync.fdatasync_8k.ops_per_s"]
    assert (fd.value, fd.unit, fd.higher_is_better, fd.note) == (6709.222, "ops/s", True, "")
    wt = by_name["fsync.fsync_writethrough_8k.ops_per_s"]
    assert wt.value is None  # unsupported is not zero
    assert wt.note == UNSUPPORTED_NOTE == "unsupported on this platform"


def test_metrics_all_sections_pg15() -> None:
    results = parse_pg_test_fsync(fixture("pg_test_fsync_pg15.txt"))
    metrics = {m.name: m.value for m in fsync_metrics(results, sections=None)}
    assert len(metrics) == 18
    assert metrics["fsync.fdatasync_2x8k.ops_per_s"] == 5629.353
    assert metrics["fsync.fsync_writethrough_2x8k.ops_per_s"] is None
    assert metrics["fsync.open_sync_1x16kB.ops_per_s"] == 5339.514
    assert metrics["fsync.open_sync_16x1kB.ops_per_s"] == 459.583
    assert metrics["fsync.write_fsync_close.ops_per_s"] == 5878.471
    assert metrics["fsync.write_close_fsync.ops_per_s"] == 5635.403
    assert metrics["fsync.write.ops_per_s"] == 490246.195


def test_metrics_section_filter() -> None:
    results = parse_pg_test_fsync(fixture("pg_test_fsync_pg15.txt"))
    names = [m.name for m in fsync_metrics(results, sections=("open_sync_sizes", "non_sync"))]
    assert names == [
        "fsync.open_sync_1x16kB.ops_per_s",
        "fsync.open_sync_2x8kB.ops_per_s",
        "fsync.open_sync_4x4kB.ops_per_s",
        "fsync.open_sync_8x2kB.ops_per_s",
        "fsync.open_sync_16x1kB.ops_per_s",
        "fsync.write.ops_per_s",
    ]


def test_every_wal_sync_method_row_has_a_human_label() -> None:
    """advise lists every method it measured: each by a name, not only fdatasync."""
    from pgfsbench.analysis.headline import metric_label

    results = parse_pg_test_fsync(fixture("pg_test_fsync_pg15.txt"))
    labels = {m.name: metric_label(m.name) for m in fsync_metrics(results, sections=None)}
    assert labels["fsync.open_datasync_8k.ops_per_s"] == "pg_test_fsync open_datasync ops/s"
    assert labels["fsync.fsync_writethrough_8k.ops_per_s"] == (
        "pg_test_fsync fsync_writethrough ops/s"
    )
    assert labels["fsync.fdatasync_2x8k.ops_per_s"] == (
        "pg_test_fsync fdatasync ops/s, two 8 kB writes"
    )
    methods = [n for n in labels if n.endswith("_8k.ops_per_s")]
    assert len(methods) == 5 and all(labels[n].startswith("pg_test_fsync ") for n in methods)
