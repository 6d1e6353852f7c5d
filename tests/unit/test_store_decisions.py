"""The decisions the PostgreSQL store keeps at import are the export's (the report's)
own, cell for cell, with a direction said in words and no figure that is no number."""

from __future__ import annotations

import math
from pathlib import Path

from pgfsbench.analysis.verdicts.decisions import decisions
from pgfsbench.formats.json import campaign_data
from pgfsbench.store.read import load_campaign
from pgfsbench.store.rows import DECISIONS
from tests.unit.test_export import build_results


def test_each_contender_cell_is_stored_as_the_export_decides_it(tmp_path: Path) -> None:
    campaign = load_campaign(build_results(tmp_path / "r"))
    rows = decisions(campaign)
    comparison = campaign_data(campaign)["comparison"]
    expected = {
        (r["workload"], r["label"], r["metric"], t): c["vs_baseline"]
        for r in comparison["rows"]
        for t, c in r["cells"].items()
        if "vs_baseline" in c
    }
    assert {(d["workload"], d["label"], d["metric"], d["target"]) for d in rows} == set(expected)
    for d in rows:
        vs = expected[(d["workload"], d["label"], d["metric"], d["target"])]
        assert set(d) == set(DECISIONS)
        assert d["verdict"] == vs["outcome"] and d["baseline"] == "ext4"
        assert d["reason"] == vs["text"]  # the finding, word for word
        assert (d["ratio_low"], d["ratio_high"]) == tuple(vs["interval"] or (None, None))
        assert d["ratio"] == vs["ratio"] and d["direction"] in ("higher", "lower", "none")
        assert all(not isinstance(v, float) or math.isfinite(v) for v in d.values())
    assert {d["target"] for d in rows} == {"xfs", "btrfs"}
