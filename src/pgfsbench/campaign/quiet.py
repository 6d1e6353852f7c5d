"""A short, bounded wait for quiet before a counted run, while the machine is busy lately:
the run before it ended in someone else's burst, or a visit of this round or the last
was found disturbed.

The last seconds of the previous run's monitors say whether the machine was busy a
moment ago (``analysis/caveats/disturbance.quiet_for``, the same thresholds as the
disturbed-visit rule, and as it judges a run against its round's quietest, above the
load the recent runs all had: a machine loaded the same all along is not waited out).
On a quiet machine nothing is waited: it pays nothing. While it is busy lately
(``busy_lately``), a probe (the system monitor at 0.5 s, the visit's server counted as
ours) watches before every counted run until the machine has been quiet for ``HOLD_S``
or ``MOST_S`` have passed, and the run starts then: a neighbour whose bursts are longer
than a visit disturbs nearly every visit it overlaps, so a visit started as a burst ends
has the gap after it to itself. A burst that is still on after
``MOST_S`` is left to the rule: the run may be disturbed and run again. The time
waited is in the same allowance as visits run again, on top of the budget, and past it
from an 'auto' plan's budget (``Schedule.may_redo``, ``Schedule.spend``); it is decided
on the machine's evidence alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from pgfsbench.analysis.caveats.disturbance import intervals, quiet_for
from pgfsbench.metrics import Series

# Quiet this long before a run starts: the probe's two samples; a burst shows in every
# one of them. The wait costs this much before every counted run while visits are
# being disturbed, so it is kept short.
HOLD_S = 1.0
TAIL_S = 2.0  # a run whose last this-many seconds had a burst in them ended busy
# The longest wait before one run: the shipped neighbour's bursts last 6-18 s, longer
# than a TPC-B visit; a wait of at most 10 s ran out in most of them.
MOST_S = 20.0
PROBE_S = 0.5  # the probe's sampling interval


class Probe(Protocol):
    def start(self, origin: float) -> None: ...

    def stop(self) -> None: ...

    def series(self) -> list[Series]: ...


def busy_lately(last_busy: bool, disturbed_round: int | None, round_no: int) -> bool:
    """Whether to look for quiet before a counted run of ``round_no``: the run before it
    ended busy, or a visit was found disturbed in this round or the one before
    (``disturbed_round``: the last round one was; None: none yet)."""
    return last_busy or (disturbed_round is not None and round_no - disturbed_round <= 1)


@dataclass(frozen=True)
class Waited:
    seconds: float
    quiet: bool  # the machine was quiet for HOLD_S when the run started


def wait_for_quiet(
    probe: Probe,
    floor: Mapping[str, float] | None = None,
    hold_s: float = HOLD_S,
    most_s: float = MOST_S,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Waited:
    """Watch the machine with ``probe`` until it has been quiet ``hold_s``, at most
    ``most_s``; ``floor``: the load it has anyway (``disturbance.busy``)."""
    began = clock()
    probe.start(began)
    try:
        while True:
            sleep(PROBE_S)
            waited = clock() - began
            if quiet_for({s.name: s for s in probe.series()}, floor) >= hold_s:
                return Waited(waited, True)
            if waited >= most_s:
                return Waited(waited, False)
    finally:
        probe.stop()


def ended_busy(
    series: dict[str, Series], floor: Mapping[str, float] | None = None, hold_s: float = TAIL_S
) -> bool:
    """Whether a run's last ``hold_s`` seconds had someone else's burst in them, above
    the load the machine has anyway (``floor``); a run without the system monitor's
    series: no."""
    spans = intervals(series)
    if not spans:
        return False
    return quiet_for(series, floor) < min(hold_s, sum(length for _, length, _ in spans))
