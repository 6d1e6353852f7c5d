"""Several results directories as one table source (``pgfsbench compare``).

Cells are matched by target name, workload and parameters: the same target
name in two directories becomes two columns (``run1/ext4``, ``run2/ext4``),
and a measurement whose parameters differ between directories (a longer
pgbench, a larger scale) becomes separate rows rather than a false match.
Round 3 of one campaign and round 3 of another are different blocks, so
columns of different campaigns are compared as independent samples; only the
same campaign given twice keeps its rounds paired (each cell's ``block``).
"""

from __future__ import annotations

import json
from collections import Counter

from pgfsbench.analysis.cells import CellKey, collect, failed_measurements
from pgfsbench.analysis.durability import Durability, target_durability
from pgfsbench.analysis.sequential import design_for
from pgfsbench.analysis.table import Source, params_key
from pgfsbench.store.read import Campaign


def column_names(campaigns: list[Campaign]) -> list[dict[str, str]]:
    """Per campaign: target name → column name, unique over all campaigns."""
    counts = Counter(t.name for c in campaigns for t in c.targets)
    dirs = [c.results_dir.resolve().name or str(c.results_dir) for c in campaigns]
    dir_counts = Counter(dirs)
    out = []
    for i, (c, d) in enumerate(zip(campaigns, dirs), start=1):
        prefix = d if dir_counts[d] == 1 else f"{d}#{i}"
        out.append({t.name: (t.name if counts[t.name] == 1 else f"{prefix}/{t.name}")
                    for t in c.targets})
    return out


def combined_source(campaigns: list[Campaign]) -> tuple[Source, dict[str, Durability | None]]:
    names = column_names(campaigns)
    per_campaign = [collect(c) for c in campaigns]
    # (workload, label) → the distinct parameter sets seen, in order
    variants: dict[tuple[str, str], list[str]] = {}
    for cells in per_campaign:
        for key, s in cells.items():
            seen = variants.setdefault((key.workload, key.label), [])
            if (pk := params_key(s.params)) not in seen:
                seen.append(pk)
    columns: list[str] = []
    durability: dict[str, Durability | None] = {}
    merged = {}
    failed = set()
    for campaign, rename, cells in zip(campaigns, names, per_campaign):
        failed |= {(rename[t], w, lbl) for t, w, lbl in failed_measurements(campaign)}
        for t in campaign.targets:
            if t.status != "skipped":
                columns.append(rename[t.name])
                durability[rename[t.name]] = target_durability(t.provenance, t.fs)
        for key, s in cells.items():
            label = _label(key.label, params_key(s.params), variants[(key.workload, key.label)])
            merged[CellKey(rename[key.target], key.workload, label, key.metric)] = s
    # One campaign's design holds for its own rounds; several campaigns had no shared plan.
    one = len({c.id for c in campaigns}) == 1
    return Source(columns, merged, failed, design_for(campaigns[0].plan) if one else None), \
        durability


def _label(label: str, pk: str, seen: list[str]) -> str:
    """The label, plus the parameters that differ from the first variant's, if any."""
    if len(seen) == 1 or pk == seen[0]:
        return label
    first, mine = json.loads(seen[0]), json.loads(pk)
    diff = ",".join(f"{k}={mine.get(k)}" for k in sorted(set(first) | set(mine))
                    if first.get(k) != mine.get(k))
    return f"{label} [{diff}]".strip()
