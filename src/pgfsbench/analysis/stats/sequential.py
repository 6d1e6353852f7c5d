"""Deciding every headline comparison at a few planned looks, with error control that
survives stopping early.

A campaign with ``count = "auto"`` tests its headline comparisons at *planned
looks* (``[repetitions] looks``: rounds fixed before the campaign starts) and
stops when every comparison is decided (or its budget runs out). Testing at
every look at the full alpha would make a false "better" far likelier than
alpha: each look is another chance. The error control chosen:

* **Alpha spending with a union bound.** Look ``L_i`` (``L_1 < ... < L_k``,
  ``L_k`` = ``max``) may spend ``alpha_i = A(L_i) - A(L_{i-1})`` with
  ``A(n) = alpha * (n / max) ** rho`` (``[repetitions] spending``, 2 by default; the
  default plan's 3 spends 5% of alpha by round 6 of 16) (the first look takes everything up to
  it), so the alphas of all looks add up to alpha. Whatever the stopping rule,
  a false claim must be made at some look, so its probability is at most the
  sum: valid under any optional stopping. This is the Bonferroni form of
  Lan-DeMets spending: it ignores the correlation between looks, which makes it
  conservative, but it needs no joint distribution of the statistics, which
  small-sample paired t's on drifting machines do not give reliably.
* **Few looks.** Every look costs alpha the later looks cannot use. Measured on
  this machine's noise (``benchmarks/NOTEBOOK.md``, "Choosing the looks"), a look
  after every round (the design of plans stored before looks existed, still
  used to replay them) decided a 10% difference within the default budget far
  less often than two or three planned looks.
* **The budget's last round is a look.** When ``max_minutes`` ends the
  campaign after round ``r`` before its next planned look, a last look is made
  at ``r`` with all the alpha not yet spent (``alpha - A(L_j)``, ``L_j`` the
  last look made before ``r``), instead of losing it. Still valid: the looks
  made are the planned ones before ``r`` plus this one, and their levels add up
  to at most alpha, so the union bound holds as before. What it relies on (as
  Lan-DeMets spending does) is that *when* the budget ends does not depend on
  the compared values: the clock is set by the fixed durations of the runs
  (seconds of fio, of pgbench, of each pg_test_fsync section), not by the tps
  or latency they measure. Stopping because the comparisons are decided only
  happens at planned looks. A campaign cut short otherwise (interrupted, a
  target failing) gets no extra look: its unspent alpha is lost.
* **One family for every kind of claim.** At a look spending ``alpha_L``, each
  comparison of the family (``m`` of them) is tested at ``alpha_L / m``: the
  difference by a two-sided test, the equivalence by TOST, at that level. Any false
  claim of a comparison (a better or worse where the true ratio is on the other
  side or 1, an equivalent where it lies beyond the margin) means its interval
  missed the true ratio on one side, which has probability at most ``alpha_L / m``,
  so the family errs at a look with probability at most ``alpha_L`` and over every
  look at most alpha. (Two Holm families, one per kind of claim, each spending all
  of alpha, let their errors add up: 7% with a pair at the margin's boundary.)
* **Weights, fixed before the campaign.** A plan's ``[verdicts] weights`` share each
  look's alpha unequally: comparison ``k`` is tested at ``alpha_L * w_k / sum(w)``
  instead of ``alpha_L / m``. The shares still add up to ``alpha_L``, so the union
  bound above holds unchanged, under any dependence between the measurements. What
  it needs is that the weights do not depend on the campaign's own values: they are
  the plan's, stored with it. (Weights read from the campaign's measured noise would
  not be: a measurement's noise and its test statistic are not independent, and the
  measurements' noises move together on a disturbed machine.) The default plan gives
  its fio p99, whose paired sd (35-46% a round here) puts a 10% difference far out of
  reach, a quarter of alpha, and TPC-B tps the rest (docs/statistics.md).
* **A decision stands.** Once decided at some look, a comparison is not
  retested; later rounds (run for other comparisons) only refine its estimate.
* **The family is what can be decided.** A measurement with its own fixed
  ``repetitions`` inside an 'auto' plan (pg_test_fsync, run in 3 rounds for the
  wal_sync_method advice) is *descriptive*: shown with medians and CIs, never
  tested, so it takes no share of alpha from the comparisons that decide the
  campaign (``Design.descriptive``).

Plans stored before looks existed (no ``looks`` key in their ``[repetitions]``)
keep the design they were decided with: a look after every round from ``min``
to ``max``, the same spending, every measurement in the family, and no last
look at the budget's round (their unspent alpha was lost). ``design_for``
(``analysis/stats/stored_design.py``) tells the two apart, so a stored campaign recomputes as it was decided.

A fixed count is the special case of one look, at the last round, with all of
alpha. The same procedure recomputes from the stored rounds, so the report,
the export and the running campaign agree on every decision.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # the tests are imported where they run: a plan's budget needs no numpy
    from pgfsbench.analysis.stats.paired import Paired

RHO = 2.0

HIGHER, LOWER, EQUIVALENT, INCONCLUSIVE, NA = (
    "higher",
    "lower",
    "equivalent",
    "inconclusive",
    "na",
)

Measurement = tuple[str, str]  # workload type, label


@dataclass(frozen=True)
class Design:
    alpha: float
    noise: float  # the smallest difference worth a claim (and, without margin, the
    # equivalence margin)
    # Every round: the first look. Planned looks: the plan's min, the earliest round a
    # look may come at (the budget's); a fixed count: first_look == last_look.
    first_look: int
    last_look: int  # the most rounds planned; a fixed count: first_look == last_look
    # The planned looks (rounds, ascending, the last at last_look). None: a look after
    # every round from first_look to last_look, as plans stored before looks existed.
    looks: tuple[int, ...] | None = None
    # The round the time budget ended the campaign after, when that came before a
    # planned look: a last look there with the alpha left (planned looks only).
    final: int | None = None
    # Measurements outside the verdict family (fixed repetitions in an 'auto' plan).
    descriptive: frozenset[Measurement] = field(default_factory=frozenset)
    # The equivalence margin when the plan gives one wider than noise ([verdicts]
    # equivalence): a budget can show "within ±10%" where ±3% would take hours.
    margin: float | None = None
    # The spending's shape: by round n, alpha × (n / last_look) ** rho has been spent.
    rho: float = RHO
    # The plan's [verdicts] weights ("type" or "type label" → weight; 1 where not
    # given), fixed before the campaign: how each look's alpha is shared.
    weights: tuple[tuple[str, float], ...] = ()

    def weight(self, key: Hashable) -> float:
        """A comparison's weight: its measurement's ("type label"), else its type's, else 1.

        Keys that are not ``(workload, label, ...)`` tuples (a test's own) weigh 1."""
        if not self.weights or not (isinstance(key, tuple) and len(key) >= 2):
            return 1.0
        named = dict(self.weights)
        workload, label = str(key[0]), str(key[1])
        return named.get(f"{workload} {label}".strip(), named.get(workload, 1.0))

    @property
    def equivalence(self) -> float:
        """The margin "equivalent" is tested against."""
        return self.noise if self.margin is None else self.margin

    @classmethod
    def fixed(cls, alpha: float, noise: float, count: int) -> Design:
        return cls(alpha, noise, count, count)

    @classmethod
    def planned(
        cls,
        alpha: float,
        noise: float,
        looks: Iterable[int],
        descriptive: Iterable[Measurement] = (),
        earliest: int | None = None,
        rho: float = RHO,
    ) -> Design:
        rounds = tuple(sorted(set(looks)))
        first = rounds[0] if earliest is None else min(earliest, rounds[0])
        return cls(alpha, noise, first, rounds[-1], rounds, None, frozenset(descriptive), rho=rho)

    @property
    def every_round(self) -> bool:
        """The design of plans stored before looks existed: a look after every round."""
        return self.looks is None

    def planned_looks(self) -> tuple[int, ...]:
        if self.looks is None:
            return tuple(range(self.first_look, self.last_look + 1))
        return self.looks

    def _a(self, n: int) -> float:
        return self.alpha * min(1.0, n / self.last_look) ** self.rho

    def levels(self) -> dict[int, float]:
        """The looks made, round → the alpha it may spend (adding up to at most alpha)."""
        return dict(self._levels)

    @cached_property
    def _levels(self) -> dict[int, float]:
        out: dict[int, float] = {}
        spent = 0.0
        for n in self.planned_looks():
            if self.final is not None and not self.every_round and n > self.final:
                break
            out[n] = self._a(n) - spent
            spent = self._a(n)
        if (
            self.final is not None
            and not self.every_round
            and self.final not in out
            and self.final < self.last_look
        ):
            out[self.final] = self.alpha - spent  # the budget's round: what is left
        return out

    def spent(self, n: int) -> float:
        """Alpha spent through the looks up to round n."""
        return sum(a for r, a in self._levels.items() if r <= n)

    def look_alpha(self, n: int) -> float:
        """Alpha the look after round n may spend (0 where there is no look)."""
        if self.every_round:  # without building every look (rounds_to_decide asks often)
            if n < self.first_look or n > self.last_look:
                return 0.0
            return self._a(n) - (self._a(n - 1) if n > self.first_look else 0.0)
        return self._levels.get(n, 0.0)

    def at_budget(self, n: int) -> Design:
        """This design when the time budget ends the campaign after round n."""
        if self.every_round or self.final is not None or n >= self.last_look:
            return self
        return replace(self, final=n)

    def next_look(self, n: int) -> int | None:
        """The first planned look after round n, or None after the last."""
        return next((r for r in self.planned_looks() if r > n), None)


@dataclass(frozen=True)
class Decision:
    outcome: str  # HIGHER, LOWER (contender vs baseline), EQUIVALENT,
    # INCONCLUSIVE, or NA (fewer than 2 paired rounds)
    # The figures shown: on the rounds up to the deciding look, or on every round when
    # open (the estimate the decision tested lies inside its interval).
    paired: Paired
    at_round: int | None  # the look that decided it
    level: float | None  # the per-comparison level it was (last) tested at
    p: float | None  # the deciding test's p (difference or TOST)

    @property
    def decided(self) -> bool:
        return self.outcome in (HIGHER, LOWER, EQUIVALENT)


Pair = tuple[dict[int, float], dict[int, float]]  # (baseline by round, contender by round)
K = TypeVar("K", bound=Hashable)  # what names a comparison (a Key, or a test's own)


def decide(comparisons: dict[K, Pair], design: Design) -> dict[K, Decision]:
    """Every comparison's decision, replaying the looks over the stored rounds.

    Comparisons of ``design.descriptive`` measurements (keys ``(workload, label, a,
    b)``) are left out, whoever built the family: they get no decision.

    One family for every kind of claim (module docstring): at a look spending
    ``alpha_n``, each open comparison is tested at its share of it (``alpha_n / m``,
    ``m`` the family's size, or weighted by the plan's ``[verdicts] weights``):
    "different" by the two-sided paired t, "equivalent" by TOST at the same level. Any
    false claim of a comparison makes the (1 - 2·level) interval miss its true ratio on
    one side, so each comparison errs with probability at most its level and the
    family, over every look, at most alpha.
    """
    from pgfsbench.analysis.stats.paired import compare_paired, pair_by_round

    if design.descriptive:
        comparisons = {
            k: v
            for k, v in comparisons.items()
            if not (isinstance(k, tuple) and k[:2] in design.descriptive)
        }
    rounds = sorted({r for base, other in comparisons.values() for r in base.keys() & other.keys()})
    last = rounds[-1] if rounds else 0
    share = shares(comparisons, design)
    decided: dict[K, Decision] = {}
    looked: list[tuple[int, float]] = []  # (round, alpha spent) of every look made
    bound = math.log1p(design.noise)
    for n, spend in design.levels().items():
        if n > last:
            break
        looked.append((n, spend))
        for k in comparisons:
            if k in decided:
                continue
            level = spend * share[k]
            c = compare_paired(_upto(comparisons[k], n), design.equivalence, design.noise)
            p, p_eq = c.p_value, c.p_equivalent
            # A p value comes with a mean.
            if p is not None and p <= level and c.mean_log is not None and abs(c.mean_log) >= bound:
                decided[k] = Decision(HIGHER if c.mean_log > 0 else LOWER, c, n, level, p)
            elif p_eq is not None and p_eq <= level:
                decided[k] = Decision(EQUIVALENT, c, n, level, p_eq)
    # An open comparison is shown at the level of the last look made (or the first
    # planned one, before any): the interval it was last tested with.
    open_spend = looked[-1][1] if looked else _first_level(design)
    out: dict[K, Decision] = {}
    for k, (base, other) in comparisons.items():
        if k in decided:
            out[k] = decided[k]
            continue
        everything = compare_paired(pair_by_round(base, other), design.equivalence, design.noise)
        if everything.n < 2:
            out[k] = Decision(NA, everything, None, None, None)
        else:
            out[k] = Decision(INCONCLUSIVE, everything, None, open_spend * share[k], None)
    return out


def shares(comparisons: Iterable[K], design: Design) -> dict[K, float]:
    """Each comparison's share of a look's alpha: its weight over the family's weights
    (1 / m with no weights given). The shares add up to 1, so the union bound holds as
    with equal shares; the weights are the plan's, fixed before any round is measured."""
    weight = {k: design.weight(k) for k in comparisons}
    total = sum(weight.values()) or 1.0
    return {k: w / total for k, w in weight.items()}


def _first_level(design: Design) -> float:
    levels = design.levels()
    return next(iter(levels.values())) if levels else design.alpha


def _upto(pair: Pair, n: int) -> list[tuple[float, float]]:
    from pgfsbench.analysis.stats.paired import pair_by_round

    base, other = pair
    return pair_by_round(
        {r: v for r, v in base.items() if r <= n}, {r: v for r, v in other.items() if r <= n}
    )


def _holm(pvalues: dict[K, float | None], alpha: float) -> dict[K, float]:
    """The hypotheses Holm's step-down rejects at ``alpha``, each with the level it met."""
    ranked = sorted(
        ((p, k) for k, p in pvalues.items() if p is not None and math.isfinite(p)),
        key=lambda pk: pk[0],
    )
    m = len(ranked)
    rejected: dict[K, float] = {}
    for i, (p, k) in enumerate(ranked):
        level = alpha / (m - i)
        if p > level:
            break
        rejected[k] = level
    return rejected


Key = tuple[str, str, str, str]  # workload, label, target a, target b (a first in plan order)


def headline_family(
    values: dict[tuple[str, str], dict[str, dict[int, float]]],
    targets: list[str],
    descriptive: Iterable[Measurement] = (),
) -> dict[Key, Pair]:
    """Every pair of targets for every measurement: the family the verdicts decide.

    ``values[(workload, label)][target][round]`` is a headline value. All pairs are
    tested, not the leader against the rest: which target leads is read from the
    data, and testing only the pairs the data picked would bias the claims.
    ``descriptive`` measurements (``Design.descriptive``) are left out: never tested,
    they take no share of alpha.
    """
    leave_out = set(descriptive)
    family: dict[Key, Pair] = {}
    for (workload, label), by_target in values.items():
        if (workload, label) in leave_out:
            continue
        present = [t for t in targets if by_target.get(t)]
        for i, a in enumerate(present):
            for b in present[i + 1 :]:
                family[(workload, label, a, b)] = (by_target[a], by_target[b])
    return family
