"""The round schedule: interleaved order, per-workload counts, auto stopping."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from pgfsbench.plan.design import Repetitions
from pgfsbench.schedule import Schedule
from pgfsbench.workloads.pgbench_init import PgbenchInitWorkload
from pgfsbench.workloads.pgbench_tpcb import PgbenchWorkload


def _measurements():
    return [
        PgbenchInitWorkload(type="pgbench-init", scale=1),
        *PgbenchWorkload(type="pgbench", clients=[1, 4], duration=5).expand(),
    ]


def test_round_robin_rotates_so_no_target_is_always_first() -> None:
    s = Schedule(Repetitions(count=3), ["a", "b", "c"], _measurements())
    assert [s.order(r, ["a", "b", "c"]) for r in (1, 2, 3)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
    ]
    assert s.visits[:4] == [(1, "a"), (1, "b"), (1, "c"), (2, "b")]
    assert s.describe()["seed"] is None


def test_random_order_is_reproducible_from_the_recorded_seed() -> None:
    first = Schedule(Repetitions(count=5, order="random"), list("abcd"), _measurements())
    orders = [first.order(r, list("abcd")) for r in range(1, 6)]
    again = Schedule(
        Repetitions(count=5, order="random", seed=first.describe()["seed"]),
        list("abcd"),
        _measurements(),
    )
    assert [again.order(r, list("abcd")) for r in range(1, 6)] == orders
    assert len({tuple(o) for o in orders}) > 1  # shuffled, not one fixed order
    assert all(sorted(o) == list("abcd") for o in orders)


def test_fixed_count_and_per_workload_override() -> None:
    init = PgbenchInitWorkload(type="pgbench-init", scale=1, repetitions=1)
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count=3), ["a"], [init, bench])
    assert s.max_rounds() == 3
    assert s.wanted("a", 1) == [init, bench]
    assert s.wanted("a", 2) == [bench]
    for r in (1, 2, 3):
        for m in s.wanted("a", r):
            s.record("a", m, 100.0, ok=True, round_no=r)
        s.end_round(r)
    assert s.active_targets(4) == []
    stops = {(x["workload"], x["reason"]) for x in s.describe()["stops"]}
    assert stops == {("pgbench-init", "count"), ("pgbench", "count")}


class Clock:
    """A fake monotonic clock: each round takes ``per_round`` seconds."""

    def __init__(self, per_round: float = 60.0) -> None:
        self.now, self.per_round = 0.0, per_round

    def __call__(self) -> float:
        return self.now


def _values(
    factors: dict[str, float], noise: float, rounds: int = 30, seed: int = 7
) -> dict[str, list[float]]:
    """Headline values per target and round: a drift every target shares in a round
    (the machine), times the target's factor, times its own noise; seeded."""
    rng = random.Random(seed)
    drift = [1000.0 * (1 + 0.15 * rng.uniform(-1, 1)) for _ in range(rounds)]
    return {t: [d * f * (1 + rng.gauss(0, noise)) for d in drift] for t, f in factors.items()}


def _auto_run(
    values_by_target: dict[str, list[float]], clock: Clock | None = None, **reps
) -> Schedule:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(
        Repetitions(count="auto", **reps), list(values_by_target), [bench], clock=clock or Clock()
    )
    for r in range(s.first_round, s.max_rounds() + 1):
        active = s.active_targets(r)
        if not active:
            break
        for t in s.order(r, active):
            s.record(t, bench, values_by_target[t][r - 1], ok=True, round_no=r)
        if clock:
            clock.now += clock.per_round
        s.end_round(r)
    return s


