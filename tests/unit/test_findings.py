"""One comparison per pair: its figure, its interval at the decision's level, and the
rounds it rests on, the same whichever way it is read (analysis/findings.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pgfsbench.analysis.cells import CellKey, Samples
from pgfsbench.analysis.findings import BETTER, EQUIVALENT, INCONCLUSIVE, WORSE
from pgfsbench.analysis.stats.outcome import percent_text
from pgfsbench.analysis.stats.sequential import Design
from pgfsbench.analysis.table import Source, build_table
from pgfsbench.analysis.verdicts.verdict_lines import verdict_lines
from pgfsbench.ratios import change_text, ratio_text


def _cells(values: dict[str, dict[int, float]], higher: bool = True, fio: bool = False) -> dict:
    """Each target's rounds of a TPC-B-like headline, or of fio's p99 (lower is better)."""
    workload, metric, unit = (
        ("fsync-latency", "fsync_latency.sync_p99_us", "us")
        if fio
        else ("pgbench", "pgbench.tps", "tx/s")
    )
    return {
        CellKey(t, workload, "", metric): Samples(
            unit,
            higher and not fio,
            values=list(v.values()),
            rounds=list(v),
            block="c1",
            params={} if fio else {"mode": "tpcb"},
        )
        for t, v in values.items()
    }


def _table(values: dict[str, dict[int, float]], design: Design, higher: bool = True, **kw):
    """A one-campaign table of a TPC-B-like headline measurement."""
    source = Source(list(values), _cells(values, higher), design=design)
    return build_table(source, None, design.alpha, design.noise, kw.get("margin"))


def _campaign(rng, effects: dict[str, float], rounds: int, sd: float = 0.03, drift=0.15):
    shift = rng.normal(0, drift, rounds)
    return {
        t: {r + 1: 1000 * math.exp(shift[r] + e + rng.normal(0, sd)) for r in range(rounds)}
        for t, e in effects.items()
    }


def _inside(f) -> bool:
    return f.interval is None or f.low <= f.ratio <= f.high


@pytest.mark.parametrize(
    "design",
    [Design.fixed(0.05, 0.03, 10), Design.planned(0.05, 0.03, [4, 10])],
    ids=["one look", "two looks"],
)
def test_every_figure_lies_inside_its_own_interval_and_agrees_with_its_outcome(design) -> None:
    # The issue: after an early stop "10.8% lower; 99.38% CI 0.760–0.819": the estimate
    # from every round beside the deciding look's interval. Now the figure is the one the
    # decision tested, on its rounds, with its interval at its level.
    rng = np.random.default_rng(11)
    margin = design.noise
    seen = set()
    early = 0
    for _ in range(120):
        b = float(rng.choice([0.0, 0.004, 0.12, -0.25]))
        values = _campaign(rng, {"a": 0.0, "b": b, "c": 0.005}, 10)
        table = _table(values, design)
        for f in table.pairs.values():
            assert _inside(f), f
            if f.outcome in (BETTER, WORSE):
                assert (f.low > 1) if f.ratio > 1 else (f.high < 1)
                assert abs(math.log(f.ratio)) >= math.log1p(margin)
            elif f.outcome == EQUIVALENT:
                assert 1 / (1 + margin) < f.low and f.high < 1 + margin
                assert f.level.tost  # the TOST interval: (1 - 2·level)
            if f.early:
                early += 1
                # the centres are each side's geometric mean over the same rounds
                assert f.centre_target / f.centre_reference == pytest.approx(f.ratio)
                assert f.rests_on() == f"rounds 1–{f.through}"
            seen.add(f.outcome)
            # read the other way round: the same evidence, inverted
            back = f.flipped()
            assert back.ratio == pytest.approx(1 / f.ratio)
            if f.interval:
                assert (back.low, back.high) == pytest.approx((1 / f.high, 1 / f.low))
    assert {BETTER, WORSE, EQUIVALENT} <= seen
    if design.looks and len(design.looks) > 1:
        assert early > 0  # the two-look design decided some pairs at round 4


def test_the_level_is_the_decisions_and_is_said_in_words() -> None:
    rng = np.random.default_rng(5)
    table = _table(
        _campaign(rng, {"a": 0.0, "b": -0.3, "c": 0.0}, 10), Design.fixed(0.05, 0.03, 10)
    )
    f = table.pair(table.rows[0], "a", "b")
    assert f.outcome == WORSE
    # three pairs share alpha: 98.3%, said once in words
    assert f.level.confidence == pytest.approx(1 - 0.05 / 3)
    assert f.level.words() == "98.3% CIs: 95% for the 3 comparisons together"
    assert [percent_text(c) for c in (0.95, 0.90, 0.979, 1 - 0.05 / 6, 1 - 0.00042)] == [
        "95%",
        "90%",
        "97.9%",
        "99.2%",
        "99.96%",
    ]


def test_ratios_read_alike_everywhere_and_never_in_scientific_notation() -> None:
    # The issue: "3.3e+02× fsync p99 latency" in one line, "×146.07" in the table.
    assert ratio_text(330.4) == "×330"
    assert ratio_text(0.53) == "−47%"
    assert ratio_text(1.095) == "+9.5%"
    assert ratio_text(0.031) == "×0.031"
    assert change_text(0.53, (0.36, 0.77)) == "×0.53 [×0.36, ×0.77]"
    assert change_text(0.8, (0.7, 0.9), "TPC-B tps") == "−20% TPC-B tps [−30%, −10%]"
    assert all("e+" not in ratio_text(x) and "e-" not in ratio_text(x) for x in (1e-5, 1e7))


def test_three_identical_quantized_p99s_are_not_equivalent_anywhere() -> None:
    # fio's fdatasync p99 of 370.688 µs on every target in rounds 1-3 was once
    # "equivalent at round 3": no spread to judge by, so not told apart, saying why.
    cells = {
        CellKey(t, "fsync-latency", "", "fsync_latency.sync_p99_us"): Samples(
            "µs", False, values=[370.688] * 3, rounds=[1, 2, 3], block="c1", params={}
        )
        for t in ("ext4", "xfs")
    }
    table = build_table(Source(["ext4", "xfs"], cells), None, 0.05, 0.02)
    f = table.rows[0].cells["xfs"].finding
    assert f.outcome == INCONCLUSIVE and "no spread to judge by" in f.note
    assert f.interval is None
    [line] = verdict_lines(table, {})
    assert "≈" not in line.text and "equivalent" not in line.text
    depth = 0
    for ch in line.text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        assert depth <= 1, line.text


def test_a_plans_weights_set_each_rows_level_and_say_so() -> None:
    # tps weighs 3 against fio p99's 1: tps pairs at 3/12 of alpha each, p99 pairs at
    # 1/12; each row's interval at its own level, and the words say whose share it is.
    rng = np.random.default_rng(5)
    tps = _campaign(rng, {"a": 0.0, "b": -0.3, "c": 0.0}, 10)
    p99 = _campaign(rng, {"a": 0.0, "b": 0.0, "c": 0.0}, 10, sd=0.3)
    cells = _cells(tps) | _cells(p99, fio=True)
    design = Design(0.05, 0.03, 10, 10, weights=(("pgbench", 3.0), ("fsync-latency", 1.0)))
    table = build_table(Source(list(tps), cells, design=design), None, 0.05, 0.03)
    rows = {r.workload: r for r in table.rows}
    f = table.pair(rows["pgbench"], "a", "b")
    g = table.pair(rows["fsync-latency"], "a", "b")
    assert f.level.confidence == pytest.approx(1 - 0.05 * 3 / 12)
    assert g.level.confidence == pytest.approx(1 - 0.05 / 12)
    assert f.level.words() == (
        "98.8% CIs: 95% for the 6 comparisons together (shared by the plan's weights)"
    )
    assert f.outcome == WORSE and _inside(f) and _inside(g)
