"""What a crash test measured about a target, beside the durability rule's class.

The crash workload (issue 37) cut the power in N states of a recorded run and counted
the states that lost acknowledged commits and the states that were corrupt, by check.
Its result stands beside the class ``durability.py`` computes by rule: the rule is
kept, the measurement is added, and the worse of the two decides what the
recommendation may pick (a target a crash test found unsafe is never picked).

A state count bounds what it can miss: 0 bad of N states bounds the rate of bad states
at 3/N with 95% confidence (the rule of three), no lower; it says nothing of states the
model does not build (a device that lies about its flushes in other ways).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pgfsbench.analysis.caveats.durability import MAY_LOSE_COMMITS, SAFE, UNSAFE
from pgfsbench.metrics import CRASH_CHECKS

if TYPE_CHECKING:
    from pgfsbench.store.read import Campaign

CRASH = "crash"  # the workload's plan type


@dataclass(frozen=True)
class CrashTest:
    """A target's crash-test runs, summed: states tried, bad ones, and how bad."""

    states: int
    lost_states: int
    corrupt_states: int
    lost_commits_max: int
    lost_seconds_max: float
    corrupt: dict[str, int] = field(default_factory=dict)  # check -> states it failed

    @property
    def level(self) -> str:
        """The durability class the test found: corrupt states make it not crash-safe,
        lost commits alone make it lose recent commits, neither: safe."""
        if self.corrupt_states:
            return UNSAFE
        return MAY_LOSE_COMMITS if self.lost_states else SAFE

    def bound_pct(self) -> float:
        """The highest rate of bad states (in %) that 0 of ``states`` rules out, 95%."""
        return 300.0 / self.states if self.states else 100.0

    def sentence(self) -> str:
        """'crash test: 0 of 200 states lost a commit or were corrupt (95%: under 1.5% of
        power cuts would)', '37 of 200 states lost acknowledged commits (up to 1.2 s); 4
        corrupt (amcheck)'."""
        n = self.states
        if not self.lost_states and not self.corrupt_states:
            return (
                f"crash test: 0 of {n} states lost a commit or were corrupt "
                f"(95%: under {_pct(self.bound_pct())} of such power cuts would)"
            )
        lost = (
            f"{self.lost_states} of {n} states lost acknowledged commits (up to "
            f"{self.lost_commits_max:,} commits, {_seconds(self.lost_seconds_max)})"
            if self.lost_states
            else f"0 of {n} states lost an acknowledged commit"
        )
        checks = ", ".join(c for c in CRASH_CHECKS if self.corrupt.get(c))
        corrupt = (
            f"{self.corrupt_states} corrupt ({checks})" if self.corrupt_states else "none corrupt"
        )
        return f"crash test: {lost}; {corrupt}"


def _pct(x: float) -> str:
    return f"{x:.2g}%" if x < 10 else f"{x:.0f}%"


def _seconds(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.1f} s"


def crash_tests(campaign: Campaign) -> dict[str, CrashTest]:
    """Each target's crash test, from its finished crash runs (summed over repetitions);
    a target without one is absent."""
    found: dict[str, dict[str, float]] = {}
    for r in campaign.runs:
        if r.workload != CRASH or r.status != "ok":
            continue
        values = {m.name: m.value for m in r.metrics if m.value is not None}
        if not values.get("crash.states"):
            continue
        total = found.setdefault(r.target, {})
        for name in (
            "crash.states",
            "crash.lost_commit_states",
            "crash.corrupt_states",
            *(f"crash.corrupt.{c}" for c in CRASH_CHECKS),
        ):
            total[name] = total.get(name, 0) + values.get(name, 0)
        for name in ("crash.lost_commits_max", "crash.lost_seconds_max"):
            total[name] = max(total.get(name, 0), values.get(name, 0))
    return {
        target: CrashTest(
            states=int(t["crash.states"]),
            lost_states=int(t["crash.lost_commit_states"]),
            corrupt_states=int(t["crash.corrupt_states"]),
            lost_commits_max=int(t["crash.lost_commits_max"]),
            lost_seconds_max=float(t["crash.lost_seconds_max"]),
            corrupt={c: int(t[f"crash.corrupt.{c}"]) for c in CRASH_CHECKS},
        )
        for target, t in found.items()
    }