def test_auto_stops_every_target_together_once_each_comparison_is_decided() -> None:
    # c is 10% slower; a and b are the same (equivalence has to be shown, too)
    s = _auto_run(
        _values({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.004), min=3, max=10, looks=[3, 5, 7, 10]
    )
    doc = s.describe()
    [m] = doc["measurements"]
    assert m["reason"] == "decided" and m["comparisons"] == 3 and m["undecided"] == 0
    stop = m["round"]
    assert stop in (3, 5, 7), doc  # decisions are made at the planned looks only
    # every target every round, up to the stop, and nothing after it
    assert sorted(s.visits) == [(r, t) for r in range(1, stop + 1) for t in "abc"]
    outcomes = {(d["a"], d["b"]): d["outcome"] for d in doc["decisions"]}
    assert outcomes == {("a", "b"): "equivalent", ("a", "c"): "lower", ("b", "c"): "lower"}
    assert {x["target"]: (x["reason"], x["n"]) for x in doc["stops"]} == {
        t: ("decided", stop) for t in "abc"
    }
    assert f"decided at round {stop}: 3 comparisons (n={stop})" == doc["stops"][0]["text"]
    assert doc["design"] == {
        "alpha": 0.05,
        "noise": 0.02,
        "first_look": 3,
        "last_look": 10,
        "max_minutes": 60,
        "looks": [3, 5, 7, 10],
        "final_look": None,
        "descriptive": [],
    }
    assert doc["rounds"] == stop and doc["settle"] is False


def test_auto_decisions_are_the_ones_the_stored_rounds_give() -> None:
    from pgfsbench.analysis.stats.sequential import decide, headline_family
    from pgfsbench.analysis.stats.stored_design import design_for

    s = _auto_run(_values({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.004), min=3, max=10)
    values = {("pgbench", "clients=1"): {t: s.samples[(t, "pgbench", "clients=1")] for t in "abc"}}
    plan = {"repetitions": s.reps.model_dump(mode="json")}
    again = decide(headline_family(values, list("abc")), design_for(plan))
    assert {k[2:]: d.outcome for k, d in again.items()} == {
        (d["a"], d["b"]): d["outcome"] for d in s.describe()["decisions"]
    }


def test_auto_identical_noisy_targets_run_to_max_with_every_target_each_round() -> None:
    s = _auto_run(_values({"a": 1.0, "b": 1.0, "c": 1.0}, noise=0.05), min=3, max=8)
    [m] = s.describe()["measurements"]
    assert m["reason"] == "max rounds" and m["round"] == 8 and m["undecided"] == 3
    assert m["text"] == "max rounds: 8 reached, 3 of 3 comparisons undecided"
    assert sorted(s.visits) == [(r, t) for r in range(1, 9) for t in "abc"]


def test_auto_budget_stops_before_max() -> None:
    clock = Clock(per_round=60)  # a round takes a minute
    s = _auto_run(_values({"a": 1.0, "b": 1.0}, noise=0.05), clock, min=3, max=50, max_minutes=5)
    [m] = s.describe()["measurements"]
    assert m["reason"] == "budget" and m["round"] == 5
    assert m["text"] == "budget: 5 min reached at round 5, 1 of 1 comparisons undecided"
    assert sorted(s.visits) == [(r, t) for r in range(1, 6) for t in "ab"]
    # the budget's last round is a look with the alpha left (looks at 3 and 50 planned)
    assert s.describe()["design"]["final_look"] == 5
    assert s.design.levels() == pytest.approx(
        {3: 0.05 * (3 / 50) ** 2, 5: 0.05 - 0.05 * (3 / 50) ** 2}
    )


def test_auto_the_budget_round_decides_what_the_planned_look_would_have() -> None:
    # c is 10% slower, a look planned at round 12 only, and the budget ends round 6:
    # round 6 is the last look, with all of alpha, and decides c.
    clock = Clock(per_round=60)
    s = _auto_run(
        _values({"a": 1.0, "b": 1.0, "c": 0.9}, noise=0.01),
        clock,
        min=3,
        max=12,
        looks=1,
        max_minutes=6,
    )
    outcomes = {(d["a"], d["b"]): (d["outcome"], d["at_round"]) for d in s.describe()["decisions"]}
    assert outcomes[("a", "c")] == ("lower", 6) and outcomes[("b", "c")] == ("lower", 6)
    assert s.last_round == 6


def test_time_run_again_past_the_allowance_comes_from_an_auto_budget() -> None:
    """Waits and runs again fill the allowance (on top of the budget), then an 'auto'
    plan pays them from its budget until that is spent too; a fixed count, whose length
    is not a budget, stops at the allowance."""
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    clock = Clock()
    s = Schedule(
        Repetitions(count="auto", max_minutes=10, redo=0.1), ["a", "b"], [bench], clock=clock
    )
    s.budget_s = 600.0  # the allowance: 60 s
    s.spend(50.0)
    assert (s.extra_s, s.from_budget_s, s.may_redo()) == (50.0, 0.0, True)
    s.spend(30.0)  # 10 s fill the allowance, 20 s come from the budget
    assert (s.extra_s, s.from_budget_s) == (60.0, 20.0)
    clock.now = 600.0 + 60.0 - 1  # measuring: 599 s of the 600
    assert s.may_redo()
    clock.now += 2
    assert not s.may_redo()
    assert s.describe()["redo"]["from_budget_s"] == 20.0

    fixed = Schedule(Repetitions(count=5, redo=0.1), ["a", "b"], [bench], clock=Clock())
    fixed.budget_s = 600.0
    fixed.spend(70.0)
    assert (fixed.extra_s, fixed.from_budget_s, fixed.may_redo()) == (70.0, 0.0, False)


def test_a_busy_campaign_starts_no_round_that_would_end_past_budget_and_allowance() -> None:
    """Rounds of 100 s, a 10-minute budget, an allowance of 60 s spent in round 1 with
    20 s more from the budget: after round 5 (680 s so far, 116 s a round) another would
    end past 660 s, so round 5 is the last look, though only 520 s were measuring."""
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    values = _values({"a": 1.0, "b": 1.0}, noise=0.05)

    def run(busy: bool) -> Schedule:
        clock = Clock(per_round=100)
        s = Schedule(
            Repetitions(count="auto", min=3, max=50, max_minutes=10, redo=0.1),
            ["a", "b"],
            [bench],
            clock=clock,
        )
        s.budget_s = 600.0
        for r in range(1, 51):
            for t in s.order(r, s.active_targets(r)):
                s.record(t, bench, values[t][r - 1], ok=True, round_no=r)
            clock.now += clock.per_round
            if busy and r == 1:
                s.spend(80.0)
                clock.now += 80.0
            s.end_round(r)
            if not s.active_targets(r + 1):
                return s
        raise AssertionError("never stopped")

    busy, quiet = run(busy=True), run(busy=False)
    stop = busy.stops[("pgbench", "clients=1")]
    assert (busy.last_round, stop.reason) == (5, "budget")
    # 10 + 1 allowed, not reached: measuring 520 s of the 600 when round 5 ended
    assert stop.text().startswith("budget: another round would end past 11 min, so round 5 ")
    assert quiet.stops[("pgbench", "clients=1")].text().startswith("budget: 10 min reached")
    assert busy.from_budget_s == 20.0 and busy.measuring_s() == 520.0
    assert quiet.last_round == 6  # 600 s measuring: the budget alone


def test_auto_a_fixed_count_measurement_is_described_not_tested() -> None:
    # pg_test_fsync-like: its own 3 repetitions in an 'auto' plan. It runs its 3 rounds
    # and stops on its count; it is never in the decisions, so it costs no alpha.
    fixed = PgbenchWorkload(type="pgbench", clients=2, duration=5, repetitions=3)
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    vals = _values({"a": 1.0, "b": 0.8}, noise=0.004)
    s = Schedule(
        Repetitions(count="auto", min=3, max=10), ["a", "b"], [fixed, bench], clock=Clock()
    )
    assert s.design.descriptive == {("pgbench", fixed.label())}
    for r in range(1, 11):
        if not s.active_targets(r):
            break
        for t in s.order(r, s.active_targets(r)):
            for m in s.wanted(t, r):
                s.record(t, m, vals[t][r - 1], ok=True, round_no=r)
        s.end_round(r)
    doc = s.describe()
    assert {d["label"] for d in doc["decisions"]} == {bench.label()}
    assert {m["label"]: m["reason"] for m in doc["measurements"]} == {
        fixed.label(): "count",
        bench.label(): "decided",
    }
    assert doc["design"]["descriptive"] == [["pgbench", fixed.label()]]


def test_auto_a_failed_target_does_not_hold_the_others() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    vals = _values({"a": 1.0, "b": 0.9, "c": 1.0}, noise=0.004)
    s = Schedule(Repetitions(count="auto", min=3, max=10), list("abc"), [bench], clock=Clock())
    for r in range(1, 11):
        if not s.active_targets(r):
            break
        for t in s.order(r, s.active_targets(r)):
            s.record(t, bench, vals[t][r - 1], ok=True, round_no=r)
            if (t, r) == ("c", 2):
                s.drop("c", 2)  # provisioning failed: no more visits
        s.end_round(r)
    assert [t for r, t in s.visits if r > 2 and t == "c"] == []
    [m] = s.describe()["measurements"]
    assert m["reason"] == "decided" and m["comparisons"] == 1 and m["round"] < 10
    stops = {x["target"]: x for x in s.describe()["stops"]}
    assert (
        stops["c"]["reason"] == "failed"
        and stops["c"]["text"] == "stopped at round 2: the target failed (n=2)"
    )


def test_auto_gives_up_on_a_measurement_with_nothing_to_compare() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count="auto", min=3, max=10), ["a", "b"], [bench])
    for r in (1, 2, 3):
        for t in "ab":
            s.record(t, bench, None, ok=False, round_no=r)  # every run fails
        s.end_round(r)
    assert s.describe()["stops"][0]["reason"] == "nothing to compare"
    assert s.active_targets(4) == []


