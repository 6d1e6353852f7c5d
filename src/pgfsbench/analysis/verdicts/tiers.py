"""Targets ranked into tiers: the answer a measurement gives, from its pair decisions.

A tier is a run of targets, best first, such that **every pair across two tiers
is decided** (the upper one better), so ``ext4 ≈ xfs > btrfs`` says two things a
statistician would sign: btrfs is decided worse than both, and ext4 and xfs were
not told apart. Tiers are cut only where every target above the cut is decided
better than every target below it, so no claim is made that the pairs did not
decide.

Decisions need not be transitive: with ``a > c`` decided but ``a ? b`` and
``b ? c`` open, no cut separates anything and the three share one tier. What
was decided inside a tier is not lost: ``Tiers.inside`` lists it, and the
ranking says it after the tier: ``a, b, c (a > c)``.

The order within and across tiers is the decided "beats" relation first (a
target decided better is never listed after the one it beat), then the estimate
(the median), so the order never contradicts a decision.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

BETTER, SAME, OPEN = "better", "same", "open"  # a against b: a decided better, equivalent, neither


@dataclass(frozen=True)
class Tiers:
    tiers: list[list[str]]  # best first
    inside: list[tuple[str, str, str]] = field(default_factory=list)
    # (a, b, relation) of pairs inside one tier: BETTER (a decided better), SAME or OPEN

    @property
    def decided_any(self) -> bool:
        """Some pair was decided: apart (across tiers or inside one) or equivalent."""
        return len(self.tiers) > 1 or any(rel != OPEN for _, _, rel in self.inside)

    @property
    def all_decided(self) -> bool:
        return not any(rel == OPEN for _, _, rel in self.inside)

    def text(self) -> str:
        """``ext4 ≈ xfs > btrfs``: '>' between tiers; inside a tier '≈' where every pair
        was shown equivalent, else ', ' (not told apart), followed by what its pairs did
        decide, which no cut could show: ``b, a, slow (b > slow; b ≈ a)``."""

        def tier(members: list[str]) -> str:
            pairs = [(a, b, rel) for a, b, rel in self.inside if a in members and b in members]
            if all(rel == SAME for _, _, rel in pairs):
                return " ≈ ".join(members)
            decided = [
                f"{a} {'>' if rel == BETTER else '≈'} {b}" for a, b, rel in pairs if rel != OPEN
            ]
            return ", ".join(members) + (f" ({'; '.join(decided)})" if decided else "")

        return " > ".join(tier(t) for t in self.tiers)


def rank(order: list[str], relation: Callable[[str, str], str]) -> Tiers:
    """``order``: the targets by estimate, best first; ``relation(a, b)``: BETTER when a
    is decided better than b, SAME when shown equivalent, OPEN otherwise (and
    ``relation(b, a)`` BETTER when b is decided better)."""
    ordered = _respecting_decisions(order, relation)
    tiers: list[list[str]] = [[]]
    for i, name in enumerate(ordered):
        tiers[-1].append(name)
        above, below = ordered[: i + 1], ordered[i + 1 :]
        if below and all(relation(a, b) == BETTER for a in above for b in below):
            tiers.append([])
    inside = [
        (a, b, _pair(a, b, relation)) for t in tiers for i, a in enumerate(t) for b in t[i + 1 :]
    ]
    return Tiers(tiers, inside)


def _pair(a: str, b: str, relation: Callable[[str, str], str]) -> str:
    rel = relation(a, b)
    return rel if rel in (BETTER, SAME) else OPEN


def _respecting_decisions(order: list[str], relation: Callable[[str, str], str]) -> list[str]:
    """``order`` changed only where a target stands after one it was decided better than:
    repeatedly take the first by estimate that no remaining target beats (a cycle of
    decisions, which sound tests should not produce, falls back to the estimate)."""
    left, out = list(order), []
    while left:
        pick = next(
            (t for t in left if not any(relation(o, t) == BETTER for o in left if o != t)), left[0]
        )
        out.append(pick)
        left.remove(pick)
    return out
