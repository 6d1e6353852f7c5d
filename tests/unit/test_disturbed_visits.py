"""Disturbed visits in a running campaign: found at the round's end on the machine's
evidence, run again later in the same round within the allowance, or kept, marked and
left out of the statistics; the results keep every run (fakes, as test_campaign.py).

The fake workloads give every run the monitors' per-second series the rule reads:
others' CPU at 1% (a quiet machine), or, for the runs a test disturbs, at 60% during
half of the run. The disturbed run's own result is *higher* than its peers' here: the
rule must not look at it (a rule on a low result would never pick it).
"""

from __future__ import annotations

import pytest

from pgfsbench.analysis.caveats.disturbance import disturbed_runs
from pgfsbench.analysis.cells import collect
from pgfsbench.campaign import events as ev
from pgfsbench.metrics import Metric, Series, WorkloadResult
from pgfsbench.plan.estimate import budget_seconds
from pgfsbench.store.read import load_campaign
from tests.unit.test_campaign import BASE, HEADLINE, PLAN, lab, nothing_left  # noqa: F401

QUIET = [1.0] * 8
BUSY = [1.0, 1.0, 60.0, 60.0, 60.0, 60.0, 1.0, 1.0]


class MonitoredWorkloads:
    """Each run: its headline, and others' CPU per second; ``busy`` lists the
    (target, workload, round, attempt) whose runs a neighbour's burst hit."""

    def __init__(
        self, busy: set[tuple[str, str, int, int]], value=None, ruin: float = 1.5, curve=False
    ) -> None:
        self.busy = busy
        self.value = value  # (target, workload, round) -> headline; default: constant + round
        self.ruin = ruin  # what a disturbed run's headline is multiplied by
        # a per-second curve of the headline too: 10 s, the burst's seconds (2-6) ruined
        # and the headline their mean over the whole seconds (1-8)
        self.curve = curve
        self.ran: list[tuple[str, str, int, int]] = []

    def __call__(self, ctx, workload) -> WorkloadResult:
        where = ctx.artifacts_dir.parent.name  # round-02, or round-02-again-1
        round_part, _, attempt = where.partition("-again-")
        round_no = int(round_part.removeprefix("round-"))
        key = (ctx.target.name, workload.type, round_no, int(attempt or 0))
        self.ran.append(key)
        hit = key in self.busy
        # by default the disturbed run's result is better than its peers': never what it
        # is judged by
        value = (
            self.value(key[0], workload.type, round_no)
            if self.value
            else BASE[workload.type] + round_no
        ) * (self.ruin if hit else 1.0)
        cpu = BUSY if hit else QUIET
        curve = []
        if self.curve:
            value /= self.ruin if hit else 1.0
            curve = [
                Series(
                    HEADLINE[workload.type],
                    "x",
                    [(t, value * (self.ruin if hit and 2 <= t <= 6 else 1.0)) for t in range(10)],
                )
            ]
            value = sum(v for _, v in curve[0].points[1:-1]) / 8
        return WorkloadResult(
            metrics=[Metric(HEADLINE[workload.type], value, "x", True)],
            series=[
                *curve,
                Series("mon.cpu.other_user_pct", "%", [(t + 1.0, v) for t, v in enumerate(cpu)]),
                Series("mon.cpu.steal_pct", "%", [(t + 1.0, 0.0) for t in range(8)]),
            ],
        )


REUSED = PLAN.format(fresh="false\nsettle = false")


def statuses(results) -> dict[tuple[str, str, int], list[str]]:
    out: dict[tuple[str, str, int], list[str]] = {}
    for r in load_campaign(results).runs:
        out.setdefault((r.target, r.workload, r.repetition), []).append(r.status)
    return out