def test_auto_a_run_without_a_headline_counts_for_nothing() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count="auto", min=3, max=10), ["a", "b"], [bench])
    for r, v in enumerate((1000.0, 1500.0, None, float("nan")), start=1):
        for t in "ab":
            s.record(t, bench, v, ok=True, round_no=r)
        s.end_round(r)
    assert s.samples[("a", "pgbench", bench.label())] == {1: 1000.0, 2: 1500.0}
    assert s.describe()["measurements"] == []  # two rounds of the same ratio: n=2, not yet


def test_settling_round_runs_everything_and_counts_only_the_load_done_once() -> None:
    init = PgbenchInitWorkload(type="pgbench-init", scale=1, repetitions=1)
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count=3, fresh=False), ["a", "b"], [init, bench])
    assert s.settling and s.first_round == 0
    assert s.visit("a", 0) == [init, bench]
    assert (s.repetition(init, 0), s.repetition(bench, 0)) == (1, 0)
    for m in s.visit("a", 0):
        s.record("a", m, 5.0, ok=True, round_no=0)
    s.end_round(0)
    assert s.samples == {("a", "pgbench-init", init.label()): {1: 5.0}}  # not the pgbench
    assert s.visit("a", 1) == [bench]  # loaded in round 0, and counted there
    assert s.describe()["stops"] == [] and s.describe()["settle"] is True
    # a failed load in round 0 is loaded again before round 1's pgbench
    s.record("b", init, None, ok=False, round_no=0)
    assert s.visit("b", 1) == [init, bench] and s.repetition(init, 1) == 1
    # a load run every round is settled like the rest: round 0's does not count
    each = PgbenchInitWorkload(type="pgbench-init", scale=1)
    s = Schedule(Repetitions(count=3, fresh=False), ["a"], [each, bench])
    assert s.repetition(each, 0) == 0 and s.visit("a", 1) == [each, bench]


