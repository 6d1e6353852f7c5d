"""`run --resume`: a real campaign interrupted (Ctrl-C) or killed, then completed."""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

from tests.integration.conftest import CLI, cli, export, ledgers, leftovers, stop, wait_for_run
from tests.integration.plans import LOAD_ONCE, SMALL_BUFFERS, ext4, loop, pgbench, plan_toml, rounds


def tiny(fresh: bool, duration: int = 2) -> str:
    """Two targets, three rounds: each visit makes its target afresh, or reuses it."""
    return plan_toml(
        "resume-tiny",
        [ext4("a"), loop("b", "xfs")],
        [LOAD_ONCE, pgbench(clients=1, duration=duration)],
        repetitions=rounds(3, order="round-robin", fresh=fresh),
        settings=SMALL_BUFFERS,
    )


def _start(tmp_path: Path, fresh: bool) -> tuple[Path, subprocess.Popen]:
    plan = tmp_path / "plan.toml"
    plan.write_text(tiny(fresh))
    results = tmp_path / "r"
    run = subprocess.Popen(
        [*CLI, "run", str(plan), "--results", str(results)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return results, run


def left_by(root: Path) -> list[str]:
    """The ``leftovers()`` that are this test's (other helpers' campaigns may run on the
    machine): loop devices on images under ``root``, their mounts, servers on those."""
    loops = subprocess.run(
        ["losetup", "-l", "-n", "-O", "NAME,BACK-FILE"], capture_output=True, text=True
    ).stdout.splitlines()
    mine = {line.split()[0] for line in loops if str(root) in line}
    mounts = [
        line.split()[4]
        for line in Path("/proc/self/mountinfo").read_text().splitlines()
        if line.split(" - ")[1].split()[1] in mine
    ]
    found = [
        f
        for f in leftovers()
        if any(f"{d} " in f for d in mine) or any(m in f for m in mounts) or str(root) in f
    ]
    return found


def _counted(doc: dict) -> Counter:
    return Counter(
        (r["target"], r["workload"], r["repetition"])
        for r in doc["runs"]
        if r["status"] == "ok" and r["repetition"] > 0
    )


def _check_completed(results: Path, previous: str, fresh: bool) -> dict:
    doc = export(results)
    assert doc["campaign"]["status"] == "ok"
    counted = _counted(doc)
    # every round once, on every target, each counted run ok (a fresh filesystem is
    # loaded again each round; a reused one once)
    loads = (1, 2, 3) if fresh else (1,)
    assert counted == Counter(
        {(t, "pgbench", n): 1 for t in "ab" for n in (1, 2, 3)}
        | {(t, "pgbench-init", n): 1 for t in "ab" for n in loads}
    ), counted
    assert {r["status"] for r in doc["runs"]} <= {"ok", "superseded"}
    [resumed] = doc["schedule"]["resumes"]
    assert resumed["previous_status"] == previous and resumed["superseded_runs"] >= 1
    assert left_by(results.parent) == []
    return doc


def test_ctrl_c_after_round_1_then_resume_completes_it(tmp_path, state_dir):
    results, run = _start(tmp_path, fresh=False)
    try:
        wait_for_run(run, results, "status = 'running' AND repetition = 2", 240)
        # while it runs, a resume of it is refused
        busy = cli("run", "--resume", str(results), check=False)
        assert busy.returncode == 2 and "is running on this machine" in busy.stderr, busy
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
    finally:
        stop(run)
    assert run.returncode == 130, (out, err)
    assert left_by(results.parent) == [] and ledgers(state_dir) == []
    # the plan file changed since: the resumed campaign runs the one it recorded
    (tmp_path / "plan.toml").write_text(tiny(fresh=True, duration=60))
    done = cli("run", "--resume", str(results), env={**os.environ, "COLUMNS": "200"})
    assert "resuming campaign" in done.stdout and "at round 2" in done.stdout, done.stdout
    doc = _check_completed(results, "interrupted", fresh=False)
    assert doc["schedule"]["resumes"][0]["settling_again"] is True
    assert all(r["params"].get("duration") in (None, 2) for r in doc["runs"])
    for t in doc["targets"]:
        assert t["status"] == "ok"
    assert "resumed (interrupted) from round 2" in (results / "report.html").read_text()
    assert ledgers(state_dir) == []
    again = cli("run", "--resume", str(results))
    assert again.returncode == 0 and "nothing to resume" in again.stdout


def test_kill_then_cleanup_then_resume_completes_it(tmp_path, state_dir):
    results, run = _start(tmp_path, fresh=True)
    try:
        wait_for_run(
            run, results, "status = 'running' AND repetition = 2 AND workload = 'pgbench'", 240
        )
        os.kill(run.pid, signal.SIGKILL)
        run.communicate(timeout=30)
    finally:
        stop(run)
    refused = cli("run", "--resume", str(results), check=False)
    assert refused.returncode == 2 and "run 'pgfsbench cleanup' first" in refused.stderr
    assert "as killed" in cli("cleanup").stdout
    assert left_by(results.parent) == []
    cli("run", "--resume", str(results))
    _check_completed(results, "killed", fresh=True)
    assert ledgers(state_dir) == []
