"""Resuming a campaign, with the fake machine and workloads of test_campaign.py.

A campaign is interrupted at various points, resumed, and compared with the same
campaign run without interruption: the counted runs are the same cells and rounds,
none counted twice, in the same order, decided the same way.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from pgfsbench import ledger as ledger_mod
from pgfsbench.campaign.options import Options
from pgfsbench.campaign.resume import NothingToResume, check_same_plan, stored_plan
from pgfsbench.campaign.run import Campaign
from pgfsbench.errors import Interrupted, UserError
from pgfsbench.machine_lock import LOCK_ENV
from pgfsbench.plan.load import parse_plan
from pgfsbench.store.read import load_campaign
from tests.unit.test_campaign import (
    AUTO,
    BINS,
    PLAN,
    FakeMachine,
    FakeWorkloads,
    drifting,
    nothing_left,
)


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """Runs a plan (or resumes the results with ``plan=None``) on the fake machine;
    returns (campaign, status or the exception raised)."""
    monkeypatch.setenv(ledger_mod.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "machine.lock"))
    (tmp_path / "targets").mkdir()

    def run(plan_text: str | None, workloads=None, *, results: str = "r", host=None):
        said: list = []
        machines: list[FakeMachine] = []

        def machine(campaign):
            machines.append(FakeMachine(campaign, tmp_path / "targets", {}, {}))
            if host is not None:
                machines[-1].host_facts = lambda: host
            return machines[-1]

        where = tmp_path / results
        plan = stored_plan(where) if plan_text is None else parse_plan(plan_text, "fake")
        campaign = Campaign(
            plan,
            Options(where, BINS),
            said.append,
            machine=machine,
            run_workload=workloads or FakeWorkloads(),
            resume=plan_text is None,
        )
        campaign.said, campaign.fake = said, machines[0]
        try:
            return campaign, campaign.run()
        except BaseException as exc:  # Interrupted and KeyboardInterrupt too
            return campaign, exc

    return run


def counted(results: Path) -> Counter:
    """(target, workload, repetition) of every counted run: ok and not settling."""
    return Counter(
        (r.target, r.workload, r.repetition)
        for r in load_campaign(results).runs
        if r.status == "ok" and r.repetition > 0
    )


def round_orders(results: Path) -> dict[int, list[str]]:
    """Each round's visit order, as it finally ran (the last block of each round)."""
    orders: dict[int, list[str]] = {}
    last = None
    for round_no, target in load_campaign(results).schedule["visits"]:
        if round_no != last or target in orders[round_no]:
            orders[round_no] = []
        orders[round_no].append(target)
        last = round_no
    return orders


FIXED = {
    "fresh": PLAN.format(fresh="true"),
    "reused": PLAN.format(fresh="false"),
    "reused-unsettled": PLAN.format(fresh="false\nsettle = false"),
    "random": PLAN.format(fresh='true\norder = "random"'),
    "reused-random": PLAN.format(fresh='false\norder = "random"'),
}
WHERE = {
    "round1": ("a", "fsync", 1),
    "round2": ("c", "pgbench", 2),
    "round3": ("b", "fsync", 3),
    "settling": ("a", "pgbench", 0),
}
# every plan × where its campaign is interrupted; only reused, settled plans have a
# settling round (0) to interrupt
CASES = [
    pytest.param(plan, where, id=f"{plan_id}-{where_id}")
    for plan_id, plan in FIXED.items()
    for where_id, where in WHERE.items()
    if where[2] > 0 or ("settle" not in plan and "fresh = true" not in plan)
]


