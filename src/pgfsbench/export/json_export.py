"""JSON export: the stored campaign as plain, machine-readable data.

Times are epoch seconds as stored (lossless; convert where shown). Values that
are unsupported or not finite become null: JSON has no NaN, and unsupported
is not zero.
"""

from __future__ import annotations

import math
from typing import Any

from pgfsbench.analysis.durability import target_durability
from pgfsbench.store.read import Campaign, StoredRun, StoredTarget


def export_json(campaign: Campaign) -> dict[str, Any]:
    fs_of = {t.name: t.fs for t in campaign.targets}
    return {
        "campaign": {
            "id": campaign.id,
            "plan": campaign.plan_name,
            "status": campaign.status,
            "started": _num(campaign.started),
            "ended": _num(campaign.ended),
            "host": _clean(campaign.host),
            "pgfsbench_version": campaign.version,
        },
        "schedule": _clean(campaign.schedule),
        "targets": [_target(t) for t in campaign.targets],
        "runs": [_run(r, fs_of.get(r.target)) for r in campaign.runs],
        # Medians, CIs and verdicts per cell: the same numbers as the report.
        "comparison": _clean(_comparison(campaign)),
    }


def _comparison(campaign: Campaign) -> dict[str, Any]:
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts import verdict_lines
    from pgfsbench.export.comparison import to_json

    table = comparison_table(campaign)
    durability = {t.name: target_durability(t.provenance, t.fs) for t in campaign.targets}
    return to_json(table, table.rows, verdict_lines(table, durability))


def _target(t: StoredTarget) -> dict[str, Any]:
    return {
        "name": t.name,
        "kind": t.kind,
        "fs": t.fs,
        "status": t.status,
        "reason": t.reason,
        "effective_mount_options": list(t.provenance.get("effective_mount_options") or []),
        "durability": ({"level": d.level, "reasons": d.reasons}
                       if (d := target_durability(t.provenance, t.fs)) else None),
    }


def _run(r: StoredRun, fs: str | None) -> dict[str, Any]:
    return {
        "target": r.target,
        "fs": fs,
        "workload": r.workload,
        "label": r.label,
        "repetition": r.repetition,
        "params": _clean(r.params),
        "status": r.status,
        "error": r.error,
        "started": _num(r.started),
        "ended": _num(r.ended),
        "metrics": [
            {"name": m.name, "value": _num(m.value), "unit": m.unit,
             "direction": _direction(m.higher_is_better)}
            for m in r.metrics
        ],
        "series": {
            name: {"unit": s.unit, "points": [[_num(t), _num(v)] for t, v in s.points]}
            for name, s in r.series.items()
        },
    }


def _direction(higher_is_better: bool | None) -> str:
    """'higher' or 'lower' is better; 'none' for informational figures (a count, a size)."""
    if higher_is_better is None:
        return "none"
    return "higher" if higher_is_better else "lower"


def _num(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def _clean(value: Any) -> Any:
    """Plan params and host facts are free-form: make sure they stay valid JSON."""
    if isinstance(value, float):
        return _num(value)
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value
