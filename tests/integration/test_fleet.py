"""The fleet playbook (fleet/site.yml) on two hosts of this machine, into a real store.

The hosts are inventory entries with ``ansible_connection=local``: distinct names, each
with its own results directory, one real campaign each (loop device, PostgreSQL,
pgbench). This machine has no sshd, and hosts in network namespaces would add an sshd
per namespace to test Ansible's transport, not the playbook; the playbook's tasks are the
same over SSH.

One sequence, as a user lives it, run from the directory that holds the inventory and
the plan files (named relative to it, as the docs show them; $PWD says otherwise, as
when another program starts the playbook): the first run is interrupted (Ctrl-C to the
playbook's process group) while the second host's campaign runs; ``--check`` then says
what the next run would do and changes nothing; the next run keeps the first host's campaign
(not run again, imported once), sets the interrupted one aside and runs it afresh; a
third run, all hosts at once (fleet_serial=0), changes nothing. Then the store holds
each host's campaign once and the fleet report names both hosts with their headline
metric side by side. Last, a run while a host's campaign is live (holding the machine
lock) leaves it alone. (A run that names no hosts, or a plan that does not check, is
refused: tests/unit/test_fleet_refusals.py.)
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
from tests.integration.plans import LOAD, SMALL_BUFFERS, ext4, pgbench, plan_toml

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "fleet" / "site.yml"
ANSIBLE_PLAYBOOK = Path(sys.executable).with_name("ansible-playbook")
HOSTS = ("alpha", "beta")
# A host whose plan's directory target is not there: its run fails, and the fleet goes
# on. (The plan checks on the controller: a directory is the host's business.)
MISSING_DIR = "/nonexistent/pgfsbench-fleet-test"
BROKEN_PLAN = plan_toml("broken", [{"name": "gone", "dir": MISSING_DIR}], [{"type": "fsync"}])
PLAN = plan_toml(
    "fleet-tiny",
    [ext4("ext4", "300M")],
    [LOAD, pgbench(clients=2, duration=2)],
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
    # Plan files and the collect directory relative to the directory the playbook is
    # run in (the test runs it in root), as the docs name them.
    (root / "inventory.ini").write_text(
        "[bench]\nbroken ansible_connection=local fleet_plan=broken.toml\n"
        + "".join(f"{h} ansible_connection=local\n" for h in HOSTS)
        + "\n[bench:vars]\nansible_python_interpreter=/usr/bin/python3\n"
        "fleet_plan=plan.toml\n"
        # Another host of the inventory, not in the fleet: never touched.
        "\n[db]\nstore-server ansible_connection=local ansible_python_interpreter=/bin/false\n"
    )
    variables = {
        "fleet_hosts": "bench",
        "fleet_store": store_url,
        "fleet_home": str(root / "install"),
        "fleet_results_root": str(root / "hosts"),
        "fleet_collect_dir": "controller",
        # The package lists as they are: no apt-get update (and no network) in the test.
        "fleet_apt_cache_valid_time": 10**9,
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


def playbook(fleet: dict, extra: dict | None = None, *options: str, **popen) -> subprocess.Popen:
    root = fleet["root"]
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(root / "ansible-home"),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "PYTHONUNBUFFERED": "1",
        # Not where it runs (a program that starts ansible-playbook passes its own):
        # relative paths are read from where it runs all the same.
        "PWD": str(REPO),
    }
    return subprocess.Popen(
        [
            str(ANSIBLE_PLAYBOOK),
            "-i",
            "inventory.ini",
            str(PLAYBOOK),
            "-e",
            "@vars.json",
            *(["-e", json.dumps(extra)] if extra else []),
            *options,
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
    root, hosts, collected, store = (
        fleet["root"],
        fleet["hosts"],
        fleet["collected"],
        fleet["store"],
    )

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
    # Its status is written before the campaign has finished unwinding (cleanup, the
    # report): wait until beta's files stand still, or --check below sees them change.
    wait_until(lambda: _still(hosts / "beta"), 120, "beta's files to stand still")
    alpha_dir = str(collected / "alpha")
    assert list(stored(store)) == [alpha_dir], out
    [(alpha_uuid, alpha_imported)] = stored(store).values()
    # As if the playbook had been stopped before collecting alpha: the controller's
    # copy is gone; alpha's finished campaign on the host is all there is.
    shutil.rmtree(collected / "alpha")
    (collected / "alpha.tar").unlink()

    # --check: it runs to the end, says what a run would do on each host, and changes
    # nothing (how each campaign ended is read all the same: it is read-only).
    before = files(root), stored(store)
    code, out = finish(playbook(fleet, {"fleet_serial": 0}, "--check"))
    assert code == 0, out
    assert f"plan: keeps the finished campaign in {hosts / 'alpha'} (ok), not run again" in out
    assert (
        f"plan: would set the interrupted campaign in {hosts / 'beta'} aside and run "
        f"{root / 'plan.toml'} afresh"
    ) in out, out
    assert f"plan: would run {root / 'broken.toml'} into {hosts / 'broken'}" in out, out
    assert out.count(f"install: the checkout is installed in {root / 'install'} already") == 3
    assert f"alpha: nothing collected yet; a run collects it to {collected / 'alpha'}" in out
    assert "beta: nothing collected yet" in out
    assert f"fleet report: would write {collected / 'fleet-report.md'}" in out, out
    assert (files(root), stored(store)) == before

    # 2. Again: alpha is not run again, beta's interrupted campaign is set aside (kept on
    # the host) and run afresh; both end in the store once. The broken host fails the
    # fleet run, named with pgfsbench's reason, after the others and the report. One
    # host at a time (fleet_serial's default): a play per host.
    code, out = finish(playbook(fleet))
    assert code == 2, out
    assert out.count("PLAY [Benchmark each host") == 3, out
    failed = "\n".join(line for line in out.splitlines() if "fleet run incomplete" in line)
    assert "broken: Run the plan" in failed and f"{MISSING_DIR} does not exist" in failed, failed
    assert "alpha" not in failed and "beta" not in failed, failed
    assert "store-server" not in out  # in the inventory, not in fleet_hosts
    assert [p.name for p in hosts.glob("beta.interrupted-*")] != [], out
    held = stored(store)
    assert sorted(held) == [alpha_dir, str(collected / "beta")], held
    # The same campaign, not a rerun, and its import untouched (collected again alike).
    assert held[alpha_dir] == (alpha_uuid, alpha_imported)
    # the inventory's [bench:vars] plan, not the playbook's default (smoke)
    assert plans_stored(store) == ["fleet-tiny", "fleet-tiny"]
    assert (collected / "alpha" / "results.db").is_file()  # collected again from the host
    assert campaign_status(hosts / "beta") == ("ok", 0)

    # 3. Once more, all hosts at once: nothing runs, nothing is imported again.
    code, out = finish(playbook(fleet, {"fleet_serial": 0}))
    assert code == 2 and "fleet run incomplete: broken" in out, out
    assert out.count("PLAY [Benchmark each host") == 1, out
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
    assert len(cells) == 5, tps  # the ratios are compare's, below
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
    # The report's preview (--check) names each collected campaign, read from its copy.
    preview = subprocess.run(
        [sys.executable, str(REPO / "fleet" / "fleet_report.py"), "--store", store]
        + ["--results", str(collected), "--preview", "alpha", "broken"],
        capture_output=True,
        text=True,
    )
    assert preview.returncode == 0, preview.stderr
    [alpha_line] = [line for line in preview.stdout.splitlines() if "  alpha: " in line]
    assert alpha_line.endswith(
        f"(ok) collected in {collected / 'alpha'}; a run collects it again if it changed on the host"
    ), alpha_line
    assert "  broken: nothing collected yet" in preview.stdout, preview.stdout

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
                    },
                    "fleet_serial": 0,
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


def _still(root: Path) -> bool:
    """Whether nothing under ``root`` changed over a second."""
    before = files(root)
    time.sleep(1.0)
    return files(root) == before


def files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` (but Ansible's own) with its size and modification time."""
    return {
        str(p): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in root.rglob("*")
        if "ansible-home" not in p.parts
    }


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
