"""Deciding every headline comparison, round by round, with error control that
survives stopping early.

A campaign with ``count = "auto"`` looks at its data after every round and
stops when every headline comparison is decided (or its budget runs out).
Testing after every round at the full alpha would make a false "better" far
likelier than alpha: each look is another chance. The error control chosen:

* **Alpha spending with a union bound.** The plan fixes the looks up front:
  one after each round from ``first_look`` to ``last_look`` (the most rounds
  the budget allows). Look ``n`` may spend ``alpha_n = A(n) - A(n-1)`` with
  ``A(n) = alpha * (n / last_look) ** RHO`` (the first look takes everything up
  to it), so the alphas of all looks add up to at most alpha. Whatever the
  stopping rule, a false claim must be made at some look, so its probability is
  at most the sum: valid under any optional stopping, including a budget that
  ends the campaign early (unspent alpha is simply lost). This is the
  Bonferroni form of Lan-DeMets spending: it ignores the correlation between
  looks, which makes it conservative, but it needs no joint distribution of the
  statistics, which small-sample paired t's on drifting machines do not give
  reliably. ``RHO = 2`` spends little early (a first look on 3-4 rounds has
  little power anyway) and most where decisions are likely.
* **Holm within each look** over the comparisons still undecided, so many
  targets and measurements do not inflate the family-wise error either.
  Differences and equivalences are separate claims, each held to the same
  spent alpha.
* **A decision stands.** Once decided at some look, a comparison is not
  retested; later rounds (run for other comparisons) only refine its estimate.

A fixed count is the special case of one look, at the last round, with all of
alpha. The same procedure recomputes from the stored rounds, so the report,
the export and the running campaign agree on every decision.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass

from pgfsbench.analysis.paired import Paired, compare_paired, pair_by_round, rounds_to_decide

RHO = 2.0

HIGHER, LOWER, EQUIVALENT, INCONCLUSIVE, NA = (
    "higher", "lower", "equivalent", "inconclusive", "na")


@dataclass(frozen=True)
class Design:
    alpha: float
    noise: float       # equivalence margin, and the smallest difference worth a claim
    first_look: int    # rounds before the first test
    last_look: int     # the most rounds planned; a fixed count: first_look == last_look

    @classmethod
    def fixed(cls, alpha: float, noise: float, count: int) -> "Design":
        return cls(alpha, noise, count, count)

    def spent(self, n: int) -> float:
        """Alpha spent through the look after round n."""
        if n < self.first_look:
            return 0.0
        return self.alpha * min(1.0, n / self.last_look) ** RHO

    def look_alpha(self, n: int) -> float:
        """Alpha the look after round n may spend (0 where there is no look)."""
        if n < self.first_look or n > self.last_look:
            return 0.0
        return self.spent(n) - (self.spent(n - 1) if n > self.first_look else 0.0)


@dataclass(frozen=True)
class Decision:
    outcome: str               # HIGHER, LOWER (contender vs baseline), EQUIVALENT,
                               # INCONCLUSIVE, or NA (fewer than 2 paired rounds)
    paired: Paired             # on every paired round, the figures shown
    at_round: int | None       # the look that decided it
    level: float | None        # the (Holm) level the deciding test met
    p: float | None            # the deciding test's p (difference or TOST)
    rounds_needed: int | None  # inconclusive: total rounds likely to decide it

    @property
    def decided(self) -> bool:
        return self.outcome in (HIGHER, LOWER, EQUIVALENT)


Pair = tuple[dict[int, float], dict[int, float]]  # (baseline by round, contender by round)


def decide(comparisons: dict[Hashable, Pair], design: Design) -> dict[Hashable, Decision]:
    """Every comparison's decision, replaying the looks over the stored rounds."""
    rounds = sorted({r for base, other in comparisons.values() for r in base.keys() & other.keys()})
    last = rounds[-1] if rounds else 0
    decided: dict[Hashable, Decision] = {}
    for n in range(design.first_look, min(last, design.last_look) + 1):
        level = design.look_alpha(n)
        open_keys = [k for k in comparisons if k not in decided]
        at_n = {k: compare_paired(_upto(comparisons[k], n), design.noise) for k in open_keys}
        differs = _holm({k: c.p_value for k, c in at_n.items()}, level)
        same = _holm({k: c.p_equivalent for k, c in at_n.items()}, level)
        bound = math.log1p(design.noise)
        for k, c in at_n.items():
            if k in differs and abs(c.mean_log) >= bound:
                decided[k] = Decision(HIGHER if c.mean_log > 0 else LOWER, c, n,
                                      differs[k], c.p_value, None)
            elif k in same:
                decided[k] = Decision(EQUIVALENT, c, n, same[k], c.p_equivalent, None)
    out: dict[Hashable, Decision] = {}
    m = max(1, len(comparisons))
    for k, (base, other) in comparisons.items():
        everything = compare_paired(pair_by_round(base, other), design.noise)
        if k in decided:
            d = decided[k]
            out[k] = Decision(d.outcome, everything, d.at_round, d.level, d.p, None)
        elif everything.n < 2:
            out[k] = Decision(NA, everything, None, None, None, None)
        else:
            # The level a further look would give it, had the design more rounds: the
            # same spending stretched (a fixed count re-planned as a larger count).
            def alpha_at(n: int) -> float:
                if design.first_look == design.last_look:
                    return design.alpha / m
                stretched = Design(design.alpha, design.noise, design.first_look,
                                   max(design.last_look, n))
                return stretched.look_alpha(n) / m
            out[k] = Decision(INCONCLUSIVE, everything, None, None, None,
                              rounds_to_decide(everything, alpha_at))
    return out


