"""Progress as plain lines, for a log or CI: no colours, no cursor moves, few lines.

A round ends with one line per measurement giving every target's headline figure
side by side (how the comparison builds up), then the measurements that stopped.
Problems are written as they happen. ``--verbose`` adds each visit, run and
command as it starts; ``--quiet`` keeps only warnings and errors, on stderr.
"""

from __future__ import annotations

import sys
from typing import TextIO

from pgfsbench.campaign import events as ev
from pgfsbench.plan.model import Plan
from pgfsbench.progress import lines
from pgfsbench.progress.forecast import Forecast, clock_text
from pgfsbench.progress.lines import NORMAL, QUIET, VERBOSE
from pgfsbench.render.values import format_value


class PlainProgress:
    """An observer (``observe(event)``) that writes lines to ``out`` (errors to ``err``
    when quiet)."""

    def __init__(
        self,
        plan: Plan,
        out: TextIO | None = None,
        err: TextIO | None = None,
        verbosity: int = NORMAL,
        forecast: Forecast | None = None,
    ) -> None:
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.verbosity = verbosity
        self.forecast = forecast or Forecast(plan)
        self.targets: tuple[str, ...] = ()
        self.most_rounds = 1
        self.finished: list[ev.RunFinished] = []  # this round's, in the order they ran
        self.runs = self.failed = 0

    def __call__(self, event: ev.Event) -> None:
        self.forecast.observe(event)
        handler = getattr(self, "_" + type(event).__name__, None)
        if handler is not None:
            handler(event)

    def write(self, text: str, level: str = "info", at: int = NORMAL) -> None:
        if self.verbosity == QUIET:
            if level in ("warning", "error"):
                print(text, file=self.err, flush=True)
        elif self.verbosity >= at:
            print(text, file=self.out, flush=True)

    # --- one method per event --------------------------------------------------
    def _CampaignStarted(self, e: ev.CampaignStarted) -> None:
        self.targets, self.most_rounds = e.targets, e.most_rounds
        self.write(lines.started_text(e, self.forecast.estimate_text()))

    def _Note(self, e: ev.Note) -> None:
        self.write(lines.note_line(e), e.level)

    def _TargetSkipped(self, e: ev.TargetSkipped) -> None:
        self.write(f"warning: {e.target}: skipped: {e.reason}", "warning")

    def _TargetFailed(self, e: ev.TargetFailed) -> None:
        self.write(f"error: {e.target}: failed: {e.reason}", "error")

    def _RoundStarted(self, e: ev.RoundStarted) -> None:
        self.finished = []
        self.write(
            f"{lines.round_title(e.round, e.most_rounds)}: {', '.join(e.targets)}", at=VERBOSE
        )

    def _VisitStarted(self, e: ev.VisitStarted) -> None:
        what = (
            f"provisioning {e.kind} target ({e.fs})"
            if e.provisioning
            else f"reusing the {e.fs} target"
        )
        again = f" (run again, {e.again})" if e.again else ""
        self.write(f"{e.target}: {what}{again}", at=VERBOSE)

    def _Waited(self, e: ev.Waited) -> None:
        self.write(f"  {lines.waited_line(e)}", at=VERBOSE)

    def _VisitDisturbed(self, e: ev.VisitDisturbed) -> None:
        if e.again or e.trimmed:  # handled: no warning
            self.write(lines.disturbed_line(e))
        else:
            self.write(f"warning: {lines.disturbed_line(e)}", "warning")

    def _RunStarted(self, e: ev.RunStarted) -> None:
        self.write(f"  {e.target}: {lines.measurement(e.workload, e.label)} ...", at=VERBOSE)

    def _CommandStarted(self, e: ev.CommandStarted) -> None:
        self.write(f"    {lines.command_line(e.argv)}", at=VERBOSE)

    def _CommandFinished(self, e: ev.CommandFinished) -> None:
        if e.exit_code != 0:
            self.write(f"    (exit {e.exit_code} after {e.seconds:.1f} s)", at=VERBOSE)

    def _RunFinished(self, e: ev.RunFinished) -> None:
        self.runs += 1
        self.failed += e.status != "ok"
        self.finished.append(e)
        level = lines.run_level(e)
        if level != "info":  # a problem is told when it happens; figures at the round's end
            self.write(f"{level}: {lines.run_line(e)}", level)
        else:
            self.write(f"  {lines.run_line(e)}", at=VERBOSE)

    def _RoundEnded(self, e: ev.RoundEnded) -> None:
        f = self.forecast
        left = "" if f.left()[1] < 1 else f", {f.left_text()}"
        self.write(
            f"{lines.round_title(e.round, self.most_rounds)} done: "
            f"{clock_text(f.elapsed())} elapsed{left}"
        )
        for text in round_figures(self.finished, self.targets):
            self.write(f"  {text}")
        for s in lines.worth_telling(e.stopped):
            self.write(f"  {lines.stopped_line(s)}")
        self.finished = []

    def _CampaignEnded(self, e: ev.CampaignEnded) -> None:
        failed = f", {self.failed} not completed" if self.failed else ""
        self.write(
            f"campaign {e.status} after {clock_text(self.forecast.elapsed())}: "
            f"{self.runs} runs{failed}"
        )


def round_figures(finished: list[ev.RunFinished], targets: tuple[str, ...]) -> list[str]:
    """One line per measurement of a round: its headline on every target, side by side
    in the plan's target order ('pgbench clients=4 pgbench.tps (tps): ext4 1,234 · ...')."""
    by_measurement: dict[tuple[str, str], dict[str, ev.RunFinished]] = {}
    for e in finished:
        by_measurement.setdefault((e.workload, e.label), {})[e.target] = e
    out = []
    for (workload, label), runs in by_measurement.items():
        headline = next((r.headline for r in runs.values() if r.headline), None)
        if headline is None:
            heading = lines.measurement(workload, label)
        else:
            unit = f" ({headline.unit})" if headline.unit else ""
            heading = f"{lines.measurement(workload, label)} {headline.metric}{unit}"
        order = [t for t in targets if t in runs] + [t for t in runs if t not in targets]
        scale = max((abs(r.headline.value) for r in runs.values() if r.headline), default=None)
        cells = []
        for t in order:
            r = runs[t]
            value = (
                format_value(r.headline.value, scale)
                if r.status == "ok" and r.headline
                else ("done" if r.status == "ok" else r.status)
            )
            cells.append(f"{t} {value}")
        out.append(f"{heading}: {' · '.join(cells)}")
    return out
