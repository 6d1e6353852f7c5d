"""The stored demo campaign the unit tests read: the default plan as `make demo` ran it,
its per-second series and artifacts left out (tests/fixtures/quick_demo_results.db.gz)."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "fixtures" / "quick_demo_results.db.gz"


def unpack_demo(results: Path) -> Path:
    """``results`` made a results directory holding the demo campaign."""
    results.mkdir(parents=True, exist_ok=True)
    with gzip.open(FIXTURE) as packed, open(results / "results.db", "wb") as db:
        shutil.copyfileobj(packed, db)
    return results
