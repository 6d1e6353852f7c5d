"""Two targets measured in different campaigns: Welch's t on the logs of their runs.

Rounds of two campaigns are different blocks (round 3 of one and round 3 of another share
nothing), so there is no pairing across campaigns: each side's runs are independent
samples. The estimate is the ratio of the two sides' **geometric means**, the same centre
a campaign's own table shows (``table.py``), so the figure ``compare A B`` and
``history`` print is exactly the ratio of the two values beside it; its interval is
Welch's on the log scale (unequal variances, Welch–Satterthwaite degrees of freedom),
"equivalent" is TOST on the same scale, and a test at any level reads the same interval,
so the estimate always lies inside it.

Why Welch rather than a rank test: a rank test (Mann-Whitney) tests another quantity
than the ratio printed (a shift in distribution, not the ratio of centres), and its
smallest p with a few runs a side cannot reach the corrected levels of a family; the
t on logs can, and heavy tails make it conservative (a wide interval), not
falsely certain. Values at or below zero (a count of errors, seconds of stall) have no
logarithm: their rows keep the median route of ``stats.compare``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pgfsbench.analysis.stats.paired import resolution
from pgfsbench.analysis.stats.remembered import special

# Below this the log sd is float error on identical values, not spread.
_NO_SPREAD = 1e-9


@dataclass(frozen=True)
class Independent:
    """Contender against baseline, each side's runs independent, on the log scale."""

    n_base: int
    n_other: int
    ratio: float  # geometric mean of contender / geometric mean of baseline
    mean_log: float  # log of that ratio
    se: float | None  # Welch's standard error of mean_log; None: no spread on either side
    df: float | None  # Welch–Satterthwaite degrees of freedom

    def ci(self, confidence: float) -> tuple[float, float] | None:
        if self.se is None or self.df is None:
            return None
        half = special("stdtrit", self.df, 0.5 + confidence / 2) * self.se
        return math.exp(self.mean_log - half), math.exp(self.mean_log + half)

    @property
    def p_value(self) -> float | None:
        """Two-sided, H0: ratio = 1."""
        if self.se is None or self.df is None:
            return None
        return 2 * special("stdtr", self.df, -abs(self.mean_log) / self.se)

    def p_equivalent(self, margin: float) -> float | None:
        """TOST: the larger one-sided p of 'ratio within [1/(1+margin), 1+margin]'."""
        if self.se is None or self.df is None:
            return None
        bound = math.log1p(margin)
        low = special("stdtr", self.df, -(self.mean_log + bound) / self.se)
        high = special("stdtr", self.df, (self.mean_log - bound) / self.se)
        return max(low, high)

    def flipped(self) -> Independent:
        return Independent(
            self.n_other, self.n_base, 1 / self.ratio, -self.mean_log, self.se, self.df
        )


def compare_independent(base: np.ndarray, other: np.ndarray) -> Independent | None:
    """Welch on the logs of two sides of positive values; None where a side has a value
    at or below zero (no logarithm) or none at all."""
    if len(base) == 0 or len(other) == 0 or np.any(base <= 0) or np.any(other <= 0):
        return None
    x, y = np.log(base), np.log(other)
    d = float(y.mean() - x.mean())
    nx, ny = len(x), len(y)
    if nx < 2 or ny < 2:
        return Independent(nx, ny, math.exp(d), d, None, None)
    if float(x.std()) + float(y.std()) <= _NO_SPREAD:  # every run one value: no spread
        return Independent(nx, ny, math.exp(d), d, None, None)
    # Quantized values (fio's percentiles come in buckets) hide up to half a step of
    # spread on each side: each side's sd is floored there (as paired.py floors a ratio's).
    step = resolution(base, other)
    floor = (step / 2) ** 2 if step else 0.0
    vx = max(float(x.var(ddof=1)), floor) / nx
    vy = max(float(y.var(ddof=1)), floor) / ny
    se2 = vx + vy
    if math.sqrt(se2) <= _NO_SPREAD:
        return Independent(nx, ny, math.exp(d), d, None, None)
    df = se2**2 / ((vx**2 / (nx - 1) if vx else 0.0) + (vy**2 / (ny - 1) if vy else 0.0))
    return Independent(nx, ny, math.exp(d), d, math.sqrt(se2), df)
