"""The analysis' remembered values kept beside the results, so a read command need not
redo them.

The bootstrap behind every cell's CI (10,000 resamples per cell, ``medians.py``) and the
distribution functions of the verdicts (scipy's import) are most of what reading a
campaign costs (``remembered.py``). Each value is stored in ``analysis-cache.json`` in
the results directory under a digest of the code that computed it and of the exact
inputs it came from, so an entry is found only where the same computation would give
the same value again: new runs, a resumed campaign or another pgfsbench version miss
and are computed afresh. The file is a cache, never a source of truth: a missing,
unreadable, foreign or read-only one changes nothing but time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pgfsbench.analysis.stats import remembered

NAME = "analysis-cache.json"
_FORMAT = 2  # 2: any remembered value, not only intervals

_open: set[Path] = set()  # the cache files of the kept_in blocks this process is inside


def _data_stamp(results_dir: Path) -> list[int]:
    """The results database's size and mtime: entries of another state are dropped when
    the file is rewritten (they would only be misses, never wrong)."""
    try:
        st = (results_dir / "results.db").stat()
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns]


def _read(path: Path) -> tuple[list[int], dict[str, remembered.Value]]:
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != _FORMAT or doc.get("code") != remembered.code_version().hex():
            return [], {}
        entries = {str(k): remembered.normalized(v) for k, v in doc["values"].items()}
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
    """Values looked up inside the block come from, and go to, ``results_dir``'s cache
    file (none: this process's memory only). A read command holds the whole of its
    analysis in one such block: the values its answer lines compute after the table count
    too. Inside a block for the same directory, a nested one is the outer one."""
    path = Path(results_dir or "").resolve() / NAME
    if results_dir is None or path in _open or not (Path(results_dir) / "results.db").is_file():
        yield
        return
    _open.add(path)
    try:
        yield from _kept(path.parent, path)
    finally:
        _open.discard(path)


def _kept(results_dir: Path, path: Path) -> Iterator[None]:
    stamp, stored = _read(path)
    for key, value in stored.items():
        remembered.values.setdefault(key, value)
    touched: set[str] = set()
    outer, remembered.touched = remembered.touched, touched
    try:
        yield
    finally:
        remembered.touched = outer
    if outer is not None:
        outer |= touched
    now = _data_stamp(results_dir)
    keep = dict(stored) if stamp == now else {}
    if touched <= keep.keys():
        return  # nothing new to keep
    keep.update({k: remembered.values[k] for k in touched})
    _write(
        path,
        {
            "format": _FORMAT,
            "code": remembered.code_version().hex(),
            "data": now,
            "values": keep,
        },
    )