def test_a_disturbed_visit_is_run_again_later_in_its_round(lab, tmp_path):
    workloads = MonitoredWorkloads({("b", "pgbench", 2, 0)})
    campaign, status = lab(REUSED, workloads)
    assert status == "ok"
    # b's visit of round 2 ran again after c's and a's, the same round; only its pgbench
    at = workloads.ran.index(("b", "pgbench", 2, 1))
    assert {k[0] for k in workloads.ran[: at - 1] if k[2] == 2} == {"a", "b", "c"}
    assert [k for k in workloads.ran if k[3]] == [("b", "pgbench", 2, 1)]
    stored = load_campaign(tmp_path / "r")
    runs = {(r.target, r.workload, r.repetition, r.status): r for r in stored.runs}
    again = runs[("b", "pgbench", 2, "redone")]
    assert again.error == "run again: 60% of the CPUs busy outside pgfsbench during 4 of its 8 s"
    assert statuses(tmp_path / "r")[("b", "pgbench", 2)] == ["redone", "ok"]
    assert stored.status == "ok"  # a run again is no failure
    # the statistics count the run again, never the disturbed one
    cells = {(k.target, k.workload, k.metric): c for k, c in collect(stored).items()}
    b = cells[("b", "pgbench", "pgbench.tps")]
    assert (b.values, b.rounds, b.redone, b.disturbed) == (
        [1001.0, 1002.0, 1003.0],
        [1, 2, 3],
        1,
        0,
    )
    assert disturbed_runs(stored.runs) == {}
    # what the schedule keeps, and what it told
    redo = stored.schedule["redo"]
    assert redo["share"] == 0.33 and redo["spent_s"] >= 0
    # a share of the fixed count's expected length (an 'auto' plan: of its budget)
    assert redo["allowance_s"] == round(0.33 * budget_seconds(campaign.plan)[1], 1) > 0
    [record] = redo["disturbed"]
    assert {k: record[k] for k in ("round", "target", "workload", "action")} == {
        "round": 2,
        "target": "b",
        "workload": "pgbench",
        "action": "run again",
    }
    cause = record["causes"]["other_cpu"]
    assert (cause["seconds"], cause["level"], cause["quietest_in_round"]) == (4.0, 60.0, 1.0)
    [told] = [e for e in campaign.said if isinstance(e, ev.VisitDisturbed)]
    assert (told.target, told.round, told.again) == ("b", 2, True)
    assert told.runs == (
        ev.Disturbed(
            "pgbench", "clients=1", "60% of the CPUs busy outside pgfsbench during 4 of its 8 s"
        ),
    )
    assert ev.VisitStarted("b", 2, "loop", "xfs", provisioning=False, again=1) in campaign.said
    assert (tmp_path / "r/artifacts/b/round-02-again-1/postgres.log").exists()
    nothing_left(campaign, tmp_path)


def test_without_an_allowance_a_disturbed_run_is_kept_and_left_out(lab, tmp_path):
    plan = REUSED.replace("count = 3\n", "count = 3\nredo = 0\n")
    workloads = MonitoredWorkloads({("b", "pgbench", 2, 0), ("c", "fsync", 3, 0)})
    campaign, status = lab(plan, workloads)
    assert status == "ok"
    assert not [k for k in workloads.ran if k[3]]  # nothing ran again
    stored = load_campaign(tmp_path / "r")
    assert {s for v in statuses(tmp_path / "r").values() for s in v} == {"ok"}  # kept
    left = {
        (r.target, r.workload, r.repetition)
        for r in stored.runs
        if r.id in disturbed_runs(stored.runs)
    }
    assert left == {("b", "pgbench", 2), ("c", "fsync", 3)}
    # marked in the results for SQL too, with the evidence
    flagged = {
        (r.target, r.workload, r.repetition): m.note
        for r in stored.runs
        for m in r.metrics
        if m.name == "disturb.left_out"
    }
    assert flagged == {
        ("b", "pgbench", 2): "kept and left out of the statistics: 60% of the CPUs busy "
        "outside pgfsbench during 4 of its 8 s",
        ("c", "fsync", 3): "kept and left out of the statistics: 60% of the CPUs busy "
        "outside pgfsbench during 4 of its 8 s",
    }
    cells = {(k.target, k.workload, k.metric): c for k, c in collect(stored).items()}
    b = cells[("b", "pgbench", "pgbench.tps")]
    assert (b.rounds, b.disturbed, b.redone) == ([1, 3], 1, 0)
    assert [r["action"] for r in stored.schedule["redo"]["disturbed"]] == ["kept", "kept"]
    told = [(e.target, e.round, e.again) for e in campaign.said if isinstance(e, ev.VisitDisturbed)]
    assert told == [("b", 2, False), ("c", 3, False)]
    nothing_left(campaign, tmp_path)


