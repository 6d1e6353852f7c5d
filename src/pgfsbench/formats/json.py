"""The JSON format: a stored campaign, or a comparison, as plain machine-readable data.

Every document starts with ``schema_version``, ``pgfsbench_version`` (of the program
that wrote it) and ``kind`` ("export" or "comparison"); its layout is the typed
dictionaries the writers below are annotated with (formats/export_document.py,
formats/comparison_document.py), from which ``schema()`` generates the JSON Schema that
``pgfsbench schema export`` prints and the tests validate against.
``SCHEMA_VERSION`` goes up when a field is removed or changes meaning; new fields
do not change it.

A target carries its whole provenance (formats/target_provenance.py): what the report's
Targets section shows, in the stored values; the host is in the campaign part. A run
carries every command it ran, with its exact argv, from its kept artifacts.

Times are epoch seconds as stored (lossless; convert where shown). Values that
are unsupported or not finite become null: JSON has no NaN, and unsupported
is not zero.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO, TypeVar, cast

import orjson

from pgfsbench import __version__
from pgfsbench.compare.comparison import Comparison
from pgfsbench.formats.registry import COMPARISON, EXPORT, OutputFormat

if TYPE_CHECKING:  # only for the annotations: analysis.table imports scipy, slow to load
    from pgfsbench.analysis.caveats.disturbance import Disturbance
    from pgfsbench.analysis.caveats.durability import Durability as DurabilityClass
    from pgfsbench.analysis.table import Cell, Row, Table
    from pgfsbench.analysis.verdicts.verdict_lines import VerdictLine
    from pgfsbench.formats.comparison_document import ComparisonData, ComparisonDocument
    from pgfsbench.formats.export_document import (
        ExportDocument,
        Host,
        Level,
        Run,
        RunCommand,
        RunMetric,
        RunStatus,
        Schedule,
        Target,
        TargetStatus,
    )
    from pgfsbench.metrics import Metric
    from pgfsbench.store.read import Campaign, StoredArtifact, StoredRun, StoredTarget


# 2: compare of several campaigns pairs targets (columns are the campaigns, row labels
# start with the target pair) instead of one column per directory/target.
SCHEMA_VERSION: Final = 4  # 4: one finding per pair (vs_baseline, findings); centres, not medians
_SCHEMA_NOTE = (
    "Times are epoch seconds. null means unsupported, not finite or not applicable (never "
    "zero). schema_version goes up when a field is removed or changes meaning; new fields "
    "may appear without it."
)


def schema(kind: str | None = None) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of what this format writes: ``kind`` "export" or
    "comparison", or None for either (what a reader of both validates against)."""
    from typing import Annotated

    from pydantic import Field

    from pgfsbench.formats.comparison_document import ComparisonDocument
    from pgfsbench.formats.export_document import ExportDocument
    from pgfsbench.formats.json_schema import json_schema

    what = {
        EXPORT: "'pgfsbench export --format json' writes: one stored campaign",
        COMPARISON: "'pgfsbench compare --format json' writes",
        None: "'pgfsbench export --format json' (kind 'export': one stored campaign) and "
        "'pgfsbench compare --format json' (kind 'comparison') write",
    }
    if kind not in what:
        raise ValueError(f"no JSON document of kind {kind!r}")
    model: Any = {EXPORT: ExportDocument, COMPARISON: ComparisonDocument}.get(kind or "")
    if model is None:
        model = Annotated[ExportDocument | ComparisonDocument, Field(discriminator="kind")]
    return json_schema(
        model,
        id=f"urn:pgfsbench:{kind or 'json'}:{SCHEMA_VERSION}",
        title=f"pgfsbench JSON output{f' ({kind})' if kind else ''}, schema version "
        f"{SCHEMA_VERSION}",
        description=f"What {what[kind]}.",
        note=_SCHEMA_NOTE,
    )


def write_campaign(campaign: Campaign, out: TextIO) -> None:
    _dump(campaign_data(campaign), out)


def write_comparison(comparison: Comparison, out: TextIO) -> None:
    _dump(comparison_document(comparison), out)


FORMAT = OutputFormat(
    "json",
    "json",
    "application/json",
    {EXPORT: write_campaign, COMPARISON: write_comparison},
    order=30,
)


def _dump(data: Mapping[str, Any], out: TextIO) -> None:
    """The document indented to the depth a person reads it at, each deeper value on
    one line (a metric, a series, a provenance fact), in one write.

    json.dumps with an indent encodes in Python, token by token: a 100-run campaign's
    metrics and series (~300,000 numbers) took 1.4 s of `export`'s ~2 s; the standard
    encoder in C, without an indent, still ~0.1 s (the floats' repr). Below
    ``_INDENTED`` levels orjson encodes the values, compact; the document is put
    together as UTF-8 bytes, as orjson gives them (~12 ms in all, ~18 as text)."""
    document = _indented(data, 0) + b"\n"
    raw = getattr(out, "buffer", None)
    if raw is None:  # a text-only stream (StringIO)
        out.write(document.decode())
    else:
        out.flush()  # what the text layer holds goes first
        raw.write(document)


