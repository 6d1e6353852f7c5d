"""How a time falls as parallel workers are added: the best count, the speedup, the knee.

Pure functions of {worker count: time}; the parallel-scan workload summarises its
sweep with them, and the report draws the knee on its chart.
"""

from __future__ import annotations

from collections.abc import Mapping

KNEE_GAIN = 0.10  # less than this improvement from more workers: past the knee


def best_workers(times: Mapping[int, float]) -> int:
    """The worker count with the lowest time; on a tie, the fewer workers."""
    if not times:
        raise ValueError("no times")
    return min(sorted(times), key=lambda w: times[w])


def speedup(times: Mapping[int, float]) -> float:
    """Time at the fewest workers measured (0: no parallelism) over the best time."""
    base = times[min(times)]
    return base / times[best_workers(times)]


def knee_workers(times: Mapping[int, float], min_gain: float = KNEE_GAIN) -> int:
    """The smallest worker count after which more workers no longer pay.

    With the counts sorted w_0 < w_1 < ... < w_k and their times t_i, the knee
    is the smallest w_i such that no larger count is at least ``min_gain``
    (10 %) faster: min(t_j for j > i) > (1 - min_gain) * t_i. The last count
    qualifies vacuously, so there always is a knee. Comparing against every
    larger count, not just the next one, keeps a noisy flat step from hiding a
    real gain further on. Flat or worsening times give w_0; times that keep
    improving by 10 % or more give w_k.
    """
    if not times:
        raise ValueError("no times")
    counts = sorted(times)
    for i, w in enumerate(counts):
        later = [times[c] for c in counts[i + 1 :]]
        if not later or min(later) > (1 - min_gain) * times[w]:
            return w
    raise AssertionError("unreachable: the last count always qualifies")
