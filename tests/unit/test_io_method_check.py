"""plan check refuses io_method = io_uring on a server built without liburing.

The embedded PostgreSQL 18 has no liburing (its pg_config --configure names none): the
server itself says its io_method offers sync and worker, and plan check turns that into
one line naming liburing, before anything is made. Real server, no mock.
"""

import subprocess
import sys

import pytest

from pgfsbench.postgres.binaries import find_binaries
from pgfsbench.postgres.config import settings_problems

PLAN = """name = "uring"
[[targets]]
name = "ext4"
fs = "ext4"
[targets.postgres.settings]
io_method = "{method}"
[[workloads]]
type = "parallel-scan"
rows = 10000
"""


def check(tmp_path, method):
    plan = tmp_path / "p.toml"
    plan.write_text(PLAN.format(method=method))
    return subprocess.run(
        [sys.executable, "-m", "pgfsbench", "plan", "check", str(plan)],
        capture_output=True,
        text=True,
    )


def test_io_uring_without_liburing_is_refused_in_one_line(tmp_path):
    if not settings_problems(find_binaries(), {"io_method": "io_uring"}):
        pytest.skip("this PostgreSQL is built with liburing: io_uring is accepted")
    result = check(tmp_path, "io_uring")
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        "error: target 'ext4': io_method = io_uring needs a PostgreSQL built with liburing"
    )
    assert "offers sync, worker" in lines[0] and "pg_bin" in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_sync_and_worker_pass(tmp_path):
    for method in ("sync", "worker"):
        result = check(tmp_path, method)
        assert result.returncode == 0, result.stderr
        assert f"io_method={method}" in result.stdout


def test_another_refused_setting_keeps_the_plain_message(tmp_path):
    result = check(tmp_path, "posix_aio")
    assert result.returncode == 2
    assert "refuses its settings" in result.stderr and "liburing" not in result.stderr
