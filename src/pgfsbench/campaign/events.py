"""What a running campaign tells its observer: structured events, never text to print.

The campaign emits; the command line chooses how to show them (a live progress
bar on a terminal, sparse plain lines in a log, nothing with ``--quiet``), and a
unit test records them. Each event is a frozen dataclass of plain values, so a
view can be written (and tested) without a campaign.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Note:
    """Something to tell the user that no event below says (a fallback taken, a wait)."""

    text: str  # plain text, not markup
    level: str = "info"  # "info", "warning" or "error"


@dataclass(frozen=True)
class CampaignStarted:
    """The targets that will run (after the skipped ones) and the rounds planned."""

    id: str
    plan: str
    targets: tuple[str, ...]
    first_round: int  # 0 when a settling round runs first
    most_rounds: int  # 'auto': at most
    auto: bool  # stops when every headline comparison is decided, or at the budget
    min_rounds: int = 0  # 'auto': the first look
    max_minutes: float | None = None  # 'auto': the time budget
    resumed_at: int = 0  # a resumed campaign: the first counted round it runs (0: not one)


@dataclass(frozen=True)
class TargetSkipped:
    target: str
    reason: str


@dataclass(frozen=True)
class RoundStarted:
    round: int  # 0: the settling round (run, not counted)
    most_rounds: int
    targets: tuple[str, ...]  # in the order they are visited


@dataclass(frozen=True)
class VisitStarted:
    """A target's visit in a round: made afresh (``provisioning``) or reused."""

    target: str
    round: int
    kind: str  # loop, device, dir
    fs: str
    provisioning: bool
    again: int = 0  # 1, 2...: the visit run again because it was disturbed


@dataclass(frozen=True)
class Disturbed:
    """A counted run the machine's monitors found disturbed by someone else's load
    (``analysis/disturbance.py``), at the end of its round."""

    workload: str
    label: str
    why: str  # the evidence, in words


@dataclass(frozen=True)
class VisitDisturbed:
    """A visit's runs found disturbed at the end of the round: run ``again`` now, or kept
    and left out of the statistics (the allowance for runs again is spent, or they were
    disturbed every time)."""

    target: str
    round: int
    runs: tuple[Disturbed, ...]
    again: bool
    spent_s: float = 0.0  # seconds spent so far on visits run again
    allowance_s: float = 0.0  # the most they may take by now
    trimmed: bool = False  # kept and counted from the seconds no burst touched
    # past the allowance, runs again are paid from the budget ('auto'), now spent too
    from_budget: bool = False
    # a run again was still allowed when it was kept: disturbed each time it ran
    redo_open: bool = False


@dataclass(frozen=True)
class Waited:
    """A wait for quiet before a counted run: the run before it ended in someone else's
    burst (``campaign/quiet.py``)."""

    target: str
    round: int
    workload: str
    label: str
    seconds: float
    quiet: bool  # quiet when the run started (else the longest wait ran out)


@dataclass(frozen=True)
class TargetFailed:
    """The target could not be provisioned or set up: no more visits."""

    target: str
    round: int
    reason: str


@dataclass(frozen=True)
class RunStarted:
    target: str
    workload: str
    label: str
    round: int


@dataclass(frozen=True)
class Headline:
    """The one metric a measurement's verdict is about, as this run measured it."""

    metric: str
    value: float
    unit: str
    higher_is_better: bool | None


@dataclass(frozen=True)
class RunFinished:
    target: str
    workload: str
    label: str
    round: int
    status: str  # "ok", "failed", "not run", "interrupted"
    seconds: float
    headline: Headline | None = None
    error: str | None = None


@dataclass(frozen=True)
class MeasurementStopped:
    workload: str
    label: str
    reason: str  # the schedule's: "count", "decided", "max rounds", "budget", ...
    text: str  # why, in words


@dataclass(frozen=True)
class RoundEnded:
    """A round ended (0: the settling round): the measurements that stopped after it, and
    those that go on (with the targets still measured), so a view can shrink what
    remains."""

    round: int
    stopped: tuple[MeasurementStopped, ...]
    running: tuple[tuple[str, str], ...]  # (workload, label) still to measure
    targets: tuple[str, ...]  # the targets still measured
    extra_s: float = 0.0  # seconds spent so far on visits run again (not the budget's)


@dataclass(frozen=True)
class CommandStarted:
    """An external command (mkfs, mount, pgbench, ...) about to run."""

    argv: tuple[str, ...]


@dataclass(frozen=True)
class CommandFinished:
    argv: tuple[str, ...]
    exit_code: int
    seconds: float


@dataclass(frozen=True)
class CampaignEnded:
    status: str  # "ok", "partial", "failed", "interrupted"


Event = (
    Note
    | CampaignStarted
    | TargetSkipped
    | RoundStarted
    | VisitStarted
    | VisitDisturbed
    | Waited
    | TargetFailed
    | RunStarted
    | RunFinished
    | RoundEnded
    | CommandStarted
    | CommandFinished
    | CampaignEnded
)
Observer = Callable[[Event], None]


def shielded(observe: Observer) -> Observer:
    """``observe``, unable to cost the campaign a result: when showing an event fails on
    output (stdout a pipe whose reader went away, as under Ansible on Ctrl-C; a full
    log disk), nothing more is shown and the campaign goes on and tears down as usual.
    Everything shown is also stored, so nothing is lost but the display."""
    broken = False

    def emit(event: Event) -> None:
        nonlocal broken
        if broken:
            return
        try:
            observe(event)
        except OSError:  # BrokenPipeError, EIO, ENOSPC: the display's, not the run's
            broken = True

    return emit


def ignore(event: Event) -> None:
    """An observer that shows nothing."""
