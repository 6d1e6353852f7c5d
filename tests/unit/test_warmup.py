"""MSER warm-up detection on series whose answer is known by construction.

Noise-free series have exact answers. On noisy ones MSER is a statistic: the
tests assert what holds for every seed (the step is always removed, never more
than half) and what the distribution looks like (its mode), not a lucky seed.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from pgfsbench.workloads.warmup import (
    MSER5_MIN_POINTS,
    mser_statistic,
    mser_truncation,
    steady_state_start,
)

SEEDS = range(200)


def noisy(n: int, level: float, sd: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [level + rng.gauss(0, sd) for _ in range(n)]


def brute_force(x: list[float]) -> int:
    """Argmin of z(d) over d in [0, min(n//2, n-2)], straight from the definition."""
    n = len(x)
    d_max = min(n // 2, n - 2)
    if d_max <= 0:
        return 0
    z = [mser_statistic(x, d) for d in range(d_max + 1)]
    return min(range(d_max + 1), key=lambda d: (z[d], d))


# ------------------------------------------------------------ known answers


@pytest.mark.parametrize("n", [20, 40, 49, 50, 60, 300, 3600])
def test_low_for_10s_then_flat_gives_10(n: int) -> None:
    # Raw points (n < 50) and MSER-5 (n >= 50: 10 is two whole batches).
    assert steady_state_start([800.0] * 10 + [2000.0] * (n - 10)) == 10


@pytest.mark.parametrize("n", [30, 60, 300])
def test_low_for_10s_then_flat_noisy(n: int) -> None:
    # 10 s at 40 % of the steady rate, then flat with 2 % noise.
    ds = [
        steady_state_start(noisy(10, 800, 40, s) + noisy(n - 10, 2000, 40, s + 10_000))
        for s in SEEDS
    ]
    # The warm-up is always removed, never more than half the run...
    assert all(10 <= d <= n / 2 for d in ds)
    # ...and 10 is the usual answer. MSER also cuts into the flat part at
    # times (it minimises the kept spread): about 1/3 of runs here.
    assert Counter(ds).most_common(1)[0][0] == 10


def test_batches_round_up_to_5s() -> None:
    # MSER-5: a 12 s warm-up leaves batch 3 (points 10..14) partly low, so 15.
    assert steady_state_start([800.0] * 12 + [2000.0] * 88) == 15
    # On raw points (n < 50) the answer is exact.
    assert steady_state_start([800.0] * 12 + [2000.0] * 36) == 12


def test_ramp_is_cut_where_it_ends() -> None:
    ramp = [2000 * i / 12 for i in range(12)]
    assert steady_state_start(ramp + [2000.0] * 36) == 12
    assert steady_state_start(ramp + [2000.0] * 108) == 15  # MSER-5: next batch boundary


def test_flat_series_drops_nothing() -> None:
    assert steady_state_start([1234.0] * 100) == 0
    assert steady_state_start([7.0] * 9) == 0


@pytest.mark.parametrize("n", [20, 60, 600])
def test_flat_noisy_series_usually_drops_nothing(n: int) -> None:
    ds = [steady_state_start(noisy(n, 1500, 60, s)) for s in SEEDS]
    counts = Counter(ds)
    assert counts.most_common(1)[0][0] == 0
    assert all(d <= n / 2 for d in ds)
    if n >= 600:  # long runs: large cuts of a flat series are rare
        assert sum(d >= n / 4 for d in ds) <= 0.01 * len(ds)


def test_first_partial_second_is_dropped_with_its_batch() -> None:
    # A run starting mid-second: the first point is about half the rate.
    assert steady_state_start([500.0] + [1000.0] * 99) == 5  # MSER-5: its whole batch
    assert steady_state_start([500.0] + [1000.0] * 19) == 1  # raw points: that second


# ------------------------------------------------------------------- limits


@pytest.mark.parametrize("n", [0, 1, 2])
def test_too_short_drops_nothing(n: int) -> None:
    # Fewer than 3 points: keeping 1 would have zero spread, so nothing is dropped.
    assert steady_state_start([10.0, 1000.0][:n]) == 0
    assert steady_state_start([float(i) for i in range(n)]) == 0


def test_short_series_may_pick_0_despite_a_warm_up() -> None:
    # The warm-up (6 of 8 s) is longer than the half MSER may cut: 0, not 4.
    assert steady_state_start([100.0] * 6 + [1000.0] * 2) == 0
    # A weak warm-up (half a standard deviation, 3 s of 10) is usually missed.
    ds = [steady_state_start(noisy(3, 970, 60, s) + noisy(7, 1000, 60, s + 10_000)) for s in SEEDS]
    assert sum(d == 0 for d in ds) >= 0.3 * len(ds)


def test_single_stall_in_first_half_is_cut_as_warm_up() -> None:
    # Documented limitation: a 5 s stall at t=100 of a warm, flat 300 s run
    # is cut with everything before it.
    x = [2000.0] * 300
    x[100:105] = [400.0] * 5
    assert steady_state_start(x) == 105
    # In the second half it cannot be: the cut is capped at n/2.
    y = [2000.0] * 300
    y[200:205] = [400.0] * 5
    assert steady_state_start(y) == 0


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("n", [3, 7, 20, 49, 50, 51, 77, 200])
def test_never_more_than_half(seed: int, n: int) -> None:
    rng = random.Random(seed)
    rising = [i * 10 + rng.random() for i in range(n)]
    for x in (rising, noisy(n, 100, 50, seed), [rng.choice([0.0, 1e6]) for _ in range(n)]):
        assert 0 <= steady_state_start(x) <= n / 2


def test_rising_series_hits_the_cap() -> None:
    # No steady state: the answer is the cap ("no steady state found").
    assert steady_state_start([float(i) for i in range(40)]) == 20
    assert steady_state_start([float(i) for i in range(100)]) == 50


# -------------------------------------------------------------- mechanics


@pytest.mark.parametrize("seed", range(40))
def test_truncation_matches_definition(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randrange(0, 80)
    warm = rng.randrange(0, max(1, n // 2))
    x = [rng.uniform(0, 500) for _ in range(warm)] + noisy(
        n - warm, 1000, rng.uniform(1, 200), seed
    )
    assert mser_truncation(x) == brute_force(x)


def test_batching_threshold() -> None:
    assert MSER5_MIN_POINTS == 50
    # 49 points: raw points; 50: batches of 5, so a multiple of 5.
    assert steady_state_start([0.0] * 7 + [100.0] * 42) == 7
    assert steady_state_start([0.0] * 7 + [100.0] * 43) == 10


def test_trailing_partial_batch_is_ignored() -> None:
    # 52 points = 10 batches + 2 points; the 2 (even wild ones) are not used.
    x = [0.0] * 10 + [100.0] * 40 + [1e9, -1e9]
    assert steady_state_start(x) == 10


def test_accepts_ints_and_tuples() -> None:
    assert steady_state_start(tuple([0] * 10 + [50] * 30)) == 10
