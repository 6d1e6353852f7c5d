"""postgresql.conf as pgfsbench writes it, read back by the real server (postgres -C)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pgfsbench.errors import UserError
from pgfsbench.postgres.binaries import find_binaries
from pgfsbench.postgres.config import conf_text, conf_value, settings_problems


@pytest.fixture(scope="module")
def bins():
    try:
        return find_binaries(stage=False)
    except UserError as exc:
        pytest.skip(f"no PostgreSQL binaries: {exc} (make setup installs them)")


def read_back(bins, tmp_path: Path, settings: dict, name: str) -> str:
    """What the server makes of ``settings`` written our way: the value of ``name``."""
    (tmp_path / "postgresql.conf").write_text(conf_text(settings))
    (tmp_path / "postgresql.auto.conf").write_text("")
    result = subprocess.run(
        [bins.tool("postgres"), "-C", name, "-D", str(tmp_path)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.rstrip("\n")


@pytest.mark.parametrize(
    "value", ["it's", "C:\\temp\\new", "trailing\\", "'\\'", "%m [%p] ", "a = 'b'"]
)
def test_a_string_reaches_the_server_exactly(bins, tmp_path, value):
    # application_name keeps printable ASCII as given: what went in must come out
    assert read_back(bins, tmp_path, {"application_name": value}, "application_name") == value


def test_numbers_and_booleans_are_written_bare():
    assert [conf_value(v) for v in (True, False, 64, 0.5, "128MB")] == [
        "on",
        "off",
        "64",
        "0.5",
        "'128MB'",
    ]
    with pytest.raises(ValueError):
        conf_value("one\nline = 'two'")


def test_pgfsbench_settings_come_first_and_cannot_be_moved(bins, tmp_path):
    text = conf_text({"shared_buffers": "32MB"})
    assert text.splitlines()[1:] == [
        "# --- set by pgfsbench ---",
        "listen_addresses = ''",
        "unix_socket_permissions = '0700'",
        "shared_buffers = '32MB'",
    ]
    assert read_back(bins, tmp_path, {}, "listen_addresses") == ""


def test_the_server_judges_names_and_values(bins):
    assert (
        settings_problems(
            bins,
            {"shared_buffers": "32MB", "fsync": False, "random_page_cost": 1.1, "myext.knob": "x"},
        )
        == []
    )
    (typo,) = settings_problems(bins, {"shared_bufers": "32MB"})
    assert typo.startswith(
        'unrecognized configuration parameter "shared_bufers" (did you mean shared_buffers'
    )
    problems = settings_problems(bins, {"wal_sync_method": "fdatasynk", "max_connections": 0})
    assert 'invalid value for parameter "wal_sync_method": "fdatasynk"' in problems
    assert any("Available values:" in p and "fdatasync" in p for p in problems)
    assert any(
        '0 is outside the valid range for parameter "max_connections"' in p for p in problems
    )
