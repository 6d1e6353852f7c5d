"""How much of a running campaign is done and what remains: an honest bar and ETA.

Work is counted in the plan's *estimated* seconds (``plan/estimate.py``): each
finished run adds its workload's estimate, each visit its setup. The total is
what is done plus what the schedule may still run, recomputed after every round
from the measurements and targets still going, so it shrinks when an 'auto'
measurement is decided (or a target fails) instead of jumping to 100 % at the
end. An 'auto' plan has no single duration: it stops when every comparison is
decided (only at its planned looks, ``[repetitions] looks``) or when its time
budget is spent, so its ETA is a range: all decided at the next planned look ..
the budget spent. Real
seconds come from the pace measured so far (real over estimated seconds).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pgfsbench.campaign import events as ev
from pgfsbench.plan.estimate import RESTART_S, TARGET_SETUP_S, round_visits, workload_seconds
from pgfsbench.plan.model import Plan

Key = tuple[str, str]  # workload type, label


class Forecast:
    def __init__(self, plan: Plan, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.rounds = round_visits(plan)  # one target's visit per round, as planned
        self.seconds: dict[Key, float] = {
            (w.type, w.label()): workload_seconds(w) for w in plan.measurements()
        }
        self.started = clock()
        self.targets = len(plan.targets)
        self.running: set[Key] = set(self.seconds)
        self.auto = plan.repetitions.count == "auto"
        # 'auto': the rounds after which it may stop (decisions are made at these looks)
        self.looks = plan.repetitions.look_rounds() if self.auto else []
        self.cap = plan.repetitions.max_minutes * 60 if self.auto else None
        self.round = self.rounds[0][0] - 1 if self.rounds else 0  # the last round ended
        self.done = 0.0  # estimated seconds of the work finished
        self.done_at = self.started  # when the last piece finished
        self.setup = 0.0  # a visit's setup: credited when its first run starts (it is done)
        self.extra = 0.0  # seconds spent on visits run again: outside the budget
        self.total = self.total_min = 0.0
        self.total, self.total_min = self._ahead()
        self.finished = False

    # --- events ----------------------------------------------------------------
    def observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.CampaignStarted):
            self.started = self.done_at = self.clock()
            self.targets = len(event.targets)
            if event.resumed_at > 1:  # the rounds before it ended in an earlier session
                self.round = max(self.round, event.resumed_at - 1)
            self.total, self.total_min = self._ahead()
        elif isinstance(event, ev.VisitStarted):
            self.setup = TARGET_SETUP_S if event.provisioning else RESTART_S
        elif isinstance(event, ev.RunStarted) and self.setup:
            self._add(self.setup)
            self.setup = 0.0
        elif isinstance(event, ev.RunFinished):
            self._add(self.setup + self.seconds.get((event.workload, event.label), 0.0))
            self.setup = 0.0
        elif isinstance(event, ev.TargetFailed):
            self.setup = 0.0
        elif isinstance(event, ev.RoundEnded):
            self.round = event.round
            self.extra = event.extra_s
            self.running = set(event.running)
            self.targets = len(event.targets)
            ahead, ahead_min = self._ahead()
            self.total, self.total_min = self.done + ahead, self.done + ahead_min
        elif isinstance(event, ev.CampaignEnded):
            self.finished = True
            self.total = self.total_min = self.done

    def _add(self, seconds: float) -> None:
        self.done += seconds
        self.done_at = self.clock()
        # An estimate may be short: never report more done than planned.
        self.total = max(self.total, self.done)
        self.total_min = max(self.total_min, self.done)

    # --- what remains ------------------------------------------------------------
    def _round_work(self, setup: float, visit: list) -> float:
        """One round's estimated seconds over the live targets, with only the measurements
        still running (and the load a running pgbench needs)."""
        keys = [(w.type, w.label()) for w in visit]
        work = [k for k in keys if k in self.running]
        if not work:
            return 0.0
        needs_load = any(k[0] == "pgbench" for k in work)
        seconds = sum(
            self.seconds.get(k, 0.0)
            for k in keys
            if k in self.running or (k[0] == "pgbench-init" and needs_load)
        )
        return self.targets * (setup + seconds)

    def _ahead(self) -> tuple[float, float]:
        """Estimated seconds after the last round that ended: at most (the rounds the
        budget allows) and at least (an 'auto' plan decided at its next planned look)."""
        most = least = 0.0
        upto = next((r for r in self.looks if r > self.round), self.looks[-1]) if self.looks else 0
        elapsed = self.clock() - self.started - self.extra  # the budget's clock
        pace = self.pace()
        for round_no, setup, visit in self.rounds:
            if round_no <= self.round:
                continue
            if self.cap is not None and elapsed + most * pace >= self.cap:
                break  # no round starts once the budget is spent
            work = self._round_work(setup, visit)
            most += work
            if not self.auto or round_no <= upto:
                least += work
        return most, least

    # --- what to show ----------------------------------------------------------
    def pace(self) -> float:
        """Real seconds per estimated second so far: 1 (the estimate) until a tenth of
        the work is done, then what was measured."""
        if self.done < max(self.total * 0.1, 5):
            return 1.0
        return max((self.done_at - self.started) / self.done, 0.1)

    def fraction(self) -> float:
        return 1.0 if self.total <= 0 else min(self.done / self.total, 1.0)

    def elapsed(self) -> float:
        return self.clock() - self.started

    def left(self) -> tuple[float, float]:
        """Real seconds left: (at least, at most); equal for a fixed count."""
        since = self.clock() - self.done_at  # the piece under way has been running this long
        pace = self.pace()
        most = max((self.total - self.done) * pace - since, 0.0)
        least = max((self.total_min - self.done) * pace - since, 0.0)
        if self.cap is not None:  # rounds already started always finish; none start after
            budget_left = self.cap - (self.elapsed() - self.extra)
            most = min(most, max(budget_left, 0.0) + self._one_round() * pace)
        return min(least, most), most

    def _one_round(self) -> float:
        return max(
            (self._round_work(s, v) for r, s, v in self.rounds if r > self.round), default=0.0
        )

    def left_text(self) -> str:
        """'about 3:10 left', or for 'auto' '1:05 to 6:40 left'."""
        if self.finished:
            return "done"
        least, most = self.left()
        if self.auto and most - least >= 30:
            return f"{clock_text(least)} to {clock_text(most)} left"
        return f"about {clock_text(most)} left"

    def estimate_text(self) -> str:
        """The whole campaign's expected duration: 'estimated 2:10 to 9:00'."""
        least, most = self.left()
        if self.auto and most - least >= 30:
            return f"estimated {clock_text(least)} to {clock_text(most)}"
        return f"estimated {clock_text(most)}"


def clock_text(seconds: float) -> str:
    """3:07, or 1:02:07 past an hour."""
    s = max(int(round(seconds)), 0)
    h, rest = divmod(s, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"