_INDENTED = 4  # levels laid out one item per line: document, list, item, field, entry
# Keys as json writes them (a number as a string); numpy's numbers as numbers; a
# float that is not finite as null (JSON has no NaN), as _num does above the leaves.
_ORJSON = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


@functools.lru_cache(maxsize=1024)  # the same few field names, thousands of times
def _key(k: Any) -> bytes:
    """A dict key as json writes it: a string, or a number or constant as a string."""
    return json.dumps(k if isinstance(k, str) else json.dumps(k)).encode()


def _indented(value: Any, level: int) -> bytes:
    if level >= _INDENTED or not isinstance(value, dict | list) or not value:
        return orjson.dumps(value, option=_ORJSON)
    pad, end = b"  " * (level + 1), b"  " * level
    if isinstance(value, dict):
        items = [pad + _key(k) + b": " + _indented(v, level + 1) for k, v in value.items()]
        return b"{\n" + b",\n".join(items) + b"\n" + end + b"}"
    items = [pad + _indented(v, level + 1) for v in value]
    return b"[\n" + b",\n".join(items) + b"\n" + end + b"]"


def _header(kind: str) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "pgfsbench_version": __version__, "kind": kind}


def comparison_document(comparison: Comparison) -> ComparisonDocument:
    """What ``compare --format json`` writes."""
    doc = {
        **_header(COMPARISON),
        "title": comparison.title,
        **comparison_data(comparison.table, comparison.rows, comparison.verdicts),
    }
    if comparison.campaigns:  # a baseline campaign vs contender campaigns
        doc["campaigns"] = [_clean(c) for c in comparison.campaigns]
        doc["pairs"] = [
            {"baseline": b, "contender": c, "column": col} for b, c, col in comparison.pairs
        ]
    doc["warnings"] = list(comparison.warnings)
    doc["notes"] = list(comparison.notes)
    return cast("ComparisonDocument", doc)


def campaign_data(campaign: Campaign) -> ExportDocument:
    """What ``export`` writes, as Python data for ``_dump``: cleaned to valid JSON but
    for the series, whose points are the stored (t, value) tuples (orjson writes each
    as an array and a non-finite value as null)."""
    from pgfsbench.analysis.caveats.disturbance import disturbed_runs
    from pgfsbench.analysis.caveats.durability import durabilities

    fs_of = {t.name: t.fs for t in campaign.targets}
    classes = durabilities(campaign)
    left_out = disturbed_runs(campaign.runs)
    return {
        "schema_version": SCHEMA_VERSION,
        "pgfsbench_version": __version__,
        "kind": "export",
        "campaign": {
            "id": campaign.id,
            "plan": campaign.plan_name,
            "status": campaign.status,
            "started": _num(campaign.started),
            "ended": _num(campaign.ended),
            "host": cast("Host", _clean(campaign.host)),  # as recorded
            "pgfsbench_version": campaign.version,
            "plan_recorded": _clean(campaign.plan),
        },
        "schedule": cast("Schedule", _clean(campaign.schedule)),  # as recorded
        "targets": [_target(t, classes.get(t.name)) for t in campaign.targets],
        "runs": [_run(r, fs_of.get(r.target), left_out.get(r.id)) for r in campaign.runs],
        # Medians, CIs and verdicts per cell: the same numbers as the report.
        "comparison": cast("ComparisonData", _clean(_comparison(campaign))),
    }


def _comparison(campaign: Campaign) -> dict[str, Any]:
    from pgfsbench.analysis.caveats.durability import durabilities
    from pgfsbench.analysis.caveats.notes import fill_verdict_caveats
    from pgfsbench.analysis.table import comparison_table
    from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines

    table = comparison_table(campaign)
    durability = durabilities(campaign)
    lines = fill_verdict_caveats(verdict_lines(table, durability), campaign)
    return comparison_data(table, table.rows, lines)


def comparison_data(table: Table, rows: list[Row], verdicts: list[VerdictLine]) -> dict:
    """The comparison table (centres, CIs, findings, verdicts) as plain JSON data: every
    figure a finding's (analysis/findings.py), as every other output shows it."""

    def cell(c: Cell) -> dict:
        d: dict[str, Any] = {
            "status": c.status,
            "centre": c.value,
            "centre_kind": c.centre,
            "n": c.n,
            "ci95": list(c.ci) if c.ci else None,
            "cv": c.cv,
            "values": c.values,
            "rounds": c.rounds,
        }
        if c.finding is not None:
            d["vs_baseline"] = c.finding.data()
        if c.settling:
            d["settling_runs"] = c.settling
        return d

    from pgfsbench.analysis.verdicts.answer import campaign_answer, glossary

    return {
        "answer": campaign_answer(verdicts),
        "baseline": table.baseline,
        "columns": table.targets,
        "alpha": table.alpha,
        "noise": table.noise,
        "equivalence": table.equivalence,
        "rows": [
            {
                "workload": r.workload,
                "label": r.label,
                "metric": r.metric,
                "unit": r.unit,
                "headline": r.headline,
                "direction": {True: "higher", False: "lower", None: "none"}[r.higher_is_better],
                "cells": {t: cell(r.cells[t]) for t in table.targets},
            }
            for r in rows
        ],
        "findings": [
            {"workload": f.workload, "label": f.label, "metric": f.metric, **f.data()}
            for f in table.pairs.values()
        ],
        "glossary": glossary(table),
        "verdicts": [
            {
                "workload": v.workload,
                "label": v.label,
                "metric": v.metric,
                "kind": v.kind,
                "winner": v.winner,
                "ranking": v.ranking,
                "tiers": v.tiers.tiers if v.tiers else None,
                "text": v.text,
                "details": list(v.details),
                "durability": v.durability,
                "crash_tests": v.crash_tests,
                "warning": v.warning or None,
                "caveats": list(v.caveats),
            }
            for v in verdicts
        ],
    }