def _upto(pair: Pair, n: int) -> list[tuple[float, float]]:
    base, other = pair
    return pair_by_round({r: v for r, v in base.items() if r <= n},
                         {r: v for r, v in other.items() if r <= n})


def _holm(pvalues: dict[Hashable, float | None], alpha: float) -> dict[Hashable, float]:
    """The hypotheses Holm's step-down rejects at ``alpha``, each with the level it met."""
    ranked = sorted(((p, k) for k, p in pvalues.items() if p is not None and math.isfinite(p)),
                    key=lambda pk: pk[0])
    m = len(ranked)
    rejected: dict[Hashable, float] = {}
    for i, (p, k) in enumerate(ranked):
        level = alpha / (m - i)
        if p > level:
            break
        rejected[k] = level
    return rejected


Key = tuple[str, str, str, str]  # workload, label, target a, target b (a first in plan order)


def headline_family(values: dict[tuple[str, str], dict[str, dict[int, float]]],
                    targets: list[str]) -> dict[Key, Pair]:
    """Every pair of targets for every measurement: the family the verdicts decide.

    ``values[(workload, label)][target][round]`` is a headline value. All pairs are
    tested, not the leader against the rest: which target leads is read from the
    data, and testing only the pairs the data picked would bias the claims.
    """
    family: dict[Key, Pair] = {}
    for (workload, label), by_target in values.items():
        present = [t for t in targets if by_target.get(t)]
        for i, a in enumerate(present):
            for b in present[i + 1:]:
                family[(workload, label, a, b)] = (by_target[a], by_target[b])
    return family


def design_for(plan: dict) -> Design:
    """The design a (stored) plan declared: a fixed count, or 'auto' looks from min to max."""
    from pgfsbench.plan.model import Repetitions, Verdicts  # pydantic: the defaults live there

    from pydantic import ValidationError

    try:
        reps = Repetitions.model_validate(plan.get("repetitions") or {})
    except ValidationError:  # results of another version: judge as one look at the end
        reps = Repetitions()
    try:
        verdicts = Verdicts.model_validate(plan.get("verdicts") or {})
    except ValidationError:
        verdicts = Verdicts()
    if reps.count == "auto":
        return Design(verdicts.alpha, verdicts.noise, reps.min, reps.max)
    return Design.fixed(verdicts.alpha, verdicts.noise, int(reps.count))
