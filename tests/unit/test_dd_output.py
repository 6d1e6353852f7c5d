"""dd summary parsing, against dd 9.1 outputs captured on this machine (several locales)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pgfsbench.workloads.dd_output import parse_dd_output

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# file → (bytes, seconds, dd's rate in B/s), copied from the captured files.
CAPTURED = {
    "dd_c_64m_fdatasync.txt": (67108864, 0.24424, 275e6),
    "dd_de_DE_64m_fdatasync.txt": (67108864, 0.275782, 243e6),  # decimal comma, "kopiert"
    "dd_fr_FR_64m_fdatasync.txt": (67108864, 0.269514, 249e6),  # no-break spaces, "octets"
    "dd_ru_RU_64m_fdatasync.txt": (67108864, 0.236627, 284e6),  # English words, decimal comma
    "dd_c_devnull_gbps.txt": (4194304000, 0.300469, 14.0e9),
    "dd_c_one_byte.txt": (1, 0.000394712, 2.5e3),  # "1 byte copied": no "(...)"
    "dd_c_zero_bytes.txt": (0, 3.962e-05, 0.0),  # exponent in the seconds
    "dd_c_progress_direct.txt": (245760000, 2.16654, 113e6),  # \r progress lines first
}


@pytest.mark.parametrize("name", sorted(CAPTURED))
def test_captured_summaries(name):
    nbytes, seconds, rate = CAPTURED[name]
    s = parse_dd_output(fixture(name))
    assert s.bytes == nbytes
    assert s.seconds == pytest.approx(seconds)
    assert s.reported_bytes_per_s == pytest.approx(rate)
    assert s.warnings == ()


def test_rate_is_computed_not_copied():
    s = parse_dd_output(fixture("dd_c_64m_fdatasync.txt"))
    assert s.mb_per_s == pytest.approx(67108864 / 0.24424 / 1e6)  # 274.77..., dd says 275
    assert s.mb_per_s == pytest.approx(s.reported_bytes_per_s / 1e6, rel=0.01)
    assert s.reported_rate == "275 MB/s"


def test_progress_lines_do_not_win_over_the_final_summary():
    s = parse_dd_output(fixture("dd_c_progress_direct.txt"))
    assert s.seconds != 2  # the last progress update said "2 s"


@pytest.mark.parametrize(
    "line, nbytes, seconds, rate",
    [
        # the seqwrite study, RHEL 5's coreutils: one human size, "seconds"
        (
            "41943040000 bytes (42 GB) copied, 254.467 seconds, 165 MB/s",
            41943040000,
            254.467,
            165e6,
        ),
        (
            "41943040000 bytes (42 GB) copied, 94.7451 seconds, 443 MB/s",
            41943040000,
            94.7451,
            443e6,
        ),
        # the forms the issue names, and units dd uses
        ("1073741824 bytes (1.1 GB, 1.0 GiB) copied, 2.34 s, 459 MB/s", 1073741824, 2.34, 459e6),
        ("1073741824 Bytes (1,1 GB, 1,0 GiB) kopiert, 2,34 s, 459 MB/s", 1073741824, 2.34, 459e6),
        ("512 bytes (512 B) copied, 1.2 seconds, 427 B/s", 512, 1.2, 427.0),
        ("2048 bytes (2.0 kB) copied, 0.1 s, 20.5 kB/s", 2048, 0.1, 20.5e3),
        ("10737418240 bytes (11 GB, 10 GiB) copied, 4.1 s, 2.6 GB/s", 10737418240, 4.1, 2.6e9),
        ("1048576 bytes (1.0 MiB) copied, 1 s, 1.0 MiB/s", 1048576, 1.0, 2**20),
    ],
)
def test_summary_forms(line, nbytes, seconds, rate):
    s = parse_dd_output(f"1+0 records in\n1+0 records out\n{line}\n")
    assert (s.bytes, s.seconds) == (nbytes, pytest.approx(seconds))
    assert s.reported_bytes_per_s == pytest.approx(rate)


def test_old_dd_infinity_rate():
    s = parse_dd_output("0+0 records in\n0+0 records out\n0 bytes (0 B) copied, 0 s, Infinity B/s")
    assert s.bytes == 0 and s.seconds == 0
    assert math.isinf(s.reported_bytes_per_s) and math.isinf(s.mb_per_s)


def test_warnings_are_kept_not_fatal():
    text = (
        "dd: warning: partial read (1024 bytes); suggest iflag=fullblock\n"
        "0+1 records in\n0+1 records out\n"
        "1024 bytes (1.0 kB, 1.0 KiB) copied, 0.01 s, 102 kB/s\n"
    )
    assert parse_dd_output(text).warnings == (
        "warning: partial read (1024 bytes); suggest iflag=fullblock",
    )


@pytest.mark.parametrize(
    "name, needle",
    [
        ("dd_error_enospc_exit1.txt", "No space left on device"),  # dd still prints a summary
        ("dd_de_DE_error_enospc_exit1.txt", "kein Speicherplatz"),
        ("dd_error_badpath_exit1.txt", "failed to open '/nonexistent-pgfsbench/seqwrite.img'"),
        ("dd_error_badarg_exit1.txt", "invalid number: '4x'"),
    ],
)
def test_error_outputs_raise(name, needle):
    with pytest.raises(ValueError, match="dd reported an error") as exc:
        parse_dd_output(fixture(name))
    assert needle in str(exc.value)


def test_error_with_full_program_path():
    text = (
        "/usr/bin/dd: error writing '/dev/full': No space left on device\n1+0 records in\n"
        "0+0 records out\n0 bytes copied, 6.7817e-05 s, 0.0 kB/s\n"
    )
    with pytest.raises(ValueError, match="No space left"):
        parse_dd_output(text)


@pytest.mark.parametrize(
    "text",
    ["", "16384+0 records in\n16384+0 records out\n", "67108864 bytes copied\n", "hello world"],
)
def test_no_summary_raises(text):
    with pytest.raises(ValueError, match="no dd summary line"):
        parse_dd_output(text)
