"""Progress on a terminal: a live bar (rich.progress) with each finished run above it.

The bar says where the campaign is (round, target, measurement), how much of the
plan's estimated work is done, the time elapsed and what is left (a range while
an 'auto' plan may still stop early; see ``forecast.py``). Each run's headline
figure is printed as it finishes, problems in colour, and with ``--verbose`` the
commands as they start. The bar redraws once a second: a benchmark shares the
machine with it, so it must cost next to nothing.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

from pgfsbench.campaign import events as ev
from pgfsbench.plan.model import Plan
from pgfsbench.progress import lines
from pgfsbench.progress.forecast import Forecast, clock_text
from pgfsbench.progress.lines import NORMAL, VERBOSE

STYLE = {"info": "", "warning": "yellow", "error": "red"}


class LeftColumn(ProgressColumn):
    """What is left, from the forecast (not from rich's own speed estimate, which knows
    nothing of rounds, budgets and decided measurements)."""

    def __init__(self, forecast: Forecast) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self.forecast = forecast

    def render(self, task: Task) -> Text:
        return Text(self.forecast.left_text(), style="cyan")


class LiveProgress:
    """An observer (``observe(event)``) drawing on ``console``; use it as a context
    manager so the bar is removed however the campaign ends."""

    def __init__(
        self,
        plan: Plan,
        console: Console,
        verbosity: int = NORMAL,
        forecast: Forecast | None = None,
    ) -> None:
        self.console, self.verbosity = console, verbosity
        self.forecast = forecast or Forecast(plan)
        self.progress = Progress(
            TextColumn(
                "{task.description}",
                table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis"),
            ),
            BarColumn(bar_width=12),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            LeftColumn(self.forecast),
            console=console,
            refresh_per_second=1,
            transient=True,
            expand=True,
        )
        self.task = self.progress.add_task("starting", total=max(self.forecast.total, 1))
        self.most_rounds, self.round = 1, 0
        self.runs = self.failed = 0

    def __enter__(self) -> LiveProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def __call__(self, event: ev.Event) -> None:
        self.forecast.observe(event)
        handler = getattr(self, "_" + type(event).__name__, None)
        if handler is not None:
            handler(event)
        f = self.forecast
        self.progress.update(self.task, total=max(f.total, 1), completed=f.done)

    def say(self, text: str | Text, level: str = "info", at: int = NORMAL) -> None:
        if self.verbosity >= at:
            line = text if isinstance(text, Text) else Text(text, style=STYLE[level])
            self.progress.console.print(line, soft_wrap=True)

    def where(self, target: str = "", what: str = "") -> None:
        """The bar's description, short enough for 80 columns: 'round 3/12 · xfs · fsync'."""
        title = (
            "settling"
            if self.round == 0
            else f"round {self.round}" + (f"/{self.most_rounds}" if self.most_rounds > 1 else "")
        )
        parts = [title, target, what]
        self.progress.update(self.task, description=" · ".join(p for p in parts if p))

    # --- one method per event --------------------------------------------------
    def _CampaignStarted(self, e: ev.CampaignStarted) -> None:
        self.most_rounds = e.most_rounds
        self.say(lines.started_text(e, self.forecast.estimate_text()))

    def _Note(self, e: ev.Note) -> None:
        self.say(lines.note_line(e), e.level)

    def _TargetSkipped(self, e: ev.TargetSkipped) -> None:
        self.say(f"{e.target}: skipped: {e.reason}", "warning")

    def _TargetFailed(self, e: ev.TargetFailed) -> None:
        self.say(f"{e.target}: failed: {e.reason}", "error")

    def _RoundStarted(self, e: ev.RoundStarted) -> None:
        self.round = e.round
        self.where()
        if e.round == 0:
            self.say(
                Text(f"settling round (run, not counted): {', '.join(e.targets)}", style="bold")
            )
        elif self.most_rounds > 1:
            self.say(
                Text(
                    f"{lines.round_title(e.round, self.most_rounds)}: {', '.join(e.targets)}",
                    style="bold",
                )
            )

    def _VisitStarted(self, e: ev.VisitStarted) -> None:
        self.where(e.target, "provisioning" if e.provisioning else "")
        what = (
            f"provisioning {e.kind} target ({e.fs})"
            if e.provisioning
            else f"reusing the {e.fs} target"
        )
        self.say(f"{e.target}: {what}", at=VERBOSE)

    def _Waited(self, e: ev.Waited) -> None:
        self.say(f"  {lines.waited_line(e)}", at=VERBOSE)

    def _VisitDisturbed(self, e: ev.VisitDisturbed) -> None:
        if e.again:
            self.where(e.target, "again")
            self.say(Text(lines.disturbed_line(e), style="yellow"))
        elif e.trimmed:  # counted from the seconds the burst spared: handled
            self.say(Text(lines.disturbed_line(e), style="yellow"))
        else:
            self.say(lines.disturbed_line(e), "warning")

    def _RunStarted(self, e: ev.RunStarted) -> None:
        self.where(e.target, lines.measurement(e.workload, e.label))

    def _CommandStarted(self, e: ev.CommandStarted) -> None:
        self.say(Text(f"    {lines.command_line(e.argv)}", style="dim"), at=VERBOSE)

    def _CommandFinished(self, e: ev.CommandFinished) -> None:
        if e.exit_code != 0:
            self.say(
                Text(f"    (exit {e.exit_code} after {e.seconds:.1f} s)", style="dim"), at=VERBOSE
            )

    def _RunFinished(self, e: ev.RunFinished) -> None:
        self.runs += 1
        self.failed += e.status != "ok"
        level = lines.run_level(e)
        if level != "info":
            self.say(f"  {lines.run_line(e)}", level)
            return
        line = Text(f"  {e.target}: {lines.measurement(e.workload, e.label)}: ")
        if e.headline:
            line.append(lines.headline_text(e.headline), style="bold")
        else:
            line.append("done")
        line.append(f" ({e.seconds:.0f} s)", style="dim")
        self.say(line)

    def _RoundEnded(self, e: ev.RoundEnded) -> None:
        for s in lines.worth_telling(e.stopped):
            self.say(Text(f"  {lines.stopped_line(s)}", style="cyan"))

    def _CampaignEnded(self, e: ev.CampaignEnded) -> None:
        self.progress.stop()
        failed = f", {self.failed} not completed" if self.failed else ""
        self.say(
            Text(
                f"campaign {e.status} after {clock_text(self.forecast.elapsed())}: "
                f"{self.runs} runs{failed}",
                style="bold",
            )
        )
