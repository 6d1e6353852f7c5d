"""Errors a user can cause: one line on stderr, exit code 2, never a traceback."""

import subprocess
import sys


def test_user_errors_exit_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nfoo = 1\n')
    device_plan = tmp_path / "device.toml"
    device_plan.write_text('name = "d"\n[[targets]]\nname = "d"\nfs = "ext4"\n'
                           'device = "/dev/pgfsbench-no-such-disk"\n'
                           '[[workloads]]\ntype = "fsync"\n')
    for args, words in [
        (["run", str(bad), "--results", str(tmp_path / "r")], "foo: unknown key"),
        (["run", "nosuchplan", "--results", str(tmp_path / "r")], "not a built-in plan"),
        (["run", "smoke", "--results", str(tmp_path / "r"), "--pg-bin", str(tmp_path)],
         "not a PostgreSQL bin directory"),
        (["report", str(tmp_path)], "holds no results"),
        (["run", str(device_plan), "--results", str(tmp_path / "r")],
         "target 'd': device /dev/pgfsbench-no-such-disk does not exist"),
        (["export", str(tmp_path), "--format", "xml"], "unknown export format"),
    ]:
        result = subprocess.run([sys.executable, "-m", "pgfsbench", *args],
                                capture_output=True, text=True)
        assert result.returncode == 2, (args, result.stderr)
        assert words in result.stderr
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
