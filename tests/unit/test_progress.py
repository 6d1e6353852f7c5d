"""What a campaign tells its observer, and how the views show it.

The event stream comes from whole campaigns run with the fake machine and fake
workloads of ``test_campaign.py`` (no root, no PostgreSQL); the views are fed
those recorded streams, with a fake clock where time matters.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from pgfsbench import proc
from pgfsbench.campaign import events as ev
from pgfsbench.errors import CommandFailed
from pgfsbench.plan.estimate import plan_seconds
from pgfsbench.plan.load import parse_plan
from pgfsbench.proc import CommandResult
from pgfsbench.progress.forecast import Forecast, clock_text
from pgfsbench.progress.lines import NORMAL, QUIET, VERBOSE
from pgfsbench.progress.live import LiveProgress
from pgfsbench.progress.plain import PlainProgress
from tests.unit.test_campaign import AUTO, PLAN, FakeWorkloads, drifting, lab  # noqa: F401

ANSI = re.compile(r"\x1b\[")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


class CommandWorkloads(FakeWorkloads):
    """Fake workloads that also run a real (harmless) command, as real ones do."""

    def __call__(self, ctx, workload):
        proc.run(["true"])
        return super().__call__(ctx, workload)


def test_the_event_stream_of_a_campaign(lab):
    fail = {
        ("b", "fsync", 2): CommandFailed(
            CommandResult(("pg_test_fsync",), 1, "", "could not open", 1.0)
        )
    }
    campaign, status = lab(PLAN.format(fresh="false\nsettle = false"), CommandWorkloads(fail))
    assert status == "partial"
    said = campaign.said
    assert isinstance(said[0], ev.CampaignStarted) and said[-1] == ev.CampaignEnded("partial")
    started = said[0]
    assert (
        started.plan,
        started.targets,
        started.first_round,
        started.most_rounds,
        started.auto,
    ) == ("fake", ("a", "b", "c"), 1, 3, False)
    assert [e.round for e in of(said, ev.RoundStarted)] == [1, 2, 3]
    assert [e.round for e in of(said, ev.RoundEnded)] == [1, 2, 3]
    # reused targets: provisioned in their first visit, reused after
    visits = of(said, ev.VisitStarted)
    assert [(v.target, v.round, v.provisioning) for v in visits if v.target == "a"] == [
        ("a", 1, True),
        ("a", 2, False),
        ("a", 3, False),
    ]
    # every run started is finished, in order, with its headline figure
    runs = [e for e in said if isinstance(e, (ev.RunStarted, ev.RunFinished))]
    assert len(runs) == 2 * 21  # 3 rounds × 3 targets × (fsync, pgbench) + 3 loads
    for begun, ended in zip(runs[::2], runs[1::2]):
        assert isinstance(begun, ev.RunStarted) and isinstance(ended, ev.RunFinished)
        assert (begun.target, begun.workload, begun.round) == (
            ended.target,
            ended.workload,
            ended.round,
        )
    tps = [e for e in of(said, ev.RunFinished) if e.workload == "pgbench"]
    assert {(e.round, e.headline) for e in tps} == {
        (n, ev.Headline("pgbench.tps", 1000.0 + n, "x", True)) for n in (1, 2, 3)
    }
    (failed,) = [e for e in of(said, ev.RunFinished) if e.status != "ok"]
    assert (failed.target, failed.workload, failed.round, failed.headline, failed.error) == (
        "b",
        "fsync",
        2,
        None,
        "pg_test_fsync exited 1: could not open",
    )
    # each command a run makes is told as it starts and as it ends, inside the run
    first = said.index(of(said, ev.RunStarted)[0])
    assert said[first + 1 : first + 3] == [
        ev.CommandStarted(("true",)),
        ev.CommandFinished(("true",), 0, said[first + 2].seconds),
    ]
    # after round 3 every fixed count is reached: each measurement stops, once
    last = of(said, ev.RoundEnded)[-1]
    assert {(s.workload, s.reason) for s in last.stopped} == {
        ("fsync", "count"),
        ("pgbench", "count"),
    }
    assert last.running == () and last.targets == ("a", "b", "c")


def test_skipped_and_failed_targets_are_events(lab):
    campaign, _ = lab(
        PLAN.format(fresh="true"),
        refuse={"b": "mount: wrong fs type"},
        unavailable={"c": "the running kernel does not support btrfs"},
    )
    said = campaign.said
    assert said.index(
        ev.TargetSkipped("c", "the running kernel does not support btrfs")
    ) < said.index(of(said, ev.CampaignStarted)[0])
    assert of(said, ev.CampaignStarted)[0].targets == ("a", "b")
    assert ev.TargetFailed("b", 1, "mount: wrong fs type") in said
    assert of(said, ev.RoundEnded)[0].targets == ("a",)  # b is measured no more


def auto_events(lab):
    value = drifting({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.004)
    campaign, status = lab(AUTO.format(max=10, minutes=60), FakeWorkloads(value=value))
    assert status == "ok"
    return campaign.plan, campaign.said


def test_auto_rounds_say_what_stopped_and_what_goes_on(lab):
    plan, said = auto_events(lab)
    ends = of(said, ev.RoundEnded)
    assert ends[0].round == 0 and ends[0].stopped == ()  # the settling round
    by_round = {e.round: e for e in ends}
    assert [(s.workload, s.reason) for s in by_round[1].stopped] == [("pgbench-init", "count")]
    assert ("fsync", "decided") in [(s.workload, s.reason) for s in by_round[3].stopped]
    assert by_round[3].running == (("pgbench", "clients=1"),)
    assert ends[-1].running == ()
    assert of(said, ev.CampaignStarted)[0].auto


def test_the_forecast_shrinks_when_measurements_stop_and_ends_full(lab):
    plan, said = auto_events(lab)
    clock = Clock()
    f = Forecast(plan, clock)
    totals = []
    for e in said:
        if isinstance(e, ev.RunFinished):
            clock.now += 2.0
        f.observe(e)
        if isinstance(e, ev.RoundEnded):
            totals.append((e.round, f.total, f.done))
    # at the start: the plan at its budget (max rounds), as plan check estimates it
    assert Forecast(plan, clock).total == pytest.approx(plan_seconds(plan))
    shrink = {r: t for r, t, _ in totals}
    assert shrink[3] < shrink[2]  # fsync decided at round 3: its future runs are gone
    assert all(done <= total for _, total, done in totals)
    assert f.finished and f.fraction() == 1.0 and f.left_text() == "done"


def test_auto_eta_is_a_range_capped_by_the_budget():
    plan = parse_plan(AUTO.format(max=12, minutes=10), "fake")
    clock = Clock()
    f = Forecast(plan, clock)
    f.observe(ev.CampaignStarted("c", "fake", ("a", "b", "c"), 0, 12, True, 3, 10))
    least, most = f.left()
    # at least: the settling round and rounds 1..3 (all decided at the first look); at
    # most: the rounds that start within the budget, short of the 12 allowed
    assert least == pytest.approx(plan_seconds(plan, 3))
    assert least < most < plan_seconds(plan) and most <= 10 * 60 + f._one_round()
    assert re.fullmatch(r"\d+:\d\d to \d+:\d\d left", f.left_text())
    assert re.fullmatch(r"estimated \d+:\d\d to \d+:\d\d", f.estimate_text())
    clock.now += 30 * 60  # far past the budget: only the round under way may finish
    assert f.left()[1] <= f._one_round() * f.pace()


def test_a_fixed_count_eta_follows_the_measured_pace():
    plan = parse_plan(PLAN.format(fresh="true"), "fake")
    clock = Clock()
    f = Forecast(plan, clock)
    f.observe(ev.CampaignStarted("c", "fake", ("a", "b", "c"), 1, 3, False))
    assert f.left()[0] == f.left()[1] == pytest.approx(plan_seconds(plan))
    f.observe(ev.VisitStarted("a", 1, "loop", "ext4", True))
    for workload, label in (("fsync", ""), ("pgbench-init", ""), ("pgbench", "clients=1")):
        f.observe(ev.RunStarted("a", workload, label, 1))
        clock.now += 2 * f.seconds[(workload, label)]  # everything runs twice as long
        f.observe(ev.RunFinished("a", workload, label, 1, "ok", 1.0))
    work = sum(f.seconds.values())
    assert f.done == pytest.approx(8.0 + work)  # the setup counts once its first run starts
    assert f.pace() == pytest.approx(2 * work / (8.0 + work))
    assert f.left()[1] == pytest.approx((f.total - f.done) * f.pace())
    assert clock_text(65) == "1:05" and clock_text(3725) == "1:02:05"


def replay(view, events):
    for e in events:
        view(e)


def test_plain_lines_a_line_per_measurement_per_round_and_problems_at_once(lab):
    fail = {
        ("b", "fsync", 2): CommandFailed(
            CommandResult(("pg_test_fsync",), 1, "", "could not open", 1.0)
        )
    }
    campaign, _ = lab(PLAN.format(fresh="false\nsettle = false"), CommandWorkloads(fail))
    out, err = io.StringIO(), io.StringIO()
    replay(PlainProgress(campaign.plan, out, err), campaign.said)
    lines = out.getvalue().splitlines()
    assert not ANSI.search(out.getvalue()) and "\r" not in out.getvalue()
    assert err.getvalue() == ""
    assert lines[0] == "3 targets (a, b, c): 3 rounds; estimated " + lines[0].split()[-1]
    assert [ln.split(":")[0] for ln in lines if "done:" in ln] == [
        "round 1 of 3 done",
        "round 2 of 3 done",
        "round 3 of 3 done",
    ]
    # each round: one line per measurement with every target's headline, in plan order
    assert "  pgbench clients=1 pgbench.tps (x): a 1,001 · b 1,001 · c 1,001" in lines
    assert "  fsync fsync.fdatasync_8k.ops_per_s (x): a 502.0 · b failed · c 502.0" in lines
    # the failure is told as it happens, before its round's figures
    problem = lines.index("error: b: fsync: failed: pg_test_fsync exited 1: could not open")
    assert problem < lines.index(
        "  fsync fsync.fdatasync_8k.ops_per_s (x): a 502.0 · b failed · c 502.0"
    )
    assert lines[-1].startswith("campaign partial after ") and lines[-1].endswith(
        ": 21 runs, 1 not completed"
    )
    assert not [ln for ln in lines if "stops:" in ln]  # a fixed count reached is no news
    assert len(lines) <= 3 * 4 + 3  # sparse: a few lines a round
    assert not [ln for ln in lines if "$ true" in ln]

    quiet_out, quiet_err = io.StringIO(), io.StringIO()
    replay(PlainProgress(campaign.plan, quiet_out, quiet_err, QUIET), campaign.said)
    assert quiet_out.getvalue() == ""
    assert quiet_err.getvalue().splitlines() == [
        "error: b: fsync: failed: pg_test_fsync exited 1: could not open"
    ]

    loud = io.StringIO()
    replay(PlainProgress(campaign.plan, loud, io.StringIO(), VERBOSE), campaign.said)
    said = loud.getvalue().splitlines()
    assert "a: provisioning loop target (ext4)" in said and "b: reusing the xfs target" in said
    assert "  a: pgbench clients=1 ..." in said and "    $ true" in said
    assert "  a: pgbench clients=1: pgbench.tps 1,001 x (0 s)" in said


def test_plain_lines_say_why_an_auto_measurement_stopped(lab):
    plan, said = auto_events(lab)
    out = io.StringIO()
    replay(PlainProgress(plan, out, io.StringIO()), said)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(
        "3 targets (a, b, c): a settling round, then 3 to 10 rounds "
        "until every comparison is decided or 60 min have passed; "
        "estimated "
    )
    assert "settling round done" in lines[1]
    assert "  fsync stops: decided at round 3: 3 comparisons" in lines


def test_the_live_view_prints_each_run_above_the_bar(lab):
    fail = {
        ("b", "fsync", 2): CommandFailed(
            CommandResult(("pg_test_fsync",), 1, "", "could not open", 1.0)
        )
    }
    campaign, _ = lab(PLAN.format(fresh="false\nsettle = false"), CommandWorkloads(fail))
    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    with LiveProgress(campaign.plan, console, NORMAL) as view:
        for e in campaign.said:
            view(e)
            if isinstance(e, ev.RunStarted) and (e.target, e.round) == ("c", 2):
                task = view.progress.tasks[0]
                assert task.description == f"round 2/3 · c · {e.workload} {e.label}".strip()
                assert 0 < task.completed < task.total
                assert view.progress.columns[-1].render(task).plain.endswith(" left")
    shown = console.file.getvalue()
    assert "  a: pgbench clients=1: pgbench.tps 1,001 x (0 s)" in shown
    assert "  b: fsync: failed: pg_test_fsync exited 1: could not open" in shown
    assert "round 3 of 3: " in shown and "campaign partial after" in shown
    assert "$ true" not in shown
    loud = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    with LiveProgress(campaign.plan, loud, VERBOSE) as view:
        replay(view, campaign.said)
    assert "    $ true" in loud.file.getvalue()


def test_a_campaign_takes_a_view_as_its_observer(lab, monkeypatch):
    """The CLI passes the view itself: nothing in between."""
    from pgfsbench.campaign.run import Campaign

    seen = []
    original = Campaign.__init__

    def spy(self, plan, options, observe=ev.ignore, **kwargs):
        view = PlainProgress(plan, io.StringIO(), io.StringIO())
        seen.append(view)

        def both(event):
            observe(event)
            view(event)

        original(self, plan, options, both, **kwargs)

    monkeypatch.setattr(Campaign, "__init__", spy)
    lab(PLAN.format(fresh="true"))
    assert "round 3 of 3 done" in seen[0].out.getvalue()


def test_a_visit_kept_says_which_time_ran_out():
    """Kept for want of time: the allowance of a fixed count, the allowance and then the
    budget of an 'auto' plan; or disturbed each time it ran."""
    from pgfsbench.progress.lines import disturbed_line

    runs = (ev.Disturbed("pgbench", "clients=4", "40% of the CPUs busy outside pgfsbench"),)

    def reason(**kw) -> str:
        line = disturbed_line(ev.VisitDisturbed("b", 7, runs, again=False, **kw))
        return line.split("statistics (", 1)[1].split("):", 1)[0]

    assert (
        reason(spent_s=180, allowance_s=178)
        == "the 3.0 min allowed so far for visits run again are spent"
    )
    assert (
        reason(spent_s=178, allowance_s=178, from_budget=True)
        == "the 3.0 min allowed for visits run again, then the budget, are spent"
    )
    assert reason(spent_s=10, allowance_s=178, from_budget=True) == "disturbed each time it ran"
    # past the allowance with budget left: kept for being disturbed twice, not for time
    assert (
        reason(spent_s=178, allowance_s=178, from_budget=True, redo_open=True)
        == "disturbed each time it ran"
    )
