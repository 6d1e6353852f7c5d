"""A campaign's rounds, failures, interrupts and records, without root or PostgreSQL.

The machine is a fake (a temporary directory per target, a cluster that only
answers what the campaign asks) and so are the workloads; everything else is
real: the schedule, the ledger, the machine lock (a file in tmp), the results
database read back as the report reads it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from pgfsbench import ledger as ledger_mod
from pgfsbench.campaign import events as ev
from pgfsbench.campaign.options import Options
from pgfsbench.campaign.run import Campaign
from pgfsbench.errors import CommandFailed, Interrupted, UserError
from pgfsbench.machine_lock import LOCK_ENV
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.plan.load import parse_plan
from pgfsbench.postgres.binaries import PgBinaries
from pgfsbench.proc import CommandResult, RunAs
from pgfsbench.provision.mountinfo import MountEntry
from pgfsbench.provision.target import PreparedTarget
from pgfsbench.scratch import private_dir
from pgfsbench.store.read import load_campaign

BINS = PgBinaries(Path("/nonexistent/pg/bin"), "17.0", "fake")

PLAN = """
name = "fake"
[repetitions]
count = 3
fresh = {fresh}
[monitors]
system = false
postgres = false
[[targets]]
name = "a"
fs = "ext4"
size = "512M"
[[targets]]
name = "b"
fs = "xfs"
size = "512M"
[[targets]]
name = "c"
fs = "btrfs"
size = "512M"
[[workloads]]
type = "fsync"
seconds = 1
[[workloads]]
type = "pgbench-init"
scale = 1
repetitions = 1
[[workloads]]
type = "pgbench"
clients = 1
duration = 1
"""


class FakeCluster:
    """What the campaign asks of a running server, and nothing more."""

    commands: list = []

    def version(self) -> str:
        return BINS.version

    def changed_settings(self) -> dict[str, str]:
        return {"shared_buffers": "32MB"}

    def io_settings(self) -> dict[str, str]:
        return {"fsync": "on", "shared_buffers": "32MB"}

    def data_checksums(self) -> bool:
        return True


class FakeMachine:
    """Targets are directories under tmp, recorded in the campaign's ledger like real ones."""

    def __init__(
        self, campaign: Campaign, root: Path, refuse: dict[str, str], unavailable: dict[str, str]
    ) -> None:
        self.campaign, self.root = campaign, root
        self.refuse, self.missing = refuse, unavailable
        self.made: Counter[str] = Counter()
        self.live: set[str] = set()  # targets provisioned and not yet torn down
        self.memory: dict = {}  # this visit's memory record
        self.peaks: list[int] = []  # each visit's peak, in order

    def preflight(self) -> None:
        pass

    def pg_user(self) -> RunAs:
        return RunAs.current()

    def host_facts(self) -> dict:
        return {"hostname": "fake"}

    def targets(self):
        return list(self.campaign.plan.targets)

    def unavailable(self, spec) -> str | None:
        return self.missing.get(spec.name)

    @contextlib.contextmanager
    def target(self, spec):
        if spec.name in self.refuse:
            raise UserError(self.refuse[spec.name])
        self.made[spec.name] += 1
        with private_dir(
            self.campaign.ledger, f"fake-{spec.name}-", self.root, self.campaign.user
        ) as workdir:
            mount = MountEntry(str(workdir), spec.fs, "fake", "rw", "rw", workdir.stat().st_dev)
            mkfs = CommandResult((f"mkfs.{spec.fs}", str(workdir)), 0, "made", "", 0.1)
            self.live.add(spec.name)
            try:
                yield PreparedTarget(
                    spec.name, spec.kind, spec.fs, workdir, None, mount, commands=[mkfs]
                )
            finally:
                self.live.discard(spec.name)

    @contextlib.contextmanager
    def os_settings(self, spec, target):
        # a memory limit's record as provision/memory.py yields it; the server's stop
        # adds the visit's usage (below), as Machine's does
        limit = self.campaign.plan.memory_limit(spec)
        self.memory = {"limit": limit} if limit else {}
        settings = {"os_settings": {"sysctls": {}, "restore_problems": []}, "throttle": {}}
        yield {**settings, "memory": self.memory}

    def provenance(self, spec, target) -> dict:
        return {"kind": spec.kind, "fs": spec.fs}

    @contextlib.contextmanager
    def server(self, spec, target, log_dest: Path):
        try:
            yield FakeCluster()
        finally:
            log_dest.parent.mkdir(parents=True, exist_ok=True)
            log_dest.write_text("LOG:  database system is shut down\n")
            if self.memory:  # a peak that varies by visit, one refused charge each
                self.memory.update(peak_bytes=[100, 300, 200][len(self.peaks) % 3], failcnt=1)
                self.peaks.append(self.memory["peak_bytes"])


