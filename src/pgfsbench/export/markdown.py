"""The Markdown format: a comparison as a GitHub-flavoured table, its verdicts and footer."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from pgfsbench.export.output import COMPARISON, Comparison, OutputFormat

if TYPE_CHECKING:  # only for the annotations: analysis.table imports scipy, slow to load
    from pgfsbench.analysis.table import Row, Table
    from pgfsbench.analysis.verdicts import VerdictLine


def write_comparison(comparison: Comparison, out: TextIO) -> None:
    out.write(comparison_markdown(comparison.table, comparison.rows, comparison.verdicts))


FORMAT = OutputFormat("markdown", "md", "text/markdown", {COMPARISON: write_comparison})


def comparison_markdown(table: Table, rows: list[Row], verdicts: list[VerdictLine]) -> str:
    # Here, not at the top: the CLI loads this module to list the formats in its help.
    from pgfsbench.report.compare import diff_text, footer, value_text
    from pgfsbench.report.terminal import row_scale

    head = ["measurement", "metric", "unit"]
    for t in table.targets:
        head.append(t + (" (baseline)" if t == table.baseline else ""))
        if t != table.baseline:
            head.append(f"{t} vs base")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        scale = row_scale(row)
        cols = [f"{row.workload} {row.label}".strip(), f"`{row.metric}`", row.unit]
        for t in table.targets:
            cols.append(value_text(row.cells[t], scale))
            if t != table.baseline:
                cols.append(" ".join(diff_text(row.cells[t])).strip())
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |")
    if verdicts:
        out += ["", "**Verdicts**", ""]
        for v in verdicts:
            warning = f" ⚠ **{v.warning}**" if v.warning else ""
            out.append(f"- **{v.title}**: {v.text}{warning}")
            out += [f"  - ⓘ {caveat}" for caveat in v.caveats]
    out += ["", f"_{footer(table)}_", ""]
    return "\n".join(out)
