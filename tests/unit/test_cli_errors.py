"""Errors a user can cause: one line on stderr, exit code 2, never a traceback."""

import subprocess
import sys
from pathlib import Path

import pytest


def test_user_errors_exit_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nfoo = 1\n')
    device_plan = tmp_path / "device.toml"
    device_plan.write_text(
        'name = "d"\n[[targets]]\nname = "d"\nfs = "ext4"\n'
        'device = "/dev/pgfsbench-no-such-disk"\n'
        '[[workloads]]\ntype = "fsync"\n'
    )
    injection = tmp_path / "injection.toml"
    injection.write_text(
        'name = "i"\n[[targets]]\nname = "a"\nfs = "ext4"\n'
        "[targets.postgres.settings]\n\"application_name = 'k'\\n"
        "archive_command = 'touch /tmp/pgfsbench-injected'\\nwal_level\" "
        '= "replica"\n[[workloads]]\ntype = "fsync"\n'
    )
    for args, words in [
        (["plan", "check", str(injection)], "a key contains a newline (U+000A)"),
        (["run", str(injection), "--results", str(tmp_path / "r")], "contains a newline"),
        (["run", str(bad), "--results", str(tmp_path / "r")], "foo: unknown key"),
        (["run", "nosuchplan", "--results", str(tmp_path / "r")], "not a built-in plan"),
        (
            ["run", "smoke", "--results", str(tmp_path / "r"), "--pg-bin", str(tmp_path)],
            "not a PostgreSQL bin directory",
        ),
        (["report", str(tmp_path)], "holds no results"),
        (
            ["run", str(device_plan), "--results", str(tmp_path / "r")],
            "target 'd': device /dev/pgfsbench-no-such-disk does not exist",
        ),
        (["export", str(tmp_path), "--format", "xml"], "unknown export format"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", "pgfsbench", *args], capture_output=True, text=True
        )
        assert result.returncode == 2, (args, result.stderr)
        assert words in result.stderr
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_bug_is_one_line_exit_3_and_a_kept_traceback(monkeypatch, capsys):
    from pgfsbench import cli

    def broken_app(**kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.delenv("PGFSBENCH_DEBUG", raising=False)
    monkeypatch.setattr(cli, "app", broken_app)
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == 3
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(
        "internal error (a bug in pgfsbench): RuntimeError('kaboom'); the traceback is in "
    )
    kept = Path(line.split("the traceback is in ")[1].split(";")[0])
    try:
        assert "Traceback" in kept.read_text() and "kaboom" in kept.read_text()
    finally:
        kept.unlink()


@pytest.mark.parametrize("required, code", [(True, 1), (False, 0)])
def test_doctor_exits_1_when_something_needed_is_missing(monkeypatch, required, code):
    from typer.testing import CliRunner

    from pgfsbench import doctor
    from pgfsbench.cli import app

    monkeypatch.setattr(
        doctor,
        "checks",
        lambda: [
            doctor.Check("root", True, "running as root"),
            doctor.Check("filesystem zz", False, "no kernel support", required=required),
        ],
    )
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == code, result.output
    assert ("missing" if required else "optional") in result.output


def test_cleanup_with_nothing_left_exits_0(monkeypatch, tmp_path):
    monkeypatch.setenv("PGFSBENCH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("PGFSBENCH_LOCK_FILE", str(tmp_path / "lock"))
    result = subprocess.run(
        [sys.executable, "-m", "pgfsbench", "cleanup"], capture_output=True, text=True
    )
    assert (result.returncode, result.stdout.strip()) == (0, "nothing to clean up")
