"""Integration tests: real loop filesystems, real PostgreSQL, real tools, tiny sizes."""

from __future__ import annotations

import glob
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pgfsbench.provision.filesystems import unavailable_reason
from tests.integration.pg_server import pg_server

CLI = [sys.executable, "-m", "pgfsbench"]


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root (loop devices, mkfs, mount): run 'make test' as root"
    if not Path("/dev/loop-control").exists():
        return "needs loop devices (/dev/loop-control)"
    for fs in ("ext4", "xfs", "btrfs"):
        if reason := unavailable_reason(fs):
            return f"{fs}: {reason}"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _missing()
    for item in items:
        if "integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def state_dir(tmp_path_factory) -> Path:
    """A private ledger directory, so tests never touch a real run's state."""
    path = tmp_path_factory.mktemp("state")
    os.environ["PGFSBENCH_STATE_DIR"] = str(path)
    return path


@pytest.fixture(scope="session", autouse=True)
def cache_dir(tmp_path_factory) -> Path:
    """A private cache (what the installed zfs supports), kept for the session."""
    path = tmp_path_factory.mktemp("cache")
    os.environ["PGFSBENCH_CACHE_DIR"] = str(path)
    return path


@pytest.fixture(scope="session")
def smoke(tmp_path_factory, state_dir):
    """The built-in smoke plan, run once for every test that reads a small real campaign
    (test_smoke.py, the report in a browser): (results, the run, leftovers before it)."""
    results = tmp_path_factory.mktemp("smoke") / "r"
    before = leftovers()
    run = cli("run", "smoke", "--results", str(results))
    return results, run, before


# Module scope, not session: the server must be gone before other modules look for
# leftover PostgreSQL processes.
@pytest.fixture(scope="module")
def store_url():
    with pg_server() as url:
        yield url


def cli(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([*CLI, *args], capture_output=True, text=True, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(
            f"pgfsbench {' '.join(args)} exited {result.returncode}:\n"
            f"{result.stdout}\n{result.stderr}"
        )
    return result


def run_plan(
    directory: Path, plan_text: str, *args: str
) -> tuple[Path, subprocess.CompletedProcess]:
    """Write ``plan_text`` as a plan file in ``directory`` and run it; returns (results, run)."""
    plan = directory / "plan.toml"
    plan.write_text(plan_text)
    results = directory / "r"
    return results, cli("run", str(plan), "--results", str(results), *args)


def export(results: Path) -> dict:
    """The JSON export of ``results``, checked against the schema generated from the
    export's types; each run's commands are the ones its kept outputs say ran (where
    they are kept: a copy of results.db alone has none)."""
    import jsonschema

    from pgfsbench.formats.json import schema

    doc = json.loads(cli("export", str(results), "--format", "json").stdout)
    jsonschema.validate(doc, schema("export"), cls=jsonschema.Draft202012Validator)
    for run in doc["runs"]:
        for command in run["commands"]:
            kept = results / command["output"]
            if command["kind"] == "command" and kept.exists():  # it starts with what ran
                head = kept.read_text().split("\n", 1)[0]
                assert head == "$ " + " ".join(command["argv"]), (run["workload"], command)
    return doc


def ran(doc: dict, workload: str) -> dict[str, list[str]]:
    """The argv of each tool the export says the runs of ``workload`` ran, by tool name
    (the last of a tool's commands)."""
    return {
        Path(c["argv"][0]).name: c["argv"]
        for r in doc["runs"]
        if r["workload"] == workload
        for c in r["commands"]
    }


def loops_backed_by(image: Path) -> list[str]:
    """The loop devices backed by ``image`` (found by file, not by name)."""
    out = subprocess.run(
        ["losetup", "-j", str(image), "-O", "NAME", "-n"], capture_output=True, text=True
    ).stdout
    return out.split()


def command_artifact(results: Path, run_id: int, stem: str) -> tuple[list[str], str]:
    """(argv, text) of a run's kept command artifact ``<stem>.txt``."""
    db = sqlite3.connect(results / "results.db")
    try:
        for path, command in db.execute(
            "SELECT path, command_json FROM artifacts WHERE run_id = ? AND kind = 'command'",
            (run_id,),
        ):
            if Path(path).name == f"{stem}.txt":
                return json.loads(command), (results / path).read_text()
    finally:
        db.close()
    raise AssertionError(f"no {stem} artifact for run {run_id}")


def leftovers() -> list[str]:
    """Anything of a pgfsbench run still alive on this machine."""
    found = []
    loops = subprocess.run(
        ["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True
    ).stdout
    found += [f"loop: {l}" for l in loops.splitlines() if "pgfsbench" in l or ".img" in l]
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        if "pgfsbench-" in line:
            found.append(f"mount: {line}")
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "postgres" in args and "pgfsbench" in args and " -D " in args:
            found.append(f"process: {args}")
    found += [f"scratch: {p}" for p in glob.glob("/var/tmp/pgfsbench-run-*")]
    found += [f"socket dir: {p}" for p in glob.glob("/tmp/pgfsb-*")]
    found += [f"cgroup: {p}" for p in glob.glob("/sys/fs/cgroup/*/pgfsbench-*")]
    return found + zfs_leftovers()


def zfs_leftovers() -> list[str]:
    """ZFS pools pgfsbench made, and a zfs-fuse daemon it started, still there."""
    from pgfsbench.filesystems.zfs import POOL_PREFIX
    from pgfsbench.provision import zfs_pool as zfs

    found = [f"zfs pool: {p}" for p in zfs.pools() if p.startswith(POOL_PREFIX)]
    try:
        pid = int(zfs.PIDFILE.read_text().strip())
    except (OSError, ValueError):
        return found
    if pid in zfs.daemon_pids():
        found.append(f"process: zfs-fuse (pid {pid}) started by pgfsbench")
    return found


def ledgers(state_dir: Path) -> list[str]:
    return [p.name for p in state_dir.glob("*.json")]


def wait_for_run(run: subprocess.Popen, results: Path, where: str, seconds: float) -> None:
    """Return once ``results.db`` of the campaign ``run`` has a run matching the SQL
    condition ``where`` (e.g. "workload = 'fsync' AND status = 'running'"); fail with
    the campaign's output if none does within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and run.poll() is None:
        try:
            db = sqlite3.connect(f"file:{results / 'results.db'}?mode=ro", uri=True)
            found = db.execute(f"SELECT count(*) FROM runs WHERE {where}").fetchone()[0]
            db.close()
        except sqlite3.Error:  # not created yet, or being written
            found = 0
        if found:
            return
        time.sleep(0.1)
    output = stop(run)
    raise AssertionError(f"no run with {where} within {seconds} s: {output}")


def stop(run: subprocess.Popen) -> tuple[str, str] | None:
    """End a campaign a failed test left running the way a user would (SIGTERM, so it
    unwinds), kill it only if that hangs, and run ``cleanup`` so the machine is left
    as found; returns its output, or None if it had already ended."""
    if run.poll() is not None:
        return None
    run.terminate()
    try:
        output = run.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        run.kill()
        output = run.communicate()
    cli("cleanup", check=False)
    return output
