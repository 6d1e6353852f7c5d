"""The fleet playbook (fleet/site.yml) on two hosts of this machine, into a real store.

The hosts are inventory entries with ``ansible_connection=local``: distinct names, each
with its own results directory, one real campaign each (loop device, PostgreSQL,
pgbench). This machine has no sshd, and hosts in network namespaces would add an sshd
per namespace to test Ansible's transport, not the playbook; the playbook's tasks are the
same over SSH.

One sequence, as a user lives it: the first run is interrupted (Ctrl-C to the playbook's
process group) while the second host's campaign runs; the next run keeps the first
host's campaign (not run again, imported once), sets the interrupted one aside and runs
it afresh; a third run changes nothing. Then the store holds each host's campaign once
and the fleet report names both hosts with their headline metric side by side. Last,
a run while a host's campaign is live (holding the machine lock) leaves it alone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.integration.conftest import ledgers, leftovers
from tests.integration.plans import LOAD, SMALL_BUFFERS, ext4, loop, pgbench, plan_toml

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "fleet" / "site.yml"
ANSIBLE_PLAYBOOK = Path(sys.executable).with_name("ansible-playbook")
HOSTS = ("alpha", "beta")
# A host whose plan names a filesystem there is none of: it fails, and the fleet goes on.
BROKEN_PLAN = plan_toml("broken", [loop("nowhere", "nofs", "300M")], [{"type": "fsync"}])
PLAN = plan_toml(
    "fleet-tiny",
    [ext4("ext4", "300M")],
    [LOAD, pgbench(clients=2, duration=3)],
    description="one ext4 target, one short pgbench",
    settings=SMALL_BUFFERS,
)

pytestmark = pytest.mark.skipif(
    not ANSIBLE_PLAYBOOK.exists(),
    reason=f"needs ansible-core ({ANSIBLE_PLAYBOOK} not found): 'make test' installs it",
)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, state_dir, store_url) -> dict:
    root = tmp_path_factory.mktemp("fleet")
    (root / "plan.toml").write_text(PLAN)
    (root / "broken.toml").write_text(BROKEN_PLAN)
    (root / "inventory.ini").write_text(
        f"[bench]\nbroken ansible_connection=local fleet_plan={root / 'broken.toml'}\n"
        + "".join(f"{h} ansible_connection=local\n" for h in HOSTS)
        + f"\n[bench:vars]\nansible_python_interpreter=/usr/bin/python3\n"
        f"fleet_plan={root / 'plan.toml'}\n"
    )
    variables = {
        "store": store_url,
        "fleet_home": str(root / "install"),
        "fleet_results_root": str(root / "hosts"),
        "fleet_collect_dir": str(root / "controller"),
        # The campaigns on the "hosts" take this session's machine lock and state dir.
        "fleet_environment": {
            k: os.environ[k]
            for k in ("PGFSBENCH_LOCK_FILE", "PGFSBENCH_STATE_DIR")
            if k in os.environ
        },
    }
    (root / "vars.json").write_text(json.dumps(variables))
    return {
        "root": root,
        "store": store_url,
        "state_dir": state_dir,
        "hosts": root / "hosts" / "fleet",
        "collected": root / "controller" / "fleet",
    }


def playbook(fleet: dict, extra: dict | None = None, **popen) -> subprocess.Popen:
    root = fleet["root"]
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(root / "ansible-home"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "PYTHONUNBUFFERED": "1",
    }
    return subprocess.Popen(
        [
            str(ANSIBLE_PLAYBOOK),
            "-i",
            str(root / "inventory.ini"),
            str(PLAYBOOK),
            "-e",
            f"@{root / 'vars.json'}",
            *(["-e", json.dumps(extra)] if extra else []),
        ],
        cwd=root,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        **popen,
    )


def finish(run: subprocess.Popen, seconds: float = 300) -> tuple[int, str]:
    try:
        out, _ = run.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGINT)
        out, _ = run.communicate()
        raise AssertionError(f"the playbook took over {seconds} s:\n{out}") from None
    return run.returncode, out


def campaign_status(results: Path) -> tuple[str | None, int]:
    """(the campaign's status, how many runs are running) of a results directory."""
    try:
        db = sqlite3.connect(f"file:{results / 'results.db'}?mode=ro", uri=True)
        try:
            [(status,)] = db.execute("SELECT status FROM campaign").fetchall()
            [(running,)] = db.execute(
                "SELECT count(*) FROM runs WHERE status = 'running'"
            ).fetchall()
        finally:
            db.close()
    except (sqlite3.Error, ValueError):  # not created yet, or being written
        return None, 0
    return status, running


def wait_until(condition, seconds: float, what: str, run: subprocess.Popen | None = None):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if result := condition():
            return result
        if run is not None and run.poll() is not None:
            raise AssertionError(f"the playbook ended before {what}:\n{run.stdout.read()}")
        time.sleep(0.1)
    if run is not None:
        os.killpg(run.pid, signal.SIGINT)
        raise AssertionError(f"no {what} within {seconds} s:\n{finish(run)[1]}")
    raise AssertionError(f"no {what} within {seconds} s")


def plans_stored(store: str) -> list[str]:
    with psycopg.connect(store) as conn:
        return [p for (p,) in conn.execute("SELECT plan_name FROM campaign ORDER BY 1")]


def stored(store: str) -> dict[str, tuple[str, object]]:
    """The store's campaigns: results directory -> (UUID, when imported)."""
    with psycopg.connect(store) as conn:
        rows = conn.execute("SELECT results_dir, uuid::text, imported_at FROM campaign")
        return {d: (u, at) for d, u, at in rows.fetchall()}


def test_a_fleet_run_interrupted_then_run_twice(fleet) -> None:
    hosts, collected, store = fleet["hosts"], fleet["collected"], fleet["store"]

    # 1. Interrupted while beta's campaign runs (alpha's is done and imported by then).
    first = playbook(fleet)
    wait_until(lambda: campaign_status(hosts / "beta")[1], 240, "run of beta's campaign", first)
    os.killpg(first.pid, signal.SIGINT)  # Ctrl-C at the playbook's terminal
    code, out = finish(first, 120)
    assert code != 0, out
    # The campaign itself unwinds on the signal (its output is not Ansible's pipe).
    status = wait_until(
        lambda: (
            campaign_status(hosts / "beta")[0] != "running" and campaign_status(hosts / "beta")[0]
        ),
        120,
        "end of beta's campaign",
    )
    assert status == "interrupted", (hosts / "beta.log").read_text()
    alpha_dir = str(collected / "alpha")
    assert list(stored(store)) == [alpha_dir], out
    [(alpha_uuid, alpha_imported)] = stored(store).values()
    # As if the playbook had been stopped before collecting alpha: the controller's
    # copy is gone; alpha's finished campaign on the host is all there is.
    shutil.rmtree(collected / "alpha")
    (collected / "alpha.tar").unlink()

    # 2. Again: alpha is not run again, beta's interrupted campaign is set aside (kept on
    # the host) and run afresh; both end in the store once. The broken host fails the
    # fleet run, named with pgfsbench's reason, after the others and the report.
    code, out = finish(playbook(fleet))
    assert code == 2, out
    failed = "\n".join(line for line in out.splitlines() if "fleet run incomplete" in line)
    assert "broken: Run the plan" in failed and "nofs" in failed, failed
    assert "alpha" not in failed and "beta" not in failed, failed
    assert [p.name for p in hosts.glob("beta.interrupted-*")] != [], out
    held = stored(store)
    assert sorted(held) == [alpha_dir, str(collected / "beta")], held
    # The same campaign, not a rerun, and its import untouched (collected again alike).
    assert held[alpha_dir] == (alpha_uuid, alpha_imported)
    # the inventory's [bench:vars] plan, not the playbook's default (smoke)
    assert plans_stored(store) == ["fleet-tiny", "fleet-tiny"]
    assert (collected / "alpha" / "results.db").is_file()  # collected again from the host
    assert campaign_status(hosts / "beta") == ("ok", 0)

    # 3. Once more: nothing runs, nothing is imported again.
    code, out = finish(playbook(fleet))
    assert code == 2 and "fleet run incomplete: broken" in out, out
    assert stored(store) == held
    recap = {line.split()[0]: line for line in out.splitlines() if " changed=" in line}
    for host in HOSTS:
        assert "changed=0 " in recap[host], out

    # The fleet report: both hosts, their campaigns in the store, the headline side by side.
    report = (collected / "fleet-report.md").read_text()
    for host in HOSTS:
        assert f"| {host} | " in report, report
    assert "| broken | no campaign collected |" in report, report
    for uuid, _ in held.values():
        assert uuid in report, report
    [tps] = [line for line in report.splitlines() if "| pgbench.tps | ext4 |" in line]
    cells = [c.strip() for c in tps.strip("|").split("|")]
    assert cells[3].endswith("tx/s (n=1)") and cells[4].endswith("tx/s (n=1)"), tps
    assert cells[5].startswith("×"), tps
    # ... and as the pairing compare prints them: the same target across hosts
    assert "## Compared with alpha (`pgfsbench compare`)" in report, report
    [paired] = [
        line
        for line in report.splitlines()
        if line.startswith("| pgbench ext4 ") and "`pgbench.tps`" in line
    ]
    assert "alpha (baseline)" in report and "| beta vs base |" in report, report
    listing = (collected / "fleet-list.txt").read_text()
    assert listing.count("(from the store)") == 2 and "2 campaigns" in listing, listing

    # 4. Again while beta's campaign is live (the playbook re-run after a lost connection
    # while it ran): it is 'running' and a process holds the machine lock naming its
    # results (a private lock file: the machine's own stays free). Beta is reported and
    # its directory left alone; nothing else changes.
    set_status(hosts / "beta", "running")
    lock = fleet["root"] / "live.lock"
    holder = hold_lock(lock, hosts / "beta")
    try:
        code, out = finish(
            playbook(
                fleet,
                {
                    "fleet_environment": {
                        "PGFSBENCH_LOCK_FILE": str(lock),
                        "PGFSBENCH_STATE_DIR": str(fleet["state_dir"]),
                    }
                },
            )
        )
    finally:
        holder.kill()
        holder.wait()
    failed = "\n".join(line for line in out.splitlines() if "fleet run incomplete" in line)
    assert code == 2 and "beta: Report a campaign still running there" in failed, out
    assert f"still runs in {hosts / 'beta'}" in failed and "left alone" in failed, failed
    assert [p.name for p in hosts.glob("beta.running-*")] == [], out
    assert campaign_status(hosts / "beta") == ("running", 0)
    assert stored(store) == held
    set_status(hosts / "beta", "ok")

    # Nothing left behind by the fleet's campaigns. Other campaigns may run on this
    # machine: ours are the loop devices backed by images under the fleet's directories
    # (their mounts and servers hold them) and processes naming those directories.
    assert ledgers(fleet["state_dir"]) == []
    assert [x for x in leftovers() if str(fleet["root"]) in x] == []
    assert processes_naming(fleet["root"]) == []


def set_status(results: Path, status: str) -> None:
    db = sqlite3.connect(results / "results.db")
    with db:
        db.execute("UPDATE campaign SET status = ?", (status,))
    db.close()


HOLDER = """
import sys, time
from pgfsbench.machine_lock import machine_lock
with machine_lock("c-live", "campaign", False, print, plan="fleet-tiny", results=sys.argv[1]):
    print("held", flush=True)
    time.sleep(600)
"""


def hold_lock(lock: Path, results: Path) -> subprocess.Popen:
    """A live campaign's hold on the machine lock ``lock``, naming ``results``."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(results)],
        text=True,
        stdout=subprocess.PIPE,
        env={**os.environ, "PGFSBENCH_LOCK_FILE": str(lock)},
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def processes_naming(path: Path) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(path) in args:
            found.append(args)
    return found