@pytest.mark.parametrize("plan, where", CASES)
@pytest.mark.parametrize(
    "raised", [Interrupted(signal.SIGTERM), KeyboardInterrupt()], ids=["sigterm", "ctrl-c"]
)
def test_an_interrupted_campaign_resumed_counts_what_an_uninterrupted_one_does(
    lab, tmp_path, plan, where, raised
):
    campaign, outcome = lab(plan, FakeWorkloads({where: raised}))
    assert isinstance(outcome, BaseException), f"{where} is not a run of this plan"
    assert outcome is raised
    seed = load_campaign(tmp_path / "r").schedule.get("seed")
    nothing_left(campaign, tmp_path)

    resumed, status = lab(None)
    assert status == "ok", status
    stored = load_campaign(tmp_path / "r")
    assert stored.status == "ok"
    [resumption] = stored.schedule["resumes"]
    assert resumption["previous_status"] == "interrupted"
    nothing_left(resumed, tmp_path)

    # The same campaign without interruption (the random one with the recorded seed)
    again = plan.replace('order = "random"', f'order = "random"\nseed = {seed}')
    _, whole = lab(again, results="whole")
    assert whole == "ok"
    assert counted(tmp_path / "r") == counted(tmp_path / "whole")
    assert max(counted(tmp_path / "r").values()) == 1  # none counted twice
    orders = round_orders(tmp_path / "r")
    assert {r: o for r, o in orders.items() if r > 0} == {
        r: o for r, o in round_orders(tmp_path / "whole").items() if r > 0
    }
    # what was cut short (and the rest of its round) is kept, marked, never counted
    runs = load_campaign(tmp_path / "r").runs
    cut = [
        r
        for r in runs
        if (r.target, r.workload, r.repetition) == where
        or (where[1] == "pgbench-init" and r.workload == where[1] and r.target == where[0])
    ]
    assert any(r.status == "superseded" and "was interrupted" in r.error for r in cut), cut
    assert {r.status for r in runs} <= {"ok", "superseded"}
    assert resumption["superseded_runs"] == sum(r.status == "superseded" for r in runs)
    assert all(
        r.repetition >= resumption["from_round"]
        or "was interrupted" in r.error
        or r.repetition == 0
        for r in runs
        if r.status == "superseded"
    )


def test_a_resumed_reused_campaign_settles_again_and_records_the_remade_targets(lab, tmp_path):
    plan = PLAN.format(fresh="false")
    _, outcome = lab(plan, FakeWorkloads({("a", "pgbench", 3): Interrupted(signal.SIGTERM)}))
    assert isinstance(outcome, Interrupted)
    resumed, status = lab(None)
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    [resumption] = stored.schedule["resumes"]
    assert (resumption["from_round"], resumption["settling_again"]) == (3, True)
    # round 3 again, after a settling round 0 (uncounted) on the re-made targets
    assert resumed.fake.made == {"a": 1, "b": 1, "c": 1}
    ran = [
        (r.target, r.workload, r.repetition, r.status)
        for r in stored.runs
        if r.started >= resumption["at"]
    ]
    assert {(w, n) for _, w, n, _ in ran} == {
        ("fsync", 0),
        ("pgbench-init", 0),
        ("pgbench", 0),
        ("fsync", 3),
        ("pgbench", 3),
    }
    assert {s for *_, s in ran} == {"ok"}
    # settling again in round 3's order, its visits recorded as round 0 after round 2's
    visits = [tuple(v) for v in stored.schedule["visits"]]
    order3 = [t for r, t in visits if r == 3][-3:]
    assert visits[-6:] == [(0, t) for t in order3] + [(3, t) for t in order3]
    for t in stored.targets:
        assert t.provenance["remade"] == [
            {
                "round": 0,
                "session": 1,
                "settling_again": True,
                "why": "the campaign was resumed: the target was provisioned again (a new mkfs)",
            }
        ]
    # the re-settling round's artifacts go to the session's own directory
    assert (tmp_path / "r/artifacts/resume-1/a/round-00/provision-01-mkfs.ext4.txt").is_file()
    assert (tmp_path / "r/artifacts/a/round-00/provision-01-mkfs.ext4.txt").is_file()