def test_settling_round_skips_a_measurement_with_its_own_count() -> None:
    """pg_test_fsync run once for the advice (~19 s a visit) is not what the settling
    round steadies: it runs in round 1 only, and the budget goes to the tested rounds."""
    from pgfsbench.workloads.fsync import FsyncWorkload

    init = PgbenchInitWorkload(type="pgbench-init", scale=1, repetitions=1)
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    once = FsyncWorkload(type="fsync", seconds=1, repetitions=1)
    s = Schedule(Repetitions(count="auto", fresh=False), ["a"], [init, bench, once])
    assert s.visit("a", 0) == [init, bench]
    for m in s.visit("a", 0):
        s.record("a", m, 5.0, ok=True, round_no=0)
    s.end_round(0)
    assert s.visit("a", 1) == [bench, once] and s.repetition(once, 1) == 1
    s.record("a", once, 5.0, ok=True, round_no=1)
    assert s.visit("a", 2) == [bench]


def test_settling_is_for_reused_targets_with_rounds_and_can_be_skipped() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)

    def settles(**reps) -> bool:
        return Schedule(Repetitions(**reps), ["a"], [bench]).settling

    assert settles(count=2, fresh=False) and settles(count="auto", fresh=False)
    assert not settles(count=2, fresh=False, settle=False)
    assert not settles(count=1, fresh=False)  # one round: nothing to settle for
    assert settles(count=1, fresh=False, settle=True)  # asked for
    assert not settles(count=5) and not settles(count="auto")  # fresh: made anew each round
    with pytest.raises(ValidationError, match="settle = true needs fresh = false"):
        Repetitions(count=3, settle=True)


