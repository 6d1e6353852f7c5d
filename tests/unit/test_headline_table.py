"""A headline-only table (what a listing's verdict lines read) holds the whole table's
headline rows exactly: the headline family is decided apart from the other rows."""

from __future__ import annotations

import pytest

from pgfsbench.analysis.caveats.durability import durabilities
from pgfsbench.analysis.table import Row, comparison_table
from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
from pgfsbench.store.read import load_campaign
from tests.unit.demo_campaign import unpack_demo


@pytest.fixture
def demo(tmp_path):
    return unpack_demo(tmp_path / "r")


def _facts(row: Row) -> list:
    return [
        (row.workload, row.label, row.metric, row.headline),
        *((t, c.value, c.ci, c.n, c.best, c.finding) for t, c in row.cells.items()),
    ]


@pytest.mark.parametrize("baseline", [None, "xfs"])
def test_the_headline_rows_are_the_whole_tables(demo, baseline):
    whole = comparison_table(load_campaign(demo, series=False), baseline)
    campaign = load_campaign(demo, series=False)  # a fresh one: no whole table kept
    alone = comparison_table(campaign, baseline, headline_only=True)
    headline = [r for r in whole.rows if r.headline]
    assert len(headline) >= 3 and len(whole.rows) > len(headline)  # the fixture has both
    assert [_facts(r) for r in alone.rows] == [_facts(r) for r in headline]
    assert (alone.pairs, alone.repeated, alone.design) == (
        whole.pairs,
        whole.repeated,
        whole.design,
    )
    assert alone.pairs  # decided pairs were compared, not an empty family twice
    lines = verdict_lines(alone, durabilities(campaign))
    assert lines == verdict_lines(whole, durabilities(campaign))


def test_a_whole_table_already_built_serves_the_headline_request(demo):
    campaign = load_campaign(demo, series=False)
    whole = comparison_table(campaign)
    assert comparison_table(campaign, headline_only=True) is whole
