"""A plan's equivalence margin apart from its noise threshold ([verdicts] equivalence).

"Better"/"worse" keep the noise threshold (a difference must be significant and at
least that large); "equivalent" is tested within the wider margin, so a budget can show
identical targets within ±10% where ±3% would take hundreds of rounds.
"""

from __future__ import annotations

import math

import numpy as np

from pgfsbench.analysis.cells import CellKey, Samples
from pgfsbench.analysis.stats.paired import compare_paired
from pgfsbench.analysis.stats.sequential import EQUIVALENT, INCONCLUSIVE, LOWER, Design, decide
from pgfsbench.analysis.table import Source, build_table
from pgfsbench.plan.design import Verdicts


def _rounds(level: float, sd: float, n: int, seed: int) -> dict[int, float]:
    rng = np.random.default_rng(seed)
    return {r + 1: 1000 * math.exp(level + e) for r, e in enumerate(rng.normal(0, sd, n))}


def _aa_pair(n: int = 14, sd: float = 0.06) -> tuple[dict[int, float], dict[int, float]]:
    """Two identical targets: per-round log-ratio sd ≈ sd·√2."""
    return _rounds(0.0, sd, n, 1), _rounds(0.0, sd, n, 2)


def test_the_margin_defaults_to_the_noise() -> None:
    assert Verdicts(noise=0.03).margin == 0.03
    assert Verdicts(noise=0.03, equivalence=0.1).margin == 0.1
    assert Design(0.05, 0.03, 3, 12).equivalence == 0.03
    assert Design(0.05, 0.03, 3, 12, margin=0.1).equivalence == 0.1


def test_identical_targets_are_equivalent_within_the_wider_margin_only() -> None:
    a, b = _aa_pair()
    narrow = decide({"ab": (a, b)}, Design.planned(0.05, 0.03, [14]))
    wide = decide({"ab": (a, b)}, Design(0.05, 0.03, 14, 14, (14,), margin=0.10))
    assert narrow["ab"].outcome == INCONCLUSIVE
    assert wide["ab"].outcome == EQUIVALENT
    # the ratio shown is the same evidence; only the margin it is held to differs
    assert wide["ab"].paired.ratio == narrow["ab"].paired.ratio


def test_a_real_difference_is_still_decided_with_the_noise_threshold() -> None:
    base = _rounds(0.0, 0.05, 14, 3)
    slower = {
        r: v * 0.90 * math.exp(e)
        for (r, v), e in zip(base.items(), np.random.default_rng(4).normal(0, 0.05, 14))
    }
    design = Design(0.05, 0.03, 14, 14, (14,), margin=0.10)
    d = decide({"ab": (base, slower)}, design)["ab"]
    assert d.outcome == LOWER, d
    # 10% slower is not within ±10%: no equivalence claimed instead
    assert d.paired.p_equivalent > 0.05


def test_between_threshold_and_margin_the_claim_needs_only_the_threshold() -> None:
    rng = np.random.default_rng(5)
    pairs = [(1000.0, 1000 * math.exp(0.05 + e)) for e in rng.normal(0, 0.08, 6)]
    c = compare_paired(pairs, 0.10, 0.03)
    assert c.claim == 0.03 and c.margin == 0.10
    assert math.log1p(0.03) <= abs(c.mean_log) < math.log1p(0.10), c.ratio  # between them


def test_the_finding_names_the_margin_it_was_shown_within() -> None:
    a, b = _aa_pair()
    cells = {
        CellKey(t, "pgbench", "", "pgbench.tps"): Samples(
            "tx/s", True, values=list(v.values()), rounds=list(v), block="c1", params={}
        )
        for t, v in (("a", a), ("b", b))
    }
    design = Design(0.05, 0.03, 14, 14, (14,), margin=0.10)
    table = build_table(Source(["a", "b"], cells, design=design), None, 0.05, 0.03, 0.10)
    f = table.rows[0].cells["b"].finding
    assert f.outcome == "equivalent" and f.outcome_words() == "equivalent within ±10%"
    assert 1 / 1.1 < f.low and f.high < 1.1