class FakeWorkloads:
    """Returns a headline number per workload type: ``value(target, type, round)``, by
    default a constant plus the round; ``fail`` maps (target, type, round) to the
    exception that run raises instead. The round is read from the run's directory, as
    the campaign lays it out (round-00 is the settling round)."""

    def __init__(self, fail: dict | None = None, value=None) -> None:
        self.fail = fail or {}
        self.value = value or (lambda target, workload, round_no: BASE[workload] + round_no)
        self.ran: list[tuple[str, str, int]] = []

    def __call__(self, ctx, workload) -> WorkloadResult:
        name = ctx.target.name
        where = ctx.artifacts_dir.parent.name
        round_no = int(where.removeprefix("round-")) if where.startswith("round-") else 1
        self.ran.append((name, workload.type, round_no))
        if exc := self.fail.get((name, workload.type, round_no)):
            raise exc
        value = self.value(name, workload.type, round_no)
        return WorkloadResult(metrics=[Metric(HEADLINE[workload.type], value, "x", True)])


BASE = {"fsync": 500.0, "pgbench-init": 2.0, "pgbench": 1000.0}
HEADLINE = {
    "fsync": "fsync.fdatasync_8k.ops_per_s",
    "pgbench-init": "pgbench_init.elapsed_s",
    "pgbench": "pgbench.tps",
}


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A private state directory and machine lock; returns a function that runs a plan
    with fakes and gives (campaign, status or the exception raised)."""
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "machine.lock"))
    (tmp_path / "targets").mkdir()

    def run(
        plan_text: str,
        workloads: FakeWorkloads | None = None,
        *,
        results: str = "r",
        refuse: dict[str, str] | None = None,
        unavailable: dict[str, str] | None = None,
        observer=None,
    ):
        said: list = []  # the events it told, in order
        machines: list[FakeMachine] = []

        def machine(campaign):
            machines.append(
                FakeMachine(campaign, tmp_path / "targets", refuse or {}, unavailable or {})
            )
            return machines[-1]

        campaign = Campaign(
            parse_plan(plan_text, "fake"),
            Options(tmp_path / results, BINS),
            observer or said.append,
            machine=machine,
            run_workload=workloads or FakeWorkloads(),
        )
        campaign.said, campaign.fake = said, machines[0]
        try:
            return campaign, campaign.run()
        except BaseException as exc:  # Interrupted and KeyboardInterrupt too
            return campaign, exc

    return run


def runs(results: Path) -> list[tuple[str, str, int, str, str | None]]:
    """(target, workload, round, status, error) in the order they ran."""
    return [
        (r.target, r.workload, r.repetition, r.status, r.error) for r in load_campaign(results).runs
    ]


def nothing_left(campaign: Campaign, tmp_path: Path) -> None:
    """The ledger undid everything: no target directory, no state file, the lock free."""
    assert list((tmp_path / "targets").iterdir()) == []
    assert list((tmp_path / "state").glob("*.json")) == []
    with open(tmp_path / "machine.lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # would raise if still held


@pytest.mark.parametrize("fresh", [True, False])
def test_rounds_interleave_targets_as_the_schedule_says(lab, tmp_path, fresh):
    # (reused targets without their settling round here: see the test of that round)
    campaign, status = lab(PLAN.format(fresh="true" if fresh else "false\nsettle = false"))
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    assert stored.status == "ok"
    # round-robin, rotated one step per round
    order = [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    assert stored.schedule["visits"] == [[n + 1, t] for n, r in enumerate(order) for t in r]
    ran = runs(tmp_path / "r")
    assert [(t, n) for t, w, n, _, _ in ran if w == "pgbench"] == [
        (t, n + 1) for n, r in enumerate(order) for t in r
    ]
    assert {status for _, _, _, status, _ in ran} == {"ok"}
    if fresh:
        # a fresh filesystem each visit: made again, and its tables loaded again
        assert campaign.fake.made == {"a": 3, "b": 3, "c": 3}
        assert Counter(t for t, w, *_ in ran if w == "pgbench-init") == {"a": 3, "b": 3, "c": 3}
    else:
        # made once and kept; loaded once (pgbench-init has repetitions = 1)
        assert campaign.fake.made == {"a": 1, "b": 1, "c": 1}
        assert Counter(t for t, w, *_ in ran if w == "pgbench-init") == {"a": 1, "b": 1, "c": 1}
        assert ev.VisitStarted("b", 2, "loop", "xfs", provisioning=False) in campaign.said
    targets = {
        t.name: (t.status, t.provenance.get("postgres_version"), t.provenance.get("data_checksums"))
        for t in stored.targets
    }
    assert targets == {n: ("ok", "17.0", True) for n in "abc"}
    # each provisioning command is kept with its output, per round when there are rounds
    kept = sorted((tmp_path / "r/artifacts/a").glob("round-*/provision-01-mkfs.ext4.txt"))
    assert len(kept) == (3 if fresh else 1)
    assert {r.metrics[0].value for r in stored.runs if r.workload == "pgbench"} == {
        1001.0,
        1002.0,
        1003.0,
    }
    nothing_left(campaign, tmp_path)


def test_a_failing_workload_is_recorded_and_the_campaign_goes_on(lab, tmp_path):
    workloads = FakeWorkloads(
        {
            ("b", "fsync", 2): CommandFailed(
                CommandResult(("pg_test_fsync",), 1, "", "could not open: No space", 1.0)
            ),
            ("c", "pgbench-init", 1): OSError(28, "No space left on device"),
            ("a", "fsync", 3): RuntimeError("a bug of ours"),
        }
    )
    campaign, status = lab(PLAN.format(fresh="false\nsettle = false"), workloads)
    assert status == "partial"
    assert load_campaign(tmp_path / "r").status == "partial"
    ran = {(t, w, n): (s, e) for t, w, n, s, e in runs(tmp_path / "r")}
    assert ran[("b", "fsync", 2)] == ("failed", "pg_test_fsync exited 1: could not open: No space")
    assert ran[("b", "fsync", 3)] == ("ok", None)  # the next round measures it again
    assert ran[("c", "pgbench-init", 1)] == ("failed", "[Errno 28] No space left on device")
    # a pgbench on tables that did not load is not run; the next round loads them again
    assert ran[("c", "pgbench", 1)] == ("failed", "not run: pgbench-init failed on this target")
    assert ran[("c", "pgbench-init", 2)] == ran[("c", "pgbench", 2)] == ("ok", None)
    assert ran[("a", "fsync", 3)] == ("failed", "internal error: RuntimeError('a bug of ours')")
    (tb,) = (tmp_path / "r/artifacts/a/round-03").glob("*-fsync/traceback.txt")
    assert "a bug of ours" in tb.read_text()
    (told,) = [
        e
        for e in campaign.said
        if isinstance(e, ev.RunFinished) and (e.target, e.workload, e.round) == ("b", "fsync", 2)
    ]
    assert (told.status, told.error, told.headline) == (
        "failed",
        "pg_test_fsync exited 1: could not open: No space",
        None,
    )
    assert {t.name: t.status for t in load_campaign(tmp_path / "r").targets} == {
        "a": "ok",
        "b": "ok",
        "c": "ok",
    }
    nothing_left(campaign, tmp_path)


def test_a_display_that_breaks_costs_no_result(lab, tmp_path):
    """stdout a pipe whose reader went away (Ansible's, on Ctrl-C): the campaign goes on,
    records every run and tears down as usual; nothing more is shown."""
    shown = []

    def closed_pipe(event):
        shown.append(event)
        if len(shown) > 3:
            raise BrokenPipeError(32, "Broken pipe")

    plan = PLAN.format(fresh="false\nsettle = false")
    campaign, status = lab(plan, observer=closed_pipe)
    assert status == "ok"
    assert len(shown) == 4
    ran = runs(tmp_path / "r")
    assert {s for *_, s, _ in ran} == {"ok"}
    _, whole = lab(plan, results="whole")  # the same campaign, shown to the end
    assert whole == "ok" and [r[:3] for r in ran] == [r[:3] for r in runs(tmp_path / "whole")]
    assert {t.status for t in load_campaign(tmp_path / "r").targets} == {"ok"}
    nothing_left(campaign, tmp_path)


def test_a_target_that_cannot_be_provisioned_is_recorded_and_the_rest_run(lab, tmp_path):
    campaign, status = lab(
        PLAN.format(fresh="true"),
        refuse={"b": "mount: wrong fs type"},
        unavailable={"c": "the running kernel does not support btrfs"},
    )
    assert status == "partial"
    stored = load_campaign(tmp_path / "r")
    assert stored.status == "partial"
    assert {t.name: (t.status, t.reason) for t in stored.targets} == {
        "a": ("ok", None),
        "b": ("failed", "mount: wrong fs type"),
        "c": ("skipped", "the running kernel does not support btrfs"),
    }
    # b is tried once, then dropped from the rounds; c never
    assert [v for v in stored.schedule["visits"] if v[1] != "a"] == [[1, "b"]]
    assert {t for t, *_ in runs(tmp_path / "r")} == {"a"}
    # every visit of a fresh target loads its tables again
    assert [(w, n) for _, w, n, status, _ in runs(tmp_path / "r") if status == "ok"] == [
        (w, n) for n in (1, 2, 3) for w in ("fsync", "pgbench-init", "pgbench")
    ]
    assert ev.TargetFailed("b", 1, "mount: wrong fs type") in campaign.said
    assert ev.TargetSkipped("c", "the running kernel does not support btrfs") in campaign.said
    assert campaign.fake.made == {"a": 3}
    nothing_left(campaign, tmp_path)


def test_a_campaign_where_nothing_completed_is_failed(lab, tmp_path):
    one = (
        PLAN.format(fresh="true").split('[[targets]]\nname = "b"')[0]
        + '[[workloads]]\ntype = "fsync"\nseconds = 1\n'
    )
    campaign, status = lab(one, refuse={"a": "mkfs.ext4 exited 1"})
    assert status == "failed"
    assert load_campaign(tmp_path / "r").status == "failed"
    assert runs(tmp_path / "r") == []
    nothing_left(campaign, tmp_path)


@pytest.mark.parametrize(
    "raised, error",
    [
        (Interrupted(signal.SIGTERM), "interrupted by a signal"),
        (KeyboardInterrupt(), "interrupted (Ctrl-C)"),
    ],
)
def test_a_signal_in_a_workload_unwinds_and_records_what_completed(lab, tmp_path, raised, error):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    workloads = FakeWorkloads({("b", "pgbench", 2): raised})
    campaign, outcome = lab(PLAN.format(fresh="false"), workloads)
    assert outcome is raised  # propagates, for the CLI's exit status
    stored = load_campaign(tmp_path / "r")
    assert stored.status == "interrupted"
    ran = runs(tmp_path / "r")
    assert ran[-1] == ("b", "pgbench", 2, "interrupted", error)
    assert [r for r in ran if r[3] != "ok"] == [ran[-1]]  # what completed before is kept
    assert ("a", "pgbench", 1, "ok", None) in ran
    # every target visited so far stopped short of its rounds
    assert {t.name: t.status for t in stored.targets} == {
        "a": "interrupted",
        "b": "interrupted",
        "c": "interrupted",
    }
    assert [2, "b"] in stored.schedule["visits"]
    assert not [r for r in ran if r[2] == 2 and r[0] != "b"]  # c and a came after b
    assert campaign.fake.live == set()  # the kept targets were torn down
    nothing_left(campaign, tmp_path)
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_killed_campaign_is_refused_until_cleanup_marks_it_killed(lab, tmp_path):
    """kill -9 in the middle of a workload: no cleanup block runs. The next campaign
    refuses to start; `pgfsbench cleanup`, in a fresh process, undoes and records it."""

    def killed(ctx, workload):
        if workload.type == "pgbench":
            os.kill(os.getpid(), signal.SIGKILL)
        return FakeWorkloads()(ctx, workload)

    pid = os.fork()
    if pid == 0:  # the campaign that gets killed
        try:
            lab(PLAN.format(fresh="false"), killed)
        finally:
            os._exit(1)
    _, wait_status = os.waitpid(pid, 0)
    assert os.WTERMSIG(wait_status) == signal.SIGKILL
    (left,) = (tmp_path / "state").glob("*.json")
    assert {r["kind"] for r in json.loads(left.read_text())["resources"]} == {"lock", "dir"}
    assert len(list((tmp_path / "targets").iterdir())) == 1

    campaign, refused = lab(PLAN.format(fresh="false"), results="next")
    assert isinstance(refused, UserError) and "run 'pgfsbench cleanup' first" in str(refused)
    assert "it left 1 directory" in str(refused)

    env = {**os.environ, "COLUMNS": "300"}  # the fixture's state dir and lock file
    done = subprocess.run(
        [sys.executable, "-m", "pgfsbench", "cleanup"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "as killed" in done.stdout
    db = sqlite3.connect(tmp_path / "r" / "results.db")
    assert db.execute("SELECT status FROM campaign").fetchone() == ("killed",)
    assert ("pgbench", "interrupted", "pgfsbench was killed while it ran") in db.execute(
        "SELECT workload, status, error FROM runs"
    ).fetchall()
    assert list((tmp_path / "targets").iterdir()) == []
    assert list((tmp_path / "state").glob("*.json")) == []


# The same targets and workloads (fsync, a load done once, pgbench), 'auto' on reused
# targets. The fake fsync gives every target the same number: equivalent at once.
# A look after every round from min to max (as many looks as rounds): decisions as soon
# as the data allow, which these tests of the campaign's machinery rely on.
AUTO = PLAN.replace(
    "count = 3\nfresh = {fresh}",
    'count = "auto"\nmin = 3\nmax = {max}\nlooks = 1000\nmax_minutes = {minutes}\nfresh = false',
)


def drifting(factors: dict[str, float], noise: float, seed: int = 3, settling: float = 0.7):
    """tps per (target, round): the machine's drift shared by every target in a round,
    the target's factor, its own noise (seeded); round 0 runs ``settling`` times slower
    on the first target only, which would decide nothing right if it were counted."""
    rng = random.Random(seed)
    drift = [1 + 0.15 * rng.uniform(-1, 1) for _ in range(60)]
    own = {(t, r): rng.gauss(0, noise) for t in factors for r in range(60)}

    # fsync the same on every target, with a little noise of its own: identical values
    # in every round carry no spread to judge by, and would never be decided (paired.py)
    own_fsync = {
        (t, r): random.Random(f"{seed}{t}{r}").gauss(0, 0.0005) for t in factors for r in range(60)
    }

    def value(target: str, workload: str, round_no: int) -> float:
        if workload == "fsync":
            return BASE[workload] * (1 + own_fsync[(target, round_no)])
        if workload != "pgbench":
            return BASE[workload]
        v = 1000 * drift[round_no] * factors[target] * (1 + own[(target, round_no)])
        return v * settling if round_no == 0 and target == next(iter(factors)) else v

    return value


def test_auto_interleaves_every_target_until_decided_after_an_uncounted_settling_round(
    lab, tmp_path
):
    from pgfsbench.analysis.stats.sequential import decide, headline_family
    from pgfsbench.analysis.stats.stored_design import design_for

    value = drifting({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.004)  # c is 10% slower
    campaign, status = lab(AUTO.format(max=10, minutes=60), FakeWorkloads(value=value))
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    sched = stored.schedule
    stops = {x["workload"]: x for x in sched["measurements"]}
    assert (stops["pgbench-init"]["reason"], stops["pgbench-init"]["round"]) == ("count", 1)
    assert (stops["fsync"]["reason"], stops["fsync"]["round"]) == ("decided", 3)
    m = stops["pgbench"]
    assert m["reason"] == "decided"
    stop = m["round"]
    assert 3 <= stop < 10 and sched["rounds"] == stop and sched["settle"] is True
    # round 0 settles, then every target every round up to the stop, none after
    assert sorted(sched["visits"]) == [[r, t] for r in range(0, stop + 1) for t in "abc"]
    ran = runs(tmp_path / "r")
    for t in "abc":
        # the load ran once, in the settling round, and counts as repetition 1
        assert [(w, n) for tt, w, n, *_ in ran if tt == t][:3] == [
            ("fsync", 0),
            ("pgbench-init", 1),
            ("pgbench", 0),
        ]
        assert [n for tt, w, n, *_ in ran if tt == t and w == "pgbench"] == list(range(0, stop + 1))
    assert {s for *_, s, _ in ran} == {"ok"}
    assert sorted(p.name for p in (tmp_path / "r/artifacts/a/round-00").iterdir()) == [
        "postgres.log",
        "provision-01-mkfs.ext4.txt",
    ]  # the settling round's own directory
    # the decisions are those of the counted rounds alone (round 0's slow a left out),
    # every measurement's pairs decided together, as the report decides them
    values: dict = {}
    for r in stored.runs:
        if r.repetition > 0:
            values.setdefault((r.workload, r.label), {}).setdefault(r.target, {})[r.repetition] = (
                r.metrics[0].value
            )
    again = decide(headline_family(values, ["a", "b", "c"]), design_for(stored.plan))
    assert {
        tuple(d[k] for k in ("workload", "label", "a", "b")): d["outcome"]
        for d in sched["decisions"]
    } == {k: d.outcome for k, d in again.items()}
    assert {k[2:]: d.outcome for k, d in again.items() if k[0] == "pgbench"} == {
        ("a", "b"): "equivalent",
        ("a", "c"): "lower",
        ("b", "c"): "lower",
    }
    assert {s["target"]: s["text"] for s in sched["stops"] if s["workload"] == "pgbench"} == {
        t: f"decided at round {stop}: 3 comparisons (n={stop})" for t in "abc"
    }
    (settling,) = [e for e in campaign.said if isinstance(e, ev.RoundStarted) and e.round == 0]
    assert sorted(settling.targets) == ["a", "b", "c"]
    nothing_left(campaign, tmp_path)


def test_auto_identical_targets_run_every_target_to_max(lab, tmp_path):
    value = drifting({"a": 1.0, "b": 1.0, "c": 1.0}, noise=0.05)
    campaign, status = lab(AUTO.format(max=5, minutes=60), FakeWorkloads(value=value))
    assert status == "ok"
    sched = load_campaign(tmp_path / "r").schedule
    [m] = [x for x in sched["measurements"] if x["workload"] == "pgbench"]
    assert (m["reason"], m["round"], m["undecided"]) == ("max rounds", 5, 3)
    assert sorted(sched["visits"]) == [[r, t] for r in range(0, 6) for t in "abc"]
    nothing_left(campaign, tmp_path)


def test_auto_stops_when_the_time_budget_is_spent(lab, tmp_path):
    value = drifting({"a": 1.0, "b": 1.0, "c": 1.0}, noise=0.05)

    def slow(target, workload, round_no):
        time.sleep(0.05)  # a round of 3 targets takes at least 0.15 s; the budget is 0.3 s
        return value(target, workload, round_no)

    campaign, status = lab(AUTO.format(max=50, minutes=0.005), FakeWorkloads(value=slow))
    assert status == "ok"
    sched = load_campaign(tmp_path / "r").schedule
    [m] = [x for x in sched["measurements"] if x["workload"] == "pgbench"]
    assert m["reason"] == "budget" and 1 <= m["round"] <= 2, m
    assert m["text"].startswith(f"budget: 0.005 min reached at round {m['round']}, ")
    assert sorted(sched["visits"]) == [[r, t] for r in range(0, m["round"] + 1) for t in "abc"]
    nothing_left(campaign, tmp_path)


def test_a_fixed_count_on_reused_targets_settles_then_runs_exactly_n_rounds(lab, tmp_path):
    campaign, status = lab(PLAN.format(fresh="false"))
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    assert sorted(stored.schedule["visits"]) == [[r, t] for r in range(0, 4) for t in "abc"]
    ran = runs(tmp_path / "r")
    for t in "abc":
        assert Counter((w, n) for tt, w, n, *_ in ran if tt == t) == {
            ("fsync", 0): 1,
            ("pgbench", 0): 1,
            ("pgbench-init", 1): 1,
            **{(w, n): 1 for w in ("fsync", "pgbench") for n in (1, 2, 3)},
        }
    assert {s["reason"] for s in stored.schedule["stops"]} == {"count"}
    assert campaign.fake.made == {"a": 1, "b": 1, "c": 1}
    nothing_left(campaign, tmp_path)


def test_every_visits_memory_usage_is_in_the_stored_provenance(lab, tmp_path):
    plan = PLAN.format(fresh="false\nsettle = false").replace(
        'name = "fake"', 'name = "fake"\nmemory = "256M"'
    )
    campaign, status = lab(plan)
    assert status == "ok"
    for t in load_campaign(tmp_path / "r").targets:  # 3 visits each, one cgroup a visit
        assert t.provenance["memory"] == {
            "limit": "256M",
            "peak_bytes": 300,
            "failcnt": 3,
            "visits": 3,
        }, t.name
    nothing_left(campaign, tmp_path)


def test_a_failed_load_in_the_settling_round_is_loaded_again_and_counted(lab, tmp_path):
    workloads = FakeWorkloads({("b", "pgbench-init", 0): OSError(28, "No space left")})
    campaign, status = lab(PLAN.format(fresh="false"), workloads)
    assert status == "partial"
    ran = [(w, n, s) for t, w, n, s, _ in runs(tmp_path / "r") if t == "b"]
    assert ran[:3] == [("fsync", 0, "ok"), ("pgbench-init", 1, "failed"), ("pgbench", 0, "failed")]
    assert ran[3:6] == [("fsync", 1, "ok"), ("pgbench-init", 1, "ok"), ("pgbench", 1, "ok")]
    nothing_left(campaign, tmp_path)


def test_a_signal_in_the_settling_round_keeps_what_completed(lab, tmp_path):
    workloads = FakeWorkloads({("a", "pgbench", 0): Interrupted(signal.SIGTERM)})
    campaign, outcome = lab(PLAN.format(fresh="false"), workloads)
    assert isinstance(outcome, Interrupted)
    stored = load_campaign(tmp_path / "r")
    assert stored.status == "interrupted"
    ran = runs(tmp_path / "r")
    # round 0 visits c, then a: c's settling runs and a's load are kept
    assert ran == [
        ("c", "fsync", 0, "ok", None),
        ("c", "pgbench-init", 1, "ok", None),
        ("c", "pgbench", 0, "ok", None),
        ("a", "fsync", 0, "ok", None),
        ("a", "pgbench-init", 1, "ok", None),
        ("a", "pgbench", 0, "interrupted", "interrupted by a signal"),
    ]
    assert {t.name: t.status for t in stored.targets} == {
        "a": "interrupted",
        "b": "pending",
        "c": "interrupted",
    }  # b: never visited
    assert campaign.fake.live == set()
    nothing_left(campaign, tmp_path)
