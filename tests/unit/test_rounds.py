"""Rounds through the store: the settling round left out, pairing only within one campaign."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pgfsbench.analysis.cells import CellKey, collect
from pgfsbench.analysis.table import comparison_table
from pgfsbench.analysis.verdicts.verdict_lines import WINNER, verdict_lines
from pgfsbench.compare.pairing import paired_table, pairing
from pgfsbench.metrics import Metric, WorkloadResult
from pgfsbench.report.html import write_report
from pgfsbench.store.db import Store
from pgfsbench.store.read import load_campaign

DRIFT = [1.0, 1.18, 0.86, 1.12, 0.92, 1.08, 0.83, 1.2]
SLOW = [0.96, 0.95, 0.97, 0.955, 0.965, 0.96, 0.95, 0.97]


def _campaign(results: Path, campaign_id: str, fresh: bool = False) -> Path:
    """fdatasync vs fsync, 8 counted rounds; a settling round 0 first when targets are reused."""
    store = Store.create(results)
    store.start_campaign(
        campaign_id, "wal", {"name": "wal", "repetitions": {"count": 8}}, {}, "0.1.0"
    )
    ids = {
        t: store.add_target(t, i, "loop", "ext4", {}) for i, t in enumerate(("fdatasync", "fsync"))
    }
    for t in ids:
        store.set_target(ids[t], "ok")
    for rnd in range(0 if not fresh else 1, 9):
        for t, slow in (("fdatasync", 1.0), ("fsync", None)):
            factor = SLOW[rnd - 1] if slow is None and rnd else 1.0
            tps = 5000.0 if rnd == 0 else 1000 * DRIFT[rnd - 1] * factor  # settling: way off
            run = store.start_run(ids[t], "pgbench", {"clients": 8}, repetition=rnd)
            store.add_result(
                run, ids[t], WorkloadResult([Metric("pgbench.tps", tps, "tx/s", True)])
            )
            store.finish_run(run, "ok")
    store.end_campaign("ok")
    store.close()
    return results


def test_the_settling_round_is_counted_but_never_a_sample(tmp_path: Path) -> None:
    campaign = load_campaign(_campaign(tmp_path / "r", "c1"))
    cell = collect(campaign)[CellKey("fsync", "pgbench", "", "pgbench.tps")]
    assert cell.settling == 1 and cell.rounds == list(range(1, 9)) and 5000.0 not in cell.values
    table = comparison_table(campaign)
    fsync = table.rows[0].cells["fsync"]
    assert fsync.n == 8 and fsync.settling == 1
    f = fsync.finding
    assert f.paired and f.outcome == "worse" and f.rests_on() == "8 rounds" and f.p < 0.001
    [line] = verdict_lines(table, {})
    assert line.kind == WINNER and line.winner == "fdatasync"
    page = write_report(tmp_path / "r", campaign).read_text()
    assert page.count("settling (not counted)") == 2
    assert "compared within rounds (paired)" in page


def test_rounds_of_different_campaigns_are_not_paired(tmp_path: Path) -> None:
    one = load_campaign(_campaign(tmp_path / "one", "c1"))
    two = load_campaign(_campaign(tmp_path / "two", "c2", fresh=True))
    table = paired_table(pairing(one, two), 0.05, 0.02)
    assert table.targets == ["one", "two"] and table.design.first_look == 1
    other = table.rows[0].cells["two"].finding
    assert not other.paired and other.rounds == 8  # another campaign: independent
    assert table.unpaired and not table.paired
    # the same campaign given twice: two sides, never paired by round either
    again = paired_table(pairing(one, load_campaign(tmp_path / "one")), 0.05, 0.02)
    assert all(
        c.finding is None or not c.finding.paired for r in again.rows for c in r.cells.values()
    )


def test_a_campaign_cut_short_is_judged_at_its_last_round(tmp_path: Path) -> None:
    # planned 8, stored 8: one look at round 8; a plan of 20 with 8 stored looks at 8 too
    results = _campaign(tmp_path / "r", "c1")
    campaign = load_campaign(results)
    campaign.plan["repetitions"] = {"count": 20}
    table = comparison_table(campaign)
    assert table.rows[0].cells["fsync"].finding.outcome == "worse"
    assert np.isclose(table.rows[0].cells["fsync"].finding.ratio, np.exp(np.mean(np.log(SLOW))))
