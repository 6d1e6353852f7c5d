"""The write log the recorder keeps and the state builder reads.

A recording is a directory: ``files.json`` (the image files, in file-id order, with
their sizes), one ``<name>.base`` per image (its content when recording started: the
durable state every crash state starts from), ``writes.data`` (every written byte,
appended in the order the writes arrived) and ``writes.index`` (one fixed-size record per
operation: when it arrived, a write or a flush, which file, where, how long, and where
its bytes are in ``writes.data``).

Only vocabulary and reading here: the recorder (``recorder.py``) writes it, the state
builder (``states.py``) reads it.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

WRITE = 1
FLUSH = 2
# arrival time (CLOCK_MONOTONIC, s), op, file id, offset, length, position in writes.data
RECORD = struct.Struct("<dBHQIQ")
INDEX = "writes.index"
DATA = "writes.data"
FILES = "files.json"


@dataclass(frozen=True)
class Op:
    """One operation that reached an image: a write (``offset``, ``length`` bytes whose
    copy is at ``data_pos`` in writes.data) or a flush of the file (``length`` 0)."""

    time: float
    op: int
    file: int
    offset: int
    length: int
    data_pos: int

    @property
    def is_flush(self) -> bool:
        return self.op == FLUSH


def pack(op: Op) -> bytes:
    return RECORD.pack(op.time, op.op, op.file, op.offset, op.length, op.data_pos)


def read_ops(recording: Path) -> list[Op]:
    raw = (recording / INDEX).read_bytes()
    usable = len(raw) - len(raw) % RECORD.size  # a record cut short by a crash is dropped
    return [Op(*fields) for fields in RECORD.iter_unpack(raw[:usable])]


def read_files(recording: Path) -> list[dict]:
    """[{"name": image file name, "size": bytes}] in file-id order."""
    return json.loads((recording / FILES).read_text())["files"]