def test_auto_replays_its_decisions_and_counts_the_time_spent(lab, tmp_path):
    value = drifting({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.004)
    plan = AUTO.format(max=10, minutes=60)
    _, whole = lab(plan, FakeWorkloads(value=value), results="whole")
    assert whole == "ok"
    expected = load_campaign(tmp_path / "whole").schedule
    stop = {m["workload"]: m for m in expected["measurements"]}["pgbench"]["round"]
    assert stop >= 4
    cut = FakeWorkloads({("b", "pgbench", 4): Interrupted(signal.SIGTERM)}, value=value)
    _, outcome = lab(plan, cut)
    assert isinstance(outcome, Interrupted)
    before = load_campaign(tmp_path / "r").schedule
    # fsync was decided at round 3, before the interruption: it stays decided, not run
    assert {m["workload"] for m in before["measurements"]} == {"fsync", "pgbench-init"}
    resumed, status = lab(None, FakeWorkloads(value=value))
    assert status == "ok"
    after = load_campaign(tmp_path / "r").schedule
    assert after["measurements"] == expected["measurements"]
    assert after["decisions"] == expected["decisions"]
    assert after["rounds"] == expected["rounds"] == stop
    ran = {
        (r.workload, r.repetition)
        for r in load_campaign(tmp_path / "r").runs
        if r.started >= after["resumes"][0]["at"] and r.repetition > 0
    }
    assert ran == {("pgbench", n) for n in range(4, stop + 1)}
    assert counted(tmp_path / "r") == counted(tmp_path / "whole")
    assert after["resumes"][0]["spent_minutes"] > 0


def test_the_time_budget_counts_the_earlier_sessions(lab, tmp_path, monkeypatch):
    import time

    # A fake clock, moved only by the runs and the pause: the budget's arithmetic is
    # tested, not this machine's speed.
    now = [time.time()]
    monkeypatch.setattr(time, "time", lambda: now[0])
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    value = drifting({"a": 1.0, "b": 1.0, "c": 1.0}, noise=0.05)

    def slow(target, workload, round_no):
        now[0] += 0.1  # a round (settling included): 3 targets x 2 runs, 0.6 s
        return value(target, workload, round_no)

    budget_s = 3
    plan = AUTO.format(max=50, minutes=budget_s / 60)
    workloads = FakeWorkloads({("a", "pgbench", 3): Interrupted(signal.SIGTERM)}, value=slow)
    _, outcome = lab(plan, workloads)
    assert isinstance(outcome, Interrupted)  # round 3 comes at 1.8 s of the 3 s budget
    now[0] += 60  # the time it stood stopped does not count
    _, status = lab(None, FakeWorkloads(value=slow))
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    sched = stored.schedule
    [m] = [x for x in sched["measurements"] if x["workload"] == "pgbench"]
    assert m["reason"] == "budget" and m["round"] >= 3, m
    resumed_at = sched["resumes"][0]["at"]
    first_session = max(r.ended for r in stored.runs if r.started < resumed_at) - stored.started
    assert sched["resumes"][0]["spent_minutes"] == pytest.approx(first_session / 60, abs=0.001)
    # the resumed session measured only what was left of the budget (had it started the
    # budget afresh, it would have run rounds for the whole of it)
    resumed_span = max(r.ended for r in stored.runs) - resumed_at
    assert resumed_span < budget_s - first_session + 1.5, (resumed_span, first_session)


def test_a_busy_campaigns_budget_stop_keeps_its_words_when_resumed(lab, tmp_path, monkeypatch):
    """A busy campaign's budget stop (budget and allowance, and another round would have
    passed them) is stored with its clock and kind; resumed, it is worded the same, not
    as the budget alone."""
    import json
    import time

    now = [time.time()]
    monkeypatch.setattr(time, "time", lambda: now[0])
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    value = drifting({"a": 1.0, "b": 1.0, "c": 1.0}, noise=0.05)

    def slow(target, workload, round_no):
        now[0] += 0.1
        return value(target, workload, round_no)

    _, status = lab(AUTO.format(max=50, minutes=0.05), FakeWorkloads(value=slow))
    assert status == "ok"
    db = sqlite3.connect(tmp_path / "r" / "results.db")
    [(text,)] = db.execute("SELECT schedule_json FROM campaign").fetchall()
    sched = json.loads(text)
    [m] = [x for x in sched["measurements"] if x["workload"] == "pgbench"]
    assert (m["reason"], m["minutes"], m["ahead"]) == ("budget", 0.05, False)
    m.update(minutes=12, ahead=True)  # as a busy campaign stores it
    db.execute(
        "UPDATE campaign SET status='interrupted', ended=NULL, schedule_json=?",
        (json.dumps(sched),),
    )
    db.commit()
    _, status = lab(None, FakeWorkloads(value=slow))
    assert status == "ok"
    [m] = [
        x
        for x in load_campaign(tmp_path / "r").schedule["measurements"]
        if x["workload"] == "pgbench"
    ]
    assert m["text"].startswith("budget: another round would end past 12 min, so round ")


def test_a_campaign_that_ended_has_nothing_to_resume(lab, tmp_path):
    _, status = lab(PLAN.format(fresh="true"))
    assert status == "ok"
    with pytest.raises(NothingToResume, match="ended 'ok'.*nothing to resume"):
        stored_plan(tmp_path / "r")


def test_resume_refuses_another_machine_another_plan_and_a_running_campaign(lab, tmp_path):
    plan = PLAN.format(fresh="true")
    _, outcome = lab(plan, FakeWorkloads({("b", "fsync", 2): KeyboardInterrupt()}))
    assert isinstance(outcome, KeyboardInterrupt)
    campaign, refused = lab(None, host={"hostname": "elsewhere"})
    assert isinstance(refused, UserError) and "ran on another machine" in str(refused)
    assert load_campaign(tmp_path / "r").status == "interrupted"  # untouched
    other = parse_plan(plan.replace("seconds = 1", "seconds = 2"), "changed")
    with pytest.raises(UserError, match="differs from the one the campaign"):
        check_same_plan(other, stored_plan(tmp_path / "r"), tmp_path / "r")
    check_same_plan(parse_plan(plan, "same"), stored_plan(tmp_path / "r"), tmp_path / "r")
    # the plan comes from the results, not from a file that may have changed
    assert stored_plan(tmp_path / "r").model_dump() == parse_plan(plan, "x").model_dump()
    # recorded as running by a process that is alive: refused
    db = sqlite3.connect(tmp_path / "r" / "results.db")
    db.execute("UPDATE campaign SET status='running'")
    db.commit()
    owner = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "pgfsbench"]
    )  # a live process that says it is pgfsbench
    try:
        _wait_for_its_command_line(owner.pid)
        alive = ledger_mod.Ledger.create("alive", tmp_path / "r")
        alive.pid = owner.pid
        alive.save()
        _, refused = lab(None)
    finally:
        owner.kill()
        owner.wait()
    assert isinstance(refused, UserError) and "still running" in str(refused), refused
    # its process gone: the next resume says to clean up after it first
    _, refused = lab(None)
    assert isinstance(refused, UserError) and "run 'pgfsbench cleanup' first" in str(refused)