def _target(t: StoredTarget, d: DurabilityClass | None) -> Target:
    # Imported here, not at the top: every command's --format help loads this module.
    from pgfsbench.analysis.caveats.notes import target_caveats
    from pgfsbench.formats.target_provenance import target_provenance

    return {
        "name": t.name,
        "kind": t.kind,
        "fs": t.fs,
        "status": cast("TargetStatus", t.status),
        "reason": t.reason,
        "effective_mount_options": list(t.provenance.get("effective_mount_options") or []),
        "durability": (
            {
                "level": cast("Level", d.level),
                "reasons": list(d.reasons),
                "crash_test": d.crash_test.sentence() if d.crash_test else None,
                "measured_level": cast("Level", d.crash_test.level) if d.crash_test else None,
            }
            if d is not None
            else None
        ),
        "caveats": target_caveats(t),
        # Everything the report shows about the target: the plan entry, the commands
        # that made it and their output, geometry, device, sysctls and queue settings
        # (before, asked, during), the server's version, settings and data checksums.
        **_clean(target_provenance(t.provenance, t.spec, t.fs)),
    }


def _run(r: StoredRun, fs: str | None, left_out: Disturbance | None = None) -> Run:
    from pgfsbench.analysis.caveats.notes import run_bound

    return {
        "target": r.target,
        "fs": fs,
        "workload": r.workload,
        "label": r.label,
        "repetition": r.repetition,
        "params": _clean(r.params),
        "status": cast("RunStatus", r.status),
        "error": r.error,
        "started": _num(r.started),
        "ended": _num(r.ended),
        "commands": [_run_command(a) for a in r.artifacts if a.command],
        # What limited it: None without bound.* metrics (older results, no monitor).
        "bound": (
            {"classes": b.classes, "storage_bound": b.storage_bound, "reasons": b.reasons}
            if (b := run_bound(r))
            else None
        ),
        # Someone else's load during it: run again in its round, or kept and left out.
        "disturbed": (
            {"action": "run again", "why": (r.error or "").removeprefix("run again: ")}
            if r.status == "redone"
            else {"action": "trimmed", "why": f"{left_out.text()}; {left_out.trim_text()}"}
            if left_out is not None and left_out.trimmed
            else {"action": "kept", "why": left_out.text()}
            if left_out is not None
            else None
        ),
        # A metric's note, where it has one: what it is, how it was read, and for what a
        # filesystem offers PostgreSQL (clone-db, fs-snapshot, compression) its
        # crash-safety and restore notes.
        "metrics": [_metric(m) for m in r.metrics],
        "series": {
            # (t, value) pairs as they are: orjson writes a pair as an array, a
            # non-finite value (rare) as null
            name: {"unit": s.unit, "points": s.points}
            for name, s in r.series.items()
        },
    }


def _metric(m: Metric) -> RunMetric:
    out: RunMetric = {
        "name": m.name,
        "value": _num(m.value),
        "unit": m.unit,
        "direction": _direction(m.higher_is_better),
    }
    if m.note:
        out["note"] = m.note
    return out


def _run_command(a: StoredArtifact) -> RunCommand:
    return {
        "argv": [str(arg) for arg in a.command or ()],
        "exit_code": a.exit_code,
        "kind": a.kind,
        "output": a.path,
    }


def _direction(higher_is_better: bool | None) -> Literal["higher", "lower", "none"]:
    """'higher' or 'lower' is better; 'none' for informational figures (a count, a size)."""
    if higher_is_better is None:
        return "none"
    return "higher" if higher_is_better else "lower"


def _num(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


_T = TypeVar("_T")


def _clean(value: _T) -> _T:
    """Plan params and host facts are free-form: make sure they stay valid JSON (a
    non-finite float as null, keys as strings, a tuple as a list): the same shape."""
    return cast("_T", _cleaned(value))


def _cleaned(value: Any) -> Any:
    """_clean's walk. The exact types first: this walks every value of the document
    (~19,000 for a 100-run campaign)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {k if type(k) is str else str(k): _cleaned(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_cleaned(v) for v in value]
    if isinstance(value, float):  # a subclass (numpy's float64)
        return _num(value)
    if isinstance(value, dict):
        return {str(k): _cleaned(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cleaned(v) for v in value]
    return value