def test_a_reused_target_reloads_the_tables_a_pgbench_measures() -> None:
    small = PgbenchInitWorkload(type="pgbench-init", scale=10, repetitions=1)
    on_small = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    big = PgbenchInitWorkload(type="pgbench-init", scale=100, tag="big")
    on_big = PgbenchWorkload(type="pgbench", clients=1, duration=5, tag="big")
    s = Schedule(
        Repetitions(count=3, fresh=False, settle=False), ["a"], [small, on_small, big, on_big]
    )

    def run_round(r: int, ok_init: bool = True) -> list:
        visit = s.visit("a", r)
        for m in visit:
            s.record("a", m, 1.0, ok=ok_init or m.type != "pgbench-init")
        s.end_round(r)
        return visit

    assert run_round(1) == [small, on_small, big, on_big]
    # round 2: the target holds the big tables, so the small ones are loaded again
    # before the pgbench that measures them, although their own count is done
    assert run_round(2) == [small, on_small, big, on_big]
    once = PgbenchInitWorkload(type="pgbench-init", scale=1, repetitions=1)
    s = Schedule(Repetitions(count=3, fresh=False, settle=False), ["a"], [once, on_small])
    assert s.visit("a", 1) == [once, on_small]
    s.record("a", once, None, ok=False)
    s.end_round(1)
    # the load failed: round 2 loads again, although its count of one is done
    assert s.visit("a", 2) == [once, on_small]


def test_a_reused_target_with_one_load_does_not_reload() -> None:
    init = PgbenchInitWorkload(type="pgbench-init", scale=1, repetitions=1)
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count=3, fresh=False, settle=False), ["a"], [init, bench])
    for r in (1, 2, 3):
        visit = s.visit("a", r)
        assert visit == ([init, bench] if r == 1 else [bench])
        for m in visit:
            s.record("a", m, 1.0, ok=True)
        s.end_round(r)
    fresh = Schedule(Repetitions(count=2, fresh=True), ["a"], [init, bench])
    fresh.record("a", init, 1.0, ok=True)
    assert fresh.visit("a", 2) == [init, bench]  # a new filesystem holds no tables