def test_a_visit_disturbed_every_time_is_tried_twice_more_then_kept(lab, tmp_path):
    workloads = MonitoredWorkloads({("a", "pgbench", 1, n) for n in range(3)})
    # all the time it likes (the fakes' visits take milliseconds): the limit tested is
    # the number of times, not the allowance
    campaign, status = lab(REUSED.replace("count = 3\n", "count = 3\nredo = 1\n"), workloads)
    assert status == "ok"
    assert [k for k in workloads.ran if k[3]] == [("a", "pgbench", 1, 1), ("a", "pgbench", 1, 2)]
    assert statuses(tmp_path / "r")[("a", "pgbench", 1)] == ["redone", "redone", "ok"]
    stored = load_campaign(tmp_path / "r")
    assert [r["action"] for r in stored.schedule["redo"]["disturbed"]] == [
        "run again",
        "run again",
        "kept",
    ]
    [kept] = disturbed_runs(stored.runs).values()
    assert kept.text() == "60% of the CPUs busy outside pgfsbench during 4 of its 8 s"
    nothing_left(campaign, tmp_path)


def test_a_load_the_same_on_every_visit_disturbs_none(lab, tmp_path):
    """A load that stays through the round is a level every visit shares (the paired
    comparison cancels it): busy seconds, but no visit busier than its round's quietest."""
    everything = {(t, w, n, 0) for t in "abc" for w in BASE for n in (1, 2, 3)}
    workloads = MonitoredWorkloads(everything)
    campaign, status = lab(REUSED, workloads)
    assert status == "ok"
    assert not [k for k in workloads.ran if k[3]]
    stored = load_campaign(tmp_path / "r")
    assert stored.schedule["redo"]["disturbed"] == [] and disturbed_runs(stored.runs) == {}
    nothing_left(campaign, tmp_path)


def test_a_fresh_target_run_again_loads_its_tables_again_uncounted(lab, tmp_path):
    workloads = MonitoredWorkloads({("a", "pgbench", 2, 0)})
    campaign, status = lab(PLAN.format(fresh="true"), workloads)
    assert status == "ok"
    assert [k for k in workloads.ran if k[3]] == [
        ("a", "pgbench-init", 2, 1),
        ("a", "pgbench", 2, 1),
    ]
    st = statuses(tmp_path / "r")
    assert st[("a", "pgbench", 2)] == ["redone", "ok"]
    assert st[("a", "pgbench-init", 2)] == ["ok"]  # the round's counted load, once
    assert st[("a", "pgbench-init", 0)] == ["ok"]  # the one the run again needed, uncounted
    assert campaign.fake.made["a"] == 4  # three rounds and the visit again
    nothing_left(campaign, tmp_path)


@pytest.mark.parametrize("order", ["round-robin", "random"])
def test_the_recorded_visits_are_the_rounds_alone(lab, tmp_path, order):
    """Visits run again are in the schedule's 'redo' record, not among its visits (a
    resumed campaign replays the rounds' order from those)."""
    plan = REUSED.replace("count = 3\n", f'count = 3\norder = "{order}"\n')
    campaign, status = lab(plan, MonitoredWorkloads({("c", "pgbench", 1, 0)}))
    assert status == "ok"
    visits = load_campaign(tmp_path / "r").schedule["visits"]
    assert len(visits) == 9 and sorted(visits) == [[n, t] for n in (1, 2, 3) for t in "abc"]
    nothing_left(campaign, tmp_path)


def test_the_progress_lines_say_which_visit_runs_again_and_why(lab, tmp_path):
    import io

    from rich.console import Console

    from pgfsbench.progress.lines import QUIET
    from pgfsbench.progress.live import LiveProgress
    from pgfsbench.progress.plain import PlainProgress

    campaign, _ = lab(REUSED, MonitoredWorkloads({("b", "pgbench", 2, 0)}))
    out = io.StringIO()
    view = PlainProgress(campaign.plan, out, io.StringIO())
    for e in campaign.said:
        view(e)
    lines = out.getvalue().splitlines()
    said = (
        "round 2: b again: 60% of the CPUs busy outside pgfsbench during 4 of its 8 s "
        "(pgbench clients=1)"
    )
    assert said in lines
    # told when it starts, before the round's end and its figures (the run again's)
    (done,) = [i for i, line in enumerate(lines) if line.startswith("round 2 of 3 done")]
    assert lines.index(said) < done
    assert "  pgbench clients=1 pgbench.tps (x): a 1,002 · b 1,002 · c 1,002" in lines[done:]
    quiet = io.StringIO()
    view = PlainProgress(campaign.plan, io.StringIO(), quiet, QUIET)
    for e in campaign.said:
        view(e)
    assert quiet.getvalue() == ""  # a visit run again is no problem
    console = Console(file=io.StringIO(), force_terminal=True, width=200, color_system=None)
    with LiveProgress(campaign.plan, console) as live:
        for e in campaign.said:
            live(e)
    assert said in console.file.getvalue()