def _wait_for_its_command_line(pid: int) -> None:
    """Popen returns while the child is still inside execve: for a moment its
    /proc/PID/cmdline is empty (20 of 300 tries here), and an owner whose command
    line does not say pgfsbench is rightly taken for a recycled pid."""
    deadline = time.monotonic() + 10
    while b"pgfsbench" not in Path(f"/proc/{pid}/cmdline").read_bytes():
        assert time.monotonic() < deadline, "the stand-in owner never showed its command line"
        time.sleep(0.01)


def test_a_killed_campaign_is_resumed_after_cleanup(lab, tmp_path):
    def killed(ctx, workload):
        if workload.type == "pgbench" and ctx.artifacts_dir.parent.name == "round-02":
            os.kill(os.getpid(), signal.SIGKILL)
        return FakeWorkloads()(ctx, workload)

    plan = PLAN.format(fresh="false")
    pid = os.fork()
    if pid == 0:
        try:
            lab(plan, killed)
        finally:
            os._exit(1)
    os.waitpid(pid, 0)
    _, refused = lab(None)
    assert isinstance(refused, UserError) and "run 'pgfsbench cleanup' first" in str(refused)
    env = {**os.environ, "COLUMNS": "300"}
    done = subprocess.run(
        [sys.executable, "-m", "pgfsbench", "cleanup"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert load_campaign(tmp_path / "r").status == "killed"
    resumed, status = lab(None)
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    assert stored.schedule["resumes"][0]["previous_status"] == "killed"
    _, whole = lab(plan, results="whole")
    assert counted(tmp_path / "r") == counted(tmp_path / "whole")
    killed_run = [
        r
        for r in stored.runs
        if r.status == "superseded" and "pgfsbench was killed" in (r.error or "")
    ]
    assert [(r.target, r.workload, r.repetition) for r in killed_run] == [
        (killed_run[0].target, "pgbench", 2)
    ]
    nothing_left(resumed, tmp_path)


def test_a_changed_stored_plan_is_refused(lab, tmp_path):
    _, outcome = lab(
        PLAN.format(fresh="true"), FakeWorkloads({("a", "fsync", 2): KeyboardInterrupt()})
    )
    assert isinstance(outcome, KeyboardInterrupt)
    assert load_campaign(tmp_path / "r").schedule["plan_sha256"]
    db = sqlite3.connect(tmp_path / "r" / "results.db")
    db.execute(
        "UPDATE campaign SET plan_json = replace(plan_json, '\"seconds\": 1', '\"seconds\": 9')"
    )
    db.commit()
    with pytest.raises(UserError, match="does not match the hash recorded"):
        stored_plan(tmp_path / "r")


def test_the_progress_forecast_of_a_resumed_campaign_counts_only_what_is_left():
    from pgfsbench.campaign import events as ev
    from pgfsbench.progress.forecast import Forecast

    plan = parse_plan(PLAN.format(fresh="true"), "fake")
    whole, resumed = Forecast(plan, clock=lambda: 0.0), Forecast(plan, clock=lambda: 0.0)
    started = ev.CampaignStarted("x", "fake", ("a", "b", "c"), 1, 3, False)
    whole.observe(started)
    resumed.observe(ev.CampaignStarted("x", "fake", ("a", "b", "c"), 3, 3, False, resumed_at=3))
    assert resumed.total == pytest.approx(whole.total / 3)


@pytest.mark.parametrize("fresh", ["true", "false"])
def test_a_campaign_stopped_after_its_last_round_resumes_to_its_end_running_nothing(
    lab, tmp_path, fresh
):
    """Killed during its final teardown: every round had ended."""
    _, status = lab(PLAN.format(fresh=fresh))
    assert status == "ok"
    before = load_campaign(tmp_path / "r")
    db = sqlite3.connect(tmp_path / "r" / "results.db")
    db.execute("UPDATE campaign SET status='interrupted', ended=NULL")
    db.commit()
    resumed, status = lab(None)
    assert status == "ok"
    after = load_campaign(tmp_path / "r")
    assert len(after.runs) == len(before.runs) and resumed.fake.made == {}
    assert after.schedule["resumes"][0]["superseded_runs"] == 0
    nothing_left(resumed, tmp_path)


def test_the_command_line_resumes_nothing_that_ended_and_refuses_what_it_cannot(lab, tmp_path):
    _, status = lab(PLAN.format(fresh="true"))
    assert status == "ok"
    _, outcome = lab(
        PLAN.format(fresh="true"),
        FakeWorkloads({("a", "fsync", 2): KeyboardInterrupt()}),
        results="cut",
    )
    assert isinstance(outcome, KeyboardInterrupt)
    other = tmp_path / "other.toml"
    other.write_text(PLAN.format(fresh="false"))

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "pgfsbench", "run", *args],
            capture_output=True,
            text=True,
            env={**os.environ, "COLUMNS": "300"},
        )

    done = cli("--resume", str(tmp_path / "r"))
    assert done.returncode == 0 and "nothing to resume" in done.stdout, done
    assert "ended 'ok'" in done.stdout
    for args, words in [
        (["--resume", str(tmp_path / "cut"), "--results", str(tmp_path / "x")], "not both"),
        ([], "give --results DIR for a new campaign, or --resume DIR"),
        (["--resume", str(tmp_path / "none")], "holds no results"),
        ([str(other), "--resume", str(tmp_path / "cut")], "differs from the one the campaign"),
    ]:
        refused = cli(*args)
        assert refused.returncode == 2 and words in refused.stderr, (args, refused)
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert load_campaign(tmp_path / "cut").status == "interrupted"  # nothing changed


@pytest.mark.parametrize("fresh", ["true", "false"])
def test_a_resumed_campaign_interrupted_again_resumes_again(lab, tmp_path, fresh):
    plan = PLAN.format(fresh=fresh)
    _, first = lab(plan, FakeWorkloads({("b", "pgbench", 1): Interrupted(signal.SIGTERM)}))
    assert isinstance(first, Interrupted)
    _, second = lab(None, FakeWorkloads({("c", "fsync", 3): KeyboardInterrupt()}))
    assert isinstance(second, KeyboardInterrupt)
    assert load_campaign(tmp_path / "r").status == "interrupted"
    resumed, status = lab(None)
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    assert [(r["from_round"], r["previous_status"]) for r in stored.schedule["resumes"]] == [
        (1, "interrupted"),
        (3, "interrupted"),
    ]
    _, whole = lab(plan, results="whole")
    assert counted(tmp_path / "r") == counted(tmp_path / "whole")
    assert max(counted(tmp_path / "r").values()) == 1
    assert (tmp_path / "r/artifacts/resume-2").is_dir()
    nothing_left(resumed, tmp_path)
