"""Tiers from synthetic pair decisions: cut only where every pair across the cut is decided."""

from __future__ import annotations

from pgfsbench.analysis.verdicts.tiers import BETTER, OPEN, SAME, rank
from pgfsbench.ratios import change_text, percent


def _relation(decided: dict[tuple[str, str], str]):
    """decided[(a, b)] = BETTER (a decided better than b) or SAME; anything else open."""

    def relation(a: str, b: str) -> str:
        if (a, b) in decided:
            return decided[(a, b)]
        if decided.get((b, a)) == SAME:
            return SAME
        return OPEN

    return relation


def test_every_pair_decided_gives_one_target_per_tier() -> None:
    t = rank(
        ["a", "b", "c"], _relation({("a", "b"): BETTER, ("a", "c"): BETTER, ("b", "c"): BETTER})
    )
    assert t.tiers == [["a"], ["b"], ["c"]] and t.text() == "a > b > c"
    assert t.all_decided and t.decided_any and t.inside == []


def test_not_told_apart_share_a_tier_and_equivalence_is_shown_as_such() -> None:
    open_pair = rank(
        ["ext4", "xfs", "btrfs"], _relation({("ext4", "btrfs"): BETTER, ("xfs", "btrfs"): BETTER})
    )
    assert open_pair.text() == "ext4, xfs > btrfs" and not open_pair.all_decided
    same = rank(
        ["ext4", "xfs", "btrfs"],
        _relation({("ext4", "btrfs"): BETTER, ("xfs", "btrfs"): BETTER, ("ext4", "xfs"): SAME}),
    )
    assert same.text() == "ext4 ≈ xfs > btrfs" and same.all_decided


def test_non_transitive_decisions_make_no_cut_and_keep_what_was_decided() -> None:
    # a > c decided, a ? b, b ? c: no cut has every pair across it decided.
    t = rank(["a", "b", "c"], _relation({("a", "c"): BETTER}))
    assert t.tiers == [["a", "b", "c"]]
    assert ("a", "c", BETTER) in t.inside and ("a", "b", OPEN) in t.inside
    assert t.decided_any and not t.all_decided
    # the ranking says what the tier hides: a one-line answer must not drop a decision
    assert t.text() == "a, b, c (a > c)"
    mixed = rank(["b", "a", "c"], _relation({("b", "c"): BETTER, ("b", "a"): SAME}))
    assert mixed.text() == "b, a, c (b ≈ a; b > c)"


def test_a_cut_needs_every_pair_across_it() -> None:
    # a beats b and c, b ? c: a alone on top, b and c below together.
    t = rank(["a", "b", "c"], _relation({("a", "b"): BETTER, ("a", "c"): BETTER}))
    assert t.tiers == [["a"], ["b", "c"]] and t.text() == "a > b, c"
    # a ? b, both beat c.
    t = rank(["a", "b", "c"], _relation({("a", "c"): BETTER, ("b", "c"): BETTER}))
    assert t.tiers == [["a", "b"], ["c"]]


def test_the_order_never_contradicts_a_decision() -> None:
    # b's estimate is ahead of a's, but a was decided better than b (paired): a first.
    t = rank(["b", "a"], _relation({("a", "b"): BETTER}))
    assert t.tiers == [["a"], ["b"]]


def test_nothing_decided_is_one_open_tier() -> None:
    t = rank(["a", "b"], _relation({}))
    assert t.tiers == [["a", "b"]] and not t.decided_any and t.text() == "a, b"


def test_changes_read_as_a_dba_writes_them() -> None:
    assert percent(0.49) == "−51%" and percent(1.04) == "+4.0%"
    assert change_text(0.51, (0.49, 0.53), "TPC-B tps") == "×0.51 TPC-B tps [×0.49, ×0.53]"
    assert change_text(0.8, (0.7, 0.9), "TPC-B tps") == "−20% TPC-B tps [−30%, −10%]"
    assert change_text(3.646, (3.263, 4.074)) == "×3.6 [×3.3, ×4.1]"


def test_the_answer_of_non_transitive_decisions_says_what_was_decided_inside_the_tier():
    from pgfsbench.analysis.findings import Level, finding_of
    from pgfsbench.analysis.stats.medians import from_paired
    from pgfsbench.analysis.stats.outcome import Judged
    from pgfsbench.analysis.stats.paired import compare_paired
    from pgfsbench.analysis.stats.sequential import INCONCLUSIVE, LOWER
    from pgfsbench.analysis.table import Cell, Row, Table
    from pgfsbench.analysis.verdicts.answer import measurement_answer, relation_of

    levels = {"a": 1100.0, "b": 1050.0, "c": 1000.0}
    cells = {
        t: Cell(v, False, "ok", n=6, values=[v] * 6, rounds=list(range(1, 7)))
        for t, v in levels.items()
    }
    row = Row("pgbench", "", "pgbench.tps", "tx/s", True, cells, headline=True)
    table = Table(["a", "b", "c"], "a", [row], noise=0.03)

    def found(a: str, b: str, outcome: str, ratio: float):
        rounds = [(1000.0, 1000.0 * ratio * (1 + 0.01 * (-1) ** i)) for i in range(6)]
        j = Judged(outcome, from_paired(compare_paired(rounds, 0.03)), level=0.05 / 3)
        return finding_of(table, row, a, b, j, Level(1 - 0.05 / 3, 0.05, 3))

    table.pairs = {
        ("pgbench", "", "a", "c"): found("a", "c", LOWER, 0.9),  # c decided behind a
        ("pgbench", "", "a", "b"): found("a", "b", INCONCLUSIVE, 0.95),
        ("pgbench", "", "b", "c"): found("b", "c", INCONCLUSIVE, 0.95),
    }
    tiers = rank(["a", "b", "c"], relation_of(table, row))
    assert tiers.tiers == [["a", "b", "c"]]
    text = measurement_answer(row, table, tiers)
    # every target against the baseline a; then what the tier hides between b and c
    assert text.startswith("a, b, c (a > c): against a, b −5.0% TPC-B tps [")
    assert "c −10% [" in text and "worse" in text
    assert "c vs b " in text and "not told apart" in text
