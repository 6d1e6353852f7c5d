"""An output format: ``toy``, for ``export`` and ``compare`` (one line per value)."""

from __future__ import annotations

from pgfsbench.formats.registry import COMPARISON, EXPORT, OutputFormat


def write_export(campaign, out) -> None:
    out.write(
        f"toy export of {campaign.id}: "
        + ", ".join(f"{r.target}={m.value:g}" for r in campaign.runs for m in r.metrics)
        + "\n"
    )


def write_comparison(comparison, out) -> None:
    for row in comparison.rows:
        out.write(f"toy {row.metric}: {len(row.cells)} targets\n")


FORMAT = OutputFormat(
    "toy", "toy", "text/x-toy", {EXPORT: write_export, COMPARISON: write_comparison}
)
