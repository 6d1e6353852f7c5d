"""``pgfsbench compare``: baseline against contenders, benchstat style.

Each row: median ± CI half-width (n) per column, and per contender the ratio
with its 95% CI and a mark: ``+`` better, ``−`` worse, ``≠`` different (no
direction), ``≈`` equivalent (shown by an equivalence test), ``?`` inconclusive.
Here: which rows, and the texts of their cells and footer; the output formats
(``export/text.py``, ``export/markdown.py``, ``export/json.py``) lay them out.
"""

from __future__ import annotations

import fnmatch

from pgfsbench.analysis.table import Cell, Row, Table
from pgfsbench.render.values import cell_text


def select_rows(table: Table, metric: str | None) -> list[Row]:
    """Rows whose metric matches the glob; by default each measurement's headline."""
    if metric is None:
        return [r for r in table.rows if r.headline]
    return [r for r in table.rows if fnmatch.fnmatchcase(r.metric, metric)]


def value_text(cell: Cell, scale: float | None) -> str:
    text = cell_text(cell, scale)
    if cell.status != "ok":
        return text
    if cell.half_width is not None:
        text += f" ±{cell.half_width:.0%}"
    cv = f", cv {cell.cv:.0%}" if cell.cv is not None else ""
    return f"{text} (n={cell.n}{cv})"


def diff_text(cell: Cell, short: bool = False) -> tuple[str, str]:
    """(ratio with CI, mark with its reason) of a contender's cell; ``short`` keeps only
    the adjusted p-value of the reason (the terminal is narrow, the footer explains)."""
    c = cell.comparison
    if c is None or c.ratio is None:
        return "", ""
    ratio = f"×{c.ratio:.3f}"
    if c.ci_low is not None:
        ratio += f" [{c.ci_low:.3f}, {c.ci_high:.3f}]"
    v = cell.verdict
    if v is None:
        return ratio, ""
    if short:
        return ratio, v.mark + (f" p={cell.p_adjusted:.2g}" if cell.p_adjusted is not None else "")
    return ratio, f"{v.mark} {v.reason}"


def row_title(row: Row) -> str:
    return f"{row.workload} {row.label} {row.metric}".replace("  ", " ")


def looks_text(d) -> str:
    """When the headline comparisons were tested: 'once, at the last round', 'at rounds
    6 and 12 (alpha spent across the looks)', 'after every round from 3 to 12 (...)'."""
    if d is None or d.first_look == d.last_look:
        return "once, at the last round"
    looks = d.planned_looks()
    budget = " (or at the last round the time budget allowed)"
    if d.every_round:
        return (
            f"after every round from {d.first_look} to {d.last_look} (alpha spent across the looks)"
        )
    if len(looks) == 1:
        return f"once, at round {looks[0]}{budget}"
    return (
        f"at rounds {', '.join(map(str, looks[:-1]))} and {looks[-1]}{budget}, "
        "alpha spent across the looks"
    )


def footer(table: Table) -> str:
    """The legend: what the numbers are, the marks, paired or not, and the design."""
    how = []
    if table.paired:
        how.append(
            "paired: targets measured in the same rounds are compared within rounds "
            "(ratio = geometric mean of the per-round ratios, paired t on their logs)"
        )
    if table.unpaired:
        how.append(
            "unpaired: runs whose rounds do not correspond are compared as independent "
            "samples (ratio of medians, bootstrap CI, Mann-Whitney U)"
        )
    design = f"decided {looks_text(table.design)}, Holm-corrected at alpha {table.alpha}"
    how_text = "; ".join(how)
    return (
        "Medians ± 95% CI half-width (bootstrap), n and the coefficient of variation; "
        "ratios are contender/baseline with 95% CIs. "
        + (how_text[:1].upper() + how_text[1:] + ". " if how else "")
        + f"Marks: + better, − worse (significant and beyond ±{table.noise:.0%}), "
        f"≈ equivalent (two one-sided tests show the ratio within ±{table.equivalence:.0%}), "
        "? inconclusive (neither shown; the reason says about how many rounds would settle "
        f"it). Headline rows: all {table.headline_tests} pair(s) of targets {design}; "
        "other rows: Benjamini-Hochberg."
    )
