"""The note that more rounds add nothing to a pair is said only where its rounds ended,
not where its later runs were left out (disturbed) or failed."""

from __future__ import annotations

from pgfsbench.analysis.family import _fixed_rounds
from pgfsbench.analysis.stats.medians import Comparison
from pgfsbench.analysis.stats.outcome import INCONCLUSIVE, Judged


def _rounds(numbers) -> dict[int, float]:
    return {r: 100.0 + r for r in numbers}


def test_only_a_pair_whose_rounds_ended_is_told_more_rounds_add_none() -> None:
    full = range(1, 17)
    paired = {
        "ran": (_rounds(full), _rounds(full)),
        "ended": (_rounds(range(1, 4)), _rounds(range(1, 4))),  # its own repetitions
        # both sides measured to the end, their undisturbed rounds in common end at 7
        "left out": (_rounds([*range(1, 8), 9, 11, 13, 15]), _rounds([*range(1, 8), 10, 12, 16])),
    }
    open_ = Judged(INCONCLUSIVE, Comparison(1.0, 0.9, 1.1, 0.5, 16, 16))
    noted = _fixed_rounds(dict.fromkeys(paired, open_), paired)
    assert set(noted) == {"ended"}
    assert noted["ended"].note.startswith("its rounds ended at round 3 while the campaign ran 16")
