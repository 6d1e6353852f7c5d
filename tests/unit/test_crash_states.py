"""The crash state builder on a synthetic write log: flush points, subsets, reorderings,
torn 8 kB writes, and the bytes a state applies (crash/states.py)."""

from __future__ import annotations

import random

from pgfsbench.crash.states import (
    SECTOR,
    CrashState,
    build,
    plan_states,
    runs,
    unflushed_at,
)
from pgfsbench.crash.writelog import FLUSH, RECORD, WRITE, Op, pack, read_ops

KB = 1024


def log(*entries: tuple) -> list[Op]:
    """Ops from (op, file, offset, length); times 1, 2, 3 ...; data laid end to end."""
    ops, pos = [], 0
    for t, (kind, file, offset, length) in enumerate(entries, start=1):
        ops.append(Op(float(t), kind, file, offset, length, pos))
        pos += length
    return ops


# Two 8 kB page writes flushed, then two unflushed: one 8 kB page, one 16 kB.
OPS = log(
    (WRITE, 0, 0, 8 * KB),
    (WRITE, 0, 64 * KB, 8 * KB),
    (FLUSH, 0, 0, 0),
    (WRITE, 0, 16 * KB, 8 * KB),
    (WRITE, 0, 128 * KB, 16 * KB),
)


def applied(state: CrashState) -> set[tuple[int, int]]:
    """(op, sector within the write) of every applied 4 kB sector."""
    return {
        (p.op, (p.start + s) // SECTOR) for p in state.pieces for s in range(0, p.length, SECTOR)
    }


def test_a_flush_makes_the_earlier_writes_durable_and_only_its_file():
    durable, pending = unflushed_at(OPS, len(OPS))
    assert (durable, pending) == ([0, 1], [3, 4])
    two_files = log((WRITE, 0, 0, 4 * KB), (WRITE, 1, 0, 4 * KB), (FLUSH, 1, 0, 0))
    assert unflushed_at(two_files, 3) == ([1], [0])


def test_a_flush_state_applies_every_write_before_the_flush_in_order():
    state = build(0, "flush", OPS, 3, random.Random(0))
    assert [p.op for p in state.pieces] == [0, 1]
    assert state.time == 3.0 and state.unflushed == 0 and state.dropped == 0


def test_subset_keeps_the_durable_writes_and_drops_some_unflushed_ones_whole():
    seen = set()
    for seed in range(40):
        state = build(0, "subset", OPS, len(OPS), random.Random(seed))
        ops = [p.op for p in state.pieces]
        assert ops[:2] == [0, 1]  # durable, first, in order
        assert all(p.start == 0 and p.length == OPS[p.op].length for p in state.pieces)
        assert ops[2:] == sorted(ops[2:])  # arrival order
        seen.add(tuple(ops[2:]))
        assert state.dropped == 2 - len(ops[2:])
    assert seen == {(), (3,), (4,), (3, 4)}  # every subset of the two unflushed writes


def test_reorder_can_apply_an_older_unflushed_write_after_a_newer_one():
    orders = {
        tuple(p.op for p in build(0, "reorder", OPS, len(OPS), random.Random(s)).pieces[2:])
        for s in range(60)
    }
    assert (4, 3) in orders and (3, 4) in orders


def test_torn_keeps_halves_of_8k_pages():
    halves = set()
    for seed in range(60):
        state = build(0, "torn", OPS, len(OPS), random.Random(seed))
        sectors = applied(state)
        assert {(0, 0), (0, 1), (1, 0), (1, 1)} <= sectors  # durable pages whole
        page = {s for op, s in sectors if op == 3}
        halves.add(frozenset(page))
    # the unflushed 8 kB page: neither half, the first, the second, or both
    assert halves == {frozenset(), frozenset({0}), frozenset({1}), frozenset({0, 1})}


def test_sectors_follow_the_device_not_the_write():
    unaligned = log((WRITE, 0, 2 * KB, 8 * KB))  # 512-byte aligned, not 4 kB aligned
    state = build(0, "torn", unaligned, 1, random.Random(3))
    for p in state.pieces:
        start = 2 * KB + p.start
        assert start // SECTOR == (start + p.length - 1) // SECTOR  # within one sector
    every = {
        (p.start, p.length)
        for s in range(30)
        for p in build(0, "torn", unaligned, 1, random.Random(s)).pieces
    }
    assert every == {(0, 2 * KB), (2 * KB, 4 * KB), (6 * KB, 2 * KB)}


def test_plan_states_covers_flush_points_and_every_random_model_reproducibly():
    ops = log(*[(WRITE, 0, i * 8 * KB, 8 * KB) if i % 4 else (FLUSH, 0, 0, 0) for i in range(200)])
    states = plan_states(ops, 40, seed=7)
    assert len(states) == 40
    assert [s.number for s in states] == list(range(40))
    models = [s.model for s in states]
    assert models.count("flush") == 4  # a tenth
    assert models.count("torn") == 18  # half the others
    assert {"torn", "subset", "reorder", "prefix"} <= set(models)
    last_flush = max(i for i, op in enumerate(ops) if op.is_flush)
    assert any(s.point == last_flush + 1 for s in states if s.model == "flush")
    assert plan_states(ops, 40, seed=7) == states
    assert plan_states(ops, 40, seed=8) != states
    assert plan_states([], 10) == []


def test_a_torn_state_is_cut_right_after_a_write_a_tear_can_split():
    ops = log(
        *[
            (WRITE, 0, i * 8 * KB, 8 * KB if i % 3 == 0 else 4 * KB) if i % 4 else (FLUSH, 0, 0, 0)
            for i in range(100)
        ]
    )
    torn = [s for s in plan_states(ops, 50, seed=2) if s.model == "torn"]
    assert torn and all(ops[s.point - 1].length == 8 * KB for s in torn)
    # a multi-sector write flushed at once (a WAL write) is passed over for one that is not
    assert not any(s.point < len(ops) and ops[s.point].is_flush for s in torn)
    assert any(s.point < len(ops) for s in torn)


def test_without_a_flush_every_write_stays_in_the_cache():
    ops = log(*[(WRITE, 0, i * 8 * KB, 8 * KB) for i in range(20)])  # nobarrier
    states = plan_states(ops, 12, seed=1)
    assert not any(s.model == "flush" for s in states)
    assert all(s.unflushed == s.point for s in states)
    assert any(s.dropped for s in states)


def test_runs_merge_neighbouring_sectors_of_one_write():
    state = build(0, "flush", OPS, 3, random.Random(0))
    assert runs(OPS, state.pieces) == [(0, 0, 0, 8 * KB), (0, 64 * KB, 8 * KB, 8 * KB)]
    torn = [p for p in build(0, "torn", OPS, 5, random.Random(5)).pieces if p.op == 4]
    merged = runs(OPS, torn)
    assert sum(r[3] for r in merged) == sum(p.length for p in torn)
    assert all(r[1] - 128 * KB == r[2] - OPS[4].data_pos for r in merged)


def test_the_index_round_trips_and_a_cut_record_is_dropped(tmp_path):
    (tmp_path / "writes.index").write_bytes(b"".join(pack(op) for op in OPS) + b"\0" * 5)
    assert read_ops(tmp_path) == OPS
    assert RECORD.size == 31
