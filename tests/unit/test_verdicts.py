"""The statistics table and verdict lines, on synthetic samples with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from pgfsbench.analysis.caveats.durability import classify as durability_of
from pgfsbench.analysis.cells import CellKey, Samples
from pgfsbench.analysis.table import Source, build_table
from pgfsbench.analysis.verdicts.verdict_lines import (
    EQUIVALENT,
    INCONCLUSIVE,
    LEADERS,
    PARTIAL,
    SINGLE,
    WINNER,
    verdict_lines,
)
from pgfsbench.compare.row_texts import select_rows
from pgfsbench.formats.json import comparison_data
from pgfsbench.formats.markdown import comparison_markdown

SAFE = durability_of("ext4", ["rw", "relatime"], {})
UNSAFE = durability_of("ext4", ["rw", "barrier=0"], {})


def _source(
    tps: dict[str, list[float]], latency: dict[str, list[float]] | None = None, paired: bool = False
) -> Source:
    """Independent samples, or (paired) value i of every target measured in round i + 1."""

    def samples(unit: str, hib: bool, values: list[float]) -> Samples:
        rounds = list(range(1, len(values) + 1)) if paired else []
        return Samples(
            unit,
            hib,
            values=list(values),
            rounds=rounds,
            block="c1" if paired else "",
            params={"clients": 8},
        )

    cells = {}
    for target, values in tps.items():
        cells[CellKey(target, "pgbench", "clients=8", "pgbench.tps")] = samples(
            "tx/s", True, values
        )
    for target, values in (latency or {}).items():
        cells[CellKey(target, "pgbench", "clients=8", "pgbench.latency_p99_ms")] = samples(
            "ms", False, values
        )
    return Source(list(tps), cells)


def _noise(mean: float, n: int, seed: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, mean * 0.02, n))


def test_a_clear_winner_is_named_with_ratio_ci_and_durability() -> None:
    table = build_table(
        _source({"ext4": _noise(1000, 8, 1), "xfs": _noise(1200, 8, 2)}), None, 0.05, 0.02
    )
    row = next(r for r in table.rows if r.metric == "pgbench.tps")
    assert row.headline and table.baseline == "ext4"
    xfs = row.cells["xfs"].finding
    assert xfs.outcome == "better" and xfs.mark == "+"
    assert 1.1 < xfs.low and xfs.high < 1.3
    [line] = verdict_lines(table, {"ext4": SAFE, "xfs": SAFE})
    assert line.kind == WINNER and line.winner == "xfs"
    assert line.durability == {"xfs": "safe", "ext4": "safe"} and not line.warning
    # The answer first, in plain words: the ranking, then each target against the
    # baseline with its interval, as the table quotes it.
    assert line.text.startswith("xfs > ext4: against ext4, xfs +20% TPC-B tps [")
    assert line.text.endswith("better (8 and 8 runs)")
    assert any("(8 and 8 runs)" in d and "p<0.001" in d for d in line.details)


def test_identical_targets_get_no_winner() -> None:
    table = build_table(
        _source({"a": _noise(1000, 8, 3), "b": _noise(1000, 8, 4)}), None, 0.05, 0.02
    )
    [line] = verdict_lines(table, {"a": SAFE, "b": SAFE})
    assert line.kind in (EQUIVALENT, INCONCLUSIVE) and line.winner is None
    assert table.rows[0].cells["b"].finding.mark in ("≈", "?")
    assert "no difference" not in line.text


def test_paired_rounds_show_equivalence_and_say_how() -> None:
    drift = [1.0, 1.15, 0.9, 1.1, 0.95, 1.05, 0.85, 1.2]  # the machine, round by round
    a = [1000 * d for d in drift]
    b = [1000 * d * (1 + 0.002 * (-1) ** i) for i, d in enumerate(drift)]
    table = build_table(_source({"a": a, "b": b}, paired=True), None, 0.05, 0.02)
    f = table.rows[0].cells["b"].finding
    assert f.paired and f.rounds == 8
    assert f.outcome == "equivalent" and f.mark == "≈"
    # the equivalence's own (1 - 2 level) interval: a 90% CI inside the margin
    assert f.level.tost and f.level.confidence == 0.90 and 1 / 1.02 < f.low < f.high < 1.02
    assert f.sentence() == "b vs a: 0.0% [−0.1%, +0.1%], equivalent within ±2% (8 rounds)"
    [line] = verdict_lines(table, {})
    assert line.kind == EQUIVALENT and line.ranking == "a ≈ b"
    assert (
        line.text
        == "a ≈ b: against a, b 0.0% TPC-B tps [−0.1%, +0.1%] equivalent within ±2% (8 rounds)"
    )


def test_the_issue_case_a_consistent_slowdown_is_worse_paired() -> None:
    # wal_sync_method = fsync: slower in 8 of 8 rounds (×0.95-0.97) under round drift.
    drift = [1.0, 1.18, 0.86, 1.12, 0.92, 1.08, 0.83, 1.2]
    slow = [0.96, 0.95, 0.97, 0.955, 0.965, 0.96, 0.95, 0.97]
    base = [1000 * d for d in drift]
    other = [1000 * d * s for d, s in zip(drift, slow)]
    unpaired = build_table(_source({"fdatasync": base, "fsync": other}), None, 0.05, 0.02)
    assert unpaired.rows[0].cells["fsync"].finding.outcome == "inconclusive"
    table = build_table(_source({"fdatasync": base, "fsync": other}, paired=True), None, 0.05, 0.02)
    f = table.rows[0].cells["fsync"].finding
    assert f.outcome == "worse" and f.p < 0.001 and f.rests_on() == "8 rounds"
    assert f.change() == "−4.0% [−4.7%, −3.3%]"
    [line] = verdict_lines(table, {})
    assert line.kind == WINNER and line.winner == "fdatasync"


def test_inconclusive_lines_name_what_is_decided_and_the_rounds_estimate() -> None:
    drift = [1.0, 1.15, 0.9, 1.1, 0.95]
    jitter = [1.01, 0.97, 1.02, 0.99, 1.03]
    a = [1000 * d for d in drift]
    b = [1000 * d * j * 0.99 for d, j in zip(drift, jitter)]  # close to a: undecided
    c = [1000 * d * 0.7 * j for d, j in zip(drift, (1, 1.01, 0.99, 1, 1.005))]  # behind
    table = build_table(_source({"a": a, "b": b, "c": c}, paired=True), None, 0.05, 0.02)
    [line] = verdict_lines(table, {})
    # c is decided behind both: that is an answer, never filed under inconclusive.
    assert line.kind == PARTIAL and line.winner is None
    assert line.ranking == "a, b > c"
    assert line.text.startswith("a, b > c: against a, b −0.6% TPC-B tps [−4.8%, +3.7%] not ")
    assert "c −30% [−31%, −29%] worse (5 rounds)" in line.text
    # what "not told apart" is worth: the smallest difference these rounds would decide
    assert "a difference of 6% or more would likely have been decided here" in line.text
    assert table.rows[0].cells["b"].finding.outcome == "inconclusive"
    # the level of every interval, once, in words
    from pgfsbench.analysis.verdicts.answer import glossary

    assert glossary(table)[0].startswith("[…]: 98.3% CIs: 95% for the 3 comparisons together")


def test_an_unsafe_winner_always_carries_the_warning() -> None:
    table = build_table(
        _source({"ext4": _noise(1000, 6, 5), "nobarrier": _noise(1400, 6, 6)}), None, 0.05, 0.02
    )
    [line] = verdict_lines(table, {"ext4": SAFE, "nobarrier": UNSAFE})
    assert line.winner == "nobarrier"
    assert line.warning.startswith("nobarrier is not crash-safe: mount option nobarrier")
    md = comparison_markdown(table, select_rows(table, None), [line])
    assert "nobarrier is not crash-safe" in md


def test_too_few_samples_say_how_many_are_needed() -> None:
    # Welch on the logs decides from two runs a side where the spread allows; one run a
    # side is never tested, and a zero (the median route) needs the rank test's n.
    table = build_table(
        _source({"a": [1000, 1010, 990], "b": [1500, 1510, 1490]}), None, 0.05, 0.02
    )
    assert table.rows[0].cells["b"].finding.outcome == "better"
    table = build_table(_source({"a": [0, 1010, 990], "b": [1500, 1510, 1490]}), None, 0.05, 0.02)
    [line] = verdict_lines(table, {})
    assert line.kind == INCONCLUSIVE and "n ≥ 4 per side" in line.text
    assert table.rows[0].cells["b"].finding.mark == "?"


def test_single_runs_get_no_verdict() -> None:
    table = build_table(_source({"a": [1000], "b": [1500]}), None, 0.05, 0.02)
    [line] = verdict_lines(table, {})
    assert line.kind == SINGLE and "single run" in line.text
    f = table.rows[0].cells["b"].finding
    assert f.ratio == pytest.approx(1.5) and f.outcome == "na" and f.interval is None


def test_single_runs_that_tie_are_not_said_to_lead() -> None:
    table = build_table(_source({"a": [1000], "b": [1500], "c": [1500]}), None, 0.05, 0.02)
    [line] = verdict_lines(table, {})
    assert line.text.startswith("b and c had the same pgbench.tps in a single run each")
    table = build_table(_source({"a": [1000], "b": [1500]}), None, 0.05, 0.02)
    assert verdict_lines(table, {})[0].text.startswith("b had the higher pgbench.tps")


def test_baseline_choice_and_lower_is_better_rows() -> None:
    source = _source(
        {"a": _noise(1000, 8, 7), "b": _noise(1000, 8, 8)},
        latency={"a": _noise(10, 8, 9), "b": _noise(8, 8, 10)},
    )
    table = build_table(source, "b", 0.05, 0.02)
    assert table.targets == ["b", "a"] and table.baseline == "b"
    lat = next(r for r in table.rows if r.metric == "pgbench.latency_p99_ms")
    assert not lat.headline
    assert lat.cells["a"].finding.outcome == "worse"  # 25% higher latency
    doc = comparison_data(table, select_rows(table, "pgbench.*"), [])
    assert [r["metric"] for r in doc["rows"]] == ["pgbench.tps", "pgbench.latency_p99_ms"]
    assert doc["rows"][1]["cells"]["a"]["vs_baseline"]["outcome"] == "worse"


def test_a_failed_run_leaves_the_others_comparable() -> None:
    source = _source({"a": _noise(1000, 6, 11), "b": _noise(1000, 5, 12) + [float("nan")]})
    table = build_table(source, None, 0.05, 0.02)
    assert table.rows[0].cells["b"].n == 5


def test_no_star_when_all_equal_and_no_mark_for_single_runs() -> None:
    source = _source({"a": [0.0, 0.0, 0.0], "b": [0.0, 0.0, 0.0]}, latency={"a": [5.0], "b": [6.0]})
    table = build_table(source, None, 0.05, 0.02)
    tps = next(r for r in table.rows if r.metric == "pgbench.tps")
    assert not any(c.best for c in tps.cells.values())
    lat = next(r for r in table.rows if r.metric == "pgbench.latency_p99_ms")
    f = lat.cells["b"].finding
    assert f.ratio == pytest.approx(1.2) and f.outcome == "na" and f.mark == ""


def test_tied_small_samples_are_judged_with_the_spread_their_buckets_hide() -> None:
    # fio percentiles come in buckets, so headline latencies tie. Welch on the logs floors
    # each side's spread at half a bucket: a is still decided ahead (13% or more apart
    # wherever in their buckets the true values lie), and b and c, one bucket apart at
    # most, are shown within ±2% with that spread allowed for.
    source = Source(
        ["a", "b", "c"],
        {
            CellKey(t, "fsync-latency", "", "fsync_latency.sync_p99_us"): Samples(
                "µs", False, values=v, params={}
            )
            for t, v in {
                "a": [1090.0, 1090, 1090, 1106],
                "b": [1254.0] * 4,
                "c": [1254.0, 1270, 1254, 1254],
            }.items()
        },
    )
    table = build_table(source, None, 0.05, 0.02)
    [line] = verdict_lines(table, {})
    assert line.winner == "a" and line.ranking == "a > b ≈ c", line.text
    f = table.pair(table.rows[0], "b", "c")
    assert f.outcome == "equivalent" and f.low < 1 / 1.005 and f.high > 1.01


def test_a_target_with_a_zero_median_is_behind_not_indistinguishable() -> None:
    table = build_table(
        _source({"a": [1000.0, 1010, 990, 1005, 995], "b": [0.0] * 5}), None, 0.05, 0.02
    )
    assert table.rows[0].cells["b"].finding.outcome == "worse"
    [line] = verdict_lines(table, {})
    assert line.kind == WINNER and line.winner == "a", line.text
    assert line.text.startswith("a > b: against a, b ×0 TPC-B tps")


def test_a_target_without_data_is_named_in_the_verdict() -> None:
    source = _source({"a": _noise(1000, 8, 13), "b": _noise(1300, 8, 14)})
    source.columns.append("c")  # measured, but every run failed
    table = build_table(source, None, 0.05, 0.02)
    [line] = verdict_lines(table, {})
    assert line.winner == "b" and line.text.endswith("; no data for c")


def test_single_run_rows_beside_paired_ones_take_no_alpha_and_never_hang() -> None:
    drift = [1.0, 1.18, 0.86, 1.12, 0.92, 1.08]
    # (a little spread in the ratio: a constant one is no evidence, paired.py)
    source = _source(
        {
            "a": [1000 * d for d in drift],
            "b": [900 * d * (1 + 0.005 * (-1) ** i) for i, d in enumerate(drift)],
        },
        paired=True,
    )
    for t, v in {"a": 0.15, "b": 0.11}.items():  # pgbench-init, measured once (no rounds)
        source.cells[CellKey(t, "pgbench-init", "", "pgbench_init.elapsed_s")] = Samples(
            "s", False, values=[v], params={"scale": 1}
        )
    table = build_table(source, None, 0.05, 0.02)
    init, tps = sorted(verdict_lines(table, {}), key=lambda v: v.workload != "pgbench-init")
    assert init.kind == SINGLE and tps.kind == WINNER and tps.winner == "a"
    assert table.pair(table.rows[0], "a", "b").level.confidence == 0.95  # all of alpha


def test_equivalent_leaders_ahead_of_a_loser_are_an_answer_not_inconclusive() -> None:
    # a and b the same to within 0.1% in every round, c 30% behind: every pair is decided
    # (a ≈ b, both beat c), yet neither a nor b wins.
    drift = np.random.default_rng(7).normal(1, 0.1, 10)
    a = list(1000 * drift)
    b = [v * (1.001 if i % 2 else 0.999) for i, v in enumerate(a)]
    c = [v * 0.7 * (1.003 if i % 3 else 0.997) for i, v in enumerate(a)]
    table = build_table(_source({"a": a, "b": b, "c": c}, paired=True), None, 0.05, 0.02)
    [line] = verdict_lines(table, {"a": SAFE, "b": SAFE, "c": SAFE})
    assert line.kind == LEADERS and line.winner is None
    assert line.ranking == "a ≈ b > c"
    assert "c −30.0% [" in line.text and "equivalent within ±2%" in line.text


def test_a_measurement_run_for_the_advice_is_described_not_tested() -> None:
    # pg_test_fsync with its own 3 repetitions in an 'auto' plan: outside the verdict
    # family, so its line gives medians and says it was not tested.
    from pgfsbench.analysis.stats.sequential import Design
    from pgfsbench.analysis.verdicts.answer import campaign_answer

    drift = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0]
    jitter = [1.01, 0.99, 1.02, 0.98, 1.0, 1.01]
    source = _source(
        {"a": [1000 * d for d in drift], "b": [700 * d * j for d, j in zip(drift, jitter)]},
        paired=True,
    )
    for t, v in {"a": 3000.0, "b": 1200.0}.items():
        source.cells[CellKey(t, "fsync", "", "fsync.fdatasync_8k.ops_per_s")] = Samples(
            "ops/s", True, values=[v, v * 1.01, v * 0.99], rounds=[1, 2, 3], block="c1", params={}
        )
    source.design = Design.planned(0.05, 0.02, [6], descriptive=[("fsync", "")], earliest=3)
    table = build_table(source, None, 0.05, 0.02)
    by = {v.workload: v for v in verdict_lines(table, {})}
    assert by["fsync"].kind == "described" and by["fsync"].tiers is None
    assert by["fsync"].text == (
        "for the advice, not tested (its own 3 rounds): a 3,000 · b 1,200 ops/s"
    )
    assert not any(k[0] == "fsync" for k in table.pairs)  # no share of alpha
    assert by["pgbench"].kind == WINNER
    assert campaign_answer(list(by.values())) == "a > b on TPC-B tps"
