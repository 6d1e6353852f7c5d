"""Bootstrap intervals kept beside the results, so a read command need not redo them.

The bootstrap behind every cell's CI (10,000 resamples per cell, ``stats.py``) is most
of what reading a campaign costs. Each interval is stored in ``analysis-cache.json`` in
the results directory under a digest of the code that computed it and of the exact
values it came from, so an entry is found only where the same computation would give
the same interval again: new runs, a resumed campaign or another pgfsbench version
miss and are computed afresh. The file is a cache, never a source of truth: a
missing, unreadable, foreign or read-only one changes nothing but time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pgfsbench.analysis import stats

NAME = "analysis-cache.json"
_FORMAT = 1


def _data_stamp(results_dir: Path) -> list[int]:
    """The results database's size and mtime: entries of another state are dropped when
    the file is rewritten (they would only be misses, never wrong)."""
    try:
        st = (results_dir / "results.db").stat()
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns]


def _read(path: Path) -> tuple[list[int], dict[str, tuple[float, float] | None]]:
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != _FORMAT or doc.get("code") != stats._code_version().hex():
            return [], {}
        entries: dict[str, tuple[float, float] | None] = {}
        for key, value in doc["intervals"].items():
            if value is None:
                entries[key] = None
            else:
                lo, hi = value
                entries[str(key)] = (float(lo), float(hi))
        return list(doc.get("data", [])), entries
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return [], {}  # none yet, or not one we can read: computed afresh


def _write(path: Path, doc: dict) -> None:
    tmp = path.with_name(f".{NAME}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(doc, separators=(",", ":")))
        os.replace(tmp, path)
    except OSError:  # a read-only or full results directory: the next read computes again
        try:
            tmp.unlink()
        except OSError:
            pass


@contextmanager
def kept_in(results_dir: Path | None) -> Iterator[None]:
    """Intervals looked up inside the block come from, and go to, ``results_dir``'s cache
    file (none: this process's memory only)."""
    if results_dir is None or not (Path(results_dir) / "results.db").is_file():
        yield
        return
    path = Path(results_dir) / NAME
    stamp, stored = _read(path)
    for key, value in stored.items():
        stats._intervals.setdefault(key, value)
    outer, stats._touched = stats._touched, set()
    try:
        yield
        touched = stats._touched
    finally:
        stats._touched = outer
    if outer is not None:
        outer |= touched
    now = _data_stamp(Path(results_dir))
    keep = dict(stored) if stamp == now else {}
    if touched <= keep.keys():
        return  # nothing new to keep
    keep.update({k: stats._intervals[k] for k in touched})
    _write(
        path,
        {
            "format": _FORMAT,
            "code": stats._code_version().hex(),
            "data": now,
            "intervals": {k: list(v) if v else None for k, v in keep.items()},
        },
    )
