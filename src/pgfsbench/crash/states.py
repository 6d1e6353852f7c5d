"""Crash states: what a device with a volatile write cache could hold after a power cut,
built from a recording (``writelog.py``).

A power cut falls after some operation arrived (the state's ``point``: that many
operations arrived). What a flush of a file made durable survives: every write to that
file that arrived before its last flush. The writes to a file since its last flush were
still in the cache, and any of them may have reached the medium or not, in any order,
each 4 kB sector of a write on its own (a write of an 8 kB page may be torn into halves).
The models:

- ``flush``: the cut right after a flush (every write before it applied, in order);
- ``prefix``: the cut after any operation, a device without a cache (every write that
  arrived applied, in order);
- ``subset``: the durable writes, then a random half of the unflushed ones, whole, in
  arrival order;
- ``reorder``: as ``subset``, in a random order (an older write may land over a newer one);
- ``torn``: the durable writes, then a random half of the 4 kB sectors of each unflushed
  write (so 8 kB pages torn into their halves), in arrival order; its cut falls right
  after a write of more than one sector that no flush of its file followed at once
  (background writeback, a checkpoint's pages: a WAL write is flushed at once, and a
  tear of it costs only the unacknowledged commit its checksum rejects).

A commit acknowledged before the cut must survive: the cut is at the arrival of the
point's last operation (``CrashState.time``), and a commit whose acknowledgement the
client saw before that had its flush arrive before it. Pure functions of the recorded
operations and a seed: the same recording and seed give the same states, so a state is
replayed by its number.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from pgfsbench.crash.writelog import Op

SECTOR = 4096
# Half the random states are torn: the most general model (a subset, sector by sector)
# and the one a 4 kB-sector disk under 8 kB pages meets.
RANDOM_MODELS = ("torn", "subset", "torn", "reorder", "torn", "prefix")
MODELS = ("flush", "torn", "subset", "reorder", "prefix")


@dataclass(frozen=True)
class Piece:
    """``length`` bytes of recorded write ``op`` from byte ``start`` of it, applied."""

    op: int
    start: int
    length: int


@dataclass(frozen=True)
class CrashState:
    number: int
    model: str
    point: int  # operations that arrived before the cut
    time: float  # the cut: when the point's last operation arrived (CLOCK_MONOTONIC)
    pieces: tuple[Piece, ...]  # applied onto the base images, in this order
    unflushed: int  # writes still in the cache at the cut
    dropped: int  # of those, left out whole or in part

    def describe(self) -> dict:
        return {
            "state": self.number,
            "model": self.model,
            "point": self.point,
            "unflushed_writes": self.unflushed,
            "dropped_writes": self.dropped,
        }


def unflushed_at(ops: Sequence[Op], point: int) -> tuple[list[int], list[int]]:
    """(durable, unflushed): indexes of the writes among ``ops[:point]`` that a flush of
    their file made durable, and those still in the cache, both in arrival order."""
    last_flush: dict[int, int] = {}
    for i in range(point):
        if ops[i].is_flush:
            last_flush[ops[i].file] = i
    durable: list[int] = []
    pending: list[int] = []
    for i in range(point):
        op = ops[i]
        if op.is_flush:
            continue
        (durable if i < last_flush.get(op.file, -1) else pending).append(i)
    return durable, pending


def _whole(ops: Sequence[Op], indexes: Sequence[int]) -> list[Piece]:
    return [Piece(i, 0, ops[i].length) for i in indexes]


def _sectors(op: Op) -> list[tuple[int, int]]:
    """(start, length) of the sectors a write covers, by the device's 4 kB sectors."""
    out = []
    pos = 0
    while pos < op.length:
        edge = ((op.offset + pos) // SECTOR + 1) * SECTOR - op.offset
        end = min(op.length, edge)
        out.append((pos, end - pos))
        pos = end
    return out


def build(number: int, model: str, ops: Sequence[Op], point: int, rng: random.Random) -> CrashState:
    """One state of ``model`` with the cut after ``ops[:point]``."""
    if model in ("flush", "prefix"):
        writes = [i for i in range(point) if not ops[i].is_flush]
        durable, pending = unflushed_at(ops, point)
        pieces = _whole(ops, writes)
        return CrashState(number, model, point, ops[point - 1].time, tuple(pieces), len(pending), 0)
    durable, pending = unflushed_at(ops, point)
    pieces = _whole(ops, durable)
    dropped = 0
    if model == "torn":
        for i in pending:
            sectors = _sectors(ops[i])
            kept = [s for s in sectors if rng.random() < 0.5]
            dropped += len(kept) < len(sectors)
            pieces += [Piece(i, start, length) for start, length in kept]
    else:
        kept_ops = [i for i in pending if rng.random() < 0.5]
        dropped = len(pending) - len(kept_ops)
        if model == "reorder":
            rng.shuffle(kept_ops)
        pieces += _whole(ops, kept_ops)
    return CrashState(
        number, model, point, ops[point - 1].time, tuple(pieces), len(pending), dropped
    )


def _tearable(ops: Sequence[Op], writes: list[int]) -> list[int]:
    """The writes a torn state is cut after: more than one sector, and the next
    operation on their file is not a flush; failing those, any multi-sector write,
    failing those, any write."""
    next_is_flush: dict[int, bool] = {}
    last_write: dict[int, int] = {}
    for i, op in enumerate(ops):
        if op.file in last_write:
            next_is_flush[last_write.pop(op.file)] = op.is_flush
        if not op.is_flush:
            last_write[op.file] = i
    big = [i for i in writes if ops[i].length > SECTOR]
    return [i for i in big if not next_is_flush.get(i, False)] or big or writes


def plan_states(ops: Sequence[Op], count: int, seed: int = 0) -> list[CrashState]:
    """``count`` states over the recording: up to a tenth at flush points (spread evenly
    over them, the last flush always among them), the rest at random cuts, the random
    models taking turns (half of them torn). Empty when nothing was recorded."""
    if not ops or count < 1:
        return []
    rng = random.Random(seed)
    flushes = [i for i, op in enumerate(ops) if op.is_flush]
    n_flush = min(len(flushes), max(1, count // 10)) if flushes else 0
    picks = [flushes[round(k * (len(flushes) - 1) / max(1, n_flush - 1))] for k in range(n_flush)]
    if n_flush == 1:
        picks = [flushes[-1]]
    states = [build(n, "flush", ops, i + 1, rng) for n, i in enumerate(dict.fromkeys(picks))]
    writes = [i for i, op in enumerate(ops) if not op.is_flush]
    tearable = _tearable(ops, writes)
    at_flushes = len(states)
    for n in range(at_flushes, count if writes else at_flushes):
        model = RANDOM_MODELS[(n - at_flushes) % len(RANDOM_MODELS)]
        cut = rng.choice(tearable if model == "torn" else writes)
        states.append(build(n, model, ops, cut + 1, rng))
    return states


def runs(ops: Sequence[Op], pieces: Sequence[Piece]) -> list[tuple[int, int, int, int]]:
    """``pieces`` as (file, file offset, position in writes.data, length) writes to make
    in this order; the sectors of one write kept side by side become one run."""
    out: list[tuple[int, int, int, int]] = []
    for p in pieces:
        op = ops[p.op]
        run = (op.file, op.offset + p.start, op.data_pos + p.start, p.length)
        last = out[-1] if out else None
        if (
            last is not None
            and last[0] == run[0]
            and last[1] + last[3] == run[1]
            and last[2] + last[3] == run[2]
        ):
            out[-1] = (last[0], last[1], last[2], last[3] + run[3])
        else:
            out.append(run)
    return out
