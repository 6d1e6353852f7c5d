"""The round schedule: interleaved order, per-workload counts, auto stopping."""

from __future__ import annotations

from pgfsbench.plan.model import Repetitions
from pgfsbench.workloads.pgbench_init import PgbenchInitWorkload
from pgfsbench.workloads.pgbench_tpcb import PgbenchWorkload
from pgfsbench.schedule import Schedule


def _measurements():
    return [PgbenchInitWorkload(type="pgbench-init", scale=1),
            *PgbenchWorkload(type="pgbench", clients=[1, 4], duration=5).expand()]


def test_round_robin_rotates_so_no_target_is_always_first() -> None:
    s = Schedule(Repetitions(count=3), ["a", "b", "c"], _measurements())
    assert [s.order(r, ["a", "b", "c"]) for r in (1, 2, 3)] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    assert s.visits[:4] == [(1, "a"), (1, "b"), (1, "c"), (2, "b")]
    assert s.describe()["seed"] is None


def test_random_order_is_reproducible_from_the_recorded_seed() -> None:
    first = Schedule(Repetitions(count=5, order="random"), list("abcd"), _measurements())
    orders = [first.order(r, list("abcd")) for r in range(1, 6)]
    again = Schedule(Repetitions(count=5, order="random", seed=first.describe()["seed"]),
                     list("abcd"), _measurements())
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
            s.record("a", m, 100.0, ok=True)
        s.end_round(r)
    assert s.active_targets(4) == []
    stops = {(x["workload"], x["reason"]) for x in s.describe()["stops"]}
    assert stops == {("pgbench-init", "count"), ("pgbench", "count")}


def _auto_run(values_by_target: dict[str, list[float]], **reps) -> Schedule:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count="auto", **reps), list(values_by_target), [bench])
    for r in range(1, s.max_rounds() + 1):
        active = s.active_targets(r)
        if not active:
            break
        for t in s.order(r, active):
            s.record(t, bench, values_by_target[t][r - 1], ok=True)
        s.end_round(r)
    return s


def test_auto_stops_a_steady_cell_early_and_a_noisy_one_at_the_cap() -> None:
    steady = [1000.0, 1001.0, 999.0, 1000.5, 999.5] + [1000.0] * 10
    noisy = [1000.0, 1400.0, 700.0, 1300.0, 800.0, 1250.0, 650.0, 1350.0, 900.0, 1100.0]
    s = _auto_run({"steady": steady, "noisy": noisy}, ci_width=0.03, min=3, max=8)
    stops = {x["target"]: x for x in s.describe()["stops"]}
    assert stops["steady"]["reason"] == "ci" and stops["steady"]["n"] == 3
    assert stops["noisy"]["reason"] == "max rounds" and stops["noisy"]["n"] == 8
    assert "±3%" in stops["steady"]["text"]
    # the steady target left the rotation once done
    assert [t for r, t in s.visits if r == 4] == ["noisy"]


def test_auto_gives_up_on_a_cell_that_keeps_failing() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count="auto", min=3, max=10), ["a"], [bench])
    for r in (1, 2, 3):
        s.record("a", bench, None, ok=False)
        s.end_round(r)
    assert s.describe()["stops"][0]["reason"] == "failed"
    assert s.active_targets(4) == []


def test_auto_time_cap_stops_open_cells() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count="auto", min=2, max=50, max_minutes=1), ["a"], [bench])
    noisy = [100.0, 300.0, 50.0]
    for r, v in enumerate(noisy, start=1):
        s.record("a", bench, v, ok=True)
        if r == 3:
            s.started -= 120  # two minutes have passed
        s.end_round(r)
    [stop] = s.describe()["stops"]
    assert stop["reason"] == "time cap" and stop["n"] == 3
    assert "time cap reached" in stop["text"]


def test_auto_needs_min_samples_not_min_rounds_before_a_ci_stop() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count="auto", min=3, max=10, ci_width=0.03), ["a"], [bench])
    s.record("a", bench, None, ok=False)          # round 1 failed
    s.end_round(1)
    for r, v in ((2, 1000.0), (3, 1001.0)):        # two tight samples by round 3
        s.record("a", bench, v, ok=True)
        s.end_round(r)
    assert s.describe()["stops"] == []             # n=2 < min=3: go on
    s.record("a", bench, 1000.5, ok=True)
    s.end_round(4)
    [stop] = s.describe()["stops"]
    assert stop["reason"] == "ci" and stop["n"] == 3


def test_auto_a_run_without_a_headline_does_not_end_a_noisy_cell() -> None:
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count="auto", min=3, max=10, ci_width=0.03), ["a"], [bench])
    for r, v in enumerate((1000.0, 1500.0, None, float("nan")), start=1):
        s.record("a", bench, v, ok=True)
        s.end_round(r)
    assert s.describe()["stops"] == []             # still n=2 and ±20%: not stopped
    assert s.samples[("a", "pgbench", bench.label())] == [1000.0, 1500.0]


def test_a_reused_target_reloads_the_tables_a_pgbench_measures() -> None:
    small = PgbenchInitWorkload(type="pgbench-init", scale=10, repetitions=1)
    on_small = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    big = PgbenchInitWorkload(type="pgbench-init", scale=100, tag="big")
    on_big = PgbenchWorkload(type="pgbench", clients=1, duration=5, tag="big")
    s = Schedule(Repetitions(count=3, fresh=False), ["a"], [small, on_small, big, on_big])

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
    s = Schedule(Repetitions(count=3, fresh=False), ["a"], [once, on_small])
    assert s.visit("a", 1) == [once, on_small]
    s.record("a", once, None, ok=False)
    s.end_round(1)
    # the load failed: round 2 loads again, although its count of one is done
    assert s.visit("a", 2) == [once, on_small]


def test_a_reused_target_with_one_load_does_not_reload() -> None:
    init = PgbenchInitWorkload(type="pgbench-init", scale=1, repetitions=1)
    bench = PgbenchWorkload(type="pgbench", clients=1, duration=5)
    s = Schedule(Repetitions(count=3, fresh=False), ["a"], [init, bench])
    for r in (1, 2, 3):
        visit = s.visit("a", r)
        assert visit == ([init, bench] if r == 1 else [bench])
        for m in visit:
            s.record("a", m, 1.0, ok=True)
        s.end_round(r)
    fresh = Schedule(Repetitions(count=2, fresh=True), ["a"], [init, bench])
    fresh.record("a", init, 1.0, ok=True)
    assert fresh.visit("a", 2) == [init, bench]  # a new filesystem holds no tables
