"""``pgfsbench list``: one line per campaign (text), or every fact of each (JSON)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, TextIO, cast

from rich.console import Console
from rich.text import Text

from pgfsbench.analysis.verdicts.answer import campaign_answer
from pgfsbench.analysis.verdicts.summary import Summary

if TYPE_CHECKING:
    from pgfsbench.formats.list_history_documents import HostIdentity, ListedCampaign


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    minutes, s = divmod(round(seconds), 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m{s:02d}s"


def _print_hanging(console: Console, text: Text, indent: int) -> None:
    """``text`` wrapped at the console's width between words, each continuation line
    indented under the first (a long host or path never starts at column 0)."""
    lines = text.wrap(console, max(20, console.width - indent))
    for i, line in enumerate(lines):
        line.rstrip()
        console.print(Text(" " * indent) + line if i else line, soft_wrap=True)


def list_text(summaries: list[Summary], console: Console) -> None:
    """Three lines a campaign (wrapped with a hanging indent where the terminal is
    narrow): what and where; its UUID and source; its verdicts."""
    for s in summaries:
        host = s.host.get("hostname") or "?"
        if s.host.get("machine_id"):
            host += f" ({s.host['machine_id'][:8]})"
        head = Text(s.id, style="bold")
        head.append(f"  {s.plan}  ")
        head.append(s.status, style="green" if s.status == "ok" else "yellow")
        head.append(f"  {_when(s.started)}  took {_duration(s.duration_s)}  on {host}")
        # Text objects: names and paths may contain "[...]", which is markup to rich.
        _print_hanging(console, head, 2)
        where = s.results_dir + ("" if s.source == s.results_dir else "  (from the store)")
        _print_hanging(console, Text(f"  {s.uuid}  {where}", style="dim"), 4)
        verdicts = (campaign_answer(s.verdicts) if s.verdicts else "") or s.problem or "no verdicts"
        if any(v.warning for v in s.verdicts):
            verdicts += " (a leader is not crash-safe)"
        _print_hanging(console, Text(f"  {verdicts}"), 4)
    console.print(f"{len(summaries)} campaign{'s' if len(summaries) != 1 else ''}")


def summary_data(s: Summary) -> ListedCampaign:
    return {
        "uuid": s.uuid,
        "id": s.id,
        "source": s.source,
        "results_dir": s.results_dir,
        "plan": s.plan,
        "started": s.started,
        "ended": s.ended,
        "duration_s": s.duration_s,
        "status": s.status,
        # the results database's layout; its old name kept for older readers
        "db_layout_version": s.schema_version,
        "schema_version": s.schema_version,
        "host": cast("HostIdentity", s.host),
        "targets": s.targets,
        "answer": campaign_answer(s.verdicts) if s.verdicts else None,
        "verdicts": [
            {
                "measurement": v.title,
                "metric": v.metric,
                "kind": v.kind,
                "winner": v.winner,
                "ranking": v.ranking,
                "tiers": v.tiers.tiers if v.tiers else None,
                "text": v.text,
                "warning": v.warning or None,
            }
            for v in s.verdicts
        ],
        "problem": s.problem or None,
    }


def list_json(summaries: list[Summary], out: TextIO) -> None:
    json.dump([summary_data(s) for s in summaries], out, indent=2)
    out.write("\n")