def test_a_visit_kept_is_a_warning_saying_why(lab, tmp_path):
    import io

    from pgfsbench.progress.lines import QUIET
    from pgfsbench.progress.plain import PlainProgress

    plan = REUSED.replace("count = 3\n", "count = 3\nredo = 0\n")
    campaign, _ = lab(plan, MonitoredWorkloads({("b", "pgbench", 2, 0)}))
    err = io.StringIO()
    view = PlainProgress(campaign.plan, io.StringIO(), err, QUIET)
    for e in campaign.said:
        view(e)
    assert err.getvalue().splitlines() == [
        "warning: round 2: b disturbed, kept and left out of the statistics (the plan runs "
        "no visit again: [repetitions] redo = 0): 60% of the CPUs busy outside pgfsbench "
        "during 4 of its 8 s (pgbench clients=1)"
    ]


# Six rounds, c 10% slower, a little noise of its own per visit; a claim needs 3%,
# "equivalent" means within ±10%.
SIX = REUSED.replace("count = 3\n", "count = 6\nredo = 0\n").replace(
    "[monitors]", "[verdicts]\nnoise = 0.03\nequivalence = 0.10\n[monitors]"
)


def test_a_ruined_visit_kept_is_left_out_and_the_answer_says_what_it_would_have_done(lab, tmp_path):
    """The discount (docs/statistics.md): a visit a neighbour ruined (its tps ×0.3) and
    that could not be run again is left out, its round with it for the pairs it is in;
    the answer is the one the undisturbed rounds give, and the summary says what counting
    it would have made of it."""
    from pgfsbench.analysis.caveats.durability import durabilities
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts.answer import campaign_answer
    from pgfsbench.analysis.verdicts.disturbed import answer_counting_them, disturbed_visits
    from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
    from tests.unit.test_campaign import drifting

    value = drifting({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.01)
    ruined = MonitoredWorkloads({("b", "pgbench", 3, 0)}, value, ruin=0.3)
    campaign, status = lab(SIX, ruined)
    assert status == "ok"
    stored = load_campaign(tmp_path / "r")
    answer = campaign_answer(verdict_lines(comparison_table(stored), durabilities(stored)))
    # b's round 3 is out: a and b shown within ±10%, c decided behind both
    assert answer.endswith("TPC-B tps: a ≈ b > c"), answer
    # the same campaign with no disturbed visit at all gives that answer
    _, clean_status = lab(SIX, MonitoredWorkloads(set(), value), results="clean")
    clean = load_campaign(tmp_path / "clean")
    assert campaign_answer(verdict_lines(comparison_table(clean), durabilities(clean))) == answer
    # counted, the ruined visit (b at 30% of its level in round 3) would have blurred it
    counted = answer_counting_them(stored)
    # b blurred: of the three pairs only a > c stays decided, inside one tier
    assert counted.endswith("TPC-B tps: a, c, b (a > c)"), counted
    found = disturbed_visits(stored, answer)
    assert found is not None and (found.visits, found.disturbed, found.redone, found.kept) == (
        18,
        1,
        0,
        1,
    )
    assert found.text() == (
        "1 of 18 visits disturbed by others' load on the machine (1 run kept and left out "
        "of the statistics); the answer rests on the undisturbed runs; counting the "
        f"disturbed runs instead, it would read: {counted}"
    )
    nothing_left(campaign, tmp_path)


def test_the_summary_the_report_and_markdown_say_how_many_visits_were_disturbed(lab, tmp_path):
    import io

    from rich.console import Console

    from pgfsbench.formats.markdown import campaign_markdown
    from pgfsbench.report.html import render_report
    from pgfsbench.report.terminal import render_summary

    campaign, _ = lab(REUSED, MonitoredWorkloads({("b", "pgbench", 2, 0)}))
    stored = load_campaign(tmp_path / "r")
    console = Console(file=io.StringIO(), width=400, color_system=None)
    render_summary(stored, console)
    shown = console.file.getvalue()
    said = (
        "disturbed: 1 of 9 visits disturbed by others' load on the machine (1 run again in "
        "their round"
    )
    assert said in shown and "the answer rests on the undisturbed runs" in shown
    markdown = campaign_markdown(stored)
    assert "**Disturbed:** 1 of 9 visits disturbed by others' load" in markdown
    html = render_report(stored)
    assert 'id="disturbed"' in html and "status-redone" in html
    assert "run again: 60% of the CPUs busy outside pgfsbench during 4 of its 8 s" in html
    nothing_left(campaign, tmp_path)


def test_a_visit_a_burst_touched_in_part_is_counted_from_the_seconds_it_spared(lab, tmp_path):
    """The same ruined visit (its tps ×0.3 while the burst lasted, 5 of its 8 whole
    seconds), now with its per-second curve: counted from the 3 seconds no burst touched,
    not run again, its round kept for every pair; the answer is the undisturbed
    campaign's, and every output says so."""
    import io

    from pgfsbench.analysis.caveats.durability import durabilities
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts.answer import campaign_answer
    from pgfsbench.analysis.verdicts.disturbed import disturbed_visits
    from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
    from pgfsbench.formats.json import write_campaign
    from pgfsbench.progress.plain import PlainProgress
    from tests.unit.test_campaign import drifting

    value = drifting({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.01)
    plan = SIX.replace("redo = 0\n", "")  # the allowance is there: trimming needs none
    ruined = MonitoredWorkloads({("b", "pgbench", 3, 0)}, value, ruin=0.3, curve=True)
    campaign, status = lab(plan, ruined)
    assert status == "ok"
    assert not [k for k in ruined.ran if k[3]]  # nothing ran again
    stored = load_campaign(tmp_path / "r")
    run = next(
        r for r in stored.runs if (r.target, r.workload, r.repetition) == ("b", "pgbench", 3)
    )
    got = {m.name: m for m in run.metrics}
    assert run.status == "ok"
    assert (got["disturb.clean_s"].value, got["disturb.measured_s"].value) == (3, 8)
    assert got["disturb.trimmed"].note == "pgbench.tps"  # marked for SQL: what counts
    cells = {(k.target, k.workload, k.metric): c for k, c in collect(stored).items()}
    b = cells[("b", "pgbench", "pgbench.tps")]
    assert (b.rounds, b.trimmed, b.disturbed, b.redone) == ([1, 2, 3, 4, 5, 6], 1, 0, 0)
    # counted as the seconds the burst spared measured it: the undisturbed level
    assert b.values[2] == pytest.approx(value("b", "pgbench", 3))
    assert got["pgbench.tps"].value == pytest.approx(0.5625 * b.values[2])  # as measured
    answer = campaign_answer(verdict_lines(comparison_table(stored), durabilities(stored)))
    _, _ = lab(SIX, MonitoredWorkloads(set(), value, curve=True), results="clean")
    clean = load_campaign(tmp_path / "clean")
    assert campaign_answer(verdict_lines(comparison_table(clean), durabilities(clean))) == answer
    assert answer.endswith("TPC-B tps: a ≈ b > c"), answer
    found = disturbed_visits(stored, answer)
    assert found is not None and (found.disturbed, found.redone, found.kept, found.trimmed) == (
        1,
        0,
        0,
        1,
    )
    assert found.text().startswith(
        "1 of 18 visits disturbed by others' load on the machine (1 run counted from the "
        "seconds no burst touched); the answer rests on the undisturbed runs and seconds; "
    )
    [record] = stored.schedule["redo"]["disturbed"]
    assert (record["action"], record["clean_s"], record["measured_s"]) == ("trimmed", 3, 8)
    out = io.StringIO()
    write_campaign(stored, out)
    doc = __import__("json").loads(out.getvalue())
    [exported] = [r["disturbed"] for r in doc["runs"] if r["disturbed"]]
    assert exported["action"] == "trimmed"
    assert exported["why"].endswith(
        "its figure from the 3 of its 8 s after the warm-up no burst touched"
    )
    lines = io.StringIO()
    view = PlainProgress(campaign.plan, lines, io.StringIO())
    for e in campaign.said:
        view(e)
    assert (
        "round 3: b disturbed in part, counted from the rest: 60% of the CPUs busy outside "
        "pgfsbench during 4 of its 8 s; its figure from the 3 of its 8 s after the warm-up "
        "no burst touched (pgbench clients=1)"
    ) in lines.getvalue().splitlines()
    nothing_left(campaign, tmp_path)
